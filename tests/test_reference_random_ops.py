"""RandomUniformLike checks (reference/random_ops.py): shape, range and a KS test with a known false-alarm rate."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from reference.random_ops import check_range, check_reproducible, check_shape, check_uniform


def test_reference_output_is_all_unspecified_with_the_declared_shape() -> None:
    (out,) = reference.run("RandomUniformLike", [np.array([2, 3, 4])], {}, out_shapes=[(2, 3, 4)])
    assert out.shape == (2, 3, 4) and np.isnan(out).all(), "every value is unspecified (NaN)"


def test_shape_comes_from_in0_when_no_output_shape_is_declared() -> None:
    (out,) = reference.run("RandomUniformLike", [np.array([3.0, 1.0, 2.0])], {})
    assert out.shape == (3, 1, 2), out.shape


def test_low_must_be_less_than_high() -> None:
    with pytest.raises(ValueError, match="less than"):
        reference.run("RandomUniformLike", [np.array([2, 2, 2])], {"low": 1.0, "high": 1.0})


def test_check_shape_reports_a_wrong_shape() -> None:
    assert check_shape(np.zeros((2, 3, 4)), [np.array([2, 3, 4])], None).passed
    bad = check_shape(np.zeros((2, 4, 3)), [np.array([2, 3, 4])], None)
    assert not bad.passed and "[2, 4, 3]" in bad.message, bad.message


def test_check_range_accepts_high_and_rejects_outside() -> None:
    assert check_range(np.array([-1.0, 0.0, 2.0]), -1.0, 2.0).passed, "the bounds themselves are in range"
    bad = check_range(np.array([-1.0, 2.0001, np.nan]), -1.0, 2.0)
    assert not bad.passed and bad.metrics["outside"] == 2, bad


def test_ks_statistic_of_a_hand_sample() -> None:
    """x = [0.1, 0.5, 0.9] on U(0, 1): D = max(1/3 - 0.1, 0.9 - 2/3) = 7/30."""
    got = check_uniform(np.array([0.1, 0.5, 0.9]), 0.0, 1.0)
    assert got.metrics["ks_statistic"] == pytest.approx(7 / 30, rel=1e-12), got.metrics


def test_ks_false_alarm_rate_is_alpha() -> None:
    """2000 correct samples of 100 values at alpha = 0.05: the number rejected is Binomial(2000, 0.05)
    (mean 100, sd 9.7); outside [55, 145] (4.6 sd) this test itself would be a one-in-10^5 false alarm."""
    rng = np.random.default_rng(11)
    rejected = sum(not check_uniform(rng.uniform(-2.0, 3.0, 100), -2.0, 3.0, alpha=0.05).passed for _ in range(2000))
    assert 55 <= rejected <= 145, f"{rejected} of 2000 correct samples rejected at alpha 0.05"


@pytest.mark.parametrize("name,draw", [
    ("half the range", lambda rng, n: rng.uniform(0.0, 0.5, n)),
    ("normal around the centre", lambda rng, n: np.clip(rng.normal(0.5, 0.15, n), 0, 1)),
    ("squared uniform", lambda rng, n: rng.uniform(0.0, 1.0, n) ** 2),
])  # fmt: skip
def test_ks_rejects_non_uniform_samples(name: str, draw) -> None:
    rng = np.random.default_rng(5)
    got = check_uniform(draw(rng, 1000), 0.0, 1.0)
    assert not got.passed, f"{name} passed as uniform: {got.metrics}"


def test_ks_step_allowance_lets_a_quantized_uniform_pass() -> None:
    """Uniform draws rounded to a 1/8 grid (a coarse fixed-point output): the grid alone moves the CDF
    by up to 1/8, which a large sample detects unless the step is allowed for."""
    rng = np.random.default_rng(3)
    coarse = np.floor(rng.uniform(0.0, 1.0, 20000) * 8) / 8
    assert not check_uniform(coarse, 0.0, 1.0).passed, "the grid must be visible without the allowance"
    assert check_uniform(coarse, 0.0, 1.0, step=1 / 8).passed, "with step = 1/8 the quantized uniform passes"


def test_reproducibility_check() -> None:
    a = np.array([0.25, 0.5])
    assert check_reproducible(a, a.copy()).passed
    assert not check_reproducible(a, a[::-1]).passed
