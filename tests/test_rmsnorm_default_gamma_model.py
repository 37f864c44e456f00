"""The model of the HTP's FLOAT_16 RmsNorm without gamma (reference/normalization.py, finding
rmsnorm-f16-default-gamma-as-float16-halves): gamma {1,..,1} stored as float32 and read as float16 halves, 0 at even
positions along the normalized axis and 1.875 at odd ones."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case, Tensor  # noqa: E402
from reference.expected import expected  # noqa: E402
from reference.models import check  # noqa: E402
from reference.normalization import default_gamma_as_float16_halves  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/RmsNorm/rmsnorm-f16-default-gamma-as-float16-halves.json"
MODEL = {"diagnosis": "default-gamma-float32-ones-as-float16-halves"}


def _f16(values: list[float]) -> list[np.ndarray]:
    return [np.array(values, dtype=np.float16)]


def test_the_default_gamma_is_float32_ones_read_as_float16_halves() -> None:
    assert default_gamma_as_float16_halves(5).tolist() == [0.0, 1.875, 0.0, 1.875, 0.0]


def test_the_model_zeroes_even_positions_and_scales_odd_ones_by_1_875() -> None:
    """The own case: [1, 3, 0, -1, -2], epsilon 1, rms 2: the spec's [0.5, 1.5, 0, -0.5, -1]."""
    c = Case.load(OWN_CASE)
    assert check(c, _f16([0.0, 2.8125, 0.0, -0.9375, 0.0]), MODEL)["matches"] is True


def test_the_spec_s_output_does_not_match_the_model() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, _f16([0.5, 1.5, 0.0, -0.5, -1.0]), MODEL)["matches"] is False


def test_every_position_scaled_without_the_zeros_does_not_match() -> None:
    """A bug of the normalizer (every element 1.875 times the spec's) is not this one."""
    c = Case.load(OWN_CASE)
    assert check(c, _f16([0.9375, 2.8125, 0.0, -0.9375, -1.875]), MODEL)["matches"] is False


def test_a_case_with_gamma_given_is_refused() -> None:
    c = Case.load(OWN_CASE)
    gamma = Tensor("in[1]", "FLOAT_16", (5,), data=np.ones(5, np.float16), static=True)
    with_gamma = replace(c, inputs=[c.inputs[0], gamma])
    assert check(with_gamma, [np.asarray(expected(with_gamma)[0], np.float16)], MODEL)["matches"] is False


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 1's edge 7417649fa6c8726f)."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_model_reproduces_the_findings_case(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, MODEL)["matches"] is True


@pytest.mark.qnn
def test_the_model_refuses_the_backend_s_output_with_an_odd_position_planted_off(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    planted = np.array(own_outputs[0], copy=True)
    planted[1] = np.float16(float(planted[1]) + 0.25)
    assert check(c, [planted], MODEL)["matches"] is False
