"""Models of the HTP simulator's HadamardTransform deviations (reference.models): what a backend with the bug returns.

Kept beside ``reference/matmul.py``, which holds the implementation and the older model of the op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import register_symptom

# How far 16-bit HadamardTransform's constant shift was measured to reach, in steps of in[0]'s scale: 15.5 on the
# 40 scale-0.1 failures of seeds 0-4 (hadamard-16bit-offset's reason); 16 allows for rounding. A last axis of 256 is
# transformed in two passes (result-held-in-int16-at-input-scale): the first pass's shift, carried through the second
# (the 4-point transform across the blocks of 64, divided by 2), lands twice over on the first block alone.
HADAMARD_SHIFT_INPUT_STEPS = 16.0


@register_symptom("HadamardTransform", name="one-constant-shift-within-16-input-steps")
def hadamard_one_constant_shift(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP simulator's 16-bit HadamardTransform (finding hadamard-16bit-offset): every output element is the
    spec's plus one constant, the same for the whole case and independent of the data, at most 16 steps of in[0]'s
    scale (it depends on the last axis's length n and on scale: +13 in[0] steps at n = 2 and scale 0.1, -8 at n = 4,
    -0.62 x scale at n = 4 and scale >= 0.5). A last axis of 256, transformed in two passes, carries the first pass's
    shift into the first block of 64 only, twice over (-15.5 there, -0.5 and 0 elsewhere, at scale 0.1), with the
    second pass's own shift on every element. Which constant a case gets follows no rule found, so the symptom fits
    the shifts (least squares, each at most 16 steps of in[0], twice that on the first block) and holds every element
    to the case's budget around the shifted result; an element the backend clipped to out[0]'s lowest or highest
    code shows no shift and is left out of the fit (still held to the budget). A result off by different amounts per
    element (a dropped low byte, a wrong sign, saturation) does not show it."""
    from reference.expected import expected
    from reference.models import real_outputs

    want = expected(case)[0]
    got = real_outputs(case, stored)[0]
    n = want.shape[-1]
    columns = [np.ones(want.shape)]
    if n == 256:
        columns.append(np.broadcast_to(np.arange(n) < 64, want.shape).astype(np.float64))
    design = np.stack([col.ravel() for col in columns], axis=1)
    # an element at out[0]'s lowest or highest code was clipped there: its shift is not seen, and fitted it pulls the
    # shift toward 0 (seed 4's [1, 2, 2] case 54d591cc367d8110: +13 in[0] steps on its two unclipped elements, 10.1
    # with a clipped one beside them); the fitted result is still held to the budget on every element
    codes = np.asarray(stored[0])
    seen = ((codes > np.iinfo(codes.dtype).min) & (codes < np.iinfo(codes.dtype).max)).ravel() \
        if np.issubdtype(codes.dtype, np.integer) else np.ones(codes.size, bool)
    if not seen.any():
        seen[:] = True
    shifts, *_ = np.linalg.lstsq(design[seen], (got - want).ravel()[seen], rcond=None)
    step = float(case.inputs[0].encoding.scales[0])
    limits = [HADAMARD_SHIFT_INPUT_STEPS * step, 2 * HADAMARD_SHIFT_INPUT_STEPS * step][:len(shifts)]
    if any(abs(v) > lim for v, lim in zip(shifts, limits, strict=True)):
        return f"the shifts {np.round(shifts / step, 2).tolist()} (steps of in[0]) are past their bounds"
    j = judged([want + (design @ shifts).reshape(want.shape)])
    if not j.passed:
        return f"not a constant shift ({np.round(shifts / step, 2).tolist()} steps of in[0]): {j.message}"
    return None
