"""The HTP simulator's ExtractPatches models (reference/datamovement_models_b.py): float patches as a one-hot
convolution in IEEE arithmetic (finding extractpatches-float-specials-spread-over-channel) and fixed-point input
codes with SAME pads at out[0]'s zero point (finding extractpatches-fixed-input-codes)."""

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


def _same_padded_u8(codes: list[int]) -> object:
    """A UFIXED_POINT_8 [1, 1, 1, 1] image (scale 0.5, zero point 10), SAME padding, a 1 x 3 patch: out[0] [1, 1, 1, 3]
    at scale 0.25, zero point 100."""
    x = ("UFIXED_POINT_8", np.array(codes, np.uint8).reshape(1, 1, 1, 1), ([0.5], [-10]))
    return case("ExtractPatches", [x], {"size": [1, 3], "stride": [1, 1], "rate": [1, 1], "padding": 1},
                [("UFIXED_POINT_8", (1, 1, 1, 3), ([0.25], [-100]))])  # fmt: skip


def test_fixed_point_patches_copy_input_codes_and_pad_at_the_output_zero_point() -> None:
    """Code 30 copied as code 30 of out[0] (5.0 where 10.0 belongs); the two pad cells are out[0]'s zero point (0)."""
    from tests.reference_helpers import modelled

    got = modelled(_same_padded_u8([30]), "input-codes-pad-at-output-zero-point")[0].ravel()
    np.testing.assert_allclose(got, [0.0, (30 - 100) * 0.25, 0.0])


def test_the_fixed_point_model_refuses_in0_zero_point_in_the_pads() -> None:
    """A planted copy of in[0]'s zero point (code 10) into the pads is 90 codes from the model."""
    c = _same_padded_u8([30])
    model = {"diagnosis": "input-codes-pad-at-output-zero-point"}
    assert models.check(c, [np.array([100, 30, 100], np.uint8).reshape(1, 1, 1, 3)], model)["matches"] is True
    assert models.check(c, [np.array([10, 30, 10], np.uint8).reshape(1, 1, 1, 3)], model)["matches"] is False
