"""The model of the HTP's 8-bit Softmax (reference/activation_models_b.py, finding softmax-8bit-long-rows): the spec's
Softmax quantized with out[0]'s scale rounded down to a whole number of 2^-16, checked on a second case of the bug
(seed 4's 4fd61ef166785f72, found by another probe set) beside the finding's own."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case, Encoding, Param, Tensor  # noqa: E402
from cases.quant import quantize  # noqa: E402
from reference.expected import expected  # noqa: E402
from reference.models import _modelled, check  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/Softmax/softmax-8bit-long-rows-scale-24.99.json"
MODEL = {"diagnosis": "output-scale-truncated-to-a-65536th"}


def _softmax(scale: float) -> Case:
    x = np.array([[10, 60, 110, 160]], np.uint8)
    return Case("Softmax", [Tensor("in[0]", "UFIXED_POINT_8", (1, 4), x, Encoding((0.02,), (-128,)))],
                {"axis": Param("axis", "UINT_32", 1), "beta": Param("beta", "FLOAT_32", 0.1)},
                [Tensor("out[0]", "UFIXED_POINT_8", (1, 4), None, Encoding((scale,), (0,)))])  # fmt: skip


def _codes_read_back(c: Case, used: float) -> np.ndarray:
    """The spec's Softmax written as codes of ``used`` (rounded down, offset 0), read back through out[0]'s stated
    scale."""
    return np.clip(np.floor(expected(c)[0] / used), 0, 255) * c.outputs[0].encoding.scales[0]


def test_the_outputs_grow_by_the_scale_over_its_floor_on_a_65536th_grid() -> None:
    c = _softmax(24.99 * 2**-16)
    np.testing.assert_allclose(_modelled(c, "diagnosis", MODEL["diagnosis"])[0], _codes_read_back(c, 24 * 2**-16))


def test_a_scale_on_the_grid_is_the_spec_rounded_down() -> None:
    c = _softmax(25 * 2**-16)
    np.testing.assert_allclose(_modelled(c, "diagnosis", MODEL["diagnosis"])[0], _codes_read_back(c, 25 * 2**-16))


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 4's 4fd61ef166785f72, scale 24.99 x 2^-16)."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_model_reproduces_the_findings_case_and_the_spec_does_not(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, MODEL)["matches"] is True
    spec = [quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)]
    assert check(c, spec, MODEL)["matches"] is False


@pytest.mark.qnn
def test_the_model_refuses_rows_grown_by_another_factor(own_outputs) -> None:
    """Rows 2% too large (a reciprocal of the sum a little low), not 4.1%: outside the model's budget and band."""
    c = Case.load(OWN_CASE)
    planted = [quantize(expected(c)[0] * 1.02, c.outputs[0].encoding, c.outputs[0].dtype)]
    out = check(c, planted, MODEL)
    assert out["matches"] is False and out["max_steps"] > 2
