"""The ONNX Runtime QNN EP's 8-bit grouped TransposeConv1d with output_padding (finding
ep-transposeconv-8bit-grouped-output-padding-shifted): its model against the EP's measured codes."""

from pathlib import Path

import numpy as np

# The finding's case (main job cf8a3b1f309e06b0) through the EP (onnxruntime-qnn 2.7.0, simulator), out[0] [1, 6, 2]
EP_CODES = np.array([192, 71, 69, 92, 0, 62, 16, 54, 55, 29, 232, 124], np.uint8)
MODEL = {"diagnosis": "output-padding-before-virtual-inputs-as-input-lowest"}
BAND = 3  # the finding's band, in output steps


def _case():  # noqa: ANN202 - a Case
    from cases.case import Case

    return Case.load(Path(__file__).resolve().parents[1] / "findings/cases/TransposeConv1d/"
                     "ep-transposeconv-8bit-grouped-output-padding-shifted.json")  # fmt: skip


def test_shifted_border_model_reproduces_the_eps_codes_of_its_finding() -> None:
    from reference import models

    c = _case()
    assert models.check(c, [EP_CODES.reshape(c.outputs[0].shape)], MODEL)["max_steps"] <= BAND


def test_shifted_border_model_refuses_the_spec_and_a_planted_error() -> None:
    from cases.quant import quantize
    from reference import models
    from reference.expected import expected

    c = _case()
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert models.check(c, [spec], MODEL)["max_steps"] > BAND
    planted = EP_CODES.reshape(c.outputs[0].shape).copy()
    planted.flat[10] -= 4  # the last cell of channel 0, the one the border tap reaches
    assert models.check(c, [planted], MODEL)["max_steps"] > BAND


def test_shifted_border_model_refuses_an_ungrouped_case() -> None:
    import pytest

    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([4, 6]).reshape(1, 2, 1), ([0.5], [-2]))
    w = ("UFIXED_POINT_8", np.array([3, 3]).reshape(2, 1, 1), ([1.0], [-2]))
    b = ("UFIXED_POINT_8", np.array([0]), ([1.0], [0]))
    c = case("TransposeConv1d", [x, w, b], {"stride": 2, "pad_amount": [0, 0], "output_padding": 1},
             [("UFIXED_POINT_8", (1, 5, 1), ([0.1], [0]))])  # fmt: skip
    with pytest.raises(ValueError, match="grouped"):
        modelled(c, MODEL["diagnosis"])
