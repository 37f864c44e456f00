"""Lowerings of the data movement, reduction and linear algebra families.

Reshape-like ops take their target from the declared output (as QNN does); ONNX's rank rules that
differ from QNN's (a full reduction gives [] in ONNX, [1] in QNN; squeezed StridedSlice axes) are
put right with a Reshape onto the declared shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx import TensorProto as T
from onnx import helper

from adapters.onnx.builder import (
    ONNX_TYPE,
    Builder,
    Lowering,
    Unlowerable,
    channels_first,
    indices,
    on_input_grid,
    pairs,
    real_data,
    zero_pad,
)
from cases.case import Encoding
from opdefs import dtypes

FAMILIES = frozenset({"data movement", "reduction", "linear algebra"})


def _to_declared_shape(b: Builder) -> list[str]:
    """Reshape, ExpandDims, Squeeze: QNN reads the target from the output tensor, so does this."""
    return [b.move("Reshape", b.input(0), b.i64(b.case.outputs[0].shape), allowzero=1)]


def _transpose(b: Builder) -> list[str]:
    return [b.node("Transpose", [b.input(0)], perm=b.p.ints("perm"))]


def _concat(b: Builder) -> list[str]:
    xs = [b.input(i) for i in range(len(b.case.inputs)) if b.has(i)]
    return [b.node("Concat", xs, axis=b.p.int("axis"))]


def _tile(b: Builder) -> list[str]:
    return [b.node("Tile", [b.input(0), b.i64(b.p.ints("multiples"))])]


def _pad(b: Builder) -> list[str]:
    modes = {"CONSTANT": "constant", "MIRROR_REFLECT": "reflect", "EDGE": "edge"}  # MIRROR_SYMMETRIC: no ONNX mode
    scheme = b.p.member("scheme")
    if scheme not in modes:
        raise Unlowerable(f"Pad scheme {b.p.int('scheme')} ({scheme} has no ONNX mode)")
    amounts = np.asarray(b.p.ints("pad_amount")).reshape(-1, 2)
    x = b.input(0)
    ins = [x, b.i64([*amounts[:, 0], *amounts[:, 1]])]
    if scheme == "CONSTANT":  # the constant is a real value (as the reference reads it), in x's element type
        ins.append(b.like(b.p.float("pad_constant_value"), x))
    return [b.node("Pad", ins, mode=modes[scheme])]


def _gather(b: Builder) -> list[str]:
    return [b.node("Gather", [b.input(0), indices(b, 1)], axis=b.p.int("axis", 0))]


def _gather_elements(b: Builder) -> list[str]:
    return [b.node("GatherElements", [b.input(0), indices(b, 1)], axis=b.p.int("axis"))]


def _gather_nd(b: Builder) -> list[str]:
    return [b.node("GatherND", [b.input(0), indices(b, 1)], batch_dims=b.p.int("batch_dims"))]


def _split(b: Builder) -> list[str]:
    axis = b.p.int("axis")
    dim = b.shape(0)[axis]
    cuts = [0, *b.p.ints("split_index", []), dim]
    sizes = [e - s for s, e in zip(cuts, cuts[1:], strict=False)]
    return b.node("Split", [b.input(0), b.i64(sizes)], outputs=len(sizes), axis=axis)


def _pack(b: Builder) -> list[str]:
    axis = b.p.int("axis")
    xs = [b.input(i) for i in range(len(b.case.inputs)) if b.has(i)]
    return [b.node("Concat", [b.move("Unsqueeze", x, b.i64([axis])) for x in xs], axis=axis)]


def _unpack(b: Builder) -> list[str]:
    axis = b.p.int("axis")
    n = b.shape(0)[axis]
    parts = b.node("Split", [b.input(0), b.i64([1] * n)], outputs=n, axis=axis)
    parts = [parts] if n == 1 else parts
    return [b.move("Squeeze", b.on_output_grid(p, j), b.i64([axis])) for j, p in enumerate(parts)]


def _strided_slice(b: Builder) -> list[str]:
    """Slice per axis; begin/end masks become open ends; shrunk axes keep one index (the declared
    output shape drops them). New axes have no Slice form."""
    if b.p.int("new_axes_mask"):
        raise Unlowerable("StridedSlice new_axes_mask")
    ranges = np.asarray(b.p.ints("ranges")).reshape(-1, 3)
    begin_mask, end_mask, shrink = b.p.int("begin_mask"), b.p.int("end_mask"), b.p.int("shrink_axes")
    big = np.iinfo(np.int64).max
    starts, ends, steps = [], [], []
    for i, (s, e, st) in enumerate(ranges.tolist()):
        if shrink >> i & 1:
            s, e, st = s, (s + 1 if s != -1 else big), 1
        else:
            if begin_mask >> i & 1:
                s = 0 if st > 0 else big
            if end_mask >> i & 1:
                e = big if st > 0 else -big - 1
        starts.append(s)
        ends.append(e)
        steps.append(st)
    axes = list(range(len(starts)))
    y = b.node("Slice", [b.input(0), b.i64(starts), b.i64(ends), b.i64(axes), b.i64(steps)])
    return [b.to_declared(y) if shrink else y]


def reduction(onnx_op: str) -> Lowering:
    def lower(b: Builder) -> list[str]:
        x = b.input(0)
        if b.rank(0) == 0:
            return [b.node("Mul", [x, x]) if onnx_op == "ReduceSumSquare" else b.node("Identity", [x])]
        axes, keep = b.p.ints("axes"), b.p.bool("keep_dims")
        y = b.node(onnx_op, [x, b.i64(axes)], keepdims=int(keep))
        onnx_rank = b.rank(0) if keep else b.rank(0) - len({a % b.rank(0) for a in axes})
        return [b.to_declared(y) if onnx_rank != len(b.case.outputs[0].shape) else y]

    return lower


def arg_reduction(onnx_op: str) -> Lowering:
    def lower(b: Builder) -> list[str]:
        keep = b.p.bool("keep_dims")
        y = b.converts(b.node(onnx_op, [b.input(0)], out_type=T.INT64, axis=b.p.int("axis"), keepdims=int(keep)))
        onnx_rank = b.rank(0) - (0 if keep else 1)
        return [b.to_declared(y) if onnx_rank != len(b.case.outputs[0].shape) else y]

    return lower


def _cumsum(b: Builder) -> list[str]:
    return [b.node("CumSum", [b.input(0), b.i64(b.p.int("axis"))], exclusive=int(b.p.bool("exclusive")),
                   reverse=int(b.p.bool("reverse")))]  # fmt: skip


def _ties_decide(data: np.ndarray, k: int, largest: bool) -> bool:
    """Whether equal values take part in some row's k best (along the last axis), where the order of equal
    values decides the indices."""
    rows = np.asarray(data).reshape(-1, data.shape[-1]) if data.ndim else np.asarray(data).reshape(1, 1)
    for row in rows:
        if not 0 < k <= row.size:
            return False
        kth = np.sort(row)[::-1][k - 1] if largest else np.sort(row)[k - 1]
        chosen = row[row >= kth] if largest else row[row <= kth]
        if np.unique(chosen).size < chosen.size:
            return True
    return False


def _topk(b: Builder) -> list[str]:
    t = b.case.inputs[0]
    largest = b.p.bool("largest")
    if t is not None and t.data is not None and _ties_decide(t.data, b.p.int("k"), largest):
        # QNN's TopK puts the larger index first among equal values (12745), ONNX's the smaller
        raise Unlowerable("equal values among the k best: ONNX TopK orders them by the smaller index, QNN's by the "
                          "larger (opdefs/TopK.yaml decisions)")
    values, idx = b.node("TopK", [b.input(0), b.i64([b.p.int("k")])], outputs=2, axis=-1,
                         largest=int(largest), sorted=1)  # fmt: skip
    b.types[idx] = T.INT64
    return [values, b.converts(idx)]


def _shape(b: Builder) -> list[str]:
    return [b.converts(b.node("Shape", [b.input(0)], out_type=T.INT64, start=b.p.int("start"), end=b.p.int("end")))]


def _one_hot(b: Builder) -> list[str]:
    t = b.case.outputs[0]
    elem = T.FLOAT if dtypes.get(t.dtype).quantized else ONNX_TYPE.get(t.dtype, T.FLOAT)
    values = b.const([b.p.float("off_value"), b.p.float("on_value")], elem)
    axis = b.p.int("axis")
    return [b.node("OneHot", [indices(b, 0), b.i64([b.p.int("depth")]), values], out_type=elem, axis=axis)]


def scatter(onnx_op: str, reductions: dict[str, str]) -> Lowering:
    def lower(b: Builder) -> list[str]:
        r = b.p.member("reduction")
        if r not in reductions:
            raise Unlowerable(f"{onnx_op} reduction {r}")
        attrs: dict[str, Any] = {"reduction": reductions[r]}
        if onnx_op == "ScatterElements":
            attrs["axis"] = b.p.int("axis")
        return [b.node(onnx_op, [b.input(0), indices(b, 1), b.input(2)], **attrs)]

    return lower


def _matmul(b: Builder) -> list[str]:
    xs = []
    for i, flag in ((0, "transpose_in0"), (1, "transpose_in1")):
        n = b.rank(i)
        perm = list(range(n - 2)) + [n - 1, n - 2] if b.p.bool(flag) and n >= 2 else None
        xs.append(b.input(i, perm))
    y = b.node("MatMul", xs)
    if b.has(2):
        y = b.node("Add", [y, b.input(2)])
    return [y]


def _fully_connected(b: Builder) -> list[str]:
    """Gemm(x as [batch, n], W^T, bias): the ONNX shape of QNN's FullyConnected; the declared output
    shape (keep_dims or not) is applied to the result."""
    m, n = b.shape(1)
    x = b.move("Reshape", b.input(0), b.i64([-1, n]))
    ins = [x, b.input(1)] + ([b.input(2)] if b.has(2) else [])
    y = b.node("Gemm", ins, transB=1)
    batch = int(np.prod(b.shape(0), dtype=np.int64)) // n if n else 0
    return [y if tuple(b.case.outputs[0].shape) == (batch, m) else b.to_declared(y)]


def depth_space(onnx_op: str) -> Lowering:
    def inner(b: Builder, x: str, r: int) -> str:
        bh, bw = b.p.ints("block_size")
        if bh != bw:
            raise Unlowerable(f"{onnx_op} needs a square block, got {bh}x{bw}")
        mode = b.p.member("mode")  # DCR / CRD: the spec's member names are ONNX's mode strings
        if onnx_op == "SpaceToDepth":
            if mode != "DCR":
                raise Unlowerable(f"SpaceToDepth {mode} mode has no ONNX form")
            return b.node(onnx_op, [x], blocksize=bh)
        return b.node(onnx_op, [x], blocksize=bh, mode=mode)

    return channels_first(inner)


def _patch_positions(b: Builder, hw: Sequence[int]) -> tuple[list[int], list[int], list[int], list[int], list[int],
                                                               list[int]]:  # fmt: skip
    k, s = b.p.ints("kernel_size"), b.p.ints("stride")
    d = b.p.ints("dilation")
    before, after = pairs(b, 2)
    if min(k + s + d) < 1:
        raise Unlowerable(f"kernel_size {k}, stride {s}, dilation {d}: every entry must be > 0")
    counts = [(hw[i] + before[i] + after[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if min(counts) < 1:
        raise Unlowerable(f"the dilated kernel does not fit the padded image ({counts} positions)")
    return k, s, d, before, after, counts


def _im2col(b: Builder) -> list[str]:
    """No ONNX Im2Col: the padded image (channels first) is cut by one strided Slice per kernel offset,
    the slabs stacked on a new axis after the channel ([N, C, kh*kw, OH, OW]) and flattened, so row
    c * kh * kw + i * kw + j and column oh * OW + ow are the reference's order. Pure data movement."""
    n, h, w, c = b.shape(0)
    k, s, d, before, after, (oh, ow) = _patch_positions(b, (h, w))
    x = b.input(0, [0, 3, 1, 2])
    if any(before + after):
        x = zero_pad(b, 0, x, [0, 0, *before, 0, 0, *after])
    slabs = []
    for i in range(k[0]):
        for j in range(k[1]):
            y0, x0 = i * d[0], j * d[1]
            sl = b.node("Slice", [x, b.i64([y0, x0]), b.i64([y0 + (oh - 1) * s[0] + 1, x0 + (ow - 1) * s[1] + 1]),
                                  b.i64([2, 3]), b.i64(s)])  # fmt: skip
            slabs.append(on_input_grid(b, 0, b.node("Unsqueeze", [sl, b.i64([2])])))
    stacked = on_input_grid(b, 0, b.node("Concat", slabs, axis=2)) if len(slabs) > 1 else slabs[0]
    return [b.node("Reshape", [stacked, b.i64([n, c * k[0] * k[1], oh * ow])])]


def _col2im(b: Builder) -> list[str]:
    """ONNX Col2Im (same column layout: channel outermost, then kernel row, kernel column; positions
    row-major); the image size is the declared output's, as in QNN; the result goes back channel-last."""
    n, h, w, c = b.case.outputs[0].shape
    k, s, d, before, after, _ = _patch_positions(b, (h, w))
    y = b.node("Col2Im", [b.input(0), b.i64([h, w]), b.i64(k)], dilations=d, pads=before + after, strides=s)
    return [b.transpose(b.on_output_grid(y), [0, 2, 3, 1])]


def _channel_shuffle(b: Builder) -> list[str]:
    """No ONNX ChannelShuffle: the axis viewed as (groups, channels per group) and the two swapped, a pure move
    (Reshape, Transpose, Reshape) put back on in[0]'s grid."""
    shape = list(b.shape(0))
    axis, groups = b.p.int("axis"), b.p.int("num_groups")
    if not 0 <= axis < len(shape) or groups < 1 or shape[axis] % groups:
        raise Unlowerable(f"num_groups {groups} does not divide axis {axis} of {shape}")
    split = shape[:axis] + [groups, shape[axis] // groups] + shape[axis + 1 :]
    perm = list(range(len(split)))
    perm[axis], perm[axis + 1] = axis + 1, axis
    y = b.move("Reshape", b.input(0), b.i64(split))
    y = b.move("Reshape", b.transpose(y, perm), b.i64(shape))
    return [on_input_grid(b, 0, y)]


def _batch_permutation(b: Builder) -> list[str]:
    """ONNX Gather on axis 0. An index outside the batch is dropped and the rows padded with zeros (the
    BatchPermutation decision), which Gather cannot say: such cases are not lowered."""
    idx = real_data(b, 1).reshape(-1)
    if np.any(idx < 0) or np.any(idx > b.shape(0)[0] - 1):
        raise Unlowerable(f"in[1] = {idx.tolist()} holds indices outside the batch: they are dropped, not gathered")
    return [b.node("Gather", [b.input(0), b.cast(b.input(1), T.INT64)], axis=0)]


def _constant_of_shape(b: Builder) -> list[str]:
    """ONNX ConstantOfShape: in[0] as INT64 sizes, ``value`` in the output's element type (real for a quantized
    output, which the output's QuantizeLinear then encodes)."""
    out = b.case.outputs[0]
    elem = T.FLOAT if dtypes.get(out.dtype).quantized else ONNX_TYPE.get(out.dtype)
    if elem is None:
        raise Unlowerable(f"no ONNX tensor type for {out.dtype}")
    value = np.asarray(b.p.get("value")).reshape(1).astype(helper.tensor_dtype_to_np_dtype(elem))
    fill = helper.make_tensor("value", elem, [1], value.tolist())
    return [b.node("ConstantOfShape", [b.cast(b.input(0), T.INT64)], out_type=elem, value=fill)]


def _moments(b: Builder) -> list[str]:
    """No ONNX Moments: the mean and the population variance (the Moments decision) as ReduceMeans, each put on
    its output's declared shape (keep_dims or not)."""
    x = b.input(0)
    axes = b.i64(b.p.ints("axes"))
    mean = b.node("ReduceMean", [x, axes], keepdims=1)
    centred = b.node("Sub", [x, mean])
    var = b.node("ReduceMean", [b.node("Mul", [centred, centred]), axes], keepdims=1)
    return [b.to_declared(mean, 0), b.to_declared(var, 1)]


def hadamard(n: int) -> np.ndarray:
    """The Sylvester-ordered n x n matrix of +-1 (H_2n = [[H, H], [H, -H]]); n a power of two."""
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def _hadamard_transform(b: Builder) -> list[str]:
    """No ONNX Hadamard transform: x times the (symmetric) Sylvester matrix scaled by scale / sqrt(n), a MatMul
    with a constant. For a fixed-point input the constant is +-1 codes of the input's width with that scale as
    their encoding (exact), so the MatMul is a QDQ unit as converters write it."""
    n = b.shape(0)[-1]
    if n & (n - 1):
        raise Unlowerable(f"last dimension {n} is not a power of two (no Sylvester matrix)")
    scale = b.p.float("scale", 1.0) / np.sqrt(n)
    x = b.input(0)
    d = dtypes.get(b.case.inputs[0].dtype)
    if d.quantized:
        weights = "SFIXED_POINT_8" if d.bits <= 8 else "SFIXED_POINT_16"
        codes = b.const(hadamard(n), ONNX_TYPE[weights])
        w = b.dequantize(codes, Encoding((scale,), (0,)), weights)
    else:
        w = b.like(hadamard(n) * scale, x)
    return [b.node("MatMul", [x, w])]


LOWERINGS: dict[str, Lowering] = {
    "ChannelShuffle": _channel_shuffle, "BatchPermutation": _batch_permutation,
    "ConstantOfShape": _constant_of_shape, "Moments": _moments, "HadamardTransform": _hadamard_transform,
    "Transpose": _transpose, "Concat": _concat, "Reshape": _to_declared_shape, "ExpandDims": _to_declared_shape,
    "Squeeze": _to_declared_shape, "Tile": _tile, "Pad": _pad, "Split": _split, "Pack": _pack, "UnPack": _unpack,
    "StridedSlice": _strided_slice, "Gather": _gather, "GatherElements": _gather_elements, "GatherNd": _gather_nd,
    "ScatterElements": scatter("ScatterElements", {"NONE": "none", "ADD": "add", "MUL": "mul", "MAX": "max"}),
    "ScatterNd": scatter("ScatterND", {"NONE": "none", "ADD": "add", "MUL": "mul"}),
    "Shape": _shape, "OneHot": _one_hot,
    "DepthToSpace": depth_space("DepthToSpace"), "SpaceToDepth": depth_space("SpaceToDepth"),
    "Im2Col": _im2col, "Col2Im": _col2im,
    "ReduceMax": reduction("ReduceMax"), "ReduceMean": reduction("ReduceMean"), "ReduceMin": reduction("ReduceMin"),
    "ReduceProd": reduction("ReduceProd"), "ReduceSum": reduction("ReduceSum"),
    "ReduceSumSquare": reduction("ReduceSumSquare"), "Argmax": arg_reduction("ArgMax"),
    "Argmin": arg_reduction("ArgMin"), "CumulativeSum": _cumsum, "TopK": _topk,
    "MatMul": _matmul, "FullyConnected": _fully_connected,
}  # fmt: skip
