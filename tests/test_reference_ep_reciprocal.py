"""The ONNX Runtime QNN EP's fixed-point Reciprocal (finding ep-reciprocal-one-on-input-grid): its model against the
EP's measured codes."""

from pathlib import Path

import numpy as np
import pytest

# The finding's case (main job ecaa22dfe2cce330) through the EP (onnxruntime-qnn 2.7.0, simulator), out[0] [3, 6]
EP_CODES = np.array([211, 230, 211, 207, 211, 211, 207, 202, 212, 203, 249, 209, 212, 212, 33, 210, 211, 212], np.uint8)
MODEL = {"diagnosis": "reciprocal-numerator-on-input-grid"}


def _case():  # noqa: ANN202 - a Case
    from cases.case import Case

    return Case.load(Path(__file__).resolve().parents[1] / "findings/cases/ElementWiseUnary/"
                     "ep-reciprocal-one-on-input-grid.json")  # fmt: skip


def test_reciprocal_model_reproduces_the_eps_codes_of_its_finding() -> None:
    from reference import models

    c = _case()
    assert models.check(c, [EP_CODES.reshape(c.outputs[0].shape)], MODEL) == {
        "matches": True, "max_steps": 0, "max_abs_err": pytest.approx(0.0361, abs=1e-3), "mismatches": 0}


def test_reciprocal_model_refuses_the_spec_and_a_planted_error() -> None:
    from cases.quant import quantize
    from reference import models
    from reference.expected import expected

    c = _case()
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], MODEL)["matches"]
    planted = EP_CODES.reshape(c.outputs[0].shape).copy()
    planted.flat[0] -= 2
    assert not models.check(c, [planted], MODEL)["matches"]


def test_reciprocal_model_is_the_spec_where_one_is_on_the_input_grid() -> None:
    """in[0] on a grid of tenths from 0 to 2.55: 1 is a grid value, so 1 / in[0] exactly."""
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([5, 10, 20, 40]).reshape(1, 4), ([0.1], [0]))
    c = case("ElementWiseUnary", [x], {"operation": 10}, [("UFIXED_POINT_8", (1, 4), ([0.01], [0]))])
    np.testing.assert_allclose(modelled(c, MODEL["diagnosis"])[0].ravel(), [2.0, 1.0, 0.5, 0.25])
