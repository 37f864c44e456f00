"""Data movement and shape ops: values are only moved, copied or padded, never computed.

Every op here is exact, so the implementations keep the input's numpy dtype (float64 real values,
bool for BOOL_8, integers where the caller passes integers) and never round. The indexing ops
(Gather*, Scatter*, NonZero, OneHot, BatchPermutation) live in ``reference.indexing``.

Layout is QNN's: 4-D image ops are NHWC, block sizes are ``[block_height, block_width]``. Every
axis / perm parameter is UINT_32 in the MasterOpDef, so a negative axis is a malformed case and
raises instead of wrapping around.

Where the MasterOpDef is silent or ambiguous, the choice made here is recorded, with its seed line
(``shared/seeds/004_b46271055e0d5186.txt``) and reason, in the ``decisions:`` list of the op's
opdefs YAML file; comments below name the line they depend on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference import member, register
from reference.models import nearest_of, real_outputs, register_model, register_symptom

# Enum values, from the seed's "Values" lists.
# Enum parameters are compared by the spec's member names (the numbers live in the YAML only):
# DepthToSpace / SpaceToDepth mode DCR / CRD (2435-2437, 12130-12132), ExtractPatches padding VALID /
# SAME (5946-5948), Pad scheme (9620-9627).

_NP_PAD_MODE = {
    "CONSTANT": "constant",
    "MIRROR_SYMMETRIC": "symmetric",
    "MIRROR_REFLECT": "reflect",
    "EDGE": "edge",
}


# ---------------------------------------------------------------------------------------------
# Parameter helpers (shared with reference.indexing)


def param(params: dict[str, Any], name: str, default: Any = None) -> Any:
    """A parameter value, or ``default`` when absent (spec defaults, symbolic ones such as ``N-1``
    included, are already in ``params``: reference.run resolves them)."""
    v = params.get(name)
    if v is None or isinstance(v, str):
        return default
    return v


def int_param(params: dict[str, Any], name: str, default: int | None = None) -> int:
    v = param(params, name, default)
    if v is None:
        raise ValueError(f"parameter {name!r} is mandatory")
    return int(np.asarray(v).reshape(()))


def int_vector(params: dict[str, Any], name: str, default: Any = None) -> np.ndarray | None:
    """A tensor parameter as an int64 array (None when absent and no default)."""
    v = param(params, name, default)
    if v is None:
        return None
    a = np.asarray(v)
    if a.dtype.kind == "f" and not np.all(a == np.round(a)):
        raise ValueError(f"parameter {name!r} must hold integers, got {a}")
    return a.astype(np.int64)


def check_axis(axis: int, rank: int, name: str = "axis") -> int:
    """UINT_32 axes: no negative values, no wrap-around."""
    if not 0 <= axis < rank:
        raise ValueError(f"{name}={axis} outside [0, {rank - 1}]")
    return axis


def _block(params: dict[str, Any]) -> tuple[int, int]:
    b = int_vector(params, "block_size")
    if b is None or b.shape != (2,) or np.any(b < 1):
        raise ValueError(f"block_size must be two values >= 1, got {b}")
    return int(b[0]), int(b[1])


def _pairs(params: dict[str, Any], name: str) -> np.ndarray:
    a = int_vector(params, name, [[0, 0], [0, 0]])
    a = a.reshape(2, 2)
    if np.any(a < 0):
        raise ValueError(f"{name} must be non-negative, got {a.tolist()}")
    return a


def _nhwc(x: np.ndarray, op: str) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 4:
        raise ValueError(f"{op} expects a 4-D NHWC tensor, got shape {x.shape}")
    return x


def _zero_like(x: np.ndarray) -> Any:
    return np.zeros((), dtype=x.dtype)[()]


# ---------------------------------------------------------------------------------------------
# Block rearrangements (NHWC)


@register("DepthToSpace", verified_by="onnxruntime")
def depth_to_space(inputs, params, out_shapes, out_dtypes, *, op):
    x = _nhwc(inputs[0], op)
    bh, bw = _block(params)
    mode = member(op, params, "mode")
    n, h, w, c = x.shape
    if c % (bh * bw):
        raise ValueError(f"depth {c} not divisible by block {bh}x{bw}")
    co = c // (bh * bw)
    # 'depth, column, then row' (2413) lists the sub-indices fastest first: DCR is NNAPI/TF/ONNX DCR.
    if mode == "DCR":  # channel = (row*bw + col)*co + d
        y = x.reshape(n, h, w, bh, bw, co).transpose(0, 1, 3, 2, 4, 5)
    elif mode == "CRD":  # channel = d*bh*bw + row*bw + col
        y = x.reshape(n, h, w, co, bh, bw).transpose(0, 1, 4, 2, 5, 3)
    else:
        raise ValueError(f"unknown mode {mode}")
    return [y.reshape(n, h * bh, w * bw, co)]


@register("SpaceToDepth", verified_by="onnxruntime")
def space_to_depth(inputs, params, out_shapes, out_dtypes, *, op):
    x = _nhwc(inputs[0], op)
    bh, bw = _block(params)
    mode = member(op, params, "mode")
    n, h, w, c = x.shape
    if h % bh or w % bw:
        raise ValueError(f"spatial {h}x{w} not divisible by block {bh}x{bw}")
    t = x.reshape(n, h // bh, bh, w // bw, bw, c)  # axes: n, ho, row, wo, col, d
    if mode == "DCR":
        y = t.transpose(0, 1, 3, 2, 4, 5)
    elif mode == "CRD":
        y = t.transpose(0, 1, 3, 5, 2, 4)
    else:
        raise ValueError(f"unknown mode {mode}")
    return [y.reshape(n, h // bh, w // bw, c * bh * bw)]


@register("BatchToSpace", verified_by="hand")
def batch_to_space(inputs, params, out_shapes, out_dtypes, *, op):
    """TensorFlow batch_to_space: input batch (row*bw + col)*N_out + n lands at block cell (row, col)
    of output image n, then the crops are cut off."""
    x = _nhwc(inputs[0], op)
    bh, bw = _block(params)
    crops = _pairs(params, "crops")
    b, h, w, c = x.shape
    if b % (bh * bw):
        raise ValueError(f"batch {b} not divisible by block {bh}x{bw}")
    n = b // (bh * bw)
    y = x.reshape(bh, bw, n, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(n, h * bh, w * bw, c)
    (top, bottom), (left, right) = crops
    if top + bottom > h * bh or left + right > w * bw:
        raise ValueError(f"crops {crops.tolist()} exceed the {h * bh}x{w * bw} intermediate image")
    return [y[:, top : h * bh - bottom, left : w * bw - right, :]]


@register("SpaceToBatch", verified_by="hand")
def space_to_batch(inputs, params, out_shapes, out_dtypes, *, op):
    """TensorFlow space_to_batch: zero-pad, then block cell (row, col) of image n goes to output
    batch (row*bw + col)*N + n."""
    x = _nhwc(inputs[0], op)
    bh, bw = _block(params)
    pads = _pairs(params, "pad_amount")
    # The pad value is unstated (12032); TensorFlow's space_to_batch pads with zeros.
    x = np.pad(x, ((0, 0), tuple(pads[0]), tuple(pads[1]), (0, 0)), constant_values=_zero_like(x))
    n, h, w, c = x.shape
    if h % bh or w % bw:
        raise ValueError(f"padded spatial {h}x{w} not divisible by block {bh}x{bw}")
    y = x.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5)
    return [y.reshape(bh * bw * n, h // bh, w // bw, c)]


@register("ExtractPatches", verified_by="hand")
def extract_patches(inputs, params, out_shapes, out_dtypes, *, op):
    x = _nhwc(inputs[0], op)
    size, stride, rate = (int_vector(params, k) for k in ("size", "stride", "rate"))
    for name, v in (("size", size), ("stride", stride), ("rate", rate)):
        if v is None or v.shape != (2,) or np.any(v < 1):
            raise ValueError(f"{name} must be two values > 0, got {v}")
    padding = member(op, params, "padding")
    n, h, w, c = x.shape
    dil = (size - 1) * rate + 1
    if padding == "VALID":
        out = [max(0, (dim - d) // s + 1) for dim, d, s in zip((h, w), dil, stride, strict=True)]
        pad = [(0, 0), (0, 0)]
    elif padding == "SAME":
        # TensorFlow's SAME (the text at 5939 is its documentation's): half the total before.
        out = [-(-dim // s) for dim, s in zip((h, w), stride, strict=True)]
        total = [max((o - 1) * s + d - dim, 0) for o, s, d, dim in zip(out, stride, dil, (h, w), strict=True)]
        pad = [(t // 2, t - t // 2) for t in total]
    else:
        raise ValueError(f"unknown padding {padding}")
    ho, wo = out
    if ho == 0 or wo == 0:
        return [np.zeros((n, ho, wo, size[0] * size[1] * c), dtype=x.dtype)]
    xp = np.pad(x, ((0, 0), pad[0], pad[1], (0, 0)), constant_values=_zero_like(x))
    cells = []
    for i in range(size[0]):
        for j in range(size[1]):
            r0, c0 = i * rate[0], j * rate[1]
            rows = slice(r0, r0 + (ho - 1) * stride[0] + 1, stride[0])
            cols = slice(c0, c0 + (wo - 1) * stride[1] + 1, stride[1])
            cells.append(xp[:, rows, cols])
    return [np.stack(cells, axis=3).reshape(n, ho, wo, size[0] * size[1] * c)]


@register("ChannelShuffle", verified_by="hand")
def channel_shuffle(inputs, params, out_shapes, out_dtypes, *, op):
    """out_channel[i*G + g] = in_channel[g*group_size + i]: view the axis as (G, group_size) and swap."""
    x = np.asarray(inputs[0])
    axis = check_axis(int_param(params, "axis"), x.ndim)
    groups = int_param(params, "num_groups")
    ch = x.shape[axis]
    if groups < 1 or ch % groups:
        raise ValueError(f"num_groups={groups} does not divide {ch} channels")
    shape = x.shape[:axis] + (groups, ch // groups) + x.shape[axis + 1 :]
    return [np.swapaxes(x.reshape(shape), axis, axis + 1).reshape(x.shape)]


# ---------------------------------------------------------------------------------------------
# Joining and splitting


@register("Concat", verified_by="onnxruntime")
def concat(inputs, params, out_shapes, out_dtypes, *, op):
    xs = [np.asarray(t) for t in inputs if t is not None]
    axis = check_axis(int_param(params, "axis"), xs[0].ndim)
    return [np.concatenate(xs, axis=axis)]


@register("Pack", verified_by="onnxruntime")
def pack(inputs, params, out_shapes, out_dtypes, *, op):
    xs = [np.asarray(t) for t in inputs if t is not None]
    axis = check_axis(int_param(params, "axis"), xs[0].ndim + 1)
    return [np.stack(xs, axis=axis)]


@register("UnPack", verified_by="onnxruntime")
def unpack(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    axis = check_axis(int_param(params, "axis"), x.ndim)
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


@register("Split", verified_by="onnxruntime")
def split(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    axis = check_axis(int_param(params, "axis"), x.ndim)
    idx = int_vector(params, "split_index")
    idx = np.zeros(0, np.int64) if idx is None else idx.reshape(-1)
    dim = x.shape[axis]
    if np.any(idx < 1) or np.any(idx > dim - 1) or np.any(np.diff(idx) <= 0):
        raise ValueError(f"split_index {idx.tolist()} must increase strictly within [1, {dim - 1}]")
    return list(np.split(x, idx, axis=axis))


# ---------------------------------------------------------------------------------------------
# Shape-only ops


@register("Reshape", verified_by="onnxruntime")
def reshape(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    target = None
    # in[1] is ignored unless out[0] has dynamic dimensions (10917).
    if out_shapes:
        declared = list(out_shapes[0])
        if all(d is not None and int(d) >= 0 for d in declared):
            target = [int(d) for d in declared]
    if target is None:
        if len(inputs) < 2 or inputs[1] is None:
            raise ValueError("Reshape needs a static out_shapes[0] or the shape tensor in[1]")
        spec = [int(v) for v in np.asarray(inputs[1]).reshape(-1)]
        target = [x.shape[i] if v == 0 else v for i, v in enumerate(spec)]
        if sum(v == -1 for v in target) > 1 or any(v < -1 for v in target):
            raise ValueError(f"in[1] = {spec}: at most one -1 and no other negative value")
    return [x.reshape(target)]


@register("ExpandDims", verified_by="onnxruntime")
def expand_dims(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    axes = int_vector(params, "axes")
    # Non-empty axes override axis (5709); the {0,..,0} default cannot be meant literally (unique, 5739).
    if axes is None or axes.size == 0:
        axes = np.array([int_param(params, "axis", 0)])
    axes = axes.reshape(-1)
    rank = x.ndim + axes.size
    if len(set(axes.tolist())) != axes.size:
        raise ValueError(f"axes {axes.tolist()} must be unique")
    for a in axes:
        check_axis(int(a), rank, "axes")
    return [np.expand_dims(x, tuple(int(a) for a in axes))]


def _squeeze_to(shape: tuple[int, ...], target: list[int]) -> bool:
    """Whether ``target`` is ``shape`` with some size-1 entries deleted."""
    j = 0
    for d in shape:
        if j < len(target) and target[j] == d:
            j += 1
        elif d != 1:
            return False
    return j == len(target)


@register("Squeeze", verified_by="onnxruntime")
def squeeze(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    axes = int_vector(params, "axes")
    if axes is not None and axes.size:
        axes = axes.reshape(-1)
        if len(set(axes.tolist())) != axes.size:
            raise ValueError(f"axes {axes.tolist()} must be unique")
        for a in axes:
            if x.shape[check_axis(int(a), x.ndim, "axes")] != 1:
                raise ValueError(f"axis {a} has size {x.shape[a]}, not 1")
        return [np.squeeze(x, axis=tuple(int(a) for a in axes))]
    # Without axes, size-1 dims kept in shape(out[0]) stay (12298).
    if out_shapes and out_shapes[0] is not None:
        target = [int(d) for d in out_shapes[0]]
        if not _squeeze_to(x.shape, target):
            raise ValueError(f"out shape {target} is not {x.shape} with size-1 dims removed")
        return [x.reshape(target)]
    return [np.squeeze(x)]


@register("Transpose", verified_by="onnxruntime")
def transpose(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    perm = int_vector(params, "perm").reshape(-1)
    if sorted(perm.tolist()) != list(range(x.ndim)):
        raise ValueError(f"perm {perm.tolist()} is not a permutation of range({x.ndim})")
    return [np.transpose(x, perm)]


@register("Tile", verified_by="onnxruntime")
def tile(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    mult = int_vector(params, "multiples").reshape(-1)
    if mult.size != x.ndim or np.any(mult < 0):
        raise ValueError(f"multiples {mult.tolist()} must be {x.ndim} non-negative values")
    return [np.tile(x, mult)]


@register("Shape", verified_by="onnxruntime")
def shape(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    start = int_param(params, "start", 0)
    end = int_param(params, "end")
    if not (0 <= start < end <= x.ndim):
        raise ValueError(f"start={start}, end={end} outside 0 <= start < end <= {x.ndim}")
    dtype = out_dtypes[0] if out_dtypes else np.uint32
    return [np.array(x.shape[start:end], dtype=dtype)]


@register("ConstantOfShape", verified_by="onnxruntime")
def constant_of_shape(inputs, params, out_shapes, out_dtypes, *, op):
    dims = np.asarray(inputs[0]).reshape(-1)
    if np.any(dims < 0):
        raise ValueError(f"shape {dims.tolist()} has negative entries")
    value = param(params, "value")
    if value is None:
        raise ValueError("parameter 'value' is mandatory")
    dtype = np.bool_ if out_dtypes and np.dtype(out_dtypes[0]) == np.bool_ else np.float64
    return [np.full(tuple(int(d) for d in dims), np.asarray(value).reshape(()), dtype=dtype)]


# ---------------------------------------------------------------------------------------------
# Pad and StridedSlice


@register("Pad", verified_by="onnxruntime")
def pad(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    scheme = member(op, params, "scheme")
    amounts = int_vector(params, "pad_amount")
    if amounts is None or amounts.size != 2 * x.ndim or np.any(amounts < 0):
        raise ValueError(f"pad_amount must be [{x.ndim}, 2] non-negative values, got {amounts}")
    amounts = amounts.reshape(x.ndim, 2)
    if scheme not in _NP_PAD_MODE:
        raise ValueError(f"unknown scheme {scheme}")
    limit = {"MIRROR_REFLECT": 1, "MIRROR_SYMMETRIC": 0}.get(scheme)
    if limit is not None:
        for i, (before, after) in enumerate(amounts):
            if max(before, after) > x.shape[i] - limit:
                raise ValueError(f"pad {before, after} on dim {i} of size {x.shape[i]} exceeds the mirror limit")
    if scheme == "EDGE" and x.size == 0 and amounts.any():
        raise ValueError("EDGE padding of an empty tensor")
    kwargs: dict[str, Any] = {}
    if scheme == "CONSTANT":
        # 'backend specific' type (9630): taken as a real value, like every value the reference sees.
        value = param(params, "pad_constant_value", 0)
        kwargs["constant_values"] = np.asarray(value).reshape(()).astype(x.dtype)
    return [np.pad(x, [tuple(a) for a in amounts], mode=_NP_PAD_MODE[scheme], **kwargs)]


@register_model("Pad", name="last-axis-after-pad-least-code")
def pad_last_axis_after_pad_least_code(case: Any) -> list[np.ndarray]:
    """The HTP simulator's SFIXED_POINT_8 CONSTANT Pad with an after-pad on the last axis and none before it (finding
    pad-s8-constant-last-axis-end-qmin): the cells padded after the last axis, on the input's own rows, hold the
    type's least code (-128) instead of the pad value; the rows added along the other axes are right."""
    from cases.quant import dequantize
    from reference.expected import arguments, expected

    inputs, params = arguments(case)
    y = expected(case)[0]
    x_shape = np.shape(inputs[0])
    amounts = int_vector(params, "pad_amount").reshape(len(x_shape), 2)
    region = tuple(slice(int(b), int(b) + n) for (b, _), n in zip(amounts[:-1], x_shape[:-1], strict=True))
    region += (slice(int(amounts[-1][0]) + x_shape[-1], None),)
    y[region] = dequantize(np.array(-128), case.outputs[0].encoding)
    return [y]


@register_model("Pad", name="pad-value-on-input-grid")
def pad_value_on_input_grid(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point CONSTANT Pad (finding pad-fixed-value-saturates-to-input-range): the pad value is
    quantized on in[0]'s grid, saturating to in[0]'s range, before it reaches out[0]'s grid: 2.0 with in[0]'s codes
    ending at 1.5222 comes out as 1.5131 (the nearest out[0] code to 1.5222). The input's cells are the reference's."""
    from cases.quant import dequantize, quantize
    from reference.expected import arguments, expected

    _, params = arguments(case)
    value = float(np.asarray(param(params, "pad_constant_value", 0)).reshape(()))
    enc = case.inputs[0].encoding
    on_input = float(dequantize(quantize(np.array(value), enc, case.inputs[0].dtype), enc))
    y = expected(case)[0]
    cells = np.ones(np.shape(y), dtype=bool)
    x_shape = case.inputs[0].shape
    amounts = int_vector(params, "pad_amount").reshape(len(x_shape), 2)
    cells[tuple(slice(int(b), int(b) + n) for (b, _), n in zip(amounts, x_shape, strict=True))] = False
    y[cells] = on_input
    return [y]


def _bits(mask: int, count: int) -> list[bool]:
    return [bool(mask >> i & 1) for i in range(count)]


@register("StridedSlice", verified_by="onnxruntime")
def strided_slice(inputs, params, out_shapes, out_dtypes, *, op):
    """Masks and new axes refer to the intermediate tensor that has the new axes inserted; ranges has
    one row per intermediate axis. Negative begin/end get the dim added, then clip per 12465-12474:
    Python slicing, except that a negative stride clips begin to [0, dim-1] (Python: [-1, dim-1]).
    A shrunk axis takes index begin only (12524)."""
    return [_strided_slice(np.asarray(inputs[0]), params)]


def _strided_slice(x: np.ndarray, params: dict[str, Any], clip_negative_begin: bool = True) -> np.ndarray:
    """``clip_negative_begin`` False: a negative stride starts at the begin given, past the axis's end if it is
    there (an index outside the axis reads 0), for as many elements as the clipped slice has."""
    ranges = int_vector(params, "ranges").reshape(-1, 3)
    count = ranges.shape[0]
    new = _bits(int_param(params, "new_axes_mask", 0), count)
    begin_mask = _bits(int_param(params, "begin_mask", 0), count)
    end_mask = _bits(int_param(params, "end_mask", 0), count)
    shrink = _bits(int_param(params, "shrink_axes", 0), count)
    if count - sum(new) != x.ndim:
        raise ValueError(f"{count} ranges with {sum(new)} new axes do not fit rank {x.ndim}")
    y = np.expand_dims(x, tuple(i for i in range(count) if new[i])) if any(new) else x
    dropped = []
    for i, (b, e, s) in enumerate(ranges.tolist()):
        if new[i]:
            continue
        dim = y.shape[i]
        if shrink[i]:
            k = b + dim if b < 0 else b
            if not 0 <= k < dim:
                raise ValueError(f"shrunk axis {i}: begin {b} outside [-{dim}, {dim - 1}]")
            y = np.take(y, [k], axis=i)
            dropped.append(i)
            continue
        if s == 0:
            raise ValueError(f"stride 0 on axis {i}")
        if s > 0:
            lo_b, hi_b, lo_e, hi_e, full_b, full_e = 0, dim, 0, dim, 0, dim
        else:
            lo_b, hi_b, lo_e, hi_e, full_b, full_e = 0, dim - 1, -1, dim - 1, dim - 1, -1
        given = b + dim if b < 0 else b
        b = full_b if begin_mask[i] else min(max(given, lo_b), hi_b)
        e = full_e if end_mask[i] else min(max(e + dim if e < 0 else e, lo_e), hi_e)
        index = np.arange(b, e, s, dtype=np.int64)
        if not clip_negative_begin and s < 0 and not begin_mask[i] and given > hi_b:
            index = given + s * np.arange(index.size, dtype=np.int64)
        inside = (index >= 0) & (index < dim)
        y = np.take(y, np.where(inside, index, 0), axis=i)
        if not inside.all():
            view = [1] * y.ndim
            view[i] = -1
            y = np.where(inside.reshape(view), y, 0)
    return np.squeeze(y, axis=tuple(dropped)) if dropped else y


@register_model("StridedSlice", name="negative-stride-begin-not-clipped")
def strided_slice_negative_stride_begin_not_clipped(case: Any) -> list[np.ndarray]:
    """The HTP simulator's StridedSlice (finding stridedslice-negative-stride-begin-not-clipped): with a negative
    stride, a begin at or past the axis's end is not clipped to dim - 1 (line 12474); the slice starts there and the
    positions outside the input come out 0, or on a fixed-point output the lowest value of out[0]'s grid (its lowest
    code: 0 for UFIXED_POINT_8/16, -128 and -32768 for SFIXED_POINT_8/16; measured on the four fixed-point
    configurations of the seed-1 edge case, a [3, 2, 5] input with ranges [[3, 0, -2], [2, -2, -3], [1, 2, 2]])."""
    from cases.quant import real_range
    from opdefs import dtypes
    from reference.expected import arguments

    inputs, params = arguments(case)
    y = _strided_slice(np.asarray(inputs[0]), params, clip_negative_begin=False)
    out = case.outputs[0]
    if out.encoding is not None and dtypes.get(out.dtype).quantized:
        inside = _strided_slice(np.ones(np.shape(inputs[0])), params, clip_negative_begin=False) != 0
        lowest = float(np.min(real_range(out.encoding, out.dtype)[0]))
        y = np.where(inside, y, lowest)
    return [y]



@register_model("Pad", name="last-axis-edge-pad-cells-unset")
def pad_last_axis_edge_pad_cells_unset(case: Any) -> list[np.ndarray]:
    """FLOAT_16 Pad in EDGE mode through the ONNX Runtime QNN EP (finding ep-pad-f16-edge-wrong): the cells padded
    along the last axis are not written with the edge values (NaN, near 0 or stale values: left open, NaN); the cells
    padded along the other axes and the input's own cells are the reference's."""
    from reference.expected import arguments, expected

    _, params = arguments(case)
    y = np.array(expected(case)[0], dtype=np.float64)
    before, after = (int(v) for v in np.asarray(params["pad_amount"]).reshape(-1, 2)[-1])
    n = y.shape[-1]
    y[..., :before] = np.nan
    y[..., n - after:] = np.nan
    return [y]


@register_model("ExtractPatches", name="batch-repeats-first")
def extract_patches_batch_repeats_first(case: Any) -> list[np.ndarray]:
    """The QNN CPU backend's ExtractPatches with batch > 1 (finding extractpatches-batch-repeats-first): every batch of
    out[0] holds the first image's patches, as if in[0] held its first image in every batch."""
    from dataclasses import replace

    from reference.expected import expected

    t = case.inputs[0]
    first = np.broadcast_to(t.data[:1], t.data.shape).copy()
    return expected(replace(case, inputs=[replace(t, data=first), *case.inputs[1:]]))


@register_symptom("SpaceToDepth", name="values-from-outside-the-input")
def spacetodepth_values_from_outside_the_input(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP simulator's FLOAT_32 SpaceToDepth with fewer than 4 channels and a block of more than 4 pixels
    (finding spacetodepth-f32-large-blocks-read-outside): the output holds values no input element has (70656, 103,
    447 ... from a 1..72 ramp; others from the same ramp plus 1000), so the kernel reads memory that is not the
    input, and where it reads them follows no rule found. A data movement op creates no value: an output that is
    only input values, wherever they stand, is another bug and stays a failure."""
    from reference.expected import _real_inputs

    pool = np.asarray(_real_inputs(case.inputs)[0], dtype=np.float64)
    pool = np.concatenate([pool.ravel(), pool.astype(np.float16).astype(np.float64).ravel()])  # float16 arithmetic
    if judged([nearest_of(pool, a) for a in real_outputs(case, stored)]).passed:
        return "every output value is an input value: nothing was read from outside the input"
    return None


F16_MAX = 65504.0
# What the HTP simulator's FLOAT_32 SpaceToDepth (fewer than 4 channels) writes for an input past float16's range:
# +-inf and +-3.4028235e38 alike come out as +-131008.0078125 (seed 1's edge case 1f5c37ca13a70ef8: 10 of 10).
HTP_F16_PAST_RANGE = 131008.0078125


@register_model("SpaceToDepth", name="blocks-read-at-block-width-stride")
def space_to_depth_blocks_read_at_block_width_stride(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_32 SpaceToDepth with fewer than 4 channels (finding spacetodepth-f32-misplaced): the
    output pixel (h, w) holds the block_size[0] * block_size[1] consecutive input pixels (row-major, flat) starting at
    flat pixel (h * width_out + w * block_size[1]) * block_size[0] * block_size[1], laid out as the block of that
    output pixel (pixel j of the run as row j // block_size[1], column j % block_size[1]). With block height 1 that is
    the block that belongs at flat output pixel h * width_out + w * block_size[1] (a block 2 wide fills row 0 with
    blocks 0, 2, 4 ...); with block width 1, block w of output row 0 reads pixels w * block_size[0] onwards of the
    flattened rows. A run that ends past the last input pixel reads memory past it, and with a block taller than 1 the
    output rows after the first hold zeros or other values from run to run: both left open (NaN). Values come out
    rounded to binary16 (on v68 too, where other FLOAT_32 ops compute in float32), and values past float16's range
    (+-inf, +-3.4e38) as +-131008.0078125 (HTP_F16_PAST_RANGE), not float16's inf."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = _nhwc(np.asarray(inputs[0], dtype=np.float64), "SpaceToDepth")
    bh, bw = (int(v) for v in np.asarray(params["block_size"]).reshape(-1)[:2])
    mode = member("SpaceToDepth", params, "mode")
    n, h, w, c = x.shape
    h_out, w_out, k = h // bh, w // bw, bh * bw
    flat = x.reshape(n, h * w, c)
    out = np.full((n, h_out, w_out, k * c), np.nan)
    for i in range(h_out):
        for j in range(w_out):
            start = (i * w_out + j * bw) * k
            if start + k > h * w:
                continue
            block = flat[:, start:start + k].reshape(n, bh, bw, c)  # axes: n, row, col, d
            out[:, i, j] = (block if mode == "DCR" else block.transpose(0, 3, 1, 2)).reshape(n, k * c)
    if bh > 1:
        out[:, 1:] = np.nan
    return [_through_htp_float16(out)]


def _through_htp_float16(values: np.ndarray) -> np.ndarray:
    """``values`` as the HTP's FLOAT_32 SpaceToDepth with fewer than 4 channels writes them: rounded to binary16
    (ties to even), and past float16's range as +-HTP_F16_PAST_RANGE. NaN stays NaN (open, or NaN in)."""
    with np.errstate(invalid="ignore", over="ignore"):
        rounded = values.astype(np.float16).astype(np.float64)
        return np.where(np.abs(values) > F16_MAX, np.sign(values) * HTP_F16_PAST_RANGE, rounded)

