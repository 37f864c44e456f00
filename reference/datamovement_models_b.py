"""Models of the HTP simulator's data movement deviations that combine (a finding's ``diagnosis`` list,
``reference.models``): each bug's own model lives in ``reference.datamovement``; this module says how they add up."""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.datamovement import int_vector, pad_last_axis_after_pad_least_code, pad_value_on_input_grid
from reference.models import real_outputs, register_combination, register_model, register_symptom

_PAD_BUGS = ("pad-value-on-input-grid", "last-axis-after-pad-least-code")


def _last_axis_end_pad_applies(case: Any) -> bool:
    """Where finding pad-s8-constant-last-axis-end-qmin's sweeps saw its bug: SFIXED_POINT_8 CONSTANT Pad with a pad
    after the last axis, none before it, and a pad after an earlier axis."""
    from reference.expected import arguments

    _, params = arguments(case)
    amounts = int_vector(params, "pad_amount").reshape(len(case.inputs[0].shape), 2)
    return (case.inputs[0].dtype == "SFIXED_POINT_8" and int(amounts[-1][0]) == 0 and int(amounts[-1][1]) > 0
            and bool((amounts[:-1, 1] > 0).any()))  # fmt: skip


@register_combination("Pad")
def pad_with(case: Any, names: list[str]) -> list[np.ndarray]:
    """The HTP simulator's fixed-point CONSTANT Pad with both its bugs (findings
    pad-fixed-value-saturates-to-input-range and pad-s8-constant-last-axis-end-qmin): the pad value saturated to
    in[0]'s range, and in SFIXED_POINT_8 with an after-pad on the last axis (none before it) and on an earlier axis,
    the cells padded after the last axis on the input's own rows at the least code (-128) whatever the pad value.
    ``names[0]`` always applies, the other where the case meets its condition."""
    unknown = [n for n in names if n not in _PAD_BUGS]
    if unknown or not names:
        raise ValueError(f"Pad has no combined deviation {unknown or names}")
    y = np.array(pad_value_on_input_grid(case)[0] if _PAD_BUGS[0] in names else
                 pad_last_axis_after_pad_least_code(case)[0], dtype=np.float64)  # fmt: skip
    both = _PAD_BUGS[0] in names and _PAD_BUGS[1] in names
    if both and (names[0] == _PAD_BUGS[1] or _last_axis_end_pad_applies(case)):
        region = _last_axis_end_region(case)
        y[region] = pad_last_axis_after_pad_least_code(case)[0][region]
    return [y]


def _last_axis_end_region(case: Any) -> tuple[slice, ...]:
    """The cells padded after the last axis on the input's own rows (what last-axis-after-pad-least-code changes)."""
    from reference.expected import arguments

    _, params = arguments(case)
    x_shape = case.inputs[0].shape
    amounts = int_vector(params, "pad_amount").reshape(len(x_shape), 2)
    region = tuple(slice(int(b), int(b) + n) for (b, _), n in zip(amounts[:-1], x_shape[:-1], strict=True))
    return region + (slice(int(amounts[-1][0]) + x_shape[-1], None),)



@register_model("Concat", name="first-input-only-rest-open")
def concat_first_input_only(case: Any) -> list[np.ndarray]:
    """The HTP simulator's signed fixed-point Concat with axis left out (finding concat-sfixed-default-axis-first-input-
    only): out[0] holds in[0]'s values (on out[0]'s grid) where a concatenation on axis 1 (rank 4) or axis 0 (other
    ranks) would put them, and the places of the other inputs are not written: they hold whatever the buffer held
    (the lowest code in a fresh process, an earlier graph's values after it), left open (NaN). Seed 2's [5, 4, 4] x 3
    -> [5, 4, 12]: in[0]'s 80 values in order, then 160 codes -128."""
    from reference.expected import arguments

    inputs, _ = arguments(case)
    if case.outputs[0].encoding is None:
        raise ValueError("first-input-only-rest-open: a fixed-point out[0] only")
    rank = len(case.inputs[0].shape)
    blocks = [np.asarray(inputs[0], dtype=np.float64)]
    blocks += [np.full(np.shape(x), np.nan) for x in inputs[1:] if x is not None]
    return [np.concatenate(blocks, axis=1 if rank == 4 else 0).reshape(case.outputs[0].shape)]



def one_hot_convolution(case: Any) -> list[np.ndarray]:
    """The HTP simulator's float ExtractPatches at NaN and infinite inputs (finding
    extractpatches-float-specials-spread-over-channel): out[0] is computed as a convolution whose filters pick one
    patch cell each (weight 1 there, 0 at the patch's other cells of the same channel), in IEEE arithmetic. So a NaN or
    an infinity in a patch turns every output of that patch and channel into NaN (0 x inf), and an infinity alone in
    its patch and channel stays itself at its own place; finite values (3.4e38 too) come out as they are. Seed 2's
    [3, 7, 5, 2] case, 3 x 3 patches: 16 of 18 outputs of its first patch NaN where 2 belong."""
    from reference.expected import arguments, expected

    inputs, params = arguments(case)
    size = [int(v) for v in np.asarray(params["size"]).reshape(-1)]
    depth = int(np.shape(inputs[0])[-1])
    e = np.asarray(expected(case)[0], dtype=np.float64)
    cells = size[0] * size[1]
    v = e.reshape(-1, cells, depth)  # [pixel, cell, channel]
    with np.errstate(invalid="ignore"):
        picked = v[:, :, None, :] * np.eye(cells)[None, :, :, None]  # [pixel, cell p, output cell k, channel]
        out = np.sum(picked, axis=1)
    return [out.reshape(e.shape)]


@register_symptom("ExtractPatches", name="nan-over-patch-channel-with-special")
def extract_patches_nan_over_patch_channel(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """Finding extractpatches-float-specials-spread-over-channel: out[0] is one_hot_convolution's, NaN where it is NaN
    (a NaN there is required, not any value) and the rest within the case's budget of it."""
    model = one_hot_convolution(case)[0]
    if not np.isnan(model).any():
        return "no patch holds a NaN or an infinity beside another cell of its channel"
    actual = np.asarray(real_outputs(case, stored)[0], dtype=np.float64)
    if actual.shape != model.shape:
        return f"out[0] has shape {actual.shape}, not {model.shape}"
    if not np.isnan(actual[np.isnan(model)]).all():
        return "an output the one-hot convolution makes NaN is not NaN"
    j = judged([np.where(np.isnan(model), actual, model)])
    return None if j.passed else f"outside the one-hot convolution's values: {j.message}"


@register_model("ExtractPatches", name="input-codes-pad-at-output-zero-point")
def extract_patches_input_codes_pad_zero(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point ExtractPatches (finding extractpatches-fixed-input-codes): in[0]'s stored codes
    copied into out[0] unrequantized, and with SAME padding the pad cells at out[0]'s zero point (0 on out[0]'s grid,
    where copying in[0]'s zero point would give in[0]'s): seed 0's [3, 3, 1, 4] case, a 2 x 3 patch, pads code 105
    (out[0]'s zero point), input cells their own codes (19, 107 ...)."""
    from dataclasses import replace

    from cases.quant import dequantize
    from reference.expected import expected

    x, out = case.inputs[0], case.outputs[0]
    if x.encoding is None or out.encoding is None:
        raise ValueError("input-codes-pad-at-output-zero-point: fixed-point in[0] and out[0] only")
    zero = -float(out.encoding.offsets[0])  # out[0]'s zero-point code
    shifted = replace(x, dtype="FLOAT_32", data=(x.data.astype(np.float64) - zero).astype(np.float32), encoding=None)
    moved = expected(replace(case, inputs=[shifted, *case.inputs[1:]],
                             outputs=[replace(out, dtype="FLOAT_32", encoding=None)]))[0]  # fmt: skip
    return [dequantize(np.asarray(moved, dtype=np.float64) + zero, out.encoding)]
