"""The resampling references (reference/resampling.py, reference/image.py) against onnxruntime and the spec.

QNN tensors are NHWC; ONNX's Resize / GridSample kernels on onnxruntime CPU are fed NCHW, translated
here and only here. TensorFlow conventions (ResizeBilinear / ResizeNearestNeighbor flags, CropAndResize,
ImageProjectionTransform) have no runnable oracle on this machine: they are checked on hand-worked
cases from TensorFlow's documented formulas, and the Resize-family flags are also mapped onto the
equivalent ONNX coordinate modes and cross-checked on onnxruntime.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference
from cases import quant
from reference import resampling
from reference.resampling import OutputShapeRequired
from tests.onnx_oracle import nchw, nhwc, onnx_reference_node, ort_node
from tests.reference_helpers import member

RNG = np.random.default_rng(20240612)
Q8 = "UFIXED_POINT_8"


def image(shape: tuple[int, ...], lo: float = -3.0, hi: float = 3.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def run1(op: str, inputs: list, params: dict, out_shape: tuple[int, ...] | None = None) -> np.ndarray:
    return reference.run(op, inputs, params, [out_shape] if out_shape else None)[0]


def assert_codes_within_one_step(got: np.ndarray, want: np.ndarray, lo: float, hi: float, what: str) -> None:
    enc = quant.encoding_for_range(lo, hi, Q8)
    q_got = quant.quantize(got, enc, Q8).astype(int)
    q_want = quant.quantize(want, enc, Q8).astype(int)
    worst = int(np.max(np.abs(q_got - q_want)))
    assert worst <= 1, f"{what}: quantized outputs differ by {worst} steps"


def quantized_image(shape: tuple[int, ...]) -> np.ndarray:
    """Random data through a UFIXED_POINT_8 encoding: the real values a quantized case feeds."""
    enc = quant.encoding_for_range(-2.0, 3.0, Q8)
    return quant.dequantize(quant.quantize(RNG.uniform(-2.0, 3.0, shape), enc, Q8), enc)


# ---- Resize against ONNX Resize ----------------------------------------------------------------

# the spec's number of each member -> ONNX's attribute value for the same rule
TRANSFORMS = {member("Resize", "transformation_mode", m): onnx for m, onnx in (
    ("HALF_PIXEL", "half_pixel"), ("PYTORCH_HALF_PIXEL", "pytorch_half_pixel"), ("ALIGN_CORNERS", "align_corners"),
    ("ASYMMETRIC", "asymmetric"))}  # fmt: skip
NEAREST_MODES = {member("Resize", "nearest_mode", m): onnx for m, onnx in (
    ("ROUND_PREFER_FLOOR", "round_prefer_floor"), ("ROUND_PREFER_CEIL", "round_prefer_ceil"), ("FLOOR", "floor"),
    ("CEIL", "ceil"))}  # fmt: skip
RESIZE_SHAPES = [
    ((1, 3, 4, 2), (1, 6, 7, 2)),  # upsampling
    ((2, 5, 6, 1), (2, 3, 2, 1)),  # downsampling
    ((1, 4, 4, 3), (1, 1, 5, 3)),  # one output row
    ((1, 1, 3, 2), (1, 4, 1, 2)),  # one input row, one output column
    ((1, 6, 5, 1), (1, 4, 9, 1)),  # mixed
]


def ort_resize(x: np.ndarray, out_shape: tuple[int, ...], **attrs) -> np.ndarray:
    sizes = np.array(nchw(np.empty(out_shape)).shape, np.int64)
    (y,) = ort_node("Resize", [nchw(x).astype(np.float32), None, None, sizes], **attrs)
    return nhwc(y)


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("rule", sorted(NEAREST_MODES))
@pytest.mark.parametrize("shapes", RESIZE_SHAPES)
def test_resize_nearest_matches_onnxruntime(transform: int, rule: int, shapes) -> None:
    x = image(shapes[0])
    got = run1("Resize", [x.astype(np.float64)], {"transformation_mode": transform, "interpolation_mode": 0,
                                                  "nearest_mode": rule}, shapes[1])  # fmt: skip
    want = ort_resize(x, shapes[1], mode="nearest", coordinate_transformation_mode=TRANSFORMS[transform],
                      nearest_mode=NEAREST_MODES[rule])  # fmt: skip
    np.testing.assert_array_equal(got, want, err_msg=f"{shapes} {TRANSFORMS[transform]} {NEAREST_MODES[rule]}")


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("shapes", RESIZE_SHAPES)
def test_resize_linear_matches_onnxruntime(transform: int, shapes) -> None:
    x = image(shapes[0])
    got = run1("Resize", [x.astype(np.float64)], {"transformation_mode": transform, "interpolation_mode": 1}, shapes[1])
    want = ort_resize(x, shapes[1], mode="linear", coordinate_transformation_mode=TRANSFORMS[transform])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{shapes} {TRANSFORMS[transform]}")


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("exclude", [False, True])
@pytest.mark.parametrize("coeff", [-0.75, -0.5])
@pytest.mark.parametrize("shapes", RESIZE_SHAPES)
def test_resize_cubic_matches_onnxruntime(transform: int, exclude: bool, coeff: float, shapes) -> None:
    x = image(shapes[0])
    params = {"transformation_mode": transform, "interpolation_mode": 2, "cubic_coeff": coeff,
              "exclude_outside": exclude}  # fmt: skip
    got = run1("Resize", [x.astype(np.float64)], params, shapes[1])
    want = ort_resize(x, shapes[1], mode="cubic", coordinate_transformation_mode=TRANSFORMS[transform],
                      cubic_coeff_a=coeff, exclude_outside=int(exclude))  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{shapes} {TRANSFORMS[transform]}")


@pytest.mark.parametrize("interp,mode", [(0, "nearest"), (1, "linear")])
@pytest.mark.parametrize("shapes", [((2, 5, 3), (2, 8, 3)), ((1, 3, 4, 5, 2), (1, 5, 2, 7, 2))])
def test_resize_other_ranks_match_onnxruntime(interp: int, mode: str, shapes) -> None:
    """[batch, D1 .. Dn, channel]: every axis between batch and channel is spatial (10958)."""
    x = image(shapes[0])
    got = run1("Resize", [x.astype(np.float64)], {"interpolation_mode": interp}, shapes[1])
    want = ort_resize(x, shapes[1], mode=mode, coordinate_transformation_mode="half_pixel")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{shapes} {mode}")


@pytest.mark.parametrize("interp,mode", [(1, "linear"), (2, "cubic")])
def test_resize_quantized_matches_onnxruntime_within_one_step(interp: int, mode: str) -> None:
    x = quantized_image((2, 5, 4, 3))
    got = run1("Resize", [x], {"interpolation_mode": interp}, (2, 7, 9, 3))
    want = ort_resize(x.astype(np.float32), (2, 7, 9, 3), mode=mode, coordinate_transformation_mode="half_pixel")
    assert_codes_within_one_step(got, want, -2.5, 3.5, f"Resize {mode}")


def test_resize_nearest_quantized_moves_values_exactly() -> None:
    x = quantized_image((1, 4, 3, 2))
    got = run1("Resize", [x], {"interpolation_mode": 0, "nearest_mode": 1}, (1, 7, 5, 2))
    assert np.all(np.isin(got, x)), "nearest Resize produced a value that is not an input value"


def test_resize_pytorch_half_pixel_samples_input_zero_for_a_one_element_axis() -> None:
    """PYTORCH_HALF_PIXEL 'x = 0 otherwise' (10997) read as the input coordinate 0: row 0 is kept."""
    x = np.arange(12.0).reshape(1, 3, 4, 1)
    got = run1("Resize", [x], {"transformation_mode": 1, "interpolation_mode": 1}, (1, 1, 4, 1))
    np.testing.assert_array_equal(got.ravel(), [0.0, 1.0, 2.0, 3.0])
    half = run1("Resize", [x], {"transformation_mode": 0, "interpolation_mode": 1}, (1, 1, 4, 1))
    np.testing.assert_array_equal(half.ravel(), [4.0, 5.0, 6.0, 7.0], err_msg="HALF_PIXEL samples the centre row")


def test_resize_nearest_ties_follow_the_rounding_rule() -> None:
    """2 -> 4 samples with HALF_PIXEL: source coordinates -0.25, 0.25, 0.75, 1.25; ASYMMETRIC 3 -> 2:
    0 and 1.5, an exact tie the four rules split (11045-11076)."""
    x = np.array([10.0, 20.0, 30.0]).reshape(1, 3, 1, 1)
    want = {"ROUND_PREFER_FLOOR": [10.0, 20.0], "ROUND_PREFER_CEIL": [10.0, 30.0], "FLOOR": [10.0, 20.0],
            "CEIL": [10.0, 30.0]}  # fmt: skip
    asymmetric = member("Resize", "transformation_mode", "ASYMMETRIC")
    for rule, expected in want.items():
        params = {"transformation_mode": asymmetric, "nearest_mode": member("Resize", "nearest_mode", rule)}
        got = run1("Resize", [x], params, (1, 2, 1, 1))
        np.testing.assert_array_equal(got.ravel(), expected, err_msg=f"nearest_mode {rule}")


def test_resize_linear_hand_computed_half_pixel() -> None:
    """[0, 10] -> 4 with HALF_PIXEL: coordinates -0.25, 0.25, 0.75, 1.25, clamped to the edge samples."""
    x = np.array([0.0, 10.0]).reshape(1, 1, 2, 1)
    got = run1("Resize", [x], {"interpolation_mode": 1}, (1, 1, 4, 1))
    np.testing.assert_allclose(got.ravel(), [0.0, 2.5, 7.5, 10.0])


def test_resize_without_declared_output_shape_asks_for_it() -> None:
    with pytest.raises(OutputShapeRequired, match="declared output tensor"):
        reference.run("Resize", [np.zeros((1, 2, 2, 1))], {})
    assert not issubclass(OutputShapeRequired, ValueError), "the generator would discard every case"


def test_resize_rejects_a_resized_channel_axis() -> None:
    with pytest.raises(ValueError, match="batch and channel"):
        run1("Resize", [np.zeros((1, 2, 2, 1))], {}, (1, 2, 2, 3))


# ---- ResizeBilinear / ResizeNearestNeighbor (TensorFlow flags) ---------------------------------

TF_FLAGS = {"legacy": {}, "align_corners": {"align_corners": True}, "half_pixel_centers": {"half_pixel_centers": True}}
# the ONNX coordinate modes the three TensorFlow conventions are
BILINEAR_ONNX = {"legacy": "asymmetric", "align_corners": "align_corners", "half_pixel_centers": "half_pixel"}
NEAREST_ONNX = {
    "legacy": ("asymmetric", "floor"),
    "align_corners": ("align_corners", "round_prefer_ceil"),
    "half_pixel_centers": ("tf_half_pixel_for_nn", "floor"),
}


@pytest.mark.parametrize("flags", sorted(TF_FLAGS))
@pytest.mark.parametrize("shapes", RESIZE_SHAPES)
def test_resize_bilinear_matches_onnxruntime_equivalent(flags: str, shapes) -> None:
    x = image(shapes[0])
    got = run1("ResizeBilinear", [x.astype(np.float64)], TF_FLAGS[flags], shapes[1])
    want = ort_resize(x, shapes[1], mode="linear", coordinate_transformation_mode=BILINEAR_ONNX[flags])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{shapes} {flags}")


ANTIALIAS_SHAPES = [((1, 8, 6, 2), (1, 3, 4, 2)), ((2, 9, 7, 1), (2, 2, 7, 1)), ((1, 5, 5, 1), (1, 4, 2, 1))]


def _bilinear(x: np.ndarray, flags: str, out_shape: tuple[int, ...], outside: str) -> np.ndarray:
    params = reference.resolved("ResizeBilinear", {**TF_FLAGS[flags], "antialias": True}, [x])
    return resampling._resize_bilinear([x.astype(np.float64)], params, [out_shape], "ResizeBilinear", outside)


@pytest.mark.parametrize("flags", ["legacy", "half_pixel_centers"])
@pytest.mark.parametrize("shapes", ANTIALIAS_SHAPES)
def test_resize_bilinear_antialias_edge_reading_matches_onnxruntime(flags: str, shapes) -> None:
    """antialias widens the triangle filter by 1/scale when downsampling (11163); the reading that reads the edge
    sample for taps past the edge is ONNX Resize-18's (kept for the diagnosis of which reading a backend follows)."""
    x = image(shapes[0])
    got = _bilinear(x, flags, shapes[1], resampling.EDGE_TAPS)
    want = ort_resize(x, shapes[1], mode="linear", coordinate_transformation_mode=BILINEAR_ONNX[flags], antialias=1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{shapes} {flags}")


def _pillow_resize(x: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """Pillow's BILINEAR resize, channel by channel on 32-bit float images: a triangle filter stretched by the
    downscale whose taps past the edge are dropped, pixel centres as half_pixel_centers places them."""
    from PIL import Image

    n, _, _, c = x.shape
    oh, ow = out_shape[1:3]
    out = np.empty(out_shape, dtype=np.float64)
    for b in range(n):
        for k in range(c):
            img = Image.fromarray(np.ascontiguousarray(x[b, :, :, k], dtype=np.float32), mode="F")
            out[b, :, :, k] = np.asarray(img.resize((ow, oh), Image.Resampling.BILINEAR))
    return out


@pytest.mark.parametrize("shapes", [s for s in ANTIALIAS_SHAPES if s[1][1] < s[0][1] and s[1][2] < s[0][2]])
def test_resize_bilinear_antialias_matches_pillow(shapes) -> None:
    """The reference's reading (ResizeBilinear.yaml decisions): taps past the edge are dropped, as TensorFlow and
    Pillow do and the HTP simulator computes. half_pixel_centers only: Pillow places pixel centres that way and
    refuses a source box that would shift them. Shapes downsampled on both axes: Pillow filters an axis it enlarges
    with a triangle too, which is bilinear only where no tap falls past the edge."""
    x = image(shapes[0])
    got = run1("ResizeBilinear", [x.astype(np.float64)], {"half_pixel_centers": True, "antialias": True}, shapes[1])
    np.testing.assert_allclose(got, _pillow_resize(x, shapes[1]), rtol=1e-5, atol=1e-5, err_msg=f"{shapes}")


def test_resize_bilinear_antialias_legacy_hand_computed() -> None:
    """Legacy coordinates (dst * in / out) with half-width in / out: a [1, 4, 1, 1] ramp to 2 rows samples at 0 and
    2 with half-width 2; the tap at -1 (past the edge) is dropped."""
    x = np.array([0.0, 1.0, 2.0, 3.0]).reshape(1, 4, 1, 1)
    got = run1("ResizeBilinear", [x], {"antialias": True}, (1, 2, 1, 1)).ravel()
    # row 0: taps 0, 1 weigh 1, 0.5 -> 0.5 / 1.5; row 1: taps 1, 2, 3 weigh 0.5, 1, 0.5 -> (0.5 + 2 + 1.5) / 2
    np.testing.assert_allclose(got, [0.5 / 1.5, 2.0], rtol=1e-12)


def test_resize_bilinear_antialias_align_corners_hand_computed() -> None:
    """align_corners keeps its coordinates (dst * (in - 1) / (out - 1)) and the filter keeps half-width in / out:
    a [1, 4, 1, 1] ramp to 2 rows samples at 0 and 3 with half-width 2; taps at -1 (past the edge) are dropped."""
    x = np.array([0.0, 1.0, 2.0, 3.0]).reshape(1, 4, 1, 1)
    got = run1("ResizeBilinear", [x], {"align_corners": True, "antialias": True}, (1, 2, 1, 1)).ravel()
    # row 0: taps 0, 1 weigh 1, 0.5 (tap -1 dropped) -> (0 + 0.5) / 1.5; row 1: taps 2, 3 weigh 0.5, 1 -> (1 + 3) / 1.5
    np.testing.assert_allclose(got, [0.5 / 1.5, 4.0 / 1.5], rtol=1e-12)


@pytest.mark.parametrize("outside", [resampling.DROPPED_TAPS, resampling.EDGE_TAPS])
def test_resize_bilinear_diagnosis_names_the_antialias_reading_a_backend_follows(outside: str) -> None:
    x = image((1, 8, 6, 2))
    actual = _bilinear(x, "half_pixel_centers", (1, 3, 4, 2), outside)
    got = reference.diagnose("ResizeBilinear", [x.astype(np.float64)], {"half_pixel_centers": True, "antialias": True},
                             [actual])  # fmt: skip
    assert got["reading"] == outside, got


def test_resize_bilinear_diagnosis_says_nothing_without_antialias() -> None:
    x = image((1, 8, 6, 2))
    actual = run1("ResizeBilinear", [x.astype(np.float64)], {}, (1, 3, 4, 2))
    assert reference.diagnose("ResizeBilinear", [x.astype(np.float64)], {}, [actual]) == {}


def test_resize_bilinear_quantized_matches_onnxruntime_within_one_step() -> None:
    x = quantized_image((1, 5, 6, 2))
    got = run1("ResizeBilinear", [x], {"half_pixel_centers": True}, (1, 8, 3, 2))
    want = ort_resize(x.astype(np.float32), (1, 8, 3, 2), mode="linear", coordinate_transformation_mode="half_pixel")
    assert_codes_within_one_step(got, want, -2.5, 3.5, "ResizeBilinear")


def test_resize_bilinear_half_pixel_centers_hand_computed() -> None:
    """TF: src = (dst + 0.5) * in / out - 0.5, edge-clamped. [0, 4, 8] -> 2: src 0.25 and 1.75."""
    x = np.array([0.0, 4.0, 8.0]).reshape(1, 1, 3, 1)
    got = run1("ResizeBilinear", [x], {"half_pixel_centers": True}, (1, 1, 2, 1))
    np.testing.assert_allclose(got.ravel(), [1.0, 7.0])


def test_resize_bilinear_legacy_and_align_corners_hand_computed() -> None:
    """TF legacy: src = dst * in / out; align_corners: src = dst * (in - 1) / (out - 1)."""
    x = np.array([0.0, 4.0, 8.0]).reshape(1, 1, 3, 1)
    legacy = run1("ResizeBilinear", [x], {}, (1, 1, 2, 1))
    np.testing.assert_allclose(legacy.ravel(), [0.0, 6.0], err_msg="legacy: src 0, 1.5")
    aligned = run1("ResizeBilinear", [x], {"align_corners": True}, (1, 1, 4, 1))
    np.testing.assert_allclose(aligned.ravel(), [0.0, 8 / 3, 16 / 3, 8.0], err_msg="align_corners keeps the corners")


def test_resize_bilinear_refuses_both_flags() -> None:
    with pytest.raises(ValueError, match="cannot both"):
        flags = {"align_corners": True, "half_pixel_centers": True}
        run1("ResizeBilinear", [np.zeros((1, 2, 2, 1))], flags, (1, 3, 3, 1))


@pytest.mark.parametrize("flags", sorted(TF_FLAGS))
@pytest.mark.parametrize("shapes", RESIZE_SHAPES + [((1, 6, 6, 1), (1, 7, 7, 1))])
def test_resize_nearest_neighbor_matches_onnxruntime_equivalent(flags: str, shapes) -> None:
    x = image(shapes[0])
    got = run1("ResizeNearestNeighbor", [x.astype(np.float64)], TF_FLAGS[flags], shapes[1])
    transform, rule = NEAREST_ONNX[flags]
    want = ort_resize(x, shapes[1], mode="nearest", coordinate_transformation_mode=transform, nearest_mode=rule)
    np.testing.assert_array_equal(got, want, err_msg=f"{shapes} {flags}")


def test_resize_nearest_neighbor_hand_computed() -> None:
    """4 -> 3 columns. legacy floor(dst * 4/3): 0, 1, 2; half_pixel_centers floor((dst + 0.5) * 4/3): 0, 2, 3;
    align_corners round(dst * 3/2), halves up: 0, 2, 3."""
    x = np.array([0.0, 1.0, 2.0, 3.0]).reshape(1, 1, 4, 1)
    cases = {"legacy": [0, 1, 2], "half_pixel_centers": [0, 2, 3], "align_corners": [0, 2, 3]}
    for flags, want in cases.items():
        got = run1("ResizeNearestNeighbor", [x], TF_FLAGS[flags], (1, 1, 3, 1))
        np.testing.assert_array_equal(got.ravel(), want, err_msg=flags)


def test_resize_nearest_neighbor_quantized_moves_values_exactly() -> None:
    x = quantized_image((2, 3, 5, 2))
    got = run1("ResizeNearestNeighbor", [x], {"half_pixel_centers": True}, (2, 7, 2, 2))
    assert np.all(np.isin(got, x)), "nearest-neighbour resize produced a value that is not an input value"


# ---- CropAndResize (TensorFlow crop_and_resize) -------------------------------------------------


def crop(x: np.ndarray, boxes, index, dims, **params) -> np.ndarray:
    return run1("CropAndResize", [x, np.asarray(boxes, np.float64), np.asarray(index, np.float64)],
                {"resize_dims": np.asarray(dims, np.uint32), **params})  # fmt: skip


def test_crop_and_resize_whole_image_is_the_image() -> None:
    x = image((2, 3, 4, 2)).astype(np.float64)
    np.testing.assert_allclose(crop(x, [[0, 0, 1, 1]], [1], [3, 4]), x[1:2], err_msg="box (0,0,1,1) at the image size")


def test_crop_and_resize_bilinear_hand_computed() -> None:
    """Image rows [0, 10, 20] (H = 3): box y 0.25 .. 0.75 maps to image rows 0.5 .. 1.5 (y * (H - 1)),
    3 samples at 0.5, 1.0, 1.5 -> 5, 10, 15. Columns: one sample sits at the box middle."""
    x = np.array([0.0, 10.0, 20.0]).reshape(1, 3, 1, 1) * np.ones((1, 1, 2, 1))
    got = crop(x, [[0.25, 0.0, 0.75, 1.0]], [0], [3, 1])
    np.testing.assert_allclose(got.ravel(), [5.0, 10.0, 15.0])


def test_crop_and_resize_flipped_box_flips_the_crop() -> None:
    """y1 > y2 gives an up-down flipped crop (2179-2180)."""
    x = image((1, 4, 3, 1)).astype(np.float64)
    np.testing.assert_allclose(crop(x, [[1, 0, 0, 1]], [0], [4, 3]), x[:, ::-1])


def test_crop_and_resize_outside_the_image_extrapolates() -> None:
    """A sample at image row -1 (y = -0.5 with H = 3) is extrapolation_value; rows 0 and 1 are data."""
    x = np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1, 1)
    got = crop(x, [[-0.5, 0, 0.5, 0]], [0], [3, 1], extrapolation_value=-7.0)
    np.testing.assert_allclose(got.ravel(), [-7.0, 1.0, 2.0])


def test_crop_and_resize_nearest_rounds_halves_up() -> None:
    """NEAREST_NEIGHBOR (TF): round(in_y), halves away from zero: rows 0.5 and 1.5 read rows 1 and 2."""
    x = np.array([0.0, 10.0, 20.0]).reshape(1, 3, 1, 1)
    got = crop(x, [[0.25, 0, 0.75, 0]], [0], [3, 1], interpolation_mode=1)
    np.testing.assert_array_equal(got.ravel(), [10.0, 10.0, 20.0])


def test_crop_and_resize_quantized_bilinear_matches_hand_formula_within_one_step() -> None:
    """Quantized data: the reference against TF's lerp formula written out (top + (bottom - top) * lerp)."""
    x = quantized_image((1, 4, 5, 1))
    box = (0.1, 0.2, 0.9, 0.7)
    got = crop(x, [box], [0], [3, 2])[0, ..., 0]
    want = np.empty((3, 2))
    for i in range(3):
        for j in range(2):
            iy = box[0] * 3 + i * (box[2] - box[0]) * 3 / 2
            ix = box[1] * 4 + j * (box[3] - box[1]) * 4 / 1
            t, b, left, r = int(np.floor(iy)), int(np.ceil(iy)), int(np.floor(ix)), int(np.ceil(ix))
            top = x[0, t, left, 0] + (x[0, t, r, 0] - x[0, t, left, 0]) * (ix - left)
            bot = x[0, b, left, 0] + (x[0, b, r, 0] - x[0, b, left, 0]) * (ix - left)
            want[i, j] = top + (bot - top) * (iy - t)
    assert_codes_within_one_step(got, want, -2.0, 3.0, "CropAndResize")


def test_crop_and_resize_rejects_a_batch_index_outside_the_batch() -> None:
    with pytest.raises(ValueError, match="batch indices"):
        crop(np.zeros((2, 2, 2, 1)), [[0, 0, 1, 1]], [2], [2, 2])


# ---- GridSample against ONNX GridSample ---------------------------------------------------------

GRID_MODES = {member("GridSample", "mode", m): onnx for m, onnx in (("BILINEAR", "linear"), ("NEAREST", "nearest"))}
PADDING = {member("GridSample", "padding_mode", m): onnx
           for m, onnx in (("ZEROS", "zeros"), ("BORDER", "border"), ("REFLECTION", "reflection"))}  # fmt: skip


@pytest.mark.parametrize("mode", sorted(GRID_MODES))
@pytest.mark.parametrize("padding", sorted(PADDING))
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("shape,grid_hw", [((1, 4, 5, 2), (3, 6)), ((2, 3, 3, 1), (4, 2)), ((1, 1, 4, 3), (2, 2))])
def test_grid_sample_matches_onnxruntime(mode: int, padding: int, align: bool, shape, grid_hw) -> None:
    x = image(shape)
    grid = RNG.uniform(-3.5, 3.5, (shape[0], *grid_hw, 2)).astype(np.float32)  # far outside [-1, 1] too
    params = {"mode": mode, "padding_mode": padding, "align_corners": align}
    got = run1("GridSample", [x.astype(np.float64), grid.astype(np.float64)], params)
    (want,) = ort_node("GridSample", [nchw(x), grid], mode=GRID_MODES[mode], padding_mode=PADDING[padding],
                       align_corners=int(align))  # fmt: skip
    np.testing.assert_allclose(got, nhwc(want), rtol=1e-5, atol=1e-5, err_msg=f"{params} {shape}")


@pytest.mark.parametrize("padding", sorted(PADDING))
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_5d_matches_onnx_reference(padding: int, align: bool) -> None:
    """5-D: grid components (x, y, z) run along width, height, depth (6624), as in ONNX and PyTorch."""
    x = image((1, 3, 4, 5, 2))
    grid = RNG.uniform(-1.3, 1.3, (1, 2, 3, 2, 3)).astype(np.float32)
    params = {"mode": 0, "padding_mode": padding, "align_corners": align}
    got = run1("GridSample", [x.astype(np.float64), grid.astype(np.float64)], params)
    (want,) = onnx_reference_node("GridSample", [nchw(x), grid], mode="linear", padding_mode=PADDING[padding],
                                  align_corners=int(align))  # fmt: skip
    np.testing.assert_allclose(got, nhwc(want), rtol=1e-5, atol=1e-5, err_msg=str(params))


def test_grid_sample_quantized_matches_onnxruntime_within_one_step() -> None:
    x = quantized_image((1, 5, 4, 2))
    genc = quant.encoding_for_range(-1.2, 1.2, Q8)
    grid = quant.dequantize(quant.quantize(RNG.uniform(-1.2, 1.2, (1, 3, 3, 2)), genc, Q8), genc)
    got = run1("GridSample", [x, grid], {"padding_mode": 1})
    (want,) = ort_node("GridSample", [nchw(x).astype(np.float32), grid.astype(np.float32)], mode="linear",
                       padding_mode="border", align_corners=0)  # fmt: skip
    assert_codes_within_one_step(got, nhwc(want), -2.0, 3.0, "GridSample")


def test_grid_sample_reflection_follows_the_spec_example() -> None:
    """x = -3.5 reflects at -1 to 1.5, then at 1 to 0.5 (6707-6712); align_corners on a width of 5:
    normalised 0.5 is pixel 3."""
    x = np.arange(5.0).reshape(1, 1, 5, 1)
    grid = np.array([-3.5, 0.0]).reshape(1, 1, 1, 2)
    got = run1("GridSample", [x, grid], {"padding_mode": 2, "align_corners": True})
    assert got.ravel()[0] == 3.0, got.ravel()


def test_grid_sample_zeros_pads_each_tap() -> None:
    """ZEROS (6701): taps outside the image read 0, the inside tap keeps its weight. Width 2 without
    align_corners: x = -1 is pixel -0.5, halfway between the zero pad and pixel 0."""
    x = np.array([8.0, 4.0]).reshape(1, 1, 2, 1)
    got = run1("GridSample", [x, np.array([-1.0, 0.0]).reshape(1, 1, 1, 2)], {})
    assert got.ravel()[0] == 4.0, got.ravel()


def test_grid_sample_nearest_ties_round_to_even() -> None:
    """Width 4 without align_corners: x = 0, 0.5, -0.5 are pixels 1.5, 2.5, 0.5, which round to 2, 2, 0
    (half to even, as onnxruntime does)."""
    x = np.array([0.0, 1.0, 2.0, 3.0]).reshape(1, 1, 4, 1)
    grid = np.array([0.0, 0.0, 0.5, 0.0, -0.5, 0.0]).reshape(1, 1, 3, 2)
    got = run1("GridSample", [x, grid], {"mode": 1})
    np.testing.assert_array_equal(got.ravel(), [2.0, 2.0, 0.0])
    (want,) = ort_node("GridSample", [nchw(x).astype(np.float32), grid.astype(np.float32)], mode="nearest")
    np.testing.assert_array_equal(got.ravel(), want.ravel(), err_msg="onnxruntime")


# ---- ImageProjectionTransform (TensorFlow Addons transform) -------------------------------------


def project(x: np.ndarray, t, mode: int = 0) -> np.ndarray:
    return run1("ImageProjectionTransform", [x, np.asarray(t, np.float64)], {"interpolation_mode": mode})


def test_image_projection_identity_is_the_image() -> None:
    x = image((2, 3, 4, 2)).astype(np.float64)
    for mode in (0, 1):
        np.testing.assert_array_equal(project(x, [1, 0, 0, 0, 1, 0, 0, 0], mode), x, err_msg=f"mode {mode}")


def test_image_projection_translation_reads_shifted_pixels_and_zero_fill() -> None:
    """a2 = 1: output (x, y) reads input (x + 1, y) (7372-7376); the last column reads outside: 0."""
    x = np.arange(6.0).reshape(1, 2, 3, 1)
    got = project(x, [1, 0, 1, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(got[0, :, :, 0], [[1.0, 2.0, 0.0], [4.0, 5.0, 0.0]])


def test_image_projection_bilinear_half_shift_hand_computed() -> None:
    """a2 = 0.5: output column x reads input column x + 0.5; the tap beyond the edge reads 0."""
    x = np.array([0.0, 2.0, 4.0]).reshape(1, 1, 3, 1)
    np.testing.assert_allclose(project(x, [1, 0, 0.5, 0, 1, 0, 0, 0]).ravel(), [1.0, 3.0, 2.0])


def test_image_projection_nearest_rounds_halves_away_from_zero() -> None:
    x = np.array([0.0, 2.0, 4.0]).reshape(1, 1, 3, 1)
    np.testing.assert_array_equal(project(x, [1, 0, 0.5, 0, 1, 0, 0, 0], 1).ravel(), [2.0, 4.0, 0.0])


def test_image_projection_perspective_divides_by_k() -> None:
    """c0 = 1: k = x + 1, so output (x, 0) reads input (x / (x + 1), 0): columns 0, 0.5, 2/3."""
    x = np.array([0.0, 3.0, 6.0]).reshape(1, 1, 3, 1)
    np.testing.assert_allclose(project(x, [1, 0, 0, 0, 1, 0, 1, 0]).ravel(), [0.0, 1.5, 2.0])


def test_image_projection_reads_one_transform_row_per_image() -> None:
    """in[1] as [batch, 8] (the spec's decision, after TensorFlow's kernel): image 0 the identity, image 1 shifted
    one column (a2 = 1), its last column reading outside: 0."""
    x = np.arange(12.0).reshape(2, 2, 3, 1)
    got = project(x, [[1, 0, 0, 0, 1, 0, 0, 0], [1, 0, 1, 0, 1, 0, 0, 0]])
    np.testing.assert_array_equal(got[0], x[0])
    np.testing.assert_array_equal(got[1, :, :, 0], [[7.0, 8.0, 0.0], [10.0, 11.0, 0.0]])


def test_image_projection_quantized_translation_moves_values_exactly() -> None:
    x = quantized_image((1, 3, 4, 2))
    got = project(x, [1, 0, 0, 0, 1, -1, 0, 0], 1)  # output row y reads row y - 1
    np.testing.assert_array_equal(got[:, 1:], x[:, :-1])
    np.testing.assert_array_equal(got[:, 0], 0.0)


# ---- ArgbToRgb ----------------------------------------------------------------------------------


@pytest.mark.parametrize("order,reverse,want", [(0, False, [1, 2, 3]), (0, True, [3, 2, 1]),
                                                (1, False, [0, 1, 2]), (1, True, [2, 1, 0])])  # fmt: skip
def test_argb_to_rgb_picks_and_orders_colour_channels(order: int, reverse: bool, want: list[int]) -> None:
    """ARGB drops channel 0, RGBA channel 3; reverse_output reverses the three kept (22-50)."""
    x = np.arange(2 * 3 * 4, dtype=np.float64).reshape(1, 2, 3, 4)
    got = run1("ArgbToRgb", [x], {"input_order": order, "reverse_output": reverse})
    np.testing.assert_array_equal(got, x[..., want], err_msg=f"input_order {order} reverse {reverse}")


def test_argb_to_rgb_requires_reverse_output() -> None:
    with pytest.raises(ValueError, match="reverse_output"):
        run1("ArgbToRgb", [np.zeros((1, 1, 1, 4))], {})


def test_grid_sample_model_leaves_nearest_near_ties_open() -> None:
    """A [1, 2, 1, 1] image [0, 10], NEAREST with align_corners: grid y 0.0 lands on 0.5, half-way between the rows
    (open); y 0.5 lands on 0.75, row 1 (10); y -1 on row 0 (0)."""
    from tests.reference_helpers import case, modelled

    x = np.array([0.0, 10.0]).reshape(1, 2, 1, 1)
    grid = np.array([[0.0, 0.0], [0.0, 0.5], [0.0, -1.0]]).reshape(1, 1, 3, 2)
    params = {"mode": 1, "align_corners": True, "padding_mode": 0}
    c = case("GridSample", [x, grid], params, [("FLOAT_32", (1, 1, 3, 1))])
    got = modelled(c, "nearest-near-ties-open")[0].reshape(3)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], [10.0, 0.0])
