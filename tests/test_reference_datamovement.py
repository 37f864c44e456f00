"""The data-movement references (reference/datamovement.py) against independent implementations.

Layout ops are exact, so every comparison here is exact equality. ONNX ops run through
``onnx.reference.ReferenceEvaluator`` (onnxruntime CPU for the quantized Pad check), with QNN's NHWC
layout translated to ONNX's NCHW in the test. TensorFlow-defined ops (BatchToSpace, SpaceToBatch,
ExtractPatches) and ChannelShuffle have no runnable counterpart here and are checked on cases whose
expected numbers are written out (TensorFlow's documented examples where they exist).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from cases import quant
from tests.onnx_oracle import onnx_reference_node, ort_node
from tests.reference_helpers import f32, member, ref, same

NHWC_TO_NCHW = (0, 3, 1, 2)
# the spec's numbers of the enum members these tests name
DEPTH_MODE_DCR, DEPTH_MODE_CRD = (member("DepthToSpace", "mode", m) for m in ("DCR", "CRD"))
PADDING_VALID, PADDING_SAME = (member("ExtractPatches", "padding", m) for m in ("VALID", "SAME"))
PAD_CONSTANT, PAD_MIRROR_SYMMETRIC, PAD_MIRROR_REFLECT, PAD_EDGE = (
    member("Pad", "scheme", m) for m in ("CONSTANT", "MIRROR_SYMMETRIC", "MIRROR_REFLECT", "EDGE"))
NCHW_TO_NHWC = (0, 2, 3, 1)


# the cross-checks were written against opset 21; outputs are typed by the node
onnx_ref = partial(onnx_reference_node, opset=21)
onnx_ort = partial(ort_node, opset=21)


SEEDS = range(6)


# ---------------------------------------------------------------------------------------------
# Transpose, Tile, Concat, Pack, UnPack, Split


@pytest.mark.parametrize("seed", SEEDS)
def test_transpose_matches_onnx_transpose(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 6))
    x = f32(rng, tuple(rng.integers(1, 5, rank)))
    perm = rng.permutation(rank)
    (got,) = ref("Transpose", [x.astype(np.float64)], {"perm": perm})
    same(got, onnx_ref("Transpose", [x], perm=perm.tolist())[0], f"Transpose perm={perm.tolist()}")


@pytest.mark.parametrize("seed", SEEDS)
def test_tile_matches_onnx_tile(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    x = f32(rng, tuple(rng.integers(1, 4, rank)))
    mult = rng.integers(1, 4, rank)
    (got,) = ref("Tile", [x.astype(np.float64)], {"multiples": mult})
    same(got, onnx_ref("Tile", [x, mult.astype(np.int64)])[0], f"Tile multiples={mult.tolist()}")


@pytest.mark.parametrize("seed", SEEDS)
def test_concat_matches_onnx_concat_on_every_axis(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    base = list(rng.integers(1, 4, rank))
    for axis in range(rank):
        xs = []
        for _ in range(int(rng.integers(2, 5))):
            shape = list(base)
            shape[axis] = int(rng.integers(0, 4))  # empty inputs along the axis are legal
            xs.append(f32(rng, tuple(shape)))
        (got,) = ref("Concat", [x.astype(np.float64) for x in xs], {"axis": axis})
        same(got, onnx_ref("Concat", xs, axis=axis)[0], f"Concat axis={axis}")


def test_concat_axis_defaults_to_last():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(4.0).reshape(2, 2)
    (got,) = ref("Concat", [a, b])
    same(got, [[0, 1, 2, 0, 1], [3, 4, 5, 2, 3]], "Concat without axis joins along N-1")


@pytest.mark.parametrize("seed", SEEDS)
def test_pack_matches_numpy_stack(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(rng.integers(1, 4, rank))
    xs = [f32(rng, shape) for _ in range(int(rng.integers(1, 4)))]
    for axis in range(rank + 1):
        (got,) = ref("Pack", [x.astype(np.float64) for x in xs], {"axis": axis})
        same(got, np.stack(xs, axis=axis), f"Pack axis={axis}")


@pytest.mark.parametrize("seed", SEEDS)
def test_unpack_matches_numpy_split_and_squeeze(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    x = f32(rng, tuple(rng.integers(1, 4, rank)))
    for axis in range(rank):
        got = ref("UnPack", [x.astype(np.float64)], {"axis": axis})
        expected = [np.squeeze(p, axis=axis) for p in np.split(x, x.shape[axis], axis=axis)]
        assert len(got) == len(expected), f"UnPack axis={axis}: {len(got)} outputs, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            same(g, e, f"UnPack axis={axis} out[{i}]")


@pytest.mark.parametrize("seed", SEEDS)
def test_split_matches_onnx_split(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    x = f32(rng, tuple(rng.integers(2, 7, rank)))
    axis = int(rng.integers(0, rank))
    dim = x.shape[axis]
    idx = np.sort(rng.choice(np.arange(1, dim), size=int(rng.integers(1, dim)), replace=False))
    got = ref("Split", [x.astype(np.float64)], {"axis": axis, "split_index": idx})
    sizes = np.diff(np.concatenate([[0], idx, [dim]])).astype(np.int64)
    expected = onnx_ref("Split", [x, sizes], n_outputs=len(sizes), axis=axis)
    assert len(got) == len(expected), f"Split index={idx.tolist()}: {len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        same(g, e, f"Split axis={axis} split_index={idx.tolist()} out[{i}]")


# ---------------------------------------------------------------------------------------------
# Shape-only ops: Reshape, ExpandDims, Squeeze, Shape, ConstantOfShape


@pytest.mark.parametrize("seed", SEEDS)
def test_reshape_to_declared_output_shape_matches_onnx_reshape(seed):
    rng = np.random.default_rng(seed)
    x = f32(rng, tuple(rng.integers(1, 5, int(rng.integers(1, 5)))))
    target = tuple(int(d) for d in rng.permutation(np.array(list(x.shape) + [1])))
    (got,) = ref("Reshape", [x.astype(np.float64)], out_shapes=[target])
    same(got, onnx_ref("Reshape", [x, np.array(target, np.int64)])[0], f"Reshape {x.shape}->{target}")


def test_reshape_ignores_in1_when_the_declared_output_is_static():
    x = np.arange(6.0).reshape(2, 3)
    (got,) = ref("Reshape", [x, np.array([6], np.int32)], out_shapes=[(3, 2)])
    same(got, [[0, 1], [2, 3], [4, 5]], "Reshape takes out_shapes[0], not in[1] (seed line 10917)")


def test_reshape_from_in1_with_zero_and_minus_one_matches_onnx_when_output_is_dynamic():
    rng = np.random.default_rng(1)
    x = f32(rng, (2, 3, 4))
    spec = np.array([0, -1, 2], np.int32)  # 0 copies in[0]'s dim, -1 is inferred
    (got,) = ref("Reshape", [x.astype(np.float64), spec], out_shapes=[(2, None, 2)])
    same(got, onnx_ref("Reshape", [x, spec.astype(np.int64)])[0], "Reshape with dynamic out[0] reads in[1]")


@pytest.mark.parametrize("seed", SEEDS)
def test_expand_dims_axes_match_onnx_unsqueeze(seed):
    rng = np.random.default_rng(seed)
    x = f32(rng, tuple(rng.integers(1, 4, int(rng.integers(1, 4)))))
    k = int(rng.integers(1, 3))
    axes = np.sort(rng.choice(x.ndim + k, size=k, replace=False))
    (got,) = ref("ExpandDims", [x.astype(np.float64)], {"axes": axes})
    same(got, onnx_ref("Unsqueeze", [x, axes.astype(np.int64)])[0], f"ExpandDims axes={axes.tolist()}")


def test_expand_dims_scalar_axis_defaults_to_zero_and_is_overridden_by_axes():
    x = np.zeros((2, 3))
    assert ref("ExpandDims", [x])[0].shape == (1, 2, 3), "default axis is 0"
    assert ref("ExpandDims", [x], {"axis": 2})[0].shape == (2, 3, 1), "scalar axis"
    assert ref("ExpandDims", [x], {"axis": 2, "axes": np.array([1])})[0].shape == (2, 1, 3), "axes wins (line 5709)"


@pytest.mark.parametrize("seed", SEEDS)
def test_squeeze_axes_match_onnx_squeeze(seed):
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(1, 4, int(rng.integers(2, 6)))]
    shape[int(rng.integers(0, len(shape)))] = 1
    ones = [i for i, d in enumerate(shape) if d == 1]
    x = f32(rng, tuple(shape))
    axes = np.sort(rng.choice(ones, size=int(rng.integers(1, len(ones) + 1)), replace=False))
    (got,) = ref("Squeeze", [x.astype(np.float64)], {"axes": axes})
    same(got, onnx_ref("Squeeze", [x, axes.astype(np.int64)])[0], f"Squeeze {shape} axes={axes.tolist()}")
    (got_all,) = ref("Squeeze", [x.astype(np.float64)])
    same(got_all, onnx_ref("Squeeze", [x])[0], f"Squeeze {shape} without axes removes every 1")


def test_squeeze_without_axes_keeps_the_size_one_dims_the_declared_output_keeps():
    x = np.arange(3.0).reshape(1, 3, 1, 1)
    (got,) = ref("Squeeze", [x], out_shapes=[(3, 1)])
    same(got, [[0], [1], [2]], "Squeeze keeps the 1 named in shape(out[0]) (line 12298)")


@pytest.mark.parametrize(("start", "end"), [(0, None), (1, None), (0, 2), (2, 3), (1, 4)])
def test_shape_matches_onnx_shape_with_start_and_end(start, end):
    x = np.zeros((2, 3, 4, 5), np.float32)
    params = {"start": start} | ({} if end is None else {"end": end})
    (got,) = ref("Shape", [x.astype(np.float64)], params)
    attrs = {"start": start} | ({} if end is None else {"end": end})
    (expected,) = onnx_ref("Shape", [x], **attrs)
    same(got, expected, f"Shape start={start} end={end}")
    assert got.dtype == np.uint32, f"Shape output is UINT_32, got {got.dtype}"


@pytest.mark.parametrize("dims", [[2, 3], [4], [1, 2, 1, 3], [0, 2]])
def test_constant_of_shape_matches_onnx(dims):
    value = np.float32(1.25)
    (got,) = ref("ConstantOfShape", [np.array(dims, np.uint32)], {"value": value})
    (expected,) = onnx_ref(
        "ConstantOfShape", [np.array(dims, np.int64)], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [value])
    )
    same(got, expected, f"ConstantOfShape {dims}")


# ---------------------------------------------------------------------------------------------
# DepthToSpace / SpaceToDepth (NHWC here, NCHW in ONNX)


@pytest.mark.parametrize(("mode", "onnx_mode"), [(DEPTH_MODE_DCR, "DCR"), (DEPTH_MODE_CRD, "CRD")])
@pytest.mark.parametrize("seed", range(4))
def test_depth_to_space_matches_onnx_after_nchw_translation(mode, onnx_mode, seed):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(1, 4))
    x = f32(
        rng,
        (int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4)), b * b * int(rng.integers(1, 4))),
    )
    (got,) = ref("DepthToSpace", [x.astype(np.float64)], {"block_size": np.array([b, b]), "mode": mode})
    (y,) = onnx_ref("DepthToSpace", [x.transpose(NHWC_TO_NCHW)], blocksize=b, mode=onnx_mode)
    same(got, y.transpose(NCHW_TO_NHWC), f"DepthToSpace {onnx_mode} block={b} shape={x.shape}")


@pytest.mark.parametrize("seed", range(4))
def test_space_to_depth_dcr_matches_onnx_space_to_depth(seed):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(1, 4))
    x = f32(
        rng,
        (int(rng.integers(1, 3)), b * int(rng.integers(1, 3)), b * int(rng.integers(1, 3)), int(rng.integers(1, 4))),
    )
    (got,) = ref("SpaceToDepth", [x.astype(np.float64)], {"block_size": np.array([b, b]), "mode": DEPTH_MODE_DCR})
    (y,) = onnx_ref("SpaceToDepth", [x.transpose(NHWC_TO_NCHW)], blocksize=b)
    same(got, y.transpose(NCHW_TO_NHWC), f"SpaceToDepth DCR block={b} shape={x.shape}")


@pytest.mark.parametrize("seed", range(4))
def test_space_to_depth_crd_is_undone_by_onnx_depth_to_space_crd(seed):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(2, 4))
    x = f32(rng, (1, b * int(rng.integers(1, 3)), b * int(rng.integers(1, 3)), int(rng.integers(2, 4))))
    (got,) = ref("SpaceToDepth", [x.astype(np.float64)], {"block_size": np.array([b, b]), "mode": DEPTH_MODE_CRD})
    (back,) = onnx_ref("DepthToSpace", [got.astype(np.float32).transpose(NHWC_TO_NCHW)], blocksize=b, mode="CRD")
    same(back.transpose(NCHW_TO_NHWC), x, f"ONNX DepthToSpace CRD inverts SpaceToDepth CRD, block={b}")


# One pixel with channels 0..3, blocks [1, 2] and [2, 1] (ONNX cannot express non-square blocks).
# DCR: channel = (row*bw + col)*C_out + d; CRD: channel = d*bh*bw + row*bw + col.
NON_SQUARE = [
    ([1, 2], DEPTH_MODE_DCR, [[[[0, 1], [2, 3]]]]),
    ([1, 2], DEPTH_MODE_CRD, [[[[0, 2], [1, 3]]]]),
    ([2, 1], DEPTH_MODE_DCR, [[[[0, 1]], [[2, 3]]]]),
    ([2, 1], DEPTH_MODE_CRD, [[[[0, 2]], [[1, 3]]]]),
]


@pytest.mark.parametrize(("block", "mode", "expected"), NON_SQUARE)
def test_depth_to_space_non_square_block_by_hand(block, mode, expected):
    x = np.arange(4.0).reshape(1, 1, 1, 4)
    (got,) = ref("DepthToSpace", [x], {"block_size": np.array(block), "mode": mode})
    same(got, expected, f"DepthToSpace block={block} mode={mode}")
    (back,) = ref("SpaceToDepth", [got], {"block_size": np.array(block), "mode": mode})
    same(back, x, f"SpaceToDepth undoes DepthToSpace, block={block} mode={mode}")


# ---------------------------------------------------------------------------------------------
# BatchToSpace / SpaceToBatch: TensorFlow's documented examples (space_to_batch_nd, batch_to_space)

TF_S2B = [
    # x [1,2,2,1], block [2,2], no padding -> [4,1,1,1]
    (
        [[[[1], [2]], [[3], [4]]]],
        [[0, 0], [0, 0]],
        [[[[1]]], [[[2]]], [[[3]]], [[[4]]]],
    ),
    # x [1,2,2,3] -> [4,1,1,3]
    (
        [[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]],
        [[0, 0], [0, 0]],
        [[[[1, 2, 3]]], [[[4, 5, 6]]], [[[7, 8, 9]]], [[[10, 11, 12]]]],
    ),
    # x [1,4,4,1] -> [4,2,2,1]
    (
        [[[[1], [2], [3], [4]], [[5], [6], [7], [8]], [[9], [10], [11], [12]], [[13], [14], [15], [16]]]],
        [[0, 0], [0, 0]],
        [[[[1], [3]], [[9], [11]]], [[[2], [4]], [[10], [12]]], [[[5], [7]], [[13], [15]]], [[[6], [8]], [[14], [16]]]],
    ),
    # x [2,2,4,1], paddings [[0,0],[2,0]] -> [8,1,3,1]
    (
        [[[[1], [2], [3], [4]], [[5], [6], [7], [8]]], [[[9], [10], [11], [12]], [[13], [14], [15], [16]]]],
        [[0, 0], [2, 0]],
        [
            [[[0], [1], [3]]],
            [[[0], [9], [11]]],
            [[[0], [2], [4]]],
            [[[0], [10], [12]]],
            [[[0], [5], [7]]],
            [[[0], [13], [15]]],
            [[[0], [6], [8]]],
            [[[0], [14], [16]]],
        ],
    ),
]


@pytest.mark.parametrize(("image", "pads", "batched"), TF_S2B)
def test_space_to_batch_reproduces_tensorflow_examples(image, pads, batched):
    (got,) = ref(
        "SpaceToBatch", [np.array(image, float)], {"block_size": np.array([2, 2]), "pad_amount": np.array(pads)}
    )
    same(got, batched, f"SpaceToBatch pads={pads}")


@pytest.mark.parametrize(("image", "crops", "batched"), TF_S2B)
def test_batch_to_space_reproduces_tensorflow_examples(image, crops, batched):
    (got,) = ref("BatchToSpace", [np.array(batched, float)], {"block_size": np.array([2, 2]), "crops": np.array(crops)})
    same(got, image, f"BatchToSpace crops={crops}")


def test_space_to_batch_non_square_block_by_hand():
    # x [1,2,4,1] = rows [1 2 3 4], [5 6 7 8]; block [1,2]: batch (row*2 + col) takes columns col, col+2.
    x = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], float).reshape(1, 2, 4, 1)
    (got,) = ref("SpaceToBatch", [x], {"block_size": np.array([1, 2])})
    same(got[..., 0], [[[1, 3], [5, 7]], [[2, 4], [6, 8]]], "SpaceToBatch block [1,2]")
    (back,) = ref("BatchToSpace", [got], {"block_size": np.array([1, 2])})
    same(back, x, "BatchToSpace undoes SpaceToBatch, block [1,2]")


def test_space_to_batch_pads_with_zero():
    x = -np.ones((1, 1, 1, 1))
    (got,) = ref("SpaceToBatch", [x], {"block_size": np.array([2, 1]), "pad_amount": np.array([[1, 0], [0, 0]])})
    same(got.reshape(-1), [0, -1], "SpaceToBatch pad value is 0 (decision, line 12032)")


def test_batch_to_space_crops_all_four_sides():
    # 4 batches of 2x2 -> one 4x4 image (TF layout), then crop 1 top, 0 bottom, 1 left, 2 right.
    x = np.arange(16.0).reshape(4, 2, 2, 1)
    (got,) = ref("BatchToSpace", [x], {"block_size": np.array([2, 2]), "crops": np.array([[1, 0], [1, 2]])})
    # Full image rows: [0 4 1 5], [8 12 9 13], [2 6 3 7], [10 14 11 15]
    same(got[0, :, :, 0], [[12], [6], [14]], "BatchToSpace crops")


# ---------------------------------------------------------------------------------------------
# ExtractPatches: tf.image.extract_patches' documented example and hand-computed SAME cases

IMAGE_10x10 = np.arange(1.0, 101.0).reshape(1, 10, 10, 1)


def _patches(x, size, stride, rate, padding):
    params = {"size": np.array(size), "stride": np.array(stride), "rate": np.array(rate), "padding": padding}
    return ref("ExtractPatches", [x], params)[0]


def test_extract_patches_tensorflow_example_valid():
    got = _patches(IMAGE_10x10, [3, 3], [5, 5], [1, 1], PADDING_VALID)
    expected = [
        [[1, 2, 3, 11, 12, 13, 21, 22, 23], [6, 7, 8, 16, 17, 18, 26, 27, 28]],
        [[51, 52, 53, 61, 62, 63, 71, 72, 73], [56, 57, 58, 66, 67, 68, 76, 77, 78]],
    ]
    same(got, [expected], "ExtractPatches size 3 stride 5 VALID")


def test_extract_patches_tensorflow_example_with_rate():
    got = _patches(IMAGE_10x10, [3, 3], [5, 5], [2, 2], PADDING_VALID)
    expected = [
        [[1, 3, 5, 21, 23, 25, 41, 43, 45], [6, 8, 10, 26, 28, 30, 46, 48, 50]],
        [[51, 53, 55, 71, 73, 75, 91, 93, 95], [56, 58, 60, 76, 78, 80, 96, 98, 100]],
    ]
    same(got, [expected], "ExtractPatches size 3 stride 5 rate 2 VALID")


def test_extract_patches_same_pads_half_before_like_tensorflow():
    # 4x4 image 1..16, size 3, stride 1: 4 patches per row, total pad 2 -> 1 before, 1 after.
    x = np.arange(1.0, 17.0).reshape(1, 4, 4, 1)
    got = _patches(x, [3, 3], [1, 1], [1, 1], PADDING_SAME)
    assert got.shape == (1, 4, 4, 9), f"SAME output shape {got.shape}"
    same(got[0, 0, 0], [0, 0, 0, 0, 1, 2, 0, 5, 6], "first SAME patch starts one pixel before the image")
    same(got[0, 3, 3], [11, 12, 0, 15, 16, 0, 0, 0, 0], "last SAME patch")
    same(got[0, 1, 2], [2, 3, 4, 6, 7, 8, 10, 11, 12], "interior patch")


def test_extract_patches_same_puts_odd_padding_after():
    # size 3 stride 2 on 4: 2 patches, total pad 1 -> 0 before, 1 after.
    x = np.arange(1.0, 17.0).reshape(1, 4, 4, 1)
    got = _patches(x, [3, 3], [2, 2], [1, 1], PADDING_SAME)
    same(got[0, 0, 0], [1, 2, 3, 5, 6, 7, 9, 10, 11], "patch (0,0)")
    same(got[0, 0, 1], [3, 4, 0, 7, 8, 0, 11, 12, 0], "patch (0,1)")
    same(got[0, 1, 1], [11, 12, 0, 15, 16, 0, 0, 0, 0], "patch (1,1)")


def test_extract_patches_orders_channels_fastest():
    # Two channels (v, -v): each patch cell contributes its channels consecutively.
    x = np.stack([np.arange(1.0, 5.0), -np.arange(1.0, 5.0)], axis=-1).reshape(1, 2, 2, 2)
    got = _patches(x, [2, 2], [1, 1], [1, 1], PADDING_VALID)
    same(got, [[[[1, -1, 2, -2, 3, -3, 4, -4]]]], "patch layout (row, col, channel)")


# ---------------------------------------------------------------------------------------------
# ChannelShuffle: out_channel[i*G + g] = in_channel[g*group_size + i] (line 1012)


@pytest.mark.parametrize(
    ("groups", "expected"),
    [(2, [0, 3, 1, 4, 2, 5]), (3, [0, 2, 4, 1, 3, 5]), (1, [0, 1, 2, 3, 4, 5]), (6, [0, 1, 2, 3, 4, 5])],
)
def test_channel_shuffle_by_hand(groups, expected):
    (got,) = ref("ChannelShuffle", [np.arange(6.0).reshape(1, 6)], {"num_groups": groups})
    same(got[0], expected, f"ChannelShuffle num_groups={groups}")


def test_channel_shuffle_on_a_middle_axis():
    x = np.arange(8.0).reshape(2, 4, 1)  # channel axis 1 of a rank-3 tensor
    (got,) = ref("ChannelShuffle", [x], {"num_groups": 2, "axis": 1})
    same(got[:, :, 0], [[0, 2, 1, 3], [4, 6, 5, 7]], "ChannelShuffle axis=1")


# ---------------------------------------------------------------------------------------------
# Pad


def _symmetric_pad_1axis(x, before, after, axis):
    """Mirror including the border cell, built from flips (independent of np.pad)."""
    head = np.flip(np.take(x, range(before), axis=axis), axis=axis)
    tail = np.flip(np.take(x, range(x.shape[axis] - after, x.shape[axis]), axis=axis), axis=axis)
    return np.concatenate([head, x, tail], axis=axis)


@pytest.mark.parametrize(
    ("scheme", "onnx_mode"), [(PAD_CONSTANT, "constant"), (PAD_MIRROR_REFLECT, "reflect"), (PAD_EDGE, "edge")]
)
@pytest.mark.parametrize("seed", range(4))
def test_pad_matches_onnx_pad(scheme, onnx_mode, seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    x = f32(rng, tuple(rng.integers(2, 5, rank)))
    limit = np.array(x.shape) - 1 if scheme == PAD_MIRROR_REFLECT else np.full(rank, 3)
    amounts = np.stack([rng.integers(0, limit + 1), rng.integers(0, limit + 1)], axis=1)
    value = np.float32(0.625)
    (got,) = ref("Pad", [x.astype(np.float64)], {"scheme": scheme, "pad_amount": amounts, "pad_constant_value": value})
    pads = np.concatenate([amounts[:, 0], amounts[:, 1]]).astype(np.int64)
    inputs = [x, pads] + ([np.array(value, np.float32)] if scheme == PAD_CONSTANT else [])
    (expected,) = onnx_ref("Pad", inputs, mode=onnx_mode)
    same(got, expected, f"Pad {onnx_mode} amounts={amounts.tolist()}")


@pytest.mark.parametrize("seed", range(4))
def test_pad_mirror_symmetric_matches_flip_construction(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    x = f32(rng, tuple(rng.integers(1, 5, rank)))
    amounts = np.stack([rng.integers(0, np.array(x.shape) + 1), rng.integers(0, np.array(x.shape) + 1)], axis=1)
    expected = x
    for axis, (b, a) in enumerate(amounts):
        expected = _symmetric_pad_1axis(expected, int(b), int(a), axis)
    (got,) = ref("Pad", [x.astype(np.float64)], {"scheme": PAD_MIRROR_SYMMETRIC, "pad_amount": amounts})
    same(got, expected, f"Pad MIRROR_SYMMETRIC amounts={amounts.tolist()}")


def test_pad_mirror_schemes_by_hand():
    x = np.array([1.0, 2.0, 3.0])
    sym = ref("Pad", [x], {"scheme": PAD_MIRROR_SYMMETRIC, "pad_amount": np.array([[2, 3]])})[0]
    same(sym, [2, 1, 1, 2, 3, 3, 2, 1], "MIRROR_SYMMETRIC repeats the border")
    refl = ref("Pad", [x], {"scheme": PAD_MIRROR_REFLECT, "pad_amount": np.array([[2, 2]])})[0]
    same(refl, [3, 2, 1, 2, 3, 2, 1], "MIRROR_REFLECT skips the border")


@pytest.mark.parametrize(("scheme", "amount"), [(PAD_MIRROR_REFLECT, 3), (PAD_MIRROR_SYMMETRIC, 4)])
def test_pad_rejects_mirror_amounts_beyond_the_spec_limit(scheme, amount):
    with pytest.raises(ValueError, match="mirror limit"):
        ref("Pad", [np.arange(3.0)], {"scheme": scheme, "pad_amount": np.array([[0, amount]])})


def test_pad_constant_quantized_matches_onnxruntime_within_one_step():
    rng = np.random.default_rng(7)
    x = rng.uniform(-1.0, 2.0, (2, 5, 5, 3))
    enc = quant.encoding_for_range(-1.0, 2.0, "UFIXED_POINT_8")
    xr = quant.dequantize(quant.quantize(x, enc, "UFIXED_POINT_8"), enc)
    amounts = np.array([[0, 0], [1, 2], [2, 1], [0, 0]])
    value = 0.37
    (got,) = ref("Pad", [xr], {"scheme": PAD_CONSTANT, "pad_amount": amounts, "pad_constant_value": value})
    pads = np.concatenate([amounts[:, 0], amounts[:, 1]]).astype(np.int64)
    (expected,) = onnx_ort("Pad", [xr.astype(np.float32), pads, np.array(value, np.float32)], mode="constant")
    q_got = quant.quantize(got, enc, "UFIXED_POINT_8").astype(int)
    q_exp = quant.quantize(expected, enc, "UFIXED_POINT_8").astype(int)
    assert q_got.shape == q_exp.shape, f"shape {q_got.shape} vs {q_exp.shape}"
    worst = int(np.max(np.abs(q_got - q_exp)))
    assert worst <= 1, f"quantized Pad differs from onnxruntime by {worst} steps"


# ---------------------------------------------------------------------------------------------
# StridedSlice: Python slicing (numpy basic indexing) is the independent model of TF semantics


@st.composite
def slice_cases(draw):
    rank = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    n_new = draw(st.integers(0, 2))
    count = rank + n_new
    new_pos = sorted(draw(st.lists(st.integers(0, count - 1), min_size=n_new, max_size=n_new, unique=True)))
    ranges, index = [], []
    begin_mask = end_mask = shrink = new_mask = 0
    src = iter(shape)
    for i in range(count):
        if i in new_pos:
            new_mask |= 1 << i
            ranges.append([draw(st.integers(-9, 9)), draw(st.integers(-9, 9)), 1])
            shrink |= draw(st.sampled_from([0, 1 << i]))  # overridden by the new axis
            index.append(np.newaxis)
            continue
        dim = next(src)
        if draw(st.integers(0, 4)) == 0:
            b = draw(st.integers(-dim, dim - 1))
            ranges.append([b, draw(st.integers(-9, 9)), draw(st.sampled_from([1, 2, -1]))])
            shrink |= 1 << i
            index.append(b)
            continue
        s = draw(st.sampled_from([1, 2, 3, -1, -2]))
        # Python clips a begin before -dim to -1 for negative strides where the spec clips it to 0:
        # that corner has its own test below.
        b = draw(st.integers(-dim - 3 if s > 0 else -dim, dim + 3))
        e = draw(st.integers(-dim - 3, dim + 3))
        mb, me = draw(st.booleans()), draw(st.booleans())
        begin_mask |= mb << i
        end_mask |= me << i
        ranges.append([b, e, s])
        index.append(slice(None if mb else b, None if me else e, s))
    params = {"ranges": np.array(ranges, np.int32), "begin_mask": begin_mask, "end_mask": end_mask}
    params |= {"shrink_axes": shrink, "new_axes_mask": new_mask}
    return np.arange(float(np.prod(shape))).reshape(shape), params, tuple(index)


@settings(max_examples=150, deadline=None)
@given(slice_cases())
def test_strided_slice_matches_python_slicing(case):
    x, params, index = case
    (got,) = ref("StridedSlice", [x], params)
    same(got, x[index], f"StridedSlice {params} vs x[{index}]")


@pytest.mark.parametrize("seed", range(8))
def test_strided_slice_without_masks_matches_onnxruntime_slice(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    x = f32(rng, tuple(rng.integers(1, 7, rank)))
    ranges = []
    for dim in x.shape:
        s = int(rng.choice([1, 2, -1, -3]))
        b, e = sorted(int(v) for v in rng.integers(-dim - 2, dim + 2, 2))
        ranges.append([b, e, s] if s > 0 else [e, b, s])
    ranges = np.array(ranges, np.int64)
    (got,) = ref("StridedSlice", [x.astype(np.float64)], {"ranges": ranges.astype(np.int32)})
    starts, ends, steps = (np.ascontiguousarray(ranges[:, k]) for k in range(3))
    # onnxruntime, not onnx.reference: the latter slices like Python, against ONNX's own clamping text.
    (expected,) = onnx_ort("Slice", [x, starts, ends, np.arange(rank, dtype=np.int64), steps])
    same(got, expected, f"StridedSlice ranges={ranges.tolist()}")


def test_strided_slice_spec_example_shrink_uses_begin():
    x = np.arange(10 * 20 * 30.0).reshape(10, 20, 30)
    ranges = np.array([[5, 0, 1], [0, 20, 1], [0, 30, 1]], np.int32)
    (got,) = ref("StridedSlice", [x], {"ranges": ranges, "shrink_axes": 1})
    same(got, x[5], "shrink_axes bit 0 with begin 5 gives the 6th [20, 30] slice (lines 12524-12529)")


def test_strided_slice_raw_minus_one_end_is_the_last_index_not_before_zero():
    x = np.arange(5.0)
    (got,) = ref("StridedSlice", [x], {"ranges": np.array([[4, -1, -1]], np.int32)})
    same(got, [], "end -1 becomes 4 (dim added), so 4:4:-1 is empty (decision, line 12465)")
    (got,) = ref("StridedSlice", [x], {"ranges": np.array([[4, -6, -1]], np.int32)})
    same(got, [4, 3, 2, 1, 0], "end -6 becomes -1 after adding 5 and reaches index 0 (line 12476)")
    (got,) = ref("StridedSlice", [x], {"ranges": np.array([[4, 0, -1]], np.int32), "end_mask": 1})
    same(got, [4, 3, 2, 1, 0], "end_mask with a negative stride runs through index 0")


def test_strided_slice_empty_range_gives_a_zero_sized_dimension():
    (got,) = ref("StridedSlice", [np.arange(5.0)], {"ranges": np.array([[3, 1, 1]], np.int32)})
    assert got.shape == (0,), f"empty range gives size 0 (decision, line 12568), got {got.shape}"


def test_strided_slice_negative_stride_clips_a_begin_before_the_axis_to_index_zero():
    x = np.arange(3.0)
    (got,) = ref("StridedSlice", [x], {"ranges": np.array([[-5, -9, -1]], np.int32)})
    same(got, [0], "begin -5 -> -2 -> clipped to 0 for stride < 0 (line 12471), unlike Python's x[-5:-9:-1]")
    args = [x.astype(np.float32), np.array([-5]), np.array([-9]), np.array([0]), np.array([-1])]
    same(got, onnx_ort("Slice", args)[0], "onnxruntime Slice clamps the same way")


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_strided_slice_model_starts_a_negative_stride_at_an_unclipped_begin() -> None:
    """[[0, 1, 2], [3, 4, 5]], rows 2 down to -3 by -1: begin 2 is past the axis, so the first row is 0 and the second
    is row 1, where rows 1 and 0 belong."""
    from tests.reference_helpers import case, modelled

    x = np.arange(6.0).reshape(2, 3)
    c = case("StridedSlice", [x], {"ranges": [[2, -3, -1], [0, 3, 1]]}, [("FLOAT_32", (2, 3))])
    np.testing.assert_array_equal(modelled(c, "negative-stride-begin-not-clipped")[0], [[0, 0, 0], [3, 4, 5]])
    np.testing.assert_array_equal(ref("StridedSlice", [x], {"ranges": c.params["ranges"].value})[0],
                                  [[3, 4, 5], [0, 1, 2]])  # fmt: skip


def test_strided_slice_model_fills_positions_outside_a_fixed_point_input_with_the_lowest_code() -> None:
    """The same slice on UFIXED_POINT_8 and SFIXED_POINT_8 (scale 0.1): the row past the axis is the grid's lowest value
    (code 0: -12.8 at offset -128; code -128: -12.8 at offset 0), as the seed-1 edge case measured, not a real 0."""
    from reference import models
    from reference.compare import encode_outputs
    from tests.reference_helpers import case, modelled

    codes = np.arange(6).reshape(2, 3)
    for dtype, offset, lowest in (("UFIXED_POINT_8", -128, 0), ("SFIXED_POINT_8", 0, -128)):
        enc = ((0.1,), (offset,))
        x = (codes + (128 if dtype.startswith("U") else 0)).astype(np.uint8 if dtype.startswith("U") else np.int8)
        c = case("StridedSlice", [(dtype, x, enc)], {"ranges": [[2, -3, -1], [0, 3, 1]]}, [(dtype, (2, 3), enc)])
        got = modelled(c, "negative-stride-begin-not-clipped")[0]
        np.testing.assert_allclose(got, [[-12.8] * 3, [0.3, 0.4, 0.5]], atol=1e-9)
        backend = encode_outputs(c, [got])
        assert backend[0][0].tolist() == [lowest] * 3
        zero_row = encode_outputs(c, [np.array([[0.0] * 3, [0.3, 0.4, 0.5]])])
        assert models.check(c, backend, {"diagnosis": "negative-stride-begin-not-clipped"})["matches"] is True
        assert models.check(c, zero_row, {"diagnosis": "negative-stride-begin-not-clipped"})["matches"] is False


def test_space_to_depth_model_reads_blocks_at_the_block_width_stride() -> None:
    """A [1, 2, 4, 3] ramp, block [1, 2]: output pixels (0, 0), (0, 1), (1, 0), (1, 1) hold blocks 0, 2, 2 and one past
    the last (open)."""
    from tests.reference_helpers import case, modelled

    x = np.arange(24.0).reshape(1, 2, 4, 3)
    c = case("SpaceToDepth", [x], {"block_size": [1, 2]}, [("FLOAT_32", (1, 2, 2, 6))])
    got = modelled(c, "blocks-read-at-block-width-stride")[0].reshape(4, 6)
    blocks = np.arange(24.0).reshape(4, 6)
    np.testing.assert_array_equal(got[:3], blocks[[0, 2, 2]])
    assert np.isnan(got[3]).all()


def test_pad_model_writes_the_least_code_after_the_last_axis_on_the_input_rows() -> None:
    """A [2, 2] SFIXED_POINT_8 input (scale 0.5), pads [[0, 1], [0, 1]], value 0: column 2 of rows 0 and 1 holds code
    -128 (-64.0); the added row 2 holds the pad value."""
    from tests.reference_helpers import case, modelled

    enc = ([0.5], [0])
    x = ("SFIXED_POINT_8", np.array([[2, 4], [6, 8]], np.int8), enc)
    c = case("Pad", [x], {"scheme": 0, "pad_amount": [[0, 1], [0, 1]], "pad_constant_value": 0},
             [("SFIXED_POINT_8", (3, 3), enc)])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "last-axis-after-pad-least-code")[0],
                                  [[1, 2, -64], [3, 4, -64], [0, 0, 0]])  # fmt: skip


def test_extract_patches_model_repeats_the_first_image_in_every_batch() -> None:
    """in[0] [2, 1, 1, 1] = [1, 2], 1 x 1 patches: [1, 1] where the spec says [1, 2]."""
    from tests.reference_helpers import case, modelled

    c = case("ExtractPatches", [np.array([1.0, 2.0]).reshape(2, 1, 1, 1)],
             {"size": [1, 1], "stride": [1, 1], "rate": [1, 1], "padding": 0},
             [("FLOAT_32", (2, 1, 1, 1))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "batch-repeats-first")[0].ravel(), [1.0, 1.0])


def test_pad_model_leaves_the_last_axis_edge_cells_open() -> None:
    """[[1, 2], [3, 4]] EDGE-padded by one row before and one column either side: the padded row is the edge row
    (1 1 2 2), the two padded columns are open (NaN)."""
    from tests.reference_helpers import case, modelled

    c = case("Pad", [np.array([[1.0, 2.0], [3.0, 4.0]], np.float16)],
             {"pad_amount": [[1, 0], [1, 1]], "scheme": 3}, [("FLOAT_16", (3, 4))])  # fmt: skip
    got = modelled(c, "last-axis-edge-pad-cells-unset")[0]
    np.testing.assert_array_equal(got[:, 1:3], [[1, 2], [1, 2], [3, 4]])
    assert np.isnan(got[:, [0, 3]]).all()


def test_space_to_depth_model_reads_consecutive_pixels_with_block_width_one() -> None:
    """A [1, 3, 3, 2] ramp, block [3, 1] (one output row): output pixel (0, w) holds flat input pixels 3w, 3w + 1 and
    3w + 2, i.e. input row w (the right block is column w); mode CRD orders the same run channel first."""
    from tests.reference_helpers import case, modelled

    x = np.arange(18.0).reshape(1, 3, 3, 2)
    c = case("SpaceToDepth", [x], {"block_size": [3, 1]}, [("FLOAT_32", (1, 1, 3, 6))])
    got = modelled(c, "blocks-read-at-block-width-stride")[0].reshape(3, 6)
    np.testing.assert_array_equal(got, np.arange(18.0).reshape(3, 6))
    c = case("SpaceToDepth", [x], {"block_size": [3, 1], "mode": 1}, [("FLOAT_32", (1, 1, 3, 6))])
    got = modelled(c, "blocks-read-at-block-width-stride")[0].reshape(3, 6)
    np.testing.assert_array_equal(got[1], [6, 8, 10, 7, 9, 11])


def test_pad_model_saturates_the_pad_value_to_the_input_range() -> None:
    """A [1, 2] UFIXED_POINT_8 input on scale 0.1 (range 0 .. 25.5), out[0] on scale 0.2 (0 .. 51), pad value 30 before
    the last axis: the added cell holds 25.5 (code 255 of the input's grid), the input's cells stay."""
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([[10, 20]], np.uint8), ([0.1], [0]))
    c = case("Pad", [x], {"scheme": 0, "pad_amount": [[0, 0], [1, 0]], "pad_constant_value": 30.0},
             [("UFIXED_POINT_8", (1, 3), ([0.2], [0]))])  # fmt: skip
    np.testing.assert_allclose(modelled(c, "pad-value-on-input-grid")[0], [[25.5, 1.0, 2.0]])


def test_space_to_depth_model_leaves_later_rows_open_for_tall_blocks() -> None:
    """A [1, 4, 1, 1] ramp, block [2, 1]: output row 0 holds pixels 0 and 1; row 1 is left open."""
    from tests.reference_helpers import case, modelled

    c = case("SpaceToDepth", [np.arange(4.0).reshape(1, 4, 1, 1)], {"block_size": [2, 1]}, [("FLOAT_32", (1, 2, 1, 2))])
    got = modelled(c, "blocks-read-at-block-width-stride")[0]
    np.testing.assert_array_equal(got[0, 0, 0], [0, 1])
    assert np.isnan(got[0, 1]).all()


def test_pad_models_combine_the_saturated_value_and_the_last_axis_least_code() -> None:
    """SFIXED_POINT_8 [[2, 4], [6, 8]] (scale 0.5: 1 2 / 3 4, in[0]'s grid ends at 63.5), out[0] at scale 1, pads
    [[0, 1], [0, 1]], pad value 100: the padded bottom row holds 100 saturated to in[0]'s grid (63.5), the cells padded
    after the last axis on the input's rows hold out[0]'s least code (-128); either model alone gets one of the two
    wrong. Without an after-pad on an earlier axis (pads [[0, 0], [0, 1]]) only the first bug applies."""
    from tests.reference_helpers import case, modelled

    x = ("SFIXED_POINT_8", np.array([[2, 4], [6, 8]], np.int8), ([0.5], [0]))
    c = case("Pad", [x], {"scheme": 0, "pad_amount": [[0, 1], [0, 1]], "pad_constant_value": 100.0},
             [("SFIXED_POINT_8", (3, 3), ([1.0], [0]))])  # fmt: skip
    both = [[1, 2, -128], [3, 4, -128], [63.5, 63.5, 63.5]]
    np.testing.assert_array_equal(modelled(c, ["pad-value-on-input-grid", "last-axis-after-pad-least-code"])[0], both)
    np.testing.assert_array_equal(modelled(c, ["last-axis-after-pad-least-code", "pad-value-on-input-grid"])[0], both)
    assert not np.array_equal(modelled(c, "pad-value-on-input-grid")[0], both)
    assert not np.array_equal(modelled(c, "last-axis-after-pad-least-code")[0], both)
    c = case("Pad", [x], {"scheme": 0, "pad_amount": [[0, 0], [0, 1]], "pad_constant_value": 100.0},
             [("SFIXED_POINT_8", (2, 3), ([1.0], [0]))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, ["pad-value-on-input-grid", "last-axis-after-pad-least-code"])[0],
                                  [[1, 2, 63.5], [3, 4, 63.5]])  # fmt: skip


def test_space_to_depth_model_writes_values_past_float16_range_as_131008() -> None:
    """A [1, 1, 2, 2] input [inf, -3.4e38, 1, 2], block [1, 2]: output pixel (0, 0) holds block 0 with +-inf and
    +-3.4e38 as +-131008.0078125, as seed 1's edge case 1f5c37ca13a70ef8 gave on the HTP simulator; a backend giving
    float16's inf there does not match the model."""
    from reference import models
    from tests.reference_helpers import case, modelled

    x = np.array([np.inf, -np.finfo(np.float32).max, 1.0, 2.0], np.float32).reshape(1, 1, 2, 2)
    c = case("SpaceToDepth", [x], {"block_size": [1, 2]}, [("FLOAT_32", (1, 1, 1, 4))])
    got = modelled(c, "blocks-read-at-block-width-stride")[0].ravel()
    np.testing.assert_array_equal(got, [131008.0078125, -131008.0078125, 1.0, 2.0])
    model = {"diagnosis": "blocks-read-at-block-width-stride"}
    htp = [np.array([131008.0078125, -131008.0078125, 1.0, 2.0], np.float32).reshape(1, 1, 1, 4)]
    ieee = [np.array([np.inf, -np.inf, 1.0, 2.0], np.float32).reshape(1, 1, 1, 4)]
    assert models.check(c, htp, model, precision="float16")["matches"] is True
    assert models.check(c, ieee, model, precision="float16")["matches"] is False
