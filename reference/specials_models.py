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
       "ElementWiseDivide", "ElementWiseExp", "ElementWiseFloorDiv", "ElementWiseLog", "ElementWiseNeuron",
       "ElementWisePower",
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


PHASE_PADDING_NAN = "specials-open-nan-where-phase-padding-meets-a-special"


def phase_padding_nan(case: Any) -> np.ndarray | None:
    """FLOAT_32 TransposeConv2d (finding transposeconv2d-f32-phase-padding-times-specials-nan): the output elements
    the HTP gives NaN where the spec's sum is finite, as if each stride phase were a convolution of in[0] padded with
    zeros by a filter padded with zero taps to T = ceil(filter / stride) taps a side (taps ky = ry + stride t, t < T,
    those past the filter 0), 0 x inf and 0 x NaN being NaN: a NaN or infinite tap w[ky, kx, i, o] over a padding cell
    (source ((p + pad_top - ky) / stride_h, likewise columns) outside in[0]) gives NaN in the output channel it feeds; a
    NaN or infinite in[0] cell under a zero tap gives NaN in every output channel of its group. None when output_padding
    is nonzero (the cells it adds were not measured) or no input or filter value is NaN or infinite."""
    from reference.convolution import _pads, _per_axis

    x, w = case.inputs[0], case.inputs[1]
    params = {k: p.value for k, p in case.params.items()}
    if np.any(np.asarray(params.get("output_padding", 0)) != 0):
        return None
    xbad = ~np.isfinite(np.asarray(x.data, dtype=np.float64))  # [batch, height, width, channel_in]
    wbad = ~np.isfinite(np.asarray(w.data, dtype=np.float64))  # [kh, kw, channel_in, channel_out / group]
    if not (xbad.any() or wbad.any()):
        return None
    stride = _per_axis(params["stride"], 2, "stride")
    pads = _pads(params["pad_amount"], 2)
    group = int(params.get("group", 1))
    _, h, wd, cin = x.shape
    kh, kw, _, cout_g = w.shape
    cin_g = cin // group
    out = np.zeros(case.outputs[0].shape, dtype=bool)
    # per tap, the output channels its non-finite weights feed; per input cell, the groups its non-finite values are in
    feeds = np.zeros((kh, kw, group * cout_g), dtype=bool)
    for ky, kx, i, o in np.argwhere(wbad):
        feeds[ky, kx, (i // cin_g) * cout_g + o] = True
    groups_bad = xbad.reshape(*xbad.shape[:3], group, cin_g).any(axis=-1)  # [batch, height, width, group]
    x_feeds = np.repeat(groups_bad, cout_g, axis=-1)  # [batch, height, width, channel_out]
    taps = (-(-kh // stride[0]), -(-kw // stride[1]))
    for p in range(out.shape[1]):
        rows = _phase_taps(p + pads[0][0], stride[0], taps[0])
        for q in range(out.shape[2]):
            for ky, i in rows:
                for kx, j in _phase_taps(q + pads[1][0], stride[1], taps[1]):
                    inside = 0 <= i < h and 0 <= j < wd
                    if ky < kh and kx < kw and not inside:
                        out[:, p, q] |= feeds[ky, kx]
                    elif (ky >= kh or kx >= kw) and inside:
                        out[:, p, q] |= x_feeds[:, i, j]
    return out


def _phase_taps(full: int, stride: int, taps: int) -> list[tuple[int, int]]:
    """The (tap, source cell) pairs of one axis at the full-output position ``full``: its phase's taps r + stride t."""
    r = full % stride
    return [(r + stride * t, (full - r - stride * t) // stride) for t in range(taps)]


@register_symptom("TransposeConv2d", name=PHASE_PADDING_NAN)
def specials_open_nan_at_phase_padding(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """Finding transposeconv2d-f32-phase-padding-times-specials-nan: FLOAT_32 TransposeConv2d gives NaN where a NaN or
    infinite value meets the zeros of the HTP's per-stride-phase convolutions (``phase_padding_nan``), elements whose
    value in the spec is finite; every element the specials decide is open as in float-specials-not-ieee, every other
    one is the reference's within the case's budget."""
    from reference.expected import expected

    if case.outputs[0].dtype != "FLOAT_32":
        return "not a FLOAT_32 output"
    pad_nan = phase_padding_nan(case)
    if pad_nan is None:
        return "no NaN or infinite input or filter value (or output_padding, not measured)"
    masks = touched(case)
    open_ = masks[0] if masks is not None else np.zeros(case.outputs[0].shape, dtype=bool)
    shown = pad_nan & ~open_
    if not shown.any():
        return "no element outside what the specials decide meets the phase zeros"
    got = real_outputs(case, stored)[0]
    if not np.isnan(got[shown]).all():
        return f"{int((~np.isnan(got[shown])).sum())} of {int(shown.sum())} elements at the phase zeros are not NaN"
    ref = np.asarray(expected(case)[0], dtype=np.float64)
    j = judged([np.where(open_ | shown, got, ref)])
    return None if j.passed else f"an element neither the specials nor the phase zeros decide is wrong: {j.message}"
