"""Models of the HTP simulator's reduction deviations (reference.models): what a backend with the bug returns.

Kept beside ``reference/reduction.py``, which holds the implementations and the older models of the family.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import register_model


@register_model("CumulativeSum", name="addends-on-output-grid-saturating")
def cumulative_sum_addends_on_output_grid_saturating(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point CumulativeSum (finding cumulativesum-u8-addends-on-output-grid): every input
    element is first rounded to a whole number of out[0]'s steps (its real value / out[0]'s scale), and the running
    sum is kept in out[0]'s codes: it starts at the zero point, adds one rounded addend at a time in scan order
    (reversed for ``reverse``) and saturates to the code range at every step, so a sum that dips below the range's
    bottom restarts from code 0. Inclusive outputs are the sum after an element, exclusive ones before it (the
    reference's reading of the exclusive forms, opdefs/CumulativeSum.yaml). The rounding errors add up along the axis
    (8 steps at element 86); the spec's sum of the real inputs has one rounding at the end."""
    from cases.quant import code_range
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    enc = case.outputs[0].encoding
    scale, offset = float(enc.scales[0]), int(enc.offsets[0])
    qmin, qmax = code_range(case.outputs[0].dtype, enc.bitwidth)
    axis = int(np.asarray(params["axis"]).reshape(-1)[0]) % x.ndim
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


@register_model("CumulativeSum", name="first-slice-from-lowest-code")
def cumulative_sum_first_slice_from_lowest_code(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_8 inclusive CumulativeSum over an axis of one element that lands on the height
    or width of its 4-D layout (finding cumulativesum-u8-single-slice-from-lowest-code): the running sum starts at
    out[0]'s lowest code (real value offset x scale) instead of at 0, so the one slice comes out as in[0] plus that
    value, saturated at the code range; the slices after the first (none on such an axis) are left open (NaN)."""
    from cases.quant import code_range
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    enc = case.outputs[0].encoding
    scale, offset = float(enc.scales[0]), int(enc.offsets[0])
    qmin, qmax = code_range(case.outputs[0].dtype, enc.bitwidth)
    axis = int(np.asarray(params["axis"]).reshape(-1)[0]) % x.ndim
    y = np.full_like(x, np.nan)
    first = tuple(slice(0, 1) if i == axis else slice(None) for i in range(x.ndim))
    lowest = (qmin + offset) * scale
    y[first] = np.clip(x[first] + lowest, lowest, (qmax + offset) * scale)
    return [y]
