"""The ONNX lowerings of the convolution, pooling, resampling, ROI, Stft and image ops (reference part 2).

Two kinds of check, each on the CPU execution provider: hand-worked numbers where the lowering makes a
reading of its own (output_padding cells, sum-not-mean L2 pooling, Im2Col's row order, a per-axis
RoiAlign sample grid), and small cases judged by the suite itself (``conformance.execute`` against the
reference, verdict PASS) in float32 and a fixed-point configuration, so the lowering and the reference
are held to the same reading.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

import reference  # noqa: E402
from cases import quant  # noqa: E402
from cases.case import Case, Param, Tensor, encoding_for_range  # noqa: E402
from conformance.execute import RunContext, execute  # noqa: E402

F32, U8, S8 = "FLOAT_32", "UFIXED_POINT_8", "SFIXED_POINT_8"
RNG = np.random.default_rng(20251123)


def _u32(*v: int) -> np.ndarray:
    return np.array(v, np.uint32)


def case(op: str, inputs: list[np.ndarray | Tensor | None], params: dict, out_shape: tuple[int, ...]) -> Case:
    """A float32 case; arrays become graph inputs, Tensors pass as given; param types from the value."""
    ins = [x if x is None or isinstance(x, Tensor) else Tensor(f"in[{i}]", F32, x.shape, np.asarray(x, np.float32))
           for i, x in enumerate(inputs)]  # fmt: skip
    ps = {}
    for k, v in params.items():
        dtype = ("BOOL_8" if isinstance(v, bool) else "INT_32" if isinstance(v, int) and v < 0 else
                 "FLOAT_32" if np.asarray(v).dtype.kind == "f" else "UINT_32")  # fmt: skip
        ps[k] = Param(k, dtype, v)
    return Case(op, ins, ps, [Tensor("out[0]", F32, out_shape)])


def quantized(c: Case, dtype: str) -> Case:
    """The same case in ``dtype``: every float input on an encoding covering its values (and 0), the
    output on one covering the reference's float result."""
    ins: list[Tensor | None] = []
    for t in c.inputs:
        if t is None or t.dtype != F32:
            ins.append(t)
            continue
        enc = encoding_for_range(min(float(t.data.min()), 0.0), max(float(t.data.max()), 0.0), dtype)
        ins.append(Tensor(t.name, dtype, t.shape, quant.quantize(t.data, enc, dtype), enc, t.static))
    params = {k: p.value for k, p in c.params.items()}
    want = reference.run(c.op, [None if t is None else t.data for t in c.inputs], params, [c.outputs[0].shape])[0]
    out_enc = encoding_for_range(min(float(want.min()), 0.0), max(float(want.max()), 1e-3), dtype)
    return Case(c.op, ins, c.params, [Tensor("out[0]", dtype, c.outputs[0].shape, encoding=out_enc)])


def passes(adapter, c: Case) -> None:
    rec = execute(c, RunContext(adapter, "onnxruntime"))
    assert rec.verdict == "PASS", f"{c.op} {c.outputs[0].dtype}: {rec.verdict}: {rec.message}"


def run(adapter, c: Case) -> np.ndarray:
    out = adapter.run(c)
    assert out.status == "ok", (out.status, out.message)
    return out.outputs[0]


def rand(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(np.float32)


# ---- TransposeConv1d/2d/3d -> ConvTranspose -------------------------------------------------------
def test_transpose_conv2d_output_padding_restores_cropped_cells(cpu):
    # x = [[1, 2], [3, 4]], one 2x2 filter of ones, stride 2: each input cell writes a 2x2 block of its
    # value; the full result is 4x4. pad_amount after = 1 crops the last row and column, output_padding
    # 1 puts them back (height_out = 2 * 1 + 2 - 0 - 1 + 1 = 4): they hold their computed values, + bias 0.5.
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1)
    w = Tensor("in[1]", F32, (2, 2, 1, 1), np.ones((2, 2, 1, 1), np.float32), static=True)
    b = Tensor("in[2]", F32, (1,), np.array([0.5], np.float32), static=True)
    c = case("TransposeConv2d", [x, w, b], {"stride": _u32(2, 2), "pad_amount": _u32(0, 1, 0, 1).reshape(2, 2),
                                           "output_padding": _u32(1, 1)}, (1, 4, 4, 1))  # fmt: skip
    full = np.kron(np.array([[1, 2], [3, 4]]), np.ones((2, 2))) + 0.5
    np.testing.assert_array_equal(run(cpu, c)[0, :, :, 0], full)
    passes(cpu, c)


def _tconv(rank: int, group: int) -> Case:
    spatial = {1: (4,), 2: (3, 4), 3: (2, 3, 3)}[rank]
    k = {1: (3,), 2: (2, 3), 3: (2, 2, 1)}[rank]
    cin, cout = 4, 2 * group
    stride = {1: (2,), 2: (2, 1), 3: (1, 2, 2)}[rank]
    pads = {1: (1, 0), 2: (1, 1, 0, 1), 3: (0, 1, 1, 0, 0, 1)}[rank]
    outp = {1: (1,), 2: (1, 0), 3: (0, 1, 1)}[rank]
    out = [stride[i] * (spatial[i] - 1) + k[i] - pads[2 * i] - pads[2 * i + 1] + outp[i] for i in range(rank)]
    params = {"stride": _u32(*stride) if rank > 1 else stride[0], "pad_amount": _u32(*pads).reshape(rank, 2),
              "group": group, "output_padding": _u32(*outp) if rank > 1 else outp[0]}  # fmt: skip
    w = Tensor("in[1]", F32, (*k, cin, cout // group), rand(*k, cin, cout // group), static=True)
    b = Tensor("in[2]", F32, (cout,), rand(cout), static=True)
    return case(f"TransposeConv{rank}d", [rand(2, *spatial, cin), w, b], params, (2, *out, cout))


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("group", [1, 2])
def test_transpose_conv_float_matches_the_reference(cpu, rank, group):
    passes(cpu, _tconv(rank, group))


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_transpose_conv_ufixed8_matches_the_reference(cpu, rank):
    passes(cpu, quantized(_tconv(rank, 2), U8))


# ---- L2Pool2d -> LpPool(p=2) ----------------------------------------------------------------------
def test_l2_pool_is_the_root_of_the_sum_of_squares(cpu):
    # one 2x2 window over [[3, 4], [0, 0]]: sqrt(9 + 16) = 5 (the spec's sum; NNAPI's mean would give 2.5)
    x = np.array([3, 4, 0, 0], np.float32).reshape(1, 2, 2, 1)
    c = case("L2Pool2d", [x], {"filter_size": _u32(2, 2), "stride": _u32(1, 1),
                               "pad_amount": _u32(0, 0, 0, 0).reshape(2, 2)}, (1, 1, 1, 1))  # fmt: skip
    assert run(cpu, c).item() == 5.0


@pytest.mark.parametrize("pads", [(1, 1, 0, 1), (2, 2, 2, 2)], ids=["pad-below-window", "pad-as-large-as-window"])
@pytest.mark.parametrize("dtype", [F32, U8])
def test_l2_pool_matches_the_reference(cpu, pads, dtype):
    c = case("L2Pool2d", [rand(1, 5, 4, 2)], {"filter_size": _u32(2, 2), "stride": _u32(2, 1),
                                              "pad_amount": _u32(*pads).reshape(2, 2)},
             (1, (pads[0] + 5 + pads[1] - 2) // 2 + 1, pads[2] + 4 + pads[3] - 1, 2))  # fmt: skip
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


# ---- Im2Col (Slice composite) / Col2Im -----------------------------------------------------------
def _patch_params(k=(2, 2), s=(1, 1), pads=(0, 0, 0, 0), d=(1, 1)) -> dict:
    return {"kernel_size": _u32(*k), "stride": _u32(*s), "pad_amount": _u32(*pads).reshape(2, 2),
            "dilation": _u32(*d)}  # fmt: skip


def test_im2col_rows_are_channel_then_kernel_offset(cpu):
    # 2x3 image, 2 channels (channel 1 = channel 0 + 10), kernel 1x2, stride 1: positions (0,0) (0,1)
    # (1,0) (1,1); row c * 2 + j holds channel c at kernel column j of each position.
    x = np.stack([np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3) + 10], axis=-1)[None].astype(np.float32)
    c = case("Im2Col", [x], _patch_params(k=(1, 2)), (1, 4, 4))
    np.testing.assert_array_equal(run(cpu, c)[0], [[0, 1, 3, 4], [1, 2, 4, 5], [10, 11, 13, 14], [11, 12, 14, 15]])


@pytest.mark.parametrize("dtype", [F32, U8, S8])
def test_im2col_with_padding_and_dilation_matches_the_reference(cpu, dtype):
    # 5x4 padded by 1 top/bottom, 0/1 left/right -> 7x5; kernel 2x2 dilated (2, 1), stride (2, 1):
    # (7 - 3) // 2 + 1 = 3 by (5 - 2) // 1 + 1 = 4 positions
    c = case("Im2Col", [rand(2, 5, 4, 3)], _patch_params(s=(2, 1), pads=(1, 1, 0, 1), d=(2, 1)), (2, 12, 12))
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


def test_col2im_sums_overlapping_blocks(cpu):
    # a 1x3 image from kernel 1x2, stride 1: two positions; the middle pixel gets both overlapping columns
    cols = np.array([[[1, 2], [10, 20]]], np.float32)  # rows: kernel column 0, 1; columns: positions 0, 1
    c = case("Col2Im", [cols], _patch_params(k=(1, 2)), (1, 1, 3, 1))
    np.testing.assert_array_equal(run(cpu, c).reshape(-1), [1, 2 + 10, 20])


@pytest.mark.parametrize("dtype", [F32, U8])
def test_col2im_with_padding_matches_the_reference(cpu, dtype):
    # image 4x5, 2 channels, kernel 2x3, stride (1, 2), pads 1 all round: 5 x 3 positions
    c = case("Col2Im", [rand(1, 12, 15)], _patch_params(k=(2, 3), s=(1, 2), pads=(1, 1, 1, 1)), (1, 4, 5, 2))
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


# ---- GridSample ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [0, 1], ids=["bilinear", "nearest"])
@pytest.mark.parametrize("padding", [0, 1, 2], ids=["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_float_matches_the_reference(cpu, mode, padding, align):
    c = case("GridSample", [rand(2, 4, 5, 3), rand(2, 3, 6, 2, lo=-1.3, hi=1.3)],
             {"mode": mode, "padding_mode": padding, "align_corners": align}, (2, 3, 6, 3))  # fmt: skip
    passes(cpu, c)


def test_grid_sample_ufixed8_matches_the_reference(cpu):
    c = case(
        "GridSample", [rand(1, 4, 4, 2), rand(1, 3, 3, 2, lo=-1.2, hi=1.2)], {"align_corners": False}, (1, 3, 3, 2)
    )
    passes(cpu, quantized(c, U8))


# ---- RoiAlign / RoiPooling --------------------------------------------------------------------------
def _rois(op: str, boxes: list[list[float]], idx: list[int], out_hw=(2, 2), ratio=(1.0, 1.0), **params) -> Case:
    x = rand(2, 5, 6, 2)
    idx_t = Tensor("in[2]", "UINT_32", (len(idx),), np.array(idx, np.uint32))
    ps = {"img_size_ratio": np.array(ratio, np.float32), **params}
    return case(op, [x, np.array(boxes, np.float32), idx_t], ps, (len(boxes), *out_hw, 2))


def test_roi_align_samples_a_different_count_per_axis(cpu):
    # 2 samples along y, 1 along x: ONNX has one sampling_ratio; the lowering samples a 2x1-times finer
    # output once per bin and averages 2x1 blocks. A map constant along x with rows 0, 4, 8, 12: the
    # box (0, 0, 1, 4) as one 1x1 bin samples rows 1 and 3 -> (4 + 12) / 2 = 8.
    x = (np.arange(4, dtype=np.float32) * 4).reshape(1, 4, 1, 1) * np.ones((1, 1, 2, 1), np.float32)
    idx = Tensor("in[2]", "UINT_32", (1,), np.array([0], np.uint32))
    c = case(
        "RoiAlign",
        [x, np.array([[0, 0, 1, 4]], np.float32), idx],
        {"img_size_ratio": np.array([1.0, 1.0], np.float32), "num_samples_y": 2, "num_samples_x": 1},
        (1, 1, 1, 1),
    )
    assert run(cpu, c).item() == pytest.approx(8.0)
    passes(cpu, c)


@pytest.mark.parametrize("aligned", [False, True])
def test_roi_align_adaptive_with_reversed_and_thin_boxes_matches_the_reference(cpu, aligned):
    # reversed and zero-width boxes: ONNX's adaptive count ceil(extent / bins) is 0 there when aligned,
    # the reference's is 1; the lowering resolves the counts per box
    boxes = [[0.5, 0.5, 4.0, 3.0], [4.0, 3.0, 1.0, 0.5], [2.0, 1.0, 2.0, 4.5]]
    passes(cpu, _rois("RoiAlign", boxes, [0, 1, 1], ratio=(2.0, 1.0), aligned=aligned))


def test_roi_align_invalid_roi_is_zeros_when_allowed(cpu):
    c = _rois("RoiAlign", [[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 3.0, 3.0]], [0, 1], allow_invalid_roi=True)
    out = run(cpu, c)
    assert np.all(out[0] == 0) and np.any(out[1] != 0)
    passes(cpu, c)


def test_roi_align_ufixed8_matches_the_reference(cpu):
    boxes = [[0.5, 0.5, 4.0, 3.0], [1.0, 2.0, 5.0, 4.5]]
    passes(cpu, quantized(_rois("RoiAlign", boxes, [1, 0], num_samples_y=2, num_samples_x=2), U8))


@pytest.mark.parametrize("ratio", [(1.0, 1.0), (0.5, 1.0), (2.0, 2.0)])
@pytest.mark.parametrize("dtype", [F32, U8])
def test_roi_pooling_matches_the_reference(cpu, ratio, dtype):
    boxes = [[0.4, 0.6, 4.0, 3.0], [4.0, 3.0, 1.0, 0.5], [1.0, 2.0, 5.5, 5.0]]
    c = _rois("RoiPooling", boxes, [0, 1, 1], out_hw=(2, 3), ratio=ratio)
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


# ---- Stft, ArgbToRgb, Correlation1D -------------------------------------------------------------------
@pytest.mark.parametrize("onesided", [True, False])
@pytest.mark.parametrize("dtype", [F32, U8])
def test_stft_with_window_matches_the_reference(cpu, onesided, dtype):
    # frame_length 4 (exact twiddles), step 2 over 10 samples: 4 frames of 3 (onesided) or 4 bins
    c = case("Stft", [rand(2, 10, 1), rand(4, lo=0.0, hi=1.0)], {"frame_step": 2, "onesided": onesided},
             (2, 4, 3 if onesided else 4, 2))  # fmt: skip
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


def test_stft_without_window_is_rectangular_over_frame_length(cpu):
    # frame_length 2, step 2 over [1, 2, 3, 5]: frames [1, 2], [3, 5]; bins 0 (sum) and 1 (difference)
    x = np.array([1, 2, 3, 5], np.float32).reshape(1, 4, 1)
    c = case("Stft", [x], {"frame_step": 2, "frame_length": 2}, (1, 2, 2, 2))
    np.testing.assert_allclose(run(cpu, c)[0, :, :, 0], [[3, -1], [8, -2]], atol=1e-6)


@pytest.mark.parametrize("order,reverse,picks", [(0, False, [1, 2, 3]), (0, True, [3, 2, 1]),
                                                 (1, False, [0, 1, 2]), (1, True, [2, 1, 0])])  # fmt: skip
def test_argb_to_rgb_picks_the_colour_channels(cpu, order, reverse, picks):
    x = np.array([10, 20, 30, 40], np.float32).reshape(1, 1, 1, 4)
    c = case("ArgbToRgb", [x], {"input_order": order, "reverse_output": reverse}, (1, 1, 1, 3))
    np.testing.assert_array_equal(run(cpu, c).reshape(-1), x.reshape(-1)[picks])


def test_argb_to_rgb_ufixed8_matches_the_reference(cpu):
    passes(cpu, quantized(case("ArgbToRgb", [rand(2, 3, 2, 4)], {"reverse_output": True}, (2, 3, 2, 3)), U8))


def test_correlation_1d_is_the_channel_mean_of_shifted_products(cpu):
    # displacement 1, shift 0: channel d pairs in0[w] with in1[w + d - 1], zero outside the row.
    # in0 = [[1, 1], [2, 2]] (width 2, depth 2), in1 = [[3, 5], [7, 9]]:
    # d=0: w0 -> 0, w1 -> mean(2*3, 2*5) = 8; d=1: mean(3, 5) = 4, mean(14, 18) = 16; d=2: mean(7, 9) = 8, 0
    a = np.array([[1, 1], [2, 2]], np.float32).reshape(1, 1, 2, 2)
    b = np.array([[3, 5], [7, 9]], np.float32).reshape(1, 1, 2, 2)
    c = case("Correlation1D", [a, b], {"displacement": 1, "shift": 0}, (1, 1, 2, 3))
    np.testing.assert_array_equal(run(cpu, c)[0, 0], [[0, 4, 8], [8, 16, 0]])


@pytest.mark.parametrize("dtype", [F32, S8])
def test_correlation_1d_with_shift_matches_the_reference(cpu, dtype):
    c = case("Correlation1D", [rand(1, 2, 5, 3), rand(1, 2, 5, 3)], {"displacement": 2, "shift": -1}, (1, 2, 5, 5))
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


# ---- CropAndResize, ImageProjectionTransform, AxisAlignedBboxTransform ---------------------------------
def _crops(boxes: list[list[float]], idx: list[int], dims=(3, 4), **params) -> Case:
    idx_t = Tensor("in[2]", "INT_32", (len(idx),), np.array(idx, np.int32))
    return case("CropAndResize", [rand(2, 5, 6, 2), np.array(boxes, np.float32), idx_t],
                {"resize_dims": list(dims), **params}, (len(boxes), *dims, 2))  # fmt: skip


def test_crop_and_resize_outside_samples_are_the_extrapolation_value(cpu):
    # a box from -1 to 2 on a 1x2 image, 4 samples: only columns 0 and 1 of the image fall inside
    x = np.array([10, 20], np.float32).reshape(1, 1, 2, 1)
    c = case("CropAndResize", [x, np.array([[0, -1, 0, 2]], np.float32), Tensor("in[2]", "INT_32", (1,),
             np.array([0], np.int32))], {"resize_dims": [1, 4], "extrapolation_value": -7.5}, (1, 1, 4, 1))  # fmt: skip
    np.testing.assert_allclose(run(cpu, c).reshape(-1), [-7.5, 10, 20, -7.5])


@pytest.mark.parametrize("interp", [0, 1], ids=["bilinear", "nearest"])
@pytest.mark.parametrize("dims", [(3, 4), (1, 1)], ids=["grid", "single-sample"])
def test_crop_and_resize_float_matches_the_reference(cpu, interp, dims):
    # a flipped box, one reaching outside the image, one exactly on the image's corners
    boxes = [[0.1, 0.2, 0.9, 0.7], [0.8, 0.9, 0.0, 0.3], [-0.2, 0.5, 1.0, 1.3], [0.0, 0.0, 1.0, 1.0]]
    passes(cpu, _crops(boxes, [0, 1, 1, 0], dims, interpolation_mode=interp, extrapolation_value=0.25))


def test_crop_and_resize_nearest_rounds_half_away_from_zero(cpu):
    # 3 samples over columns 0..5 of a 6-wide image land on 0, 2.5, 5: 2.5 reads column 3 (GridSample alone: 2)
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 6, 1)
    c = case("CropAndResize", [x, np.array([[0, 0, 0, 1]], np.float32), Tensor("in[2]", "INT_32", (1,),
             np.array([0], np.int32))], {"resize_dims": [1, 3], "interpolation_mode": 1}, (1, 1, 3, 1))  # fmt: skip
    np.testing.assert_array_equal(run(cpu, c).reshape(-1), [0, 3, 5])


def test_crop_and_resize_ufixed8_matches_the_reference(cpu):
    passes(cpu, quantized(_crops([[0.1, 0.2, 0.9, 0.7], [0.8, 0.9, 0.0, 0.3]], [1, 0]), U8))


def _projection(t: np.ndarray, interp: int = 0, batch: int = 2) -> Case:
    return case("ImageProjectionTransform", [rand(batch, 4, 5, 2), t], {"interpolation_mode": interp},
                (batch, 4, 5, 2))  # fmt: skip


def test_image_projection_identity_is_the_image(cpu):
    c = _projection(np.array([1, 0, 0, 0, 1, 0, 0, 0], np.float32))
    np.testing.assert_allclose(run(cpu, c), c.inputs[0].data, atol=1e-6)


@pytest.mark.parametrize("interp", [0, 1], ids=["bilinear", "nearest"])
@pytest.mark.parametrize("per_image", [False, True], ids=["shared", "per-image"])
def test_image_projection_float_matches_the_reference(cpu, interp, per_image):
    # a projective map with a k = 0 line (c0 = -0.5: x = 2), shifts by half pixels and points off the image
    shared = np.array([0.9, 0.2, 0.5, -0.1, 1.1, -0.5, -0.5, 0.05], np.float32)
    t = np.stack([shared, np.array([1, 0, 1.5, 0, 1, -0.5, 0, 0], np.float32)]) if per_image else shared
    passes(cpu, _projection(t, interp))


def test_image_projection_ufixed8_matches_the_reference(cpu):
    passes(cpu, quantized(_projection(np.array([0.9, 0.2, 0.5, -0.1, 1.1, -0.5, 0.02, 0.05], np.float32)), U8))


def _bbox(batches: int = 2, with_counts: bool = True, **params) -> Case:
    boxes = np.array([[1, 2, 9, 7], [4, 4, 4, 10], [0, 0, 15, 15]], np.float32)
    idx = Tensor("in[2]", "INT_32", (3,), np.array([1, 0, 1], np.int32))
    sizes = np.array([[12, 10], [16, 20]][:batches], np.float32)
    c = case("AxisAlignedBboxTransform", [boxes, rand(3, 8, lo=-1.5, hi=1.5), idx, sizes], params, (3, 8))
    if with_counts:
        c.outputs.append(Tensor("out[1]", "INT_32", (batches,)))
    return c


def test_axis_aligned_bbox_transform_counts_boxes_per_batch_index(cpu):
    out = cpu.run(_bbox())
    assert out.status == "ok", (out.status, out.message)
    np.testing.assert_array_equal(out.outputs[1], [1, 2])


@pytest.mark.parametrize("weights", [None, [10.0, 10.0, 5.0, 5.0]], ids=["unweighted", "weighted"])
def test_axis_aligned_bbox_transform_float_matches_the_reference(cpu, weights):
    passes(cpu, _bbox(**({} if weights is None else {"weights": np.array(weights, np.float32)})))


def test_axis_aligned_bbox_transform_ufixed8_matches_the_reference(cpu):
    passes(cpu, quantized(_bbox(with_counts=False), U8))


@pytest.mark.parametrize("index", [-1, 2], ids=["negative", "past-the-batch"])
def test_crop_and_resize_batch_index_outside_the_batch_is_not_lowered(cpu, index):
    # ONNX Gather would read index -1 from the end (the reference refuses it): SKIP, not Gather's reading
    c = _crops([[0.1, 0.2, 0.9, 0.7]], [index])
    out = cpu.run(c)
    assert out.status == "skip", f"{out.status}: {out.message}"


def test_crop_and_resize_takes_uint32_batch_indices(cpu):
    c = _crops([[0.1, 0.2, 0.9, 0.7], [0.8, 0.9, 0.0, 0.3]], [1, 0])
    c.inputs[2] = Tensor("in[2]", "UINT_32", (2,), np.array([1, 0], np.uint32))
    passes(cpu, c)


def test_axis_aligned_bbox_transform_sfixed8_matches_the_reference(cpu):
    # every move of a dequantized value back on its input's grid: without it ORT's QDQ propagation
    # builds an int8 QuantizeLinear with a uint8 zero point and refuses the model
    passes(cpu, quantized(_bbox(with_counts=False), S8))


# ---- ResizeBilinear -> Resize ------------------------------------------------------------------------
def test_resize_bilinear_antialias_downsampling_is_not_lowered(cpu):
    """ONNX Resize's antialias reads the edge sample for a filter tap past the edge, where ResizeBilinear's reading
    drops it (opdefs/ResizeBilinear.yaml): the lowering would judge ONNX Runtime by another reading, so it says so."""
    out = cpu.run(case("ResizeBilinear", [rand(1, 6, 4, 1)], {"antialias": True}, (1, 3, 4, 1)))
    assert out.status == "skip" and "antialias" in out.message, (out.status, out.message)


def test_resize_bilinear_antialias_upsampling_matches_the_reference(cpu):
    """Enlarging, antialias changes nothing: both readings are plain bilinear."""
    passes(cpu, case("ResizeBilinear", [rand(1, 3, 2, 2)], {"antialias": True, "half_pixel_centers": True},
                     (1, 6, 5, 2)))  # fmt: skip


# ---- LayerNorm -> LayerNormalization -----------------------------------------------------------------
def test_layer_norm_gamma_listed_out_of_axis_order_is_transposed_into_it(cpu):
    """axes [1, 0] of a [3, 5] input: gamma's dims follow the list ([5, 3]); ONNX wants them in axis order."""
    x, gamma, beta = rand(3, 5), rand(5, 3, lo=0.5, hi=2.0), rand(5, 3)
    passes(cpu, case("LayerNorm", [x, gamma, beta], {"axes": _u32(1, 0), "epsilon": 1e-3}, (3, 5)))


def test_layer_norm_with_a_square_gamma_in_listed_order_matches_the_reference(cpu):
    """A [4, 6, 6] input with axes [0, 2, 1] and a [4, 6, 6] gamma: the shapes alone fit ONNX, the values do not."""
    x, gamma = rand(4, 6, 6), rand(4, 6, 6, lo=0.5, hi=2.0)
    passes(cpu, case("LayerNorm", [x, gamma], {"axes": _u32(0, 2, 1), "epsilon": 1e-3}, (4, 6, 6)))


# ---- TopK -> TopK --------------------------------------------------------------------------------------
def _topk_case(x: np.ndarray, k: int) -> Case:
    c = case("TopK", [x], {"k": k}, (*x.shape[:-1], k))
    c.outputs.append(Tensor("out[1]", "UINT_32", (*x.shape[:-1], k)))
    return c


def test_topk_with_equal_values_among_the_k_best_is_not_lowered(cpu):
    """QNN's TopK orders equal values by the larger index (12745), ONNX's by the smaller: the lowering says so."""
    out = cpu.run(_topk_case(np.array([[3.0, 1.0, 3.0, 0.0]], np.float32), 2))
    assert out.status == "skip" and "equal values" in out.message, (out.status, out.message)


def test_topk_with_ties_outside_the_k_best_is_lowered(cpu):
    passes(cpu, _topk_case(np.array([[5.0, 1.0, 1.0, 0.0]], np.float32), 1))
