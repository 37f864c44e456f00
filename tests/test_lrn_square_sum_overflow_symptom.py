"""The symptom of finding lrn-f32-square-sum-overflows (reference/normalization.py): FLOAT_32 Lrn gives 0 where the
window's sum of squares is past float32's range."""

from __future__ import annotations

import numpy as np

from reference import models
from tests.reference_helpers import case

SYMPTOM = {"symptom": "square-sum-past-float32-as-zero"}
BIG = float(np.finfo(np.float32).max)


def _lrn(row: list[float]) -> object:
    """A [1, 1, 1, 2] FLOAT_32 input, across channels, radius 0 (each element its own window), beta 0.1, bias 0.5."""
    x = np.array(row, np.float32).reshape(1, 1, 1, 2)
    return case("Lrn", [x], {"radius": 0, "alpha": 1.0, "beta": 0.1, "bias": 0.5}, [("FLOAT_32", (1, 1, 1, 2))])


def _out(values: list[float]) -> list[np.ndarray]:
    return [np.array(values, np.float32).reshape(1, 1, 1, 2)]


def _right_neighbour(c: object) -> float:
    from reference.expected import expected

    return float(np.asarray(expected(c)[0]).ravel()[1])


def test_zero_where_the_square_overflows_shows_it() -> None:
    right = _right_neighbour(_lrn([-BIG, 2.0]))
    assert models.check(_lrn([-BIG, 2.0]), _out([-0.0, right]), SYMPTOM)["matches"] is True


def test_the_spec_value_or_a_wrong_neighbour_does_not() -> None:
    c = _lrn([-BIG, 2.0])
    right = _right_neighbour(c)
    assert models.check(c, _out([-BIG / BIG**0.2, right]), SYMPTOM)["matches"] is False
    assert models.check(c, _out([-0.0, right + 1.0]), SYMPTOM)["matches"] is False
