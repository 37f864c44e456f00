"""Indexing ops: values selected or written by an index tensor (Gather*, Scatter*, NonZero, OneHot,
BatchPermutation).

Index conventions, shared by every op here (each is a ``decisions:`` entry in the op's opdefs YAML,
with its seed line and reason):

* An index of -1 means "skip" (MasterOpDef 6091, 6176, 6251, 11584, 11699), never "the last
  element" as in ONNX. A skipped gather yields zeros (as BatchPermutation states for its ignored
  indices, 397); a skipped scatter update is not applied. NonZero pads its output with -1 so its
  result can feed these ops directly.
  A UINT_32 index tensor spells -1 as 0xFFFFFFFF, which is read as -1 too (whether it arrives as a
  uint32 array or as its float64 real value).
* Any other index outside the valid range is a malformed case and raises ``ValueError``.
* Gathered values are exact copies, so outputs keep the data's dtype; scatter reductions compute in
  float64 (on float64 data, as the caller passes it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference import member, register
from reference.datamovement import check_axis, int_param, param
from reference.models import register_model

_UINT32_MINUS_ONE = 2**32 - 1


def _indices(a: Any) -> np.ndarray:
    """An index tensor as int64, with UINT_32's 0xFFFFFFFF folded to -1 (see module docstring)."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ValueError("index tensor holds non-integer values")
        out = a.astype(np.int64)
        out[out == _UINT32_MINUS_ONE] = -1
        return out
    if a.dtype.kind == "u":
        out = a.astype(np.int64)
        out[out == np.iinfo(a.dtype).max] = -1
        return out
    if a.dtype.kind in "ib":
        return a.astype(np.int64)
    raise ValueError(f"index tensor of dtype {a.dtype}")


def _check_range(idx: np.ndarray, size: Any, what: str) -> np.ndarray:
    """Validate indices (allowing -1 = skip) and return the skip mask."""
    skip = idx == -1
    bad = ~skip & ((idx < 0) | (idx >= size))
    if np.any(bad):
        raise ValueError(f"{what}: index {idx[bad].flat[0]} outside [0, size-1] (and not -1)")
    return skip


def _zero(x: np.ndarray) -> Any:
    return np.zeros((), dtype=x.dtype)[()]


# ---------------------------------------------------------------------------------------------
# Gathers


@register("Gather", verified_by="onnxruntime")
def gather(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    idx = _indices(inputs[1])
    axis = check_axis(int_param(params, "axis"), x.ndim)
    skip = _check_range(idx, x.shape[axis], "Gather")
    out = np.take(x, np.where(skip, 0, idx), axis=axis)
    if np.any(skip):
        mask = skip.reshape((1,) * axis + idx.shape + (1,) * (x.ndim - axis - 1))
        out = np.where(mask, _zero(x), out)
    return [out]


@register("GatherElements", verified_by="onnxruntime")
def gather_elements(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    idx = _indices(inputs[1])
    axis = check_axis(int_param(params, "axis", 0), x.ndim)
    if idx.ndim != x.ndim:
        raise ValueError(f"in[1] rank {idx.ndim} differs from in[0] rank {x.ndim}")
    if any(i > d for k, (i, d) in enumerate(zip(idx.shape, x.shape, strict=True)) if k != axis):
        raise ValueError(f"in[1] shape {idx.shape} exceeds in[0] shape {x.shape} off the axis")
    skip = _check_range(idx, x.shape[axis], "GatherElements")
    # take_along_axis broadcasts the other axes, so cut in[0] to in[1]'s extent there first.
    cut = tuple(slice(None) if k == axis else slice(0, n) for k, n in enumerate(idx.shape))
    out = np.take_along_axis(x[cut], np.where(skip, 0, idx), axis=axis)
    return [np.where(skip, _zero(x), out)]


def _nd_batches(x: np.ndarray, idx: np.ndarray, batch_dims: int, what: str):
    """Shared GatherNd/ScatterNd plumbing: the per-tuple skip mask and flat row numbers into
    ``x`` viewed as [prod(batch) * prod(indexed dims), rest...]."""
    k = idx.shape[-1]
    if k > x.ndim - batch_dims:
        raise ValueError(f"{what}: index tuples of length {k} for rank {x.ndim} with batch_dims={batch_dims}")
    if idx.shape[:batch_dims] != x.shape[:batch_dims]:
        raise ValueError(f"{what}: batch shapes {idx.shape[:batch_dims]} and {x.shape[:batch_dims]} differ")
    dims = np.array(x.shape[batch_dims : batch_dims + k], dtype=np.int64)
    skip = _check_range(idx, dims, what)
    skip_tuple = np.any(skip, axis=-1)
    safe = np.where(skip, 0, idx)
    nb = int(np.prod(x.shape[:batch_dims], dtype=np.int64))
    tuples = int(np.prod(idx.shape[batch_dims:-1], dtype=np.int64))
    inner = safe.reshape(nb, tuples, k)
    if k:
        flat = np.ravel_multi_index(tuple(np.moveaxis(inner, -1, 0)), tuple(dims))
    else:  # empty tuples address the whole (batch) tensor
        flat = np.zeros((nb, tuples), np.int64)
    rows = flat + np.arange(nb, dtype=np.int64)[:, None] * int(np.prod(dims, dtype=np.int64))
    return skip_tuple, rows.reshape(-1), k


@register("GatherNd", verified_by="onnxruntime")
def gather_nd(inputs, params, out_shapes, out_dtypes, *, op):
    """ONNX/TensorFlow GatherND with batch_dims: out[b..., t..., rest...] = x[b..., idx[b..., t...], rest...]."""
    x = np.asarray(inputs[0])
    idx = _indices(inputs[1])
    batch_dims = int_param(params, "batch_dims", 0)
    if not 0 <= batch_dims < min(x.ndim, idx.ndim):
        raise ValueError(f"batch_dims={batch_dims} must be < min(rank(in[0]), rank(in[1]))")
    skip, rows, k = _nd_batches(x, idx, batch_dims, "GatherNd")
    rest = x.shape[batch_dims + k :]
    table = x.reshape((-1,) + rest)
    out = table[rows].reshape(idx.shape[:-1] + rest)
    if np.any(skip):
        out = np.where(skip.reshape(skip.shape + (1,) * len(rest)), _zero(x), out)
    return [out]


# ---------------------------------------------------------------------------------------------
# Scatters


def _scatter_rows(table: np.ndarray, rows: np.ndarray, updates: np.ndarray, reduction: str, op: str) -> None:
    """Apply ``updates[i]`` to ``table[rows[i]]`` in place, per the reduction.

    NONE: duplicates "override previous updated values" (11656), so the last one in row-major order
    wins. MAX starts from the copy of in[0], as the spec's formula does."""
    if reduction == "NONE":
        # Last occurrence wins: keep, per target row, the highest position i.
        rev_rows = rows[::-1]
        _, first_in_rev = np.unique(rev_rows, return_index=True)
        keep = len(rows) - 1 - first_in_rev
        table[rows[keep]] = updates[keep]
    elif reduction == "ADD":
        np.add.at(table, rows, updates)
    elif reduction == "MUL":
        np.multiply.at(table, rows, updates)
    elif reduction == "MAX" and op == "ScatterElements":
        np.maximum.at(table, rows, updates)
    else:
        raise ValueError(f"{op}: unknown reduction {reduction}")


@register("ScatterElements", verified_by="onnxruntime")
def scatter_elements(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    idx = _indices(inputs[1])
    upd = np.asarray(inputs[2])
    axis = check_axis(int_param(params, "axis", 0), x.ndim)
    reduction = member(op, params, "reduction")  # ScatterElements 11664-11670, ScatterNd 11767-11772
    if idx.shape != upd.shape or idx.ndim != x.ndim:
        raise ValueError(f"in[1] {idx.shape} and in[2] {upd.shape} must share in[0]'s rank {x.ndim} and shape")
    if any(i > d for k, (i, d) in enumerate(zip(idx.shape, x.shape, strict=True)) if k != axis):
        raise ValueError(f"in[1] shape {idx.shape} exceeds in[0] shape {x.shape} off the axis")
    skip = _check_range(idx, x.shape[axis], op)
    coords = list(np.indices(idx.shape, sparse=True))
    coords[axis] = idx
    coords = np.broadcast_arrays(*coords)
    flat = np.ravel_multi_index(tuple(c[~skip] for c in coords), x.shape)
    out = x.astype(np.result_type(x, upd), copy=True).reshape(-1)
    _scatter_rows(out, flat, upd[~skip], reduction, op)
    return [out.reshape(x.shape)]


@register("ScatterNd", verified_by="onnxruntime")
def scatter_nd(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    idx = _indices(inputs[1])
    upd = np.asarray(inputs[2])
    reduction = member(op, params, "reduction")  # ScatterElements 11664-11670, ScatterNd 11767-11772
    skip, rows, k = _nd_batches(x, idx, 0, op)
    rest = x.shape[k:]
    expected = idx.shape[:-1] + rest
    if upd.shape != expected:
        raise ValueError(f"in[2] shape {upd.shape}, expected {expected}")
    out = x.astype(np.result_type(x, upd), copy=True)
    table = out.reshape((-1,) + rest)
    keep = ~skip.reshape(-1)
    _scatter_rows(table, rows[keep], upd.reshape((-1,) + rest)[keep], reduction, op)
    return [table.reshape(x.shape)]


# ---------------------------------------------------------------------------------------------
# NonZero, OneHot, BatchPermutation


@register("NonZero", verified_by="onnxruntime")
def nonzero(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    dtype = np.dtype(out_dtypes[0]) if out_dtypes else np.dtype(np.int32)
    if dtype.kind not in "iu":  # the spec allows INT_32 / UINT_32 only
        dtype = np.dtype(np.int32)
    coords = np.argwhere(x != 0)  # row-major order
    fill = np.iinfo(dtype).max if dtype.kind == "u" else -1
    out = np.full((x.size, x.ndim), fill, dtype=dtype)
    out[: len(coords)] = coords
    return [out]


@register("OneHot", verified_by="onnxruntime")
def one_hot(inputs, params, out_shapes, out_dtypes, *, op):
    idx = _indices(inputs[0])
    depth = int_param(params, "depth")
    axis = check_axis(int_param(params, "axis"), idx.ndim + 1)
    on = np.asarray(param(params, "on_value", 1)).reshape(())
    off = np.asarray(param(params, "off_value", 0)).reshape(())
    dtype = np.bool_ if out_dtypes and np.dtype(out_dtypes[0]) == np.bool_ else np.float64
    hot = idx[..., None] == np.arange(depth)  # out-of-range indices match nothing
    out = np.where(hot, on, off).astype(dtype)
    return [np.moveaxis(out, -1, axis)]


@register("BatchPermutation", verified_by="onnxruntime")
def batch_permutation(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    idx = _indices(inputs[1]).reshape(-1)
    valid = idx[(idx >= 0) & (idx < x.shape[0])]
    if len(np.unique(valid)) != len(valid):
        raise ValueError(f"valid indices must be unique, got {valid.tolist()}")
    out = np.zeros((len(idx),) + x.shape[1:], dtype=x.dtype)
    out[: len(valid)] = x[valid]
    return [out]


# --- models of deviations (reference.models): what a backend with a known bug returns --------------


@register_model("Gather", "BatchPermutation", name="sign-bit-flipped")
def gather_sign_bit_flipped(case: Any) -> list[np.ndarray]:
    """The HTP simulator's SFIXED_POINT_8 Gather (finding gather-s8-sign-flip): every gathered code comes back with
    its sign bit flipped, 128 codes off (the table's 89 as -39), as if signed codes were copied through an unsigned
    8-bit path with the wrong offset. BatchPermutation is the same bug where the ONNX route hands it as Gather on
    axis 0 (ort-qnn's ep-gather-s8-sign-flip)."""
    from cases.quant import dequantize, quantize
    from reference.expected import expected

    out = case.outputs[0]
    codes = quantize(expected(case)[0], out.encoding, out.dtype).astype(np.int16)
    return [dequantize(np.where(codes < 0, codes + 128, codes - 128), out.encoding)]


@register_model("Gather", name="outer-rows-after-first-open")
def gather_outer_rows_after_first_open(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 Gather on the axis before the last of a rank-3 or rank-4 table (finding
    gather-f16-outer-rows-garbage): the slice at index 0 of every axis before ``axis`` is right, the others hold values
    that are neither the table's nor the gathered ones (940.5, -512.5, 0 from a table within +-2), so they are left open
    (NaN)."""
    from reference.expected import arguments, expected

    _, params = arguments(case)
    y = expected(case)[0]
    axis = int(params.get("axis", 0)) % max(len(case.inputs[0].shape), 1)
    out = np.full_like(y, np.nan, dtype=np.float64)
    first = (0,) * axis
    out[first] = y[first]
    return [out]


@register_model("Gather", name="outer-rows-read-as-first")
def gather_outer_rows_read_as_first(case: Any) -> list[np.ndarray]:
    """The HTP simulator's Gather into a rank-5 output (finding gather-rank5-wrong-values): every slice along the
    output's first axis repeats the first. With ``axis`` > 0 that axis is the table's: every index of the axes before
    ``axis`` reads the table's first one, so the second row of a [2, 3] table gathered on axis 1 repeats the first's
    values. With ``axis`` 0 it is in[1]'s: every index row along in[1]'s first axis reads as the first (seed 0's edge
    case, a [3, 4, 5] table and [3, 4, 5] indices: out[1] and out[2] are out[0])."""
    from dataclasses import replace

    from reference.expected import arguments, expected

    _, params = arguments(case)
    axis = int(params.get("axis", 0))
    t = case.inputs[0] if axis else case.inputs[1]
    first = np.broadcast_to(t.data[(slice(0, 1),) * max(axis, 1)], t.data.shape).copy()
    inputs = list(case.inputs)
    inputs[0 if axis else 1] = replace(t, data=first)
    return expected(replace(case, inputs=inputs))


@register_model("Gather", name="leading-rows-strided-rest-open")
def gather_leading_rows_strided_rest_open(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 8-bit Gather of a [d0, d1, W] table on its last axis with indices shaped [1, n] (finding
    gather-8bit-last-axis-row-indices-strided-rows): out[0], [d0, d1, 1, n], read as d0 * d1 rows of n, has its row r
    gathered from the table's row r * d1 (row d1, not row 1, in row 1) for r < min(d0, d1), and the rows past those
    are not the spec's (zeros in a fresh process, or values read past the table), so they are left open (NaN)."""
    from reference.expected import expected

    y = np.asarray(expected(case)[0], dtype=np.float64)
    d0, d1 = (int(d) for d in case.inputs[0].shape[:2])
    n = int(np.prod(case.inputs[1].shape))
    rows = y.reshape(d0 * d1, n)
    out = np.full_like(rows, np.nan)
    k = min(d0, d1)
    out[:k] = rows[np.arange(k) * d1]
    return [out.reshape(y.shape)]


@register_model("ScatterNd", name="mul-partials-on-output-grid")
def scatter_nd_mul_partials_on_output_grid(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point ScatterNd with the MUL reduction (finding
    scatternd-fixed-mul-partials-on-output-grid): the copy of in[0] and then each partial product is requantized to
    out[0]'s grid (rounded to its step, held in its range) before the next update to the same element multiplies it,
    in in[1]'s order: -2.55 x -1.08 x 3.65 = 10.1 is held at 3.09, then x -2.20, x -1.33 (held again), x -0.46 gives
    -1.43 where -13.7 belongs (seed 1's edge case, five updates to one row of a [1, 4, 5, 5] UFIXED_POINT_8 tensor).
    ADD is right (one rounding at the end, as the spec)."""
    from cases.quant import dequantize, quantize
    from reference.expected import arguments

    inputs, params = arguments(case)
    if member(case.op, params, "reduction") != "MUL":
        raise ValueError("mul-partials-on-output-grid: the MUL reduction only")
    out = case.outputs[0]

    def held(v: np.ndarray) -> np.ndarray:
        return dequantize(quantize(v, out.encoding, out.dtype), out.encoding)

    x, upd = np.asarray(inputs[0], dtype=np.float64), np.asarray(inputs[2], dtype=np.float64)
    skip, rows, k = _nd_batches(x, _indices(inputs[1]), 0, case.op)
    rest = x.shape[k:]
    table = held(x).reshape((-1,) + rest)
    updates = upd.reshape((-1,) + rest)
    for r, u, s in zip(rows, updates, skip.reshape(-1), strict=True):
        if not s:
            table[r] = held(table[r] * u)
    return [table.reshape(x.shape)]


@register_model("ScatterElements", name="updates-read-on-data-grid")
def scatter_elements_updates_read_on_data_grid(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point ScatterElements with the ADD reduction (finding
    scatterelements-fixed-add-updates-on-data-grid): in[2]'s stored codes are read on in[0]'s grid (its scale and
    offset) before they are added, and the sums are then requantized to out[0] as the spec's would be: data 3.686 (code
    216 at scale 0.0358, offset -113) plus the update -0.815 (code 154 at scale 0.0204, offset -194) gives
    3.686 + (154 - 113) x 0.0358 = 5.15 where 2.87 belongs (seed 2's edge case)."""
    from dataclasses import replace

    from reference.expected import arguments, expected

    _, params = arguments(case)
    if member(case.op, params, "reduction") != "ADD":
        raise ValueError("updates-read-on-data-grid: the ADD reduction only")
    data, updates = case.inputs[0], case.inputs[2]
    if data.encoding is None or updates.encoding is None or data.dtype != updates.dtype:
        raise ValueError("updates-read-on-data-grid: in[0] and in[2] fixed point of one type")
    inputs = list(case.inputs)
    inputs[2] = replace(updates, encoding=data.encoding)
    return expected(replace(case, inputs=inputs))
