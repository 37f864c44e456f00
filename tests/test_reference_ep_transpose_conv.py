"""The ONNX Runtime QNN EP's grouped TransposeConv1d with output_padding: 8-bit (finding
ep-transposeconv-8bit-grouped-output-padding-shifted) and 16x8 (ep-transposeconv1d-grouped-output-padding-shifted),
their models against the EP's measured codes."""

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


# The main job's 16x8 case 2ee9cb7432b9640b (group 2, stride 2, pad_amount [2, 0], output_padding 1), and its out[0]
# [1, 6, 2] through the EP, which hands it as a fixed-point TransposeConv2d of height 1
CASE_16X8 = (
    [("UFIXED_POINT_16", np.array([15371, 21548, 44204, 17696, 35857, 4294]).reshape(1, 3, 2),
      ([0.00013460792251862586], [-29717])),
     ("UFIXED_POINT_8", np.array([44, 242, 15, 201, 83, 22]).reshape(3, 2, 1), ([0.026445752009749413], [-152])),
     ("SFIXED_POINT_32", np.array([184441, -522070]), ([3.5598077374743298e-06], [0]))],
    {"stride": 2, "pad_amount": [2, 0], "output_padding": 1, "group": 2},
    [("UFIXED_POINT_16", (1, 6, 2), ([0.0002489555918145925], [-25742]))])  # fmt: skip
EP_CODES_16X8 = np.array([56478, 12547, 20156, 17919, 0, 9849, 4601, 7757, 16346, 458, 22316, 65516], np.uint16)
SHIFTED_16X8 = {"diagnosis": ["output-padding-before", "htp-16x8-weights-requantized"]}


def test_grouped_output_padding_16x8_transpose_conv1d_takes_the_htps_requantized_weights() -> None:
    """The combination qnn-htp's transposeconv2d-16x8-grouped-output-padding-shifted uses holds for TransposeConv1d
    (ep-transposeconv1d-grouped-output-padding-shifted): the EP's codes are within the case's budget of it, and not of
    output-padding-before alone (two elements 73 and 148 steps off, the budget 39)."""
    from reference import models
    from tests.reference_helpers import case

    c = case("TransposeConv1d", *CASE_16X8)
    codes = EP_CODES_16X8.reshape(1, 6, 2)
    assert models.check(c, [codes], SHIFTED_16X8)["matches"]
    assert not models.check(c, [codes], {"diagnosis": "output-padding-before"})["matches"]
    planted = codes.copy()
    planted[0, 2, 0] += 100
    assert not models.check(c, [planted], SHIFTED_16X8)["matches"]
