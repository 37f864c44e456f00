"""The model of the HTP's UFIXED_POINT_16 Round (reference/elementwise_models_b.py, finding
elementwiseround-u16-near-halves-as-halves): in[0] on a 2^-16 grid, then halves to even."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case  # noqa: E402
from cases.quant import quantize  # noqa: E402
from reference.expected import expected  # noqa: E402
from reference.models import _modelled, check  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/ElementWiseRound/elementwiseround-u16-near-halves-as-halves.json"
NAME = "input-on-a-65536th-grid"
MODEL = {"diagnosis": NAME}


def test_an_input_a_third_of_a_millionth_above_a_half_goes_to_the_even_neighbour() -> None:
    c = Case.load(OWN_CASE)  # codes 55288 (4.5000003), 55287, 55289, 26019 (0)
    np.testing.assert_array_equal(_modelled(c, "diagnosis", NAME)[0], [4.0, 4.0, 5.0, 0.0])
    np.testing.assert_array_equal(expected(c)[0], [5.0, 4.0, 5.0, 0.0])


def test_an_input_further_from_a_half_than_2_to_the_minus_17_rounds_as_the_spec_says() -> None:
    c = Case.load(OWN_CASE)
    t = c.inputs[0]
    shifted = replace(c, inputs=[replace(t, data=np.array([55288], np.uint16), shape=(1,))],
                      outputs=[replace(c.outputs[0], shape=(1,))])  # fmt: skip
    scale = 4.5 / (55288 - 26019) * (1 + 8e-6 / 4.5)  # 4.5 + 8e-6: outside the grid's half-step
    shifted.inputs[0].encoding = replace(t.encoding, scales=(scale,))
    np.testing.assert_array_equal(_modelled(shifted, "diagnosis", NAME)[0], [5.0])


def test_the_model_needs_a_fixed_point_input() -> None:
    c = Case.load(OWN_CASE)
    real = expected(c)[0]
    as_float = replace(c, inputs=[replace(c.inputs[0], dtype="FLOAT_16", encoding=None, data=real.astype(np.float16))])
    with pytest.raises(ValueError):
        _modelled(as_float, "diagnosis", NAME)


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 2's 03a6105e3d732482 cut to 4 codes)."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_model_reproduces_the_findings_case_and_the_spec_does_not(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, MODEL)["matches"] is True
    assert check(c, [quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)], MODEL)["matches"] is False


@pytest.mark.qnn
def test_the_model_refuses_the_half_rounded_up_instead_of_to_even(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    planted = np.array(own_outputs[0], copy=True)
    planted[0] = quantize(np.array([5.0]), c.outputs[0].encoding, c.outputs[0].dtype)[0]
    assert check(c, [planted], MODEL)["matches"] is False
