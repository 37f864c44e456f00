"""The model of the HTP's FLOAT_16 ElementWiseNeuron at NaN inputs (reference/activation_models_b.py, finding
neuron-f16-nan-as-infinity-of-its-sign): a NaN is computed as the infinity of its sign bit, every other element as the
spec says."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case  # noqa: E402
from reference.activation_models_b import nan_as_infinity_of_its_sign  # noqa: E402
from reference.models import check  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/ElementWiseNeuron/neuron-f16-nan-as-infinity-of-its-sign.json"
MODEL = {"diagnosis": "nan-as-the-infinity-of-its-sign"}
# The own case: HARD_SIGMOID (alpha 0.2, beta 0.1) of [0, -0.9316, +NaN, +inf, 1, -NaN]


def _f16(values: list[float]) -> list[np.ndarray]:
    return [np.array(values, dtype=np.float16)]


def test_a_nan_becomes_the_infinity_of_its_sign_bit() -> None:
    x = np.array([np.nan, 1.0], np.float16)
    x = np.concatenate([x, np.array([0xFE00], np.uint16).view(np.float16)])
    assert nan_as_infinity_of_its_sign(x).tolist() == [np.inf, 1.0, -np.inf]


def test_plus_nan_gives_1_and_minus_nan_0_in_hard_sigmoid() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, _f16([0.1, 0.0, 1.0, 1.0, 0.3, 0.0]), MODEL)["matches"] is True


def test_nan_kept_as_nan_does_not_match() -> None:
    """The spec's output (IEEE 754: NaN in, NaN out) is not the bug."""
    c = Case.load(OWN_CASE)
    assert check(c, _f16([0.1, 0.0, np.nan, 1.0, 0.3, np.nan]), MODEL)["matches"] is False


def test_nan_as_zero_does_not_match() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, _f16([0.1, 0.0, 0.0, 1.0, 0.3, 0.0]), MODEL)["matches"] is False


def test_an_ordinary_element_wrong_beside_the_nan_does_not_match() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, _f16([0.1, 0.0, 1.0, 1.0, 0.35, 0.0]), MODEL)["matches"] is False


def test_a_case_without_nan_is_refused() -> None:
    c = Case.load(OWN_CASE)
    x = np.array([0.0, -0.9316, 2.0, np.inf, 1.0, -1.0], np.float16)
    plain = replace(c, inputs=[replace(c.inputs[0], data=x)])
    assert check(plain, _f16([0.1, 0.0, 0.5, 1.0, 0.3, 0.0]), MODEL)["matches"] is False


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 0's edge 5a20ed662e034882 cut to 6 elements, a -NaN added)."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_model_reproduces_the_findings_case(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, MODEL)["matches"] is True


@pytest.mark.qnn
def test_the_model_refuses_the_backend_s_output_with_an_ordinary_element_planted_off(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    planted = np.array(own_outputs[0], copy=True)
    planted[4] = np.float16(float(planted[4]) + 0.05)
    assert check(c, [planted], MODEL)["matches"] is False
