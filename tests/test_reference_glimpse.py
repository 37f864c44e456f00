"""ExtractGlimpse reference (reference/glimpse.py) on hand-placed windows (TensorFlow's offset conventions)."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from reference.glimpse import check_noise, noise_mask

IMAGE = np.arange(1.0, 33.0).reshape(1, 4, 8, 1)  # pixel (r, c) holds 8 r + c + 1


def glimpse(offset: list[float], size: list[int], **params) -> np.ndarray:
    (out,) = reference.run("ExtractGlimpse", [IMAGE, np.array([offset])], {"size": np.array(size), **params})
    return out


def window(r: int, c: int, h: int, w: int) -> np.ndarray:
    return IMAGE[:, r : r + h, c : c + w]


@pytest.mark.parametrize("offset,centered,normalized,origin", [
    ([0.0, 0.0], True, True, (1, 3)),  # centre of a 4x8 image, 2x2 window: row 2 - 1, column 4 - 1
    ([0.5, -0.5], True, True, (2, 1)),  # rows: 0.5*4/2 + 2 - 1 = 2; columns: -0.5*8/2 + 4 - 1 = 1
    ([0.5, 0.25], False, True, (2, 2)),  # upper-left corner at half the height, a quarter of the width
    ([1.0, 2.0], False, False, (1, 2)),  # pixels from the upper-left
    ([-1.0, 1.0], True, False, (1, 5)),  # pixels from the centre (2, 4)
])  # fmt: skip
def test_window_placement(offset: list[float], centered: bool, normalized: bool, origin: tuple[int, int]) -> None:
    got = glimpse(offset, [2, 2], centered=centered, normalized=normalized, noise=2)
    np.testing.assert_array_equal(got, window(*origin, 2, 2),
                                  err_msg=f"offset {offset} centered={centered} normalized={normalized}")  # fmt: skip


def test_origin_truncates_toward_zero() -> None:
    """Normalized, centred y = -0.75 on height 4 with a 2-row window: -0.75*2 + 2 - 1 = -0.5, which
    truncates to row 0 (TensorFlow's integer conversion); flooring would start at row -1."""
    got = glimpse([-0.75, 0.0], [2, 2], noise=2)
    np.testing.assert_array_equal(got, window(0, 3, 2, 2), err_msg="window must start at row 0")


def test_zeroes_noise_fills_outside_cells_with_zero() -> None:
    got = glimpse([3.0, 7.0], [2, 3], centered=False, normalized=False, noise=2)
    want = np.zeros((1, 2, 3, 1))
    want[0, 0, 0, 0] = IMAGE[0, 3, 7, 0]
    np.testing.assert_array_equal(got, want, err_msg="only pixel (3, 7) lies inside")


def test_random_noise_cells_are_nan_and_the_rest_exact() -> None:
    got = glimpse([3.0, 7.0], [2, 3], centered=False, normalized=False, noise=0)
    assert got[0, 0, 0, 0] == IMAGE[0, 3, 7, 0], "the inside cell is copied"
    nan = np.isnan(got)
    nan[0, 0, 0, 0] = not nan[0, 0, 0, 0]
    assert nan.all(), f"outside cells must be NaN (unspecified): {got[..., 0]}"


def test_noise_mask_and_range_check() -> None:
    inputs = [IMAGE, np.array([[3.0, 7.0]])]
    params = {"size": np.array([2, 3]), "centered": False, "normalized": False, "noise": 0}
    mask = noise_mask(inputs, params)
    assert mask.sum() == 5 and not mask[0, 0, 0, 0], mask[..., 0]
    backend = np.full((1, 2, 3, 1), 10.0)
    backend[0, 0, 0, 0] = IMAGE[0, 3, 7, 0]
    assert check_noise(backend, inputs, params), "noise within the image's [min, max] = [1, 32]"
    backend[0, 1, 2, 0] = 40.0
    assert not check_noise(backend, inputs, params), "40 lies outside the uniform noise range [1, 32]"
