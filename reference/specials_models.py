"""The HTP simulator's float kernels at IEEE special inputs (``reference.models``): a symptom, not a model.

The edge tier draws NaN, +-inf, subnormals and the largest finite values into float inputs
(``cases.generate.values``). The reference reads each op's formula with IEEE 754 arithmetic, as numpy and the ONNX
operators the MasterOpDef cites do: exp(+inf) = +inf, cos(inf) = NaN, max(NaN, x) = NaN, x / +-0 = +-inf. The HTP's
float kernels do not: measured at edge seeds 0 and 1, Relu of NaN is 0 (FLOAT_32) or +inf (FLOAT_16), cos(+inf) is 1,
exp(+inf) is NaN, a FLOAT_32 input of 3.4e38 becomes +inf (float16 arithmetic, whose range ends at 65504), a
subnormal is read as zero. Which value each kernel gives there follows no one rule across ops, so the symptom leaves
those elements open and holds every other element to the reference: a kernel wrong on ordinary values in the same
case is still a failure.

An element is *touched* by the specials when the reference's value there is not finite, or when it changes with the
value put in place of the specials (computed with -2, 0.5, 3e4 and -3e4 in their place): the elements whose value
the specials decide. Special here is what binary32 or binary16 arithmetic cannot carry as the value it is: NaN, +-inf,
a subnormal (flushed to zero by the HVX float units), on a FLOAT_32 input a magnitude past float16's largest finite
value (the HTP computes FLOAT_32 graphs in float16: ``adapters.qnn.targets.float32_declaration``) and on a FLOAT_16
input that largest value itself (65504: cos, sin, atan and gelu of it come out NaN or inf, their intermediates
overflowing).
A case with no such input is the symptom's too where the IEEE result is itself NaN or infinite (log of a negative
number, sqrt of one, a zero divisor: results the spec leaves undefined); those elements are the touched ones.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from reference.models import real_outputs, register_symptom

FLOAT16_MAX = 65504.0
# The substitutes for the specials: values whose results differ under every op the symptom is registered for (a sign, a
# relu, a comparison with 0 or 1 all tell -2 from 0.5; a maximum or an argmax over ordinary values tells +-3e4 apart).
SUBSTITUTES = (-2.0, 0.5, 3e4, -3e4)
SPECIALS_OPEN = "specials-open"
# The ops whose edge cases at seeds 0-2 failed on float specials (python -m bench seeds --tier edge).
OPS = ("Argmax", "Argmin", "Batchnorm", "Cast", "Conv2d", "DepthWiseConv2d", "ElementWiseAtan", "ElementWiseCos",
       "ElementWiseDivide", "ElementWiseExp", "ElementWiseFloorDiv", "ElementWiseLog", "ElementWisePower",
       "ElementWiseRsqrt", "ElementWiseSign", "ElementWiseSin", "ElementWiseSquareRoot", "ElementWiseUnary", "Elu",
       "ExtractPatches", "Gelu", "GridSample", "HardSwish", "L2Norm", "Logit", "PoolMax2d", "ReduceMax", "ReduceMean",
       "ReduceMin", "ReduceSum", "Relu", "Relu1", "Relu6", "ReluMinMax", "Sigmoid", "Softmax", "Tanh",
       "TransposeConv2d")  # fmt: skip


def special_mask(data: np.ndarray, dtype: str) -> np.ndarray:
    """Where a float input holds a value its arithmetic on the HTP cannot carry (module docstring)."""
    x = np.asarray(data, dtype=np.float64)
    tiny = float(np.finfo(np.float16 if dtype == "FLOAT_16" else np.float32).tiny)
    with np.errstate(invalid="ignore"):
        mask = ~np.isfinite(x) | ((x != 0) & (np.abs(x) < tiny))
        # FLOAT_32 past float16's range; FLOAT_16 at its largest finite value, whose intermediates overflow
        mask |= np.abs(x) > FLOAT16_MAX if dtype == "FLOAT_32" else np.abs(x) >= FLOAT16_MAX
    return mask


def _with_specials_as(case: Any, value: float) -> Any:
    inputs = []
    for t in case.inputs:
        if t is None or t.data is None or t.dtype not in ("FLOAT_16", "FLOAT_32"):
            inputs.append(t)
            continue
        data = t.data.copy()
        data[special_mask(data, t.dtype)] = value
        inputs.append(replace(t, data=data))
    return replace(case, inputs=inputs)


def touched(case: Any) -> list[np.ndarray] | None:
    """Per output, where the specials decide the reference's value; None when no float input holds a special and the
    reference gives no special either. Without special inputs, the touched elements are those whose IEEE result is
    itself NaN or infinite (a domain error such as log(-1) or sqrt(-1), a zero divisor: results the spec leaves
    undefined)."""
    from reference.expected import expected

    with np.errstate(all="ignore"):
        ref = [np.asarray(e, dtype=np.float64) for e in expected(case)]
    if not any(t is not None and t.data is not None and t.dtype in ("FLOAT_16", "FLOAT_32")
               and special_mask(t.data, t.dtype).any() for t in case.inputs):  # fmt: skip
        out = [~np.isfinite(r) for r in ref]
        return out if any(m.any() for m in out) else None
    with np.errstate(all="ignore"):
        runs = [[np.asarray(e, dtype=np.float64) for e in expected(_with_specials_as(case, v))] for v in SUBSTITUTES]
        out = []
        for k, r in enumerate(ref):
            mask = ~np.isfinite(r)
            first = runs[0][k]
            for run in runs:
                a = run[k]
                if a.shape != r.shape or first.shape != r.shape:
                    mask = np.ones(r.shape, dtype=bool)
                    break
                mask |= ~np.isclose(a, first, rtol=1e-9, atol=0.0, equal_nan=True) | ~np.isfinite(a)
            out.append(mask)
    return out


@register_symptom(*OPS, name=SPECIALS_OPEN)
def specials_open(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """Finding float-specials-not-ieee: the case's float inputs hold specials, and every output element they do not
    touch is the reference's within the case's budget (the touched ones are open: module docstring)."""
    from reference.expected import expected

    masks = touched(case)
    if masks is None:
        return "no float input holds NaN, an infinity, a subnormal or a value at float16's limit; no result is special"
    if not any(m.any() for m in masks):
        return "the specials decide no output element"
    ref = [np.asarray(e, dtype=np.float64) for e in expected(case)]
    actual = real_outputs(case, stored)
    expect = [np.where(m, a, r) if m.shape == r.shape == np.shape(a) else r
              for m, r, a in zip(masks, ref, actual, strict=True)]  # fmt: skip
    j = judged(expect)
    if not j.passed:
        return f"an element the specials do not touch is wrong too: {j.message}"
    return None
