"""The symptom of findings exp-f16-overflow-nan and power-f16-overflow-nan (reference/elementwise_models_b.py): a
FLOAT_16 result past float16's range comes out NaN."""

from __future__ import annotations

import numpy as np

from reference import models
from tests.reference_helpers import case

SYMPTOM = {"symptom": "float16-overflow-as-nan"}


def _exp(x: list[float]) -> object:
    return case("ElementWiseExp", [np.array([x], np.float16)], {}, [("FLOAT_16", (1, len(x)))])


def test_nan_where_exp_overflows_shows_the_symptom() -> None:
    """exp(11.5) = 98715 is past 65504: NaN there, e^1 right beside it."""
    got = [np.array([[np.nan, np.e]], np.float16)]
    assert models.check(_exp([11.5, 1.0]), got, SYMPTOM)["matches"] is True


def test_the_ieee_infinity_does_not_show_it() -> None:
    got = [np.array([[np.inf, np.e]], np.float16)]
    assert models.check(_exp([11.5, 1.0]), got, SYMPTOM)["matches"] is False


def test_a_wrong_element_within_range_stays_a_failure() -> None:
    got = [np.array([[np.nan, 5.0]], np.float16)]
    assert models.check(_exp([11.5, 1.0]), got, SYMPTOM)["matches"] is False


def test_no_overflow_no_symptom() -> None:
    got = [np.array([[np.nan, np.e]], np.float16)]
    assert models.check(_exp([11.0, 1.0]), got, SYMPTOM)["matches"] is False


def test_power_of_a_negative_base_to_a_non_integer_exponent_is_open() -> None:
    """The spec defines no value there (ElementWisePower.yaml decisions): NaN in the reference, read as any value."""
    import opdefs
    from reference.compare import judge
    from reference.expected import expected

    c = case("ElementWisePower", [np.array([-2.0, 4.0], np.float16), np.array([0.5], np.float16)], {},
             [("FLOAT_16", (2,))])  # fmt: skip
    assert np.isnan(expected(c)[0][0])
    tol = opdefs.load("ElementWisePower").tolerance
    assert judge(c, expected(c), [np.array([0.0, 2.0], np.float16)], tol).passed
    assert not judge(c, expected(c), [np.array([0.0, 3.0], np.float16)], tol).passed
