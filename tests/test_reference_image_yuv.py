"""Nv12ToRgb / Nv21ToRgb references (reference/image_yuv.py) on hand-computed cases.

Expected values come from the published coefficients (BT.601: R = Y + 1.402 Cr, G = Y - 0.344136 Cb
- 0.714136 Cr, B = Y + 1.772 Cb in full range; limited range: 1.164383 (Y - 16), 1.596027,
0.391762, 0.812968, 2.017232), written out here as numbers, not derived from the module's code.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference
from reference.image_yuv import DEFAULT_VARIANT, VARIANTS, best_matching_variant, nv_to_rgb


def frame(y: list[list[float]], chroma: list[list[float]]) -> np.ndarray:
    """One semi-planar frame [1, h*w*3/2]: the luma rows then the interleaved chroma rows."""
    return np.array([list(np.ravel(y)) + list(np.ravel(chroma))], dtype=np.float64)


def test_default_variant_is_bt601_full_range() -> None:
    assert DEFAULT_VARIANT == "bt601_full"


@pytest.mark.parametrize("variant,want", [
    ("bt601_full", [100 + 1.402 * -48, 100 - 0.344136 * 22 - 0.714136 * -48, 100 + 1.772 * 22]),
    ("bt601_limited", [1.164383 * 84 + 1.596027 * -48, 1.164383 * 84 - 0.391762 * 22 - 0.812968 * -48,
                       1.164383 * 84 + 2.017232 * 22]),
    ("bt709_full", [100 + 1.5748 * -48, 100 - 0.187324 * 22 - 0.468124 * -48, 100 + 1.8556 * 22]),
    ("bt709_limited", [1.164383 * 84 + 1.792741 * -48, 1.164383 * 84 - 0.213249 * 22 - 0.532909 * -48,
                       1.164383 * 84 + 2.112402 * 22]),
    ("android_nv21", [100 + 1.370705 * -48, 100 - 0.337633 * 22 - 0.698001 * -48, 100 + 1.732446 * 22]),
])  # fmt: skip
def test_variant_coefficients(variant: str, want: list[float]) -> None:
    """Y = 100, U = 150 (Cb = 22), V = 80 (Cr = -48) in each standard (coefficients published to 6 digits)."""
    got = VARIANTS[variant].to_rgb(np.array(100.0), np.array(150.0), np.array(80.0))
    np.testing.assert_allclose(got, want, atol=2e-4, err_msg=f"{variant}: RGB of (100, 150, 80)")


def test_limited_range_red_is_saturated_red() -> None:
    """BT.601 limited-range red (Y, Cb, Cr) = (81, 90, 240) gives R = 254.44, G and B just below 0."""
    got = VARIANTS["bt601_limited"].to_rgb(np.array(81.0), np.array(90.0), np.array(240.0))
    np.testing.assert_allclose(got, [1.164383 * 65 + 1.596027 * 112, 0.0, 0.0], rtol=2e-6, err_msg="limited red")


def test_outputs_are_clamped_to_0_255() -> None:
    got = VARIANTS["bt601_full"].to_rgb(np.array(250.0), np.array(255.0), np.array(255.0))
    np.testing.assert_allclose(got, [255.0, 250 - 0.344136 * 127 - 0.714136 * 127, 255.0], rtol=2e-6)


def test_nv12_layout_uv_shared_by_2x2_blocks() -> None:
    """A 2 x 4 image: two chroma pairs, the left one (U=128, V=128: grey) and the right one (U=150,
    V=80). Grey pixels keep their luma in every channel."""
    frames = frame([[10, 20, 30, 40], [50, 60, 70, 80]], [[128, 128, 150, 80]])
    (got,) = reference.run("Nv12ToRgb", [frames], {"output_order": 0}, out_shapes=[(1, 2, 4, 3)])
    assert got.shape == (1, 2, 4, 3), got.shape
    np.testing.assert_allclose(got[0, :, :2], np.array([[[10] * 3, [20] * 3], [[50] * 3, [60] * 3]]),
                               err_msg="the left 2x2 block is grey")  # fmt: skip
    np.testing.assert_allclose(got[0, 1, 3], [80 + 1.402 * -48, 80 - 0.344136 * 22 - 0.714136 * -48, 80 + 1.772 * 22],
                               rtol=2e-6, err_msg="pixel (1, 3) uses the right chroma pair as U=150, V=80")  # fmt: skip


def test_nv21_reads_v_before_u() -> None:
    """The same bytes as NV21 mean V = 150, U = 80 for the right block."""
    frames = frame([[10, 20, 30, 40], [50, 60, 70, 80]], [[128, 128, 150, 80]])
    (got,) = reference.run("Nv21ToRgb", [frames], {"output_order": 0}, out_shapes=[(1, 2, 4, 3)])
    np.testing.assert_allclose(got[0, 0, 2], [30 + 1.402 * 22, 30 - 0.344136 * -48 - 0.714136 * 22, 0.0],
                               atol=2e-4, err_msg="NV21: V first (B = 30 + 1.772 * -48 clamps to 0)")  # fmt: skip


def test_bgr_order_reverses_the_channels() -> None:
    frames = frame([[100, 100], [100, 100]], [[150, 80]])
    (rgb,) = reference.run("Nv12ToRgb", [frames], {"output_order": 0}, out_shapes=[(1, 2, 2, 3)])
    (bgr,) = reference.run("Nv12ToRgb", [frames], {"output_order": 1}, out_shapes=[(1, 2, 2, 3)])
    np.testing.assert_array_equal(bgr, rgb[..., ::-1], err_msg="BGR is RGB reversed")


def test_refuses_odd_image_sizes() -> None:
    with pytest.raises(ValueError, match="even"):
        reference.run("Nv12ToRgb", [np.zeros((1, 9))], {"output_order": 0}, out_shapes=[(1, 3, 2, 3)])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_best_matching_variant_names_the_variant_that_produced_the_output(variant: str) -> None:
    rng = np.random.default_rng(7)
    frames = rng.integers(0, 256, size=(2, 4 * 6 * 3 // 2)).astype(np.float64)
    backend = np.rint(nv_to_rgb(frames, 4, 6, "vu", "BGR", variant))  # a backend rounds to 8-bit codes
    ranking = best_matching_variant("Nv21ToRgb", frames, {"output_order": 1}, backend)
    assert ranking[0][0] == variant, f"ranking {ranking}"
    assert ranking[0][1] <= 0.5, f"the producing variant is off by more than rounding: {ranking[0]}"


def test_diagnose_says_which_reading_a_backend_follows() -> None:
    rng = np.random.default_rng(3)
    frames = rng.integers(0, 256, size=(1, 4 * 6 * 3 // 2)).astype(np.float64)
    backend = np.rint(nv_to_rgb(frames, 4, 6, "uv", "RGB", "bt709_limited"))
    found = reference.diagnose("Nv12ToRgb", [frames], {"output_order": 0}, [backend])
    assert found["reading"] == "bt709_limited", found
    assert found["reading_errors"]["bt709_limited"] <= 0.5, found


def test_diagnose_is_empty_for_an_op_without_open_readings() -> None:
    assert reference.diagnose("ElementWiseAdd", [np.zeros(2), np.zeros(2)], {}, [np.zeros(2)]) == {}
