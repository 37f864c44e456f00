"""Models of the HTP simulator's reduction deviations (reference.models): what a backend with the bug returns.

Kept beside ``reference/reduction.py``, which holds the implementations and the older models of the family.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cases.quant import float16_ties_away
from reference.models import register_model, register_symptom


def _scan_arguments(case: Any) -> tuple[np.ndarray, dict[str, Any], tuple[float, int, int, int], int]:
    """A fixed-point CumulativeSum case as its models read it: in[0]'s real values, the params, out[0]'s grid (scale,
    offset, lowest and highest code) and the scan axis."""
    from cases.quant import code_range
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    enc = case.outputs[0].encoding
    qmin, qmax = code_range(case.outputs[0].dtype, enc.bitwidth)
    axis = int(np.asarray(params["axis"]).reshape(-1)[0]) % x.ndim
    return x, params, (float(enc.scales[0]), int(enc.offsets[0]), qmin, qmax), axis


@register_model("CumulativeSum", name="addends-on-output-grid-saturating")
def cumulative_sum_addends_on_output_grid_saturating(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point CumulativeSum (finding cumulativesum-u8-addends-on-output-grid): every input
    element is first rounded to a whole number of out[0]'s steps (its real value / out[0]'s scale), and the running
    sum is kept in out[0]'s codes: it starts at the zero point, adds one rounded addend at a time in scan order
    (reversed for ``reverse``) and saturates to the code range at every step, so a sum that dips below the range's
    bottom restarts from code 0. Inclusive outputs are the sum after an element, exclusive ones before it (the
    reference's reading of the exclusive forms, opdefs/CumulativeSum.yaml). The rounding errors add up along the axis
    (8 steps at element 86); the spec's sum of the real inputs has one rounding at the end."""
    x, params, (scale, offset, qmin, qmax), axis = _scan_arguments(case)
    addends = np.moveaxis(np.round(x / scale), axis, -1)
    if bool(params.get("reverse", False)):
        addends = addends[..., ::-1]
    exclusive = bool(params.get("exclusive", False))
    acc = np.full(addends.shape[:-1], float(-offset))  # the zero point's code (QNN stores offset = -zero point)
    codes = np.empty_like(addends)
    for i in range(addends.shape[-1]):
        before = acc
        acc = np.clip(acc + addends[..., i], qmin, qmax)
        codes[..., i] = before if exclusive else acc
    if bool(params.get("reverse", False)):
        codes = codes[..., ::-1]
    return [np.moveaxis((codes + offset) * scale, -1, axis)]


LOWEST_WHERE_ONE_AXIS = "lowest-code-one-wide-axis-with-unit-channel"


def one_wide_axis_with_unit_channel(case: Any) -> str | None:
    """None when the case is of finding reduce-fixed-one-wide-axis-unit-channel-lowest: in[0]'s last dim is 1 and
    reduced, and exactly one reduced axis is wider than 1; else why not."""
    shape = tuple(case.inputs[0].shape)
    axes = sorted({int(a) % len(shape) for a in np.asarray(case.params["axes"].value).reshape(-1)})
    if shape[-1] != 1 or len(shape) - 1 not in axes:
        return "the last axis is not a reduced axis of size 1"
    wide = [a for a in axes if shape[a] > 1]
    if len(wide) != 1:
        return f"{len(wide)} reduced axes wider than 1, not one"
    return None


@register_symptom("ReduceMax", "ReduceMin", name=LOWEST_WHERE_ONE_AXIS)
def lowest_code_one_wide_axis_with_unit_channel(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP simulator's fixed-point ReduceMax and ReduceMin (finding reduce-fixed-one-wide-axis-unit-channel-lowest):
    where in[0]'s last dim is 1 and reduced with exactly one axis wider than 1 ([3, 1, 4, 1] over [1, 2, 3], [4, 1]
    over [0, 1], [3, 4, 1] over [1, 2]), outputs come back as out[0]'s lowest code (0, -128, -32768) where the maximum
    or minimum belongs; with keep_dims most or all of them (over [2, 3] of a [3, 1, 4, 1], the last of three). Which
    elements follows no rule found, so this is a symptom: every element is the reference's or the lowest code, and one
    at least is the lowest code where the reference is not. Measured (UFIXED_POINT_8 probes, keep_dims true): two
    reduced axes wider than 1 ([3, 2, 4, 1] over [1, 2, 3], every axis of [2, 1, 4, 1]), none ([3, 1, 1, 1]) or a last
    dim of 2 are right."""
    from opdefs import dtypes
    from reference.compare import encode_outputs
    from reference.expected import expected
    from reference.models import real_outputs

    why = one_wide_axis_with_unit_channel(case)
    if why is not None:
        return why
    out = case.outputs[0]
    if out.encoding is None or not dtypes.get(out.dtype).quantized:
        return "not a fixed-point output"
    codes = np.asarray(stored[0])
    lowest = codes == dtypes.get(out.dtype).qmin
    ref = expected(case)
    if not (lowest & (encode_outputs(case, ref)[0] != codes)).any():
        return "no element is the lowest code where the reference is not"
    expect = np.where(lowest, real_outputs(case, stored)[0], np.asarray(ref[0], dtype=np.float64))
    j = judged([expect])
    return None if j.passed else f"an element that is not the lowest code is wrong too: {j.message}"


@register_model("CumulativeSum", name="first-slice-from-lowest-code")
def cumulative_sum_first_slice_from_lowest_code(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_8 inclusive CumulativeSum over an axis of one element that lands on the height
    or width of its 4-D layout (finding cumulativesum-u8-single-slice-from-lowest-code): the running sum starts at
    out[0]'s lowest code (real value offset x scale) instead of at 0, so the one slice comes out as in[0] plus that
    value, saturated at the code range; the slices after the first (none on such an axis) are left open (NaN)."""
    x, params, (scale, offset, qmin, qmax), axis = _scan_arguments(case)
    y = np.full_like(x, np.nan)
    first = tuple(slice(0, 1) if i == axis else slice(None) for i in range(x.ndim))
    lowest = (qmin + offset) * scale
    y[first] = np.clip(x[first] + lowest, lowest, (qmax + offset) * scale)
    return [y]


@register_symptom("ReduceSum", "ReduceSumSquare", name="nan-where-the-float16-sum-overflows")
def reduce_sum_nan_where_overflows(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP's FLOAT_16 ReduceSum (through the ONNX Runtime QNN EP, ReduceSumSquare as Mul -> ReduceSum: finding
    ep-reducesumsquare-f16-overflow-nan): a sum past float16's largest value (65504) comes back NaN where IEEE gives
    infinity (the spec's result, rounded to float16), every other output as the spec says. Holds when at least one
    output overflows, every overflowing one is NaN and the rest pass the case's budget."""
    from reference.expected import expected

    spec = np.asarray(expected(case)[0], dtype=np.float64)
    got = np.asarray(stored[0], dtype=np.float64)
    with np.errstate(over="ignore"):
        over = np.isinf(spec.astype(np.float16))
    if not over.any():
        return "no output overflows float16"
    if not np.isnan(got[over]).all():
        return f"{int((~np.isnan(got[over])).sum())} overflowing output(s) are not NaN"
    j = judged([np.where(over, 0.0, spec)]) if (~over).any() else None
    if j is not None and not j.passed and not _only_overflow_cells_differ(j, over):
        return f"the outputs that do not overflow are off: {j.message}"
    return None


def _only_overflow_cells_differ(j: Any, over: np.ndarray) -> bool:
    """Whether a judgement's mismatches are the overflowing cells alone (they are NaN against the 0 put there)."""
    return int(j.metrics.get("mismatches", -1)) == int(over.sum())


@register_model("CumulativeSum", name="float16-scan-ties-away")
def cumulative_sum_float16_scan_ties_away(case: Any) -> list[np.ndarray]:
    """The HTP simulator's float CumulativeSum after v68 (finding cumulativesum-float-float16-scan): in[0] rounded to
    float16 (ties to even, a FLOAT_32 input's cast), then one running float16 sum along the axis, each addition
    rounded to float16 with ties away from zero. Each output has as many roundings as terms before it; the spec's sum
    has one. Reverse scans from the end; exclusive gives the sum before an element."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    axis = int(np.asarray(params["axis"]).reshape(-1)[0]) % x.ndim
    reverse, exclusive = bool(params.get("reverse", False)), bool(params.get("exclusive", False))
    addends = np.moveaxis(x.astype(np.float16).astype(np.float64), axis, -1)
    if reverse:
        addends = addends[..., ::-1]
    acc = np.zeros(addends.shape[:-1])
    sums = np.empty_like(addends)
    for i in range(addends.shape[-1]):
        before = acc
        acc = float16_ties_away(acc + addends[..., i])
        sums[..., i] = before if exclusive else acc
    if reverse:
        sums = sums[..., ::-1]
    return [np.moveaxis(sums, -1, axis)]
