"""The model of the HTP's FLOAT_32 SOFTPLUS past binary32's exponential (reference/activation_models_b.py, finding
neuron-softplus-f32-exp-overflow-inf): +inf where beta x > ln(FLT_MAX) off the linear branch, the spec elsewhere."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case  # noqa: E402
from reference.expected import expected  # noqa: E402
from reference.models import check  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/ElementWiseNeuron/neuron-softplus-f32-exp-overflow-inf.json"
MODEL = {"diagnosis": "softplus-exp-past-float32-as-infinity"}
# The own case: SOFTPLUS, beta 1, threshold -1, in[0] [34.56, 82.16, 33.04, -130.3, 90.54, 44.64, -53.70, 58.11]


def _spec(c: Case) -> np.ndarray:
    return np.asarray(expected(c)[0], dtype=np.float32)


def test_the_element_past_88_72_is_infinite_and_the_rest_the_spec_s() -> None:
    c = Case.load(OWN_CASE)
    out = _spec(c)
    out[1, 0] = np.inf  # 90.54
    assert check(c, [out], MODEL)["matches"] is True


def test_the_spec_s_output_does_not_match() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, [_spec(c)], MODEL)["matches"] is False


def test_82_as_infinity_too_does_not_match() -> None:
    """82.16 is below ln(FLT_MAX): e^82.16 is a binary32 value, so an infinity there is another bug."""
    c = Case.load(OWN_CASE)
    out = _spec(c)
    out[1, 0] = np.inf
    out[0, 1] = np.inf
    assert check(c, [out], MODEL)["matches"] is False


def test_the_linear_branch_takes_the_element_and_the_model_refuses_the_case() -> None:
    c = Case.load(OWN_CASE)
    with_threshold = replace(c, params={**c.params, "threshold": replace(c.params["threshold"], value=50.0)})
    out = _spec(with_threshold)
    assert check(with_threshold, [out], MODEL)["matches"] is False


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 6's edge ec079a73cef70a6a)."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_model_reproduces_the_findings_case(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, MODEL)["matches"] is True


@pytest.mark.qnn
def test_the_model_refuses_the_backend_s_output_with_a_right_element_planted_off(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    planted = np.array(own_outputs[0], copy=True)
    planted[0, 0] = np.float32(planted[0, 0] * 1.01)
    assert check(c, [planted], MODEL)["matches"] is False
