"""The RoI references (reference/roi.py) against onnxruntime's RoiAlign / MaxRoiPool and the NNAPI formulas.

QNN feature maps are NHWC and boxes are (x1, y1, x2, y2) in original-image coordinates divided by
img_size_ratio; ONNX takes NCHW, one spatial_scale (= 1 / ratio) and, for MaxRoiPool, the batch index
as a fifth box column. The translation happens here only. AxisAlignedBboxTransform has no ONNX
counterpart: it is checked on hand-worked cases of NNAPI's AXIS_ALIGNED_BBOX_TRANSFORM formulas.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference
from cases import quant
from reference.resampling import OutputShapeRequired
from tests.onnx_oracle import nchw, nhwc, ort_node

RNG = np.random.default_rng(20240613)
Q8 = "UFIXED_POINT_8"


def feature_map(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.uniform(-3.0, 3.0, size=shape).astype(np.float32)


def boxes(n: int, hi: float, ordered: bool = True) -> np.ndarray:
    """n random (x1, y1, x2, y2) in [0, hi]; ``ordered`` puts the first corner above-left."""
    a, b = RNG.uniform(0, hi, (n, 2)), RNG.uniform(0, hi, (n, 2))
    if ordered:
        a, b = np.minimum(a, b), np.maximum(a, b)
    return np.concatenate([a, b], axis=1).astype(np.float32)


def quantized(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    enc = quant.encoding_for_range(lo, hi, Q8)
    return quant.dequantize(quant.quantize(values, enc, Q8), enc)


def codes_within_one_step(got: np.ndarray, want: np.ndarray, lo: float, hi: float) -> int:
    enc = quant.encoding_for_range(lo, hi, Q8)
    return int(np.max(np.abs(quant.quantize(got, enc, Q8).astype(int) - quant.quantize(want, enc, Q8).astype(int))))


# ---- RoiAlign against ONNX RoiAlign -------------------------------------------------------------


def roi_align(x, rois, idx, out_hw, ratio, **params) -> np.ndarray:
    out = (len(rois), *out_hw, x.shape[-1])
    return reference.run("RoiAlign", [np.asarray(x, np.float64), np.asarray(rois, np.float64),
                                      np.asarray(idx, np.float64)],
                         {"img_size_ratio": np.array([ratio, ratio], np.float32), **params}, [out])[0]  # fmt: skip


def ort_roi_align(x, rois, idx, out_hw, ratio, samples: int, aligned: bool) -> np.ndarray:
    feeds = [nchw(x).astype(np.float32), rois.astype(np.float32), np.asarray(idx, np.int64)]
    mode = "half_pixel" if aligned else "output_half_pixel"
    (y,) = ort_node("RoiAlign", feeds, opset=16,  # ONNX 22's RoiAlign has no onnxruntime CPU kernel
                    output_height=out_hw[0], output_width=out_hw[1], sampling_ratio=samples, spatial_scale=1.0 / ratio,
                    coordinate_transformation_mode=mode, mode="avg")  # fmt: skip
    return nhwc(y)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("samples", [-1, 1, 2, 3])
@pytest.mark.parametrize("ratio", [1.0, 2.0, 0.5])
@pytest.mark.parametrize("seed", range(3))
def test_roi_align_matches_onnxruntime(aligned: bool, samples: int, ratio: float, seed: int) -> None:
    """num_samples -1 (the default) is ONNX's adaptive sampling_ratio 0; aligned is ONNX half_pixel."""
    x = feature_map((2, 5, 6, 3))
    rois = boxes(4, 7.0 * ratio)
    rois[0] = [0.1, 0.2, 0.4, 0.3]  # under one cell: widened to one when not aligned
    rois[1, 2:] = [7.5 * ratio, 7.0 * ratio]  # samples past the map's far edge
    idx = RNG.integers(0, 2, 4)
    out_hw = (2, 3) if seed % 2 else (3, 1)
    params = {"aligned": aligned, "num_samples_y": samples, "num_samples_x": samples}
    got = roi_align(x, rois, idx, out_hw, ratio, **params)
    want = ort_roi_align(x, rois, idx, out_hw, ratio, max(samples, 0), aligned)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{params} ratio {ratio}")


def test_roi_align_reversed_boxes_match_onnxruntime_when_not_aligned() -> None:
    """x1 > x2 is not forbidden (11394): unaligned, the extent is raised to one cell, as in ONNX."""
    x = feature_map((1, 4, 5, 2))
    rois = boxes(3, 5.0, ordered=False)
    got = roi_align(x, rois, [0, 0, 0], (2, 2), 1.0)
    np.testing.assert_allclose(got, ort_roi_align(x, rois, [0, 0, 0], (2, 2), 1.0, 0, False), rtol=1e-5, atol=1e-5)


def test_roi_align_quantized_matches_onnxruntime_within_one_step() -> None:
    x = quantized(RNG.uniform(-2, 3, (1, 6, 6, 2)), -2.0, 3.0)
    rois = quantized(boxes(3, 6.0), 0.0, 6.0)
    got = roi_align(x, rois, [0, 0, 0], (2, 2), 1.0)
    want = ort_roi_align(x, rois, [0, 0, 0], (2, 2), 1.0, 0, False)
    assert codes_within_one_step(got, want, -2.0, 3.0) <= 1


def test_roi_align_unequal_ratios_scale_each_axis() -> None:
    """img_size_ratio = [2, 1]: y coordinates are halved, x kept. The box (0, 0, 2, 4) on the image is
    the feature-map box rows 0..2, columns 0..2; with a constant-per-row map and one 1x1 output of
    4 samples, the mean of rows 0.5 and 1.5 is (r0 + 2 r1 + r2) / 4 for rows r."""
    x = np.array([0.0, 4.0, 8.0, 12.0]).reshape(1, 4, 1, 1) * np.ones((1, 1, 3, 1))
    got = reference.run("RoiAlign", [x, np.array([[0.0, 0.0, 2.0, 4.0]]), np.array([0.0])],
                        {"img_size_ratio": np.array([2.0, 1.0]), "num_samples_y": 2, "num_samples_x": 2},
                        [(1, 1, 1, 1)])[0]  # fmt: skip
    assert got.ravel()[0] == pytest.approx(4.0), got.ravel()


def test_roi_align_invalid_roi_is_zero_when_allowed_and_refused_otherwise() -> None:
    """x2 - x1 = 0 and y2 - y1 = 0 (11455-11457)."""
    x = feature_map((1, 3, 3, 1)) + 10.0
    rois = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 2.0, 2.0]])
    got = roi_align(x, rois, [0, 0], (2, 2), 1.0, allow_invalid_roi=True)
    assert np.all(got[0] == 0) and np.all(got[1] != 0), got
    with pytest.raises(ValueError, match="allow_invalid_roi"):
        roi_align(x, rois, [0, 0], (2, 2), 1.0)


def test_roi_align_without_declared_output_shape_asks_for_it() -> None:
    with pytest.raises(OutputShapeRequired):
        reference.run("RoiAlign", [np.zeros((1, 2, 2, 1)), np.zeros((1, 4)), np.zeros(1)],
                      {"img_size_ratio": np.ones(2)})  # fmt: skip


def test_roi_align_rejects_batch_index_outside_the_batch() -> None:
    with pytest.raises(ValueError, match="batch indices"):
        roi_align(np.zeros((1, 2, 2, 1)), [[0, 0, 1, 1]], [1], (1, 1), 1.0)


# ---- RoiPooling against ONNX MaxRoiPool ---------------------------------------------------------


def roi_pool(x, rois, idx, out_hw, ratio) -> np.ndarray:
    out = (len(rois), *out_hw, x.shape[-1])
    return reference.run("RoiPooling", [np.asarray(x, np.float64), np.asarray(rois, np.float64),
                                        np.asarray(idx, np.float64)],
                         {"img_size_ratio": np.array([ratio, ratio], np.float32)}, [out])[0]  # fmt: skip


def ort_max_roi_pool(x, rois, idx, out_hw, ratio) -> np.ndarray:
    r5 = np.concatenate([np.asarray(idx, np.float32)[:, None], rois], axis=1).astype(np.float32)
    (y,) = ort_node("MaxRoiPool", [nchw(x).astype(np.float32), r5], opset=16, pooled_shape=list(out_hw),
                    spatial_scale=1.0 / ratio)  # fmt: skip
    return nhwc(y)


@pytest.mark.parametrize("ratio", [1.0, 2.0, 0.5])
@pytest.mark.parametrize("out_hw", [(1, 1), (2, 3), (4, 2)])
@pytest.mark.parametrize("seed", range(3))
def test_roi_pooling_matches_onnxruntime_max_roi_pool(ratio: float, out_hw: tuple[int, int], seed: int) -> None:
    x = feature_map((2, 6, 5, 2))
    rois = boxes(4, 7.0 * ratio, ordered=seed != 2)  # reversed boxes too: one cell, as in ONNX
    idx = RNG.integers(0, 2, 4)
    got = roi_pool(x, rois, idx, out_hw, ratio)
    np.testing.assert_array_equal(got, ort_max_roi_pool(x, rois, idx, out_hw, ratio), err_msg=f"ratio {ratio}")


def test_roi_pooling_quantized_moves_values_and_matches_onnxruntime() -> None:
    x = quantized(RNG.uniform(-2, 3, (1, 5, 5, 2)), -2.0, 3.0)
    rois = quantized(boxes(3, 5.0), 0.0, 5.0)
    got = roi_pool(x, rois, [0, 0, 0], (2, 2), 1.0)
    assert np.all(np.isin(got, x) | (got == 0)), "a pooled value is neither an input value nor an empty bin's 0"
    want = ort_max_roi_pool(x.astype(np.float32), rois.astype(np.float32), [0, 0, 0], (2, 2), 1.0)
    np.testing.assert_array_equal(got.astype(np.float32), want)


def test_roi_pooling_hand_computed_bins() -> None:
    """Box (0, 0, 3, 1) on a 2x4 map: rounded corners give 4 columns x 2 rows; a 1x2 output splits the
    columns into [0, 2) and [2, 4), each the max over both rows."""
    x = np.array([[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 9.0, 8.0]]).reshape(1, 2, 4, 1)
    got = roi_pool(x, [[0.0, 0.0, 3.0, 1.0]], [0], (1, 2), 1.0)
    np.testing.assert_array_equal(got.ravel(), [5.0, 9.0])


# ---- AxisAlignedBboxTransform (NNAPI AXIS_ALIGNED_BBOX_TRANSFORM) -------------------------------


def bbox(rois, deltas, idx, sizes, n_outputs: int = 2, **params) -> list[np.ndarray]:
    shapes = [None] * n_outputs
    return reference.run("AxisAlignedBboxTransform", [np.asarray(rois, np.float64), np.asarray(deltas, np.float64),
                                                      np.asarray(idx, np.float64), np.asarray(sizes, np.float64)],
                         params, shapes)  # fmt: skip


def test_bbox_transform_zero_deltas_keep_the_box() -> None:
    out, _ = bbox([[1.0, 2.0, 5.0, 4.0]], [[0, 0, 0, 0, 0, 0, 0, 0]], [0], [[10.0, 10.0]])
    np.testing.assert_allclose(out, [[1, 2, 5, 4, 1, 2, 5, 4]])


def test_bbox_transform_hand_computed() -> None:
    """Box (0, 0, 4, 2): centre (2, 1), w 4, h 2. Deltas (0.5, -0.5, ln 2, 0): centre (4, 0), w 8,
    h 2 -> (0, -1, 8, 1), clipped to the 6 x 7 (height x width) image -> (0, 0, 7, 1)."""
    out, _ = bbox([[0.0, 0.0, 4.0, 2.0]], [[0.5, -0.5, np.log(2.0), 0.0]], [0], [[6.0, 7.0]])
    np.testing.assert_allclose(out, [[0.0, 0.0, 7.0, 1.0]], atol=1e-12)


def test_bbox_transform_weights_divide_the_deltas() -> None:
    """weights [wx, wy, ww, wh] = [2, 2, 1, 1]: dx = 1 / 2, so the centre moves by half a width."""
    out, _ = bbox([[0.0, 0.0, 4.0, 2.0]], [[1.0, 0.0, 0.0, 0.0]], [0], [[10.0, 10.0]],
                  weights=np.array([2.0, 2.0, 1.0, 1.0], np.float32))  # fmt: skip
    np.testing.assert_allclose(out, [[2.0, 0.0, 6.0, 2.0]])


def test_bbox_transform_clips_to_each_boxes_own_image() -> None:
    rois = [[0.0, 0.0, 4.0, 4.0], [0.0, 0.0, 4.0, 4.0]]
    deltas = [[0.0, 0.0, np.log(4.0), np.log(4.0)]] * 2  # 16 x 16 around (2, 2): (-6, -6, 10, 10)
    out, splits = bbox(rois, deltas, [0, 1], [[5.0, 3.0], [8.0, 9.0]])
    np.testing.assert_allclose(out, [[0, 0, 3, 5], [0, 0, 9, 8]], atol=1e-12)
    np.testing.assert_array_equal(splits, [1, 1])


def test_bbox_transform_batch_splits_count_boxes_per_image() -> None:
    _, splits = bbox(np.zeros((4, 4)), np.zeros((4, 4)), [0, 2, 2, 2], np.full((3, 2), 5.0))
    assert splits.dtype == np.int32 and splits.tolist() == [1, 0, 3], splits


def test_bbox_transform_without_out1_returns_one_output() -> None:
    assert len(bbox([[0, 0, 1, 1]], [[0, 0, 0, 0]], [0], [[2.0, 2.0]], n_outputs=1)) == 1


def test_bbox_transform_quantized_hand_formula_within_one_step() -> None:
    rois = quantized(boxes(3, 8.0), 0.0, 8.0)
    deltas = quantized(RNG.uniform(-0.5, 0.5, (3, 8)), -0.5, 0.5)
    out, _ = bbox(rois, deltas, [0, 0, 0], [[9.0, 9.0]])
    w, h = rois[:, 2] - rois[:, 0], rois[:, 3] - rois[:, 1]
    cx, cy = rois[:, 0] + w / 2, rois[:, 1] + h / 2
    want = []
    for c in range(2):
        d = deltas[:, 4 * c : 4 * c + 4]
        px, py, pw, ph = cx + d[:, 0] * w, cy + d[:, 1] * h, w * np.exp(d[:, 2]), h * np.exp(d[:, 3])
        want.append(np.clip(np.stack([px - pw / 2, py - ph / 2, px + pw / 2, py + ph / 2], 1), 0, 9))
    assert codes_within_one_step(out, np.concatenate(want, 1), 0.0, 9.0) <= 1


def test_bbox_transform_refuses_non_positive_image_sizes() -> None:
    with pytest.raises(ValueError, match="image sizes"):
        bbox([[0, 0, 1, 1]], [[0, 0, 0, 0]], [0], [[0.0, 2.0]])


def test_roi_align_model_leaves_bins_with_a_sample_on_the_outer_limit_open() -> None:
    """A [1, 2, 1, 1] map [0, 10], one sample per bin: RoI y 1 .. 3 samples y = 2.0, the map's height, where a sample
    stops counting (open); RoI y 0 .. 1 samples y = 0.5, between the rows (5)."""
    from tests.reference_helpers import case, modelled

    x = np.array([0.0, 10.0]).reshape(1, 2, 1, 1)
    rois = np.array([[0.0, 1.0, 1.0, 3.0], [0.0, 0.0, 1.0, 1.0]])
    params = {"num_samples_x": 1, "num_samples_y": 1, "img_size_ratio": [1.0, 1.0]}
    c = case("RoiAlign", [x, rois, ("UINT_32", np.array([0, 0], np.uint32))], params, [("FLOAT_32", (2, 1, 1, 1))])
    got = modelled(c, "boundary-samples-open")[0].reshape(2)
    assert np.isnan(got[0])
    assert got[1] == 5.0


def test_float16_ties_away_from_zero_where_ieee_rounds_to_even() -> None:
    from cases.quant import float16_ties_away

    np.testing.assert_array_equal(float16_ties_away([27.6328125, 12.67578125, -12.67578125, 27.63]),
                                  [27.640625, 12.6796875, -12.6796875, np.float16(27.63)])  # fmt: skip
    assert np.float16(27.6328125) == 27.625, "numpy (IEEE) rounds the same tie to even"


# ep-bbox-transform-f16-ties-away's case through the ONNX Runtime QNN EP (onnxruntime-qnn 2.7.0): out[0] row 2
EP_BBOX_ROW_2 = [0.3515625, 10.8828125, 8.1484375, 0.0, 15.5390625, 0.0, 15.5390625, 0.0, 0.0, 10.8828125, 15.5390625,
                 10.8828125, 15.5390625, 10.8828125, 15.5390625, 10.8828125]  # fmt: skip


def test_bbox_ties_away_model_gives_the_eps_outputs_and_refuses_the_spec_and_a_planted_error() -> None:
    """Row 2 of the finding's case: 0.3515625 where the spec's 0.34375 belongs, as the EP gave; the model is the EP's
    out[0] exactly, the spec's answer (and the EP's with one element a float16 step per 64 off) are outside it."""
    from pathlib import Path

    from cases.case import Case
    from reference import models
    from reference.expected import expected

    c = Case.load(Path(__file__).resolve().parents[1] / "findings/cases/AxisAlignedBboxTransform/"
                  "ep-bbox-transform-f16-ties-away.json")  # fmt: skip
    model = {"diagnosis": "float16-steps-ties-away-from-zero"}
    got = models._modelled(c, "diagnosis", model["diagnosis"])
    np.testing.assert_array_equal(got[0][2], EP_BBOX_ROW_2)
    spec = expected(c)
    assert spec[0][2, 0] == pytest.approx(0.34375, abs=1e-3)
    assert not models.check(c, [spec[0].astype(np.float16), spec[1]], model)["matches"]
    planted = got[0].astype(np.float16)
    planted[2, 2] *= np.float16(1.02)
    assert not models.check(c, [planted, got[1]], model)["matches"]
    assert models.check(c, [got[0].astype(np.float16), got[1]], model)["matches"]
