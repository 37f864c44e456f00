"""The model of finding extractpatches-float-specials-spread-over-channel (reference/datamovement_models_b.py): float
ExtractPatches as a one-hot convolution in IEEE arithmetic."""

from __future__ import annotations

import numpy as np

from reference import models
from reference.datamovement_models_b import one_hot_convolution
from tests.reference_helpers import case

MODEL = {"symptom": "nan-over-patch-channel-with-special"}
PARAMS = {"size": [1, 2], "stride": [1, 1], "rate": [1, 1], "padding": 0}


def _patch(values: list[float]) -> object:
    """One [1, 1, 2, 1] FLOAT_32 image, one 1 x 2 patch: out[0] [1, 1, 1, 2]."""
    x = np.array(values, np.float32).reshape(1, 1, 2, 1)
    return case("ExtractPatches", [x], PARAMS, [("FLOAT_32", (1, 1, 1, 2))])


def test_an_infinity_stays_at_its_place_and_turns_the_patchs_other_cells_nan() -> None:
    got = one_hot_convolution(_patch([np.inf, 1.0]))[0].ravel()
    assert got[0] == np.inf and np.isnan(got[1])


def test_finite_values_3e38_included_are_the_reference() -> None:
    big = float(np.finfo(np.float32).max)
    np.testing.assert_array_equal(one_hot_convolution(_patch([big, -2.0]))[0].ravel(), [big, -2.0])


def test_the_symptom_requires_the_nan_and_refuses_the_spec_copy_of_the_patch() -> None:
    """The spec's [inf, 1] (a backend without the bug) does not show it, nor [inf, 5]; the HTP's [inf, NaN] does."""
    c = _patch([np.inf, 1.0])
    assert models.check(c, [np.array([np.inf, 1.0], np.float32).reshape(1, 1, 1, 2)], MODEL)["matches"] is False
    assert models.check(c, [np.array([np.inf, 5.0], np.float32).reshape(1, 1, 1, 2)], MODEL)["matches"] is False
    assert models.check(c, [np.array([np.inf, np.nan], np.float32).reshape(1, 1, 1, 2)], MODEL)["matches"] is True


def test_the_symptom_does_not_take_a_case_without_specials() -> None:
    c = _patch([3.0, 1.0])
    assert models.check(c, [np.array([1.0, 3.0], np.float32).reshape(1, 1, 1, 2)], MODEL)["matches"] is False
