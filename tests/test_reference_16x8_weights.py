"""The model of the HTP's 16x8 weights (reference/convolution_models_b.py, finding conv-16x8-precision): asymmetric
8-bit weight groups that leave [-128, 127] are requantized onto a symmetric grid, the multiplier rounded to binary16."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case, Encoding, Tensor  # noqa: E402
from reference import convolution_models_b as m  # noqa: E402
from reference.models import check  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/Conv2d/conv-16x8-precision.json"
X_ENC, OUT_ENC = Encoding((4 / 65535,), (-32768,)), Encoding((8 / 65535,), (-32768,))


def _fully_connected(weight_codes: list[list[int]], zero_point: int, bias: list[float] | None = None) -> Case:
    """A 16x8 FullyConnected of one input row (activation codes 0 and 65535: -2 and 2) with 8-bit weights of scale
    0.01 and the given zero point."""
    w = np.array(weight_codes, dtype=np.uint8)
    x = np.array([[0, 65535][: w.shape[1]]], dtype=np.uint16)
    ins = [Tensor("in[0]", "UFIXED_POINT_16", x.shape, x, X_ENC),
           Tensor("in[1]", "UFIXED_POINT_8", w.shape, w, Encoding((0.01,), (-zero_point,)), static=True)]
    if bias is not None:
        scale = X_ENC.scales[0] * 0.01
        codes = np.rint(np.array(bias) / scale).astype(np.int32)
        ins.append(Tensor("in[2]", "SFIXED_POINT_32", codes.shape, codes, Encoding((scale,), (0,)), static=True))
    return Case("FullyConnected", ins, {}, [Tensor("out[0]", "UFIXED_POINT_16", (1, w.shape[0]), None, OUT_ENC)],
                config="UFIXED_POINT_16+UFIXED_POINT_8+SFIXED_POINT_32")  # fmt: skip


def test_a_channel_that_leaves_int8_is_requantized_onto_the_symmetric_grid() -> None:
    """Weights codes [48, 0] at zero point 200 are -152 and -200 from it: the channel's scale becomes 0.01 x 200/128,
    and -1.52 becomes round(-152 x 128/200) = -97 of those steps, -1.5156 (the multiplier in binary16 on top)."""
    got = m.htp_weights(_fully_connected([[48, 0]], 200))
    want = np.array([[-97, -128]]) * 0.01 * 200 / 128
    np.testing.assert_allclose(got, want, rtol=2.0**-11)
    assert abs(got[0, 0] - -1.52) > 0.004


def test_a_channel_that_fits_int8_keeps_its_codes() -> None:
    """Codes [100, 200] at zero point 200 are -100 and 0 from it, inside [-128, 127]: kept, up to the binary16
    rounding of the multiplier."""
    got = m.htp_weights(_fully_connected([[100, 200]], 200))
    np.testing.assert_allclose(got, [[-1.0, 0.0]], rtol=2.0**-11)


def test_each_output_channel_has_its_own_scale() -> None:
    """Beside the channel [48, 0] (scale 0.01 x 200/128), the channel [48, 100] takes its own scale 0.01 x 152/128:
    -1.52 is -128 of those steps, exact, and -1.0 becomes round(-100 x 128/152) = -84 of them, -0.9975."""
    got = m.htp_weights(_fully_connected([[48, 0], [48, 100]], 200))
    np.testing.assert_allclose(got[1], np.array([-128, -84]) * 0.01 * 152 / 128, rtol=2.0**-11)
    assert abs(got[0, 0] - -1.52) > 0.004


def test_symmetric_weights_are_not_this_model() -> None:
    """Zero point 128: another path; the model cannot be computed there, so a finding with it covers nothing."""
    c = _fully_connected([[48, 0]], 128)
    with pytest.raises(ValueError, match="symmetric"):
        m.htp_weights(c)
    out = check(c, [np.zeros((1, 1), np.uint16)], {"diagnosis": m.NAME})
    assert out["matches"] is False and "error" in out


def test_the_zero_point_below_128_model_refuses_other_zero_points() -> None:
    c = _fully_connected([[48, 0]], 200)
    out = check(c, [np.zeros((1, 1), np.uint16)], {"diagnosis": m.NAME + "-zero-point-below-128"})
    assert "error" in out


def test_transposed_convolution_groups_split_by_stride_phase() -> None:
    """A TransposeConv2d filter 2 x 1 with stride [2, 1]: taps 0 and 1 of the height are two stride phases, two weight
    groups of one output channel."""
    x = Tensor("in[0]", "UFIXED_POINT_16", (1, 2, 1, 1), np.zeros((1, 2, 1, 1), np.uint16), X_ENC)
    w = Tensor("in[1]", "UFIXED_POINT_8", (2, 1, 1, 1), np.array([0, 255], np.uint8).reshape(2, 1, 1, 1),
               Encoding((0.01,), (-128,)), static=True)  # fmt: skip
    from cases.case import Param

    c = Case("TransposeConv2d", [x, w], {"stride": Param("stride", "UINT_32", np.array([2, 1], np.uint32))},
             [Tensor("out[0]", "UFIXED_POINT_16", (1, 4, 1, 1), None, OUT_ENC)])  # fmt: skip
    labels = m._groups(c, (2, 1, 1, 1))
    assert labels[0].item() != labels[1].item()
    c.params["stride"] = Param("stride", "UINT_32", np.array([1, 1], np.uint32))
    assert m._groups(c, (2, 1, 1, 1))[0].item() == m._groups(c, (2, 1, 1, 1))[1].item()


def test_matmul_weights_are_grouped_per_matrix_of_the_batch_and_output_column() -> None:
    """in[1] [batch, k, n]: one group per (batch, column), the same along k; transposed ([batch, n, k]) likewise."""
    from cases.case import Param

    c = Case("MatMul", [], {"transpose_in1": Param("transpose_in1", "BOOL_8", False)}, [])
    labels = m._groups(c, (2, 3, 4))
    assert len(np.unique(labels)) == 2 * 4 and (labels == labels[:, :1, :]).all()
    c.params["transpose_in1"] = Param("transpose_in1", "BOOL_8", True)
    labels = m._groups(c, (2, 4, 3))
    assert len(np.unique(labels)) == 2 * 4 and (labels == labels[:, :, :1]).all()


def test_the_matmul_bias_model_refuses_a_bias_that_cannot_show() -> None:
    """A bias that moves out[0] by no more than the case's budget: an output that adds it and passes would match the
    model without it, so the model does not apply; a large bias it takes."""
    a = Tensor("in[0]", "UFIXED_POINT_16", (1, 2), np.array([[0, 65535]], np.uint16), X_ENC)
    b = Tensor("in[1]", "UFIXED_POINT_8", (2, 1), np.array([[100], [200]], np.uint8), Encoding((0.01,), (-150,)))
    bias_enc = Encoding((X_ENC.scales[0] * 0.01,), (0,))
    small = Tensor("in[2]", "SFIXED_POINT_32", (1,), np.array([100], np.int32), bias_enc)
    c = Case("MatMul", [a, b, small], {}, [Tensor("out[0]", "UFIXED_POINT_16", (1, 1), None, OUT_ENC)])
    assert "error" in check(c, [np.zeros((1, 1), np.uint16)], {"diagnosis": m.MATMUL_NAME})
    big = replace(small, data=np.array([10_000_000], np.int32))
    assert "error" not in check(replace(c, inputs=[a, b, big]), [np.zeros((1, 1), np.uint16)],
                                {"diagnosis": m.MATMUL_NAME})  # fmt: skip


# ---- on the simulator ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's own case (zero point 214)."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_model_reproduces_the_findings_case(own_outputs) -> None:
    """154 steps from the reference (outside its 48-step budget), within the budget of the model."""
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, {"diagnosis": m.NAME})["matches"] is True
    from reference.compare import judge
    from reference.expected import expected

    assert not judge(c, expected(c), own_outputs).passed


@pytest.mark.qnn
def test_the_model_refuses_a_dropped_low_byte(own_outputs) -> None:
    """The same outputs with the low byte of every code dropped (the planted bug conv2d_16x8_low_byte): outside the
    model's budget and outside the finding's 24-step band."""
    c = Case.load(OWN_CASE)
    dropped = [np.asarray(own_outputs[0]) & np.uint16(0xFF00)]
    out = check(c, dropped, {"diagnosis": m.NAME})
    assert out["matches"] is False and out["max_steps"] > 24


def _transpose_conv2d(zero_point: int) -> Case:
    """A 16x8 TransposeConv2d of a 1 x 2 x 2 x 1 input, a 2 x 2 filter, stride 2 and output_padding [1, 1]."""
    from cases.case import Param

    codes = np.array([0, 20000, 40000, 65535], np.uint16).reshape(1, 2, 2, 1)
    x = Tensor("in[0]", "UFIXED_POINT_16", (1, 2, 2, 1), codes, X_ENC)
    w = Tensor("in[1]", "UFIXED_POINT_8", (2, 2, 1, 1), np.array([0, 60, 200, 255], np.uint8).reshape(2, 2, 1, 1),
               Encoding((0.01,), (-zero_point,)), static=True)  # fmt: skip
    params = {"stride": Param("stride", "UINT_32", np.array([2, 2], np.uint32)),
              "output_padding": Param("output_padding", "UINT_32", np.array([1, 1], np.uint32)),
              "pad_amount": Param("pad_amount", "UINT_32", np.zeros((2, 2), np.uint32))}  # fmt: skip
    return Case("TransposeConv2d", [x, w], params, [Tensor("out[0]", "UFIXED_POINT_16", (1, 5, 5, 1), None, OUT_ENC)])


def test_a_layout_bug_is_computed_with_the_htp_weights_where_they_are_asymmetric() -> None:
    """[output-padding-cells-unset, htp-16x8-weights-requantized]: the layout model on the requantized weights where the
    zero point is not 128, the layout model alone where it is."""
    from reference.models import _modelled

    both = ["output-padding-cells-unset", m.NAME]
    c = _transpose_conv2d(200)
    np.testing.assert_array_equal(_modelled(c, "diagnosis", both)[0],
                                  _modelled(m.htp_case(c), "diagnosis", "output-padding-cells-unset")[0])  # fmt: skip
    assert not np.allclose(_modelled(c, "diagnosis", both)[0], _modelled(c, "diagnosis", both[0])[0], equal_nan=True)
    c = _transpose_conv2d(128)
    np.testing.assert_array_equal(_modelled(c, "diagnosis", both)[0], _modelled(c, "diagnosis", both[0])[0])


MATMUL_CASE = REPO / "findings/cases/MatMul/matmul-16x8-bias-ignored.json"


@pytest.fixture(scope="module")
def matmul_outputs():
    """The backend's outputs for matmul-16x8-bias-ignored's case (seed 4's 56143ad57bf0e5e0, zero point 155)."""
    return outputs_of(MATMUL_CASE)


@pytest.mark.qnn
def test_the_matmul_model_reproduces_its_findings_case(matmul_outputs) -> None:
    """2344 steps from the reference (outside its 38.5-step budget), within the budget of the model."""
    from reference.compare import judge
    from reference.expected import expected

    c = Case.load(MATMUL_CASE)
    assert check(c, matmul_outputs, {"diagnosis": m.MATMUL_NAME})["matches"] is True
    assert not judge(c, expected(c), matmul_outputs).passed


@pytest.mark.qnn
def test_the_matmul_model_refuses_the_requantized_product_with_its_bias(matmul_outputs) -> None:
    """A backend that requantizes in[1] the same way and adds the bias: outside the model's budget."""
    from cases.quant import quantize
    from reference.expected import expected

    c = Case.load(MATMUL_CASE)
    with_bias = expected(m.htp_case(c))[0]
    planted = [quantize(with_bias, c.outputs[0].encoding, c.outputs[0].dtype)]
    assert check(c, planted, {"diagnosis": m.MATMUL_NAME})["matches"] is False
