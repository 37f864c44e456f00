"""The symptom of finding poolavg-f32-window-sum-overflows (reference/pooling_models_b.py): a FLOAT_32 average whose
window sum is past float32's range comes out as the infinity of the sum's sign."""

from __future__ import annotations

import numpy as np

from reference import models
from tests.reference_helpers import case

SYMPTOM = {"symptom": "window-sum-past-float32-as-infinity"}
BIG = float(np.finfo(np.float32).max)


def _pool(row: list[float]) -> object:
    """A [1, 1, 3, 1] FLOAT_32 row, window [1, 2], stride 1: out[0] [1, 1, 2, 1]."""
    x = np.array(row, np.float32).reshape(1, 1, 3, 1)
    return case("PoolAvg2d", [x], {"filter_size": [1, 2], "stride": [1, 1], "pad_amount": [[0, 0], [0, 0]]},
                [("FLOAT_32", (1, 1, 2, 1))])  # fmt: skip


def _out(values: list[float]) -> list[np.ndarray]:
    return [np.array(values, np.float32).reshape(1, 1, 2, 1)]


def test_minus_infinity_where_two_minus_3e38_are_averaged_shows_it() -> None:
    assert models.check(_pool([-BIG, -BIG, 2.0]), _out([-np.inf, (2.0 - BIG) / 2]), SYMPTOM)["matches"] is True


def test_the_wrong_sign_or_a_wrong_neighbour_does_not() -> None:
    c = _pool([-BIG, -BIG, 2.0])
    assert models.check(c, _out([np.inf, (2.0 - BIG) / 2]), SYMPTOM)["matches"] is False
    assert models.check(c, _out([-np.inf, 0.0]), SYMPTOM)["matches"] is False


def test_no_sum_past_the_range_no_symptom() -> None:
    assert models.check(_pool([-BIG, 1.0, 2.0]), _out([-np.inf, 1.5]), SYMPTOM)["matches"] is False
