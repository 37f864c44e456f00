"""Models of the HTP simulator's HadamardTransform deviations (reference.models): what a backend with the bug returns.

Kept beside ``reference/matmul.py``, which holds the implementation and the older model of the op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import register_model, register_symptom

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


@register_model("HadamardTransform", name="unit-axis-scale-ignored-signed-offset-dropped")
def hadamard_unit_axis_scale_ignored(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 16-bit HadamardTransform over a last axis of one element (finding
    hadamard-16bit-unit-axis-copy), where the transform is the identity and out[0] = in[0] x scale: the backend ignores
    scale, and a SFIXED_POINT_16 in[0] is read without its offset (its codes times its scale), requantized to out[0]'s
    grid. Measured: codes 5609, 2191, 178, -3684 at offset 2311 (or -2000, 0) come back as the codes themselves times
    in[0]'s scale at scale 0.5, 1 and 2; UFIXED_POINT_16 keeps its offset, still ignores scale. Longer axes are not
    this model (it refuses them)."""
    from reference.expected import arguments

    if case.inputs[0].shape[-1] != 1:
        raise ValueError("unit-axis-scale-ignored-signed-offset-dropped: a last axis of one element only")
    t = case.inputs[0]
    if t.dtype == "SFIXED_POINT_16":
        return [np.asarray(t.data, dtype=np.float64) * float(t.encoding.scales[0])]
    inputs, _ = arguments(case)
    return [np.asarray(inputs[0], dtype=np.float64)]


@register_model("MatMul", name="htp-16x8-in1-requantized")
def matmul_16x8_in1_requantized(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 16x8 MatMul (finding matmul-16x8-in1-requantized): in[1]'s codes minus its zero point are
    taken as signed 8-bit integers, and where one output column's (one row of K values per output channel, per batch
    matrix) leave [-128, 127] that column is requantized onto a symmetric grid, its codes divided by max(-min / 128,
    max / 127) and rounded half to even, then multiplied back; the product is exact from there. It is
    conv-16x8-precision's requantization of static weights (htp-16x8-weights-requantized) on MatMul's in[1] given at
    run time. The edge cases of seeds 0-2 with in[1]'s zero point 168-179 (or 123) are 94-148 steps from the spec and
    10-23 steps from this model (their budgets 33-40 steps)."""
    import reference
    from reference.expected import arguments

    w = case.inputs[1]
    if w.dtype != "UFIXED_POINT_8" or case.inputs[0].dtype != "UFIXED_POINT_16" or len(w.encoding.scales) != 1:
        raise ValueError("htp-16x8-in1-requantized: 16-bit in[0] and per-tensor UFIXED_POINT_8 in[1] only")
    inputs, params = arguments(case)
    k_axis = -1 if bool(params.get("transpose_in1", False)) else -2
    q = w.data.astype(np.float64) + float(w.encoding.offsets[0])  # codes minus the zero point
    lo, hi = q.min(axis=k_axis, keepdims=True), q.max(axis=k_axis, keepdims=True)
    f = np.maximum(np.maximum(-lo / 128.0, hi / 127.0), 1.0)
    inputs = list(inputs)
    inputs[1] = np.round(q / f) * f * float(w.encoding.scales[0])
    return reference.run("MatMul", inputs, params)
