"""Models of the HTP simulator's 16-bit precision deviations (issue 40: a band becomes a model): each reproduces its
finding's case from the backend's recorded output codes, and refuses the spec's answer and a planted error."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cases.case import Case
from reference import models

REPO = Path(__file__).resolve().parents[1]


def finding_case(op: str, finding: str) -> Case:
    return Case.load(REPO / "findings" / "cases" / op / f"{finding}.json")


def low_byte_dropped(codes: np.ndarray) -> np.ndarray:
    """bench mutants' planted 16-bit bug: the low 8 bits of every result code cleared."""
    return ((codes.astype(np.int64) >> 8) << 8).astype(codes.dtype)


# power-u16-inaccurate's case on the simulator (a base in [0.1, 4] to the power -0.4225), out[0]'s codes
POWER_CODES = np.array([24178, 23004, 27346, 22058, 21950, 32888, 21546, 25738, 21866, 65152, 30686, 29828, 22036,
                        27478, 22494, 21866], np.uint16).reshape(2, 2, 2, 2)  # fmt: skip
POWER = {"diagnosis": "base-floored-to-a-32768th-exponent-on-a-256th-grid"}


def test_power_exponent_is_rounded_to_a_256th_and_a_negative_one_moved_up_a_step() -> None:
    from reference.elementwise_models_b import power_exponent_on_grid

    np.testing.assert_allclose(power_exponent_on_grid(np.array([-0.25, -0.1, -1.0, -0.4225, 0.025, 0.05, 1.0])),
                               np.array([-63, -25, -255, -107, 6, 13, 256]) / 256)


def test_power_model_reproduces_its_findings_case() -> None:
    c = finding_case("ElementWisePower", "power-u16-inaccurate")
    assert models.check(c, [POWER_CODES], POWER)["matches"]


def test_power_model_refuses_the_spec_answer_and_a_dropped_low_byte() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    c = finding_case("ElementWisePower", "power-u16-inaccurate")
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], POWER)["matches"]
    assert not models.check(c, [low_byte_dropped(POWER_CODES)], POWER)["matches"]


def _small_base_power() -> object:
    """Seed 1's edge case 74118e8b9a829787 cut to its one positive base: 0.017563 (code 36371 at 1.1046e-4, offset
    -36212) to the power -3.2458 (code 8762 at 8.6079e-5, offset -46469), out[0] at 7.6064 a step; the simulator gave
    code 64756 (492558) where 498484 belongs."""
    from tests.reference_helpers import case

    return case("ElementWisePower", [("UFIXED_POINT_16", np.array([36371], np.uint16),
                                      ([1.104581679101102e-4], [-36212])),
                                     ("UFIXED_POINT_16", np.array([[[[8762]]]], np.uint16),
                                      ([8.607886411482468e-05], [-46469]))], {},
                [("UFIXED_POINT_16", (1, 1, 1, 1), ([7.606375694274902], [0]))])  # fmt: skip


def test_power_model_floors_a_small_base_to_a_32768th() -> None:
    """0.017563 is taken as 575/32768: to the power -830/256 that is the simulator's code 64756 within the budget,
    where the exponent grid alone is 196 steps off."""
    c = _small_base_power()
    got = [np.array([[[[64756]]]], np.uint16)]
    assert models.check(c, got, POWER)["matches"]
    assert not models.check(c, got, {"diagnosis": "exponent-on-a-256th-grid-negative-one-step-up"})["matches"]


def test_power_model_refuses_a_small_base_result_off_by_a_planted_error() -> None:
    c = _small_base_power()
    assert not models.check(c, [np.array([[[[64756 - 150]]]], np.uint16)], POWER)["matches"]
    assert not models.check(c, [low_byte_dropped(np.array([[[[64756]]]], np.uint16))], POWER)["matches"]


# hadamard-16bit-offset's case on the simulator (n = 4, scale 0.1, out[0]'s grid 9 times finer than in[0]'s)
HADAMARD_CODES = np.array([29500, -25307, -16485, -18204, 2357, 953, -32768, 4329, 11837, -12965, 4122, -2315, 31561,
                           -28224, 8173, 8794, 1061, 10729, 15582, 13403, 32686, 19462, 6300, 2249],
                          np.int16).reshape(6, 4)  # fmt: skip
HADAMARD_SHIFT = {"symptom": "one-constant-shift-within-16-input-steps"}


def test_hadamard_shift_symptom_takes_its_findings_case() -> None:
    c = finding_case("HadamardTransform", "hadamard-16bit-offset")
    assert models.check(c, [HADAMARD_CODES], HADAMARD_SHIFT)["matches"]


def test_hadamard_shift_symptom_takes_a_constant_shift_and_refuses_a_larger_one() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    c = finding_case("HadamardTransform", "hadamard-16bit-offset")
    step = float(c.inputs[0].encoding.scales[0])
    want = expected(c)[0]
    shifted = quantize(want - 8 * step, c.outputs[0].encoding, c.outputs[0].dtype)
    assert models.check(c, [shifted], HADAMARD_SHIFT)["matches"]
    too_far = quantize(want - 20 * step, c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [too_far], HADAMARD_SHIFT)["matches"]


def test_hadamard_shift_symptom_refuses_a_dropped_low_byte() -> None:
    c = finding_case("HadamardTransform", "hadamard-16bit-offset")
    assert not models.check(c, [low_byte_dropped(HADAMARD_CODES)], HADAMARD_SHIFT)["matches"]


def clipped_hadamard_case() -> Case:
    """Seed 4's typical UFIXED_POINT_16 case 54d591cc367d8110 (n = 2, scale 0.1): of its four results one lies below
    out[0]'s range and one at its top, so the backend's codes there are 0 and 65535 whatever its shift."""
    from cases.case import Encoding, Param, Tensor

    codes = np.array([[[46170, 10900], [47493, 17784]]], np.uint16)
    x = Tensor("in[0]", "UFIXED_POINT_16", (1, 2, 2), codes, Encoding((0.00012208866246510297,), (-32765,)))
    out = Tensor("out[0]", "UFIXED_POINT_16", (1, 2, 2), encoding=Encoding((5.760584372183075e-06,), (-12678,)))
    return Case("HadamardTransform", [x], {"scale": Param("scale", "FLOAT_32", 0.1)}, [out])


# what the simulator returned for it: +273 and +301 output steps (+12.9, +14.2 in[0] steps) on the unclipped two
CLIPPED_HADAMARD_CODES = np.array([[[280, 65535], [12572, 57502]]], np.uint16)


def test_hadamard_shift_symptom_fits_its_shift_on_the_elements_the_backend_did_not_clip() -> None:
    assert models.check(clipped_hadamard_case(), [CLIPPED_HADAMARD_CODES], HADAMARD_SHIFT)["matches"]


def test_hadamard_shift_symptom_still_holds_a_clipped_element_to_the_shifted_result() -> None:
    moved = CLIPPED_HADAMARD_CODES.copy()
    moved[0, 0, 0] = 0  # the spec's code, where the shift puts it 280 steps up
    assert not models.check(clipped_hadamard_case(), [moved], HADAMARD_SHIFT)["matches"]


# softmax-16bit-beta-scaled's case on the simulator (UFIXED_POINT_16 [1, 4, 5], beta 0.1 along axis 2)
SOFTMAX_CODES = np.array([54969, 34247, 37030, 65362, 46469, 36352, 63222, 60816, 43020, 34668, 44487, 58111, 50930,
                          43581, 40972, 31543, 63585, 60045, 30640, 52265], np.uint16).reshape(1, 4, 5)  # fmt: skip
SOFTMAX_BETA = {"symptom": "beta-scaled-down-by-up-to-3-percent"}


def test_softmax_beta_symptom_takes_its_findings_case() -> None:
    c = finding_case("Softmax", "softmax-16bit-beta-scaled")
    assert models.check(c, [SOFTMAX_CODES], SOFTMAX_BETA)["matches"]


def test_softmax_beta_symptom_refuses_beta_ignored_and_a_dropped_low_byte() -> None:
    import reference
    from cases.quant import quantize
    from reference.expected import arguments

    c = finding_case("Softmax", "softmax-16bit-beta-scaled")
    inputs, params = arguments(c)
    beta_one = quantize(reference.run("Softmax", inputs, {**params, "beta": 1.0})[0], c.outputs[0].encoding,
                        c.outputs[0].dtype)  # fmt: skip
    assert not models.check(c, [beta_one], SOFTMAX_BETA)["matches"]
    assert not models.check(c, [low_byte_dropped(SOFTMAX_CODES)], SOFTMAX_BETA)["matches"]


SOFTPLUS = {"diagnosis": "softplus-polynomial-between-minus-2-and-5"}


def test_htp_softplus_is_e_to_the_z_then_a_polynomial_then_z() -> None:
    from reference.activation_models_b import htp_softplus

    np.testing.assert_allclose(htp_softplus(np.array([-3.0, -1.0, 0.0, 5.0, 7.0])),
                               [np.exp(-3.0), 0.3032, 0.7031, 5.0, 7.0], atol=2e-4)


# neuron-softplus-beta-tenth-inaccurate's case on the simulator (SFIXED_POINT_16, beta 0.1), out[0]'s codes
SOFTPLUS_TENTH_CODES = np.array([15058, 31901, 32767, 32767, 980, 12999, 18590, 7232, 10336, 19329, 26168, 17603],
                                np.int16)  # fmt: skip


def test_softplus_model_reproduces_its_findings_cases() -> None:
    """The FLOAT_16 case (beta 1): 0.703125 for ln 2 at x = 0 and 0.30322 for 0.3133 at -1, as the backend gave; the
    16-bit beta-0.1 case within a step."""
    c = finding_case("ElementWiseNeuron", "neuron-softplus-inaccurate")
    assert models.check(c, [np.array([[0.703125, 0.30322265625]], np.float16)], SOFTPLUS)["matches"]
    c = finding_case("ElementWiseNeuron", "neuron-softplus-beta-tenth-inaccurate")
    codes = SOFTPLUS_TENTH_CODES.reshape(c.outputs[0].shape)
    assert models.check(c, [codes], SOFTPLUS)["matches"]
    assert not models.check(c, [low_byte_dropped(codes)], SOFTPLUS)["matches"]


def test_softplus_model_refuses_the_spec_answer_at_beta_a_tenth() -> None:
    """beta 0.1 makes the polynomial's error ten times larger in out[0]: the spec's softplus is outside the model."""
    from cases.quant import quantize
    from reference.expected import expected

    c = finding_case("ElementWiseNeuron", "neuron-softplus-beta-tenth-inaccurate")
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], SOFTPLUS)["matches"]
    modelled = quantize(models._modelled(c, "diagnosis", SOFTPLUS["diagnosis"])[0], c.outputs[0].encoding,
                        c.outputs[0].dtype)  # fmt: skip
    assert models.check(c, [modelled], SOFTPLUS)["matches"]
    assert not models.check(c, [low_byte_dropped(modelled)], SOFTPLUS)["matches"]


# ep-softplus-inaccurate's case (ElementWiseSoftplus FLOAT_16, beta 1) through the ONNX Runtime QNN EP, out[0]
EP_SOFTPLUS_OUTPUT = np.array([[0.76904296875, 0.63720703125], [1.0751953125, 0.75830078125]], np.float16)


def test_softplus_model_holds_elementwise_softplus_as_the_ep_runs_it() -> None:
    """The EP lowers ElementWiseSoftplus to ElementWiseNeuron SOFTPLUS: the model reproduces its outputs, and refuses
    the spec's softplus (0.758 at 0.1257, where the backend gave 0.769) and a planted error of a float16 step per 64."""
    from reference.expected import expected

    c = finding_case("ElementWiseSoftplus", "ep-softplus-inaccurate")
    assert models.check(c, [EP_SOFTPLUS_OUTPUT], SOFTPLUS)["matches"]
    assert not models.check(c, [expected(c)[0].astype(np.float16)], SOFTPLUS)["matches"]
    assert not models.check(c, [(EP_SOFTPLUS_OUTPUT * np.float16(1.02)).astype(np.float16)], SOFTPLUS)["matches"]


# gelu-16bit-inaccurate's and neuron-gelu-16bit-inaccurate's cases on the simulator, out[0]'s codes
GELU_CODES = np.array([[21251, 408], [65535, 64715]], np.uint16)
NEURON_GELU_CODES = np.array([[-17442, -32768], [-16800, 32723]], np.int16)
GELU = {"diagnosis": "cdf-from-a-4096th-table"}


def test_gelu_cdf_table_runs_from_one_half_to_4095_4096ths() -> None:
    from reference.activation_models_b import GELU_CDF_TAIL, _gelu_cdf_table

    table = _gelu_cdf_table()
    assert table.size == 2**16 and table[0] == 2048 and table[-1] == GELU_CDF_TAIL
    assert table.min() == 2048 and table.max() <= 4097


def test_gelu_codes_multiply_x_by_the_tables_cdf() -> None:
    """x = 1 on an exact 2^-12 grid (out[0] the same grid): the CDF at z = 0.7071 (index 11585) times 4096 steps; and
    a CDF of 1 / 4096 far below: x / 4096, rounded to in[0]'s step."""
    from reference.activation_models_b import _gelu_cdf_table, htp_gelu_codes

    cdf = _gelu_cdf_table()[11585]
    assert abs(cdf / 4096 - 0.8413) < 0.001  # Phi(1)
    s = 2.0**-12  # 15 bits hold 2^14 / sqrt(2) x s as 0.70709... : index round(4096 x 2.8284) = 11585
    assert htp_gelu_codes(np.array([4096]), s, 0, s, 0, "SFIXED_POINT_16")[0] == cdf
    assert htp_gelu_codes(np.array([-32768]), s, 0, s, 0, "SFIXED_POINT_16")[0] == -8  # -8 x 1/4096 in 2^-12 steps


def test_gelu_model_gives_its_findings_cases_codes() -> None:
    """Both 16-bit GELU findings' cases (the Gelu op's 408 steps off the spec, ElementWiseNeuron's 91), to the code."""
    for op, finding, codes in [("Gelu", "gelu-16bit-inaccurate", GELU_CODES),
                               ("ElementWiseNeuron", "neuron-gelu-16bit-inaccurate", NEURON_GELU_CODES)]:  # fmt: skip
        got = models.check(finding_case(op, finding), [codes], GELU)
        assert got["matches"] and got["max_steps"] == 0


def test_gelu_model_refuses_the_spec_answer_and_a_dropped_low_byte() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    for op, finding, codes in [("Gelu", "gelu-16bit-inaccurate", GELU_CODES),
                               ("ElementWiseNeuron", "neuron-gelu-16bit-inaccurate", NEURON_GELU_CODES)]:  # fmt: skip
        c = finding_case(op, finding)
        spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
        assert not models.check(c, [spec], GELU)["matches"]
        assert not models.check(c, [low_byte_dropped(codes)], GELU)["matches"]


def test_gelu_model_refuses_another_neuron_operation() -> None:
    from dataclasses import replace

    from cases.case import Param

    c = finding_case("ElementWiseNeuron", "neuron-gelu-16bit-inaccurate")
    relu = replace(c, params={**c.params, "operation": Param("operation", "UINT_32", 0)})
    assert "error" in models.check(relu, [NEURON_GELU_CODES], GELU)


# conv-16x4-precision's case on the simulator (FullyConnected, 16-bit activations x 4-bit per-axis weights)
FC_16X4_CODES = np.array([0, 65349, 54717, 47400, 20790, 48348], np.uint16)
FC_16X4 = {"diagnosis": "htp-16x4-sum-floored-to-256"}


def test_16x4_sum_of_raw_codes_is_floored_to_256() -> None:
    """One input, weight 7 at scale 0.5, in[0] on 2^-12 steps from -8 (offset -32768), out[0] on in[0] x 0.5's grid
    from -7 x 8 (m = 1, exact in binary16; offset -7 x 32768): code c gives out[0]'s code 256 floor(7c / 256), so
    codes 0..36 give the same output, where the spec's code is 7c."""
    from cases.case import Case, Encoding, Param, Tensor
    from reference.convolution_models_b import htp_16x4_codes

    codes = np.array([[0], [36], [37], [9000]], np.uint16)
    x = Tensor("in[0]", "UFIXED_POINT_16", (4, 1), codes, Encoding((2.0**-12,), (-32768,)))
    w = Tensor("in[1]", "SFIXED_POINT_8", (1, 1), np.array([[7]], np.int8),
               Encoding((0.5,), (0,), axis=0, bitwidth=4), static=True)  # fmt: skip
    out = Tensor("out[0]", "UFIXED_POINT_16", (4, 1), None, Encoding((2.0**-13,), (-7 * 32768,)))
    case = Case(op="FullyConnected", inputs=[x, w], params={"keep_dims": Param("keep_dims", "BOOL_8", False)},
                outputs=[out], config="UFIXED_POINT_16+SFIXED_POINT_8/bw4/axis+SFIXED_POINT_32")  # fmt: skip
    got = htp_16x4_codes(case).ravel()
    np.testing.assert_array_equal(got, 256 * np.floor(7 * codes.ravel().astype(np.int64) / 256))
    assert got[0] == got[1] == 0 and got[2] == 256 and got[3] == 62976  # the spec's: 0, 252, 259, 63000


def test_16x4_model_reproduces_its_findings_case() -> None:
    c = finding_case("FullyConnected", "conv-16x4-precision")
    got = models.check(c, [FC_16X4_CODES], FC_16X4)
    assert got["matches"] and got["max_steps"] == 0


def test_16x4_model_refuses_the_spec_answer_and_a_dropped_low_byte() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    c = finding_case("FullyConnected", "conv-16x4-precision")
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], FC_16X4)["matches"]
    assert not models.check(c, [low_byte_dropped(FC_16X4_CODES)], FC_16X4)["matches"]


# conv-16x4-precision-v73's case on the simulator at SoC 43 (v73): the same op and datatypes, another kernel
FC_16X4_V73_CODES = np.array([[14681, 34146, 40280, 39512, 0], [39144, 56651, 34960, 28483, 65507],
                              [17460, 13963, 31122, 23849, 54737]], np.uint16)  # fmt: skip
FC_16X4_V73 = {"diagnosis": "htp-16x4-sum-floored-bias-truncated"}


def test_16x4_v73_model_reproduces_its_findings_case_to_the_code() -> None:
    c = finding_case("FullyConnected", "conv-16x4-precision-v73")
    got = models.check(c, [FC_16X4_V73_CODES], FC_16X4_V73)
    assert got["matches"] and got["max_steps"] == 0, got


def test_16x4_generations_are_told_apart_by_their_models() -> None:
    """v73's output is not v68's model's, nor the spec's: the two findings cannot take each other's cases."""
    from cases.quant import quantize
    from reference.convolution_models_b import htp_16x4_codes
    from reference.expected import expected

    c = finding_case("FullyConnected", "conv-16x4-precision-v73")
    v68 = htp_16x4_codes(c).reshape(FC_16X4_V73_CODES.shape)
    assert np.abs(v68 - FC_16X4_V73_CODES).max() > 40, "the v68 model is as close as v73's own: nothing told apart"
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], FC_16X4_V73)["matches"]
    assert not models.check(c, [low_byte_dropped(FC_16X4_V73_CODES)], FC_16X4_V73)["matches"]


def test_16x4_v73_bias_is_truncated_towards_zero_in_whole_accumulator_units() -> None:
    """A bias of -1792 accumulator units given as -1791.99994 (its scale a hair off in[0].scale x s) is -1792 on the
    HTP: truncated to -1792, not to -1536. Measured at v79 (seed case c3dfd69be9400c6d, 3 steps before the fix)."""
    from dataclasses import replace

    from cases.case import Encoding, Tensor
    from reference.convolution_models_b import htp_16x4_codes

    c = finding_case("FullyConnected", "conv-16x4-precision-v73")
    x, w = c.inputs[0], c.inputs[1]
    n = w.shape[0]
    scales = np.asarray(w.encoding.scales, np.float64) * float(x.encoding.scales[0]) * (1 - 3e-8)
    bias = Tensor("in[2]", "SFIXED_POINT_32", (n,), np.full(n, -1792, np.int32),
                  Encoding(tuple(scales), (0,) * n, axis=0), static=True)  # fmt: skip
    exact = replace(c, inputs=[x, w, replace(bias, encoding=Encoding(tuple(scales / (1 - 3e-8)), (0,) * n, axis=0))])
    np.testing.assert_array_equal(htp_16x4_codes(replace(c, inputs=[x, w, bias]), v73=True),
                                  htp_16x4_codes(exact, v73=True))


def test_16x4_model_refuses_a_depthwise_channel_multiplier() -> None:
    """A DepthWiseConv2d with channel_out = 2 x channel_in takes another path: the model covers nothing there."""
    from dataclasses import replace

    from cases.case import Encoding, Param, Tensor

    x = Tensor("in[0]", "UFIXED_POINT_16", (1, 3, 3, 1), np.arange(9, dtype=np.uint16).reshape(1, 3, 3, 1),
               Encoding((1e-3,), (-4,)))  # fmt: skip
    w = Tensor("in[1]", "SFIXED_POINT_8", (2, 2, 1, 2), np.ones((2, 2, 1, 2), np.int8),
               Encoding((0.1, 0.2), (0, 0), axis=3, bitwidth=4), static=True)  # fmt: skip
    c = finding_case("FullyConnected", "conv-16x4-precision")
    dw = replace(c, op="DepthWiseConv2d", inputs=[x, w], outputs=[replace(c.outputs[0], shape=(1, 2, 2, 2))],
                 params={"stride": Param("stride", "UINT_32", np.array([1, 1], np.uint32))})  # fmt: skip
    assert "error" in models.check(dw, [np.zeros((1, 2, 2, 2), np.uint16)], FC_16X4)


# A row of softmax-8bit-long-rows' case (its first 64 input codes, beta 0.5) with out[0] on a 2.5e-4 grid, which the
# simulator computes on 16 x 2^-16 = 2.44e-4: its output codes (5 steps off the spec's at most)
SOFTMAX_ROW_IN = np.array([14, 184, 204, 179, 168, 222, 229, 255, 115, 6, 208, 82, 78, 244, 63, 242, 90, 236, 156, 44,
                           16, 255, 107, 99, 110, 21, 94, 18, 195, 197, 177, 115, 244, 26, 81, 21, 30, 167, 200, 94,
                           53, 85, 198, 199, 159, 185, 136, 46, 25, 132, 193, 41, 165, 184, 8, 183, 212, 64, 236, 106,
                           96, 32, 179, 99], np.uint8).reshape(1, 64)  # fmt: skip
SOFTMAX_ROW_OUT = np.array([7, 83, 110, 77, 66, 142, 157, 227, 31, 7, 116, 19, 18, 194, 15, 188, 22, 173, 56, 11, 8,
                            227, 28, 25, 29, 8, 23, 8, 97, 99, 75, 31, 194, 9, 19, 8, 9, 65, 104, 23, 13, 20, 101, 102,
                            58, 84, 42, 12, 9, 39, 94, 11, 63, 83, 7, 81, 123, 15, 173, 27, 24, 10, 77, 25],
                           np.uint8).reshape(1, 64)  # fmt: skip
SOFTMAX_8BIT = {"diagnosis": "output-scale-truncated-to-a-65536th"}


def softmax_row_case() -> Case:
    from dataclasses import replace

    from cases.case import Encoding

    c = finding_case("Softmax", "softmax-8bit-long-rows")
    return replace(c, inputs=[replace(c.inputs[0], shape=(1, 64), data=SOFTMAX_ROW_IN)],
                   outputs=[replace(c.outputs[0], shape=(1, 64), encoding=Encoding((2.5e-4,), (0,)))])  # fmt: skip


def test_softmax_model_reproduces_a_row_on_a_truncated_scale_and_refuses_the_spec() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    c = softmax_row_case()
    assert models.check(c, [SOFTMAX_ROW_OUT], SOFTMAX_8BIT)["matches"]
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], SOFTMAX_8BIT)["matches"]


def test_softmax_model_makes_its_findings_rows_sum_to_scale_over_its_truncation() -> None:
    """out[0]'s scale 6.69e-5 is taken as 4 x 2^-16: the rows of the finding's case sum to 1.096 (measured 1.091-1.097)
    within the codes' rounding down."""
    c = finding_case("Softmax", "softmax-8bit-long-rows")
    rows = models._modelled(c, "diagnosis", SOFTMAX_8BIT["diagnosis"])[0].sum(axis=1)
    factor = float(np.float32(c.outputs[0].encoding.scales[0])) / (4 * 2.0**-16)
    assert abs(factor - 1.096) < 0.001
    assert np.all(rows <= factor) and np.all(rows > factor - 256 * c.outputs[0].encoding.scales[0])


def test_16x4_model_takes_sfixed_point_4_weights_alike() -> None:
    """The typical tier's standard-form probes type the 4-bit weights SFIXED_POINT_4: same kernel, same model."""
    from dataclasses import replace

    from cases.case import Encoding
    from reference.convolution_models_b import htp_16x4_codes

    c = finding_case("FullyConnected", "conv-16x4-precision")
    w = c.inputs[1]
    w4 = replace(w, dtype="SFIXED_POINT_4", encoding=Encoding(w.encoding.scales, w.encoding.offsets, axis=0))
    c4 = replace(c, inputs=[c.inputs[0], w4, *c.inputs[2:]])
    np.testing.assert_array_equal(htp_16x4_codes(c4), FC_16X4_CODES)


# roialign-u16-inaccurate's case on the simulator (two RoIs of img_size_ratio 2, one sample per bin), out[0]'s codes
ROI_ALIGN_CODES = np.array([65535, 58272, 27164, 57870, 62542, 22701, 22814, 23956, 60851, 3338, 20465, 5502, 64650,
                            12918, 0, 10477, 64711, 12979, 0, 10451, 64671, 12878, 0, 10477],
                           np.uint16).reshape(2, 3, 2, 2)  # fmt: skip
ROI_ALIGN_WEIGHTS = {"symptom": "tap-weights-within-a-2048th"}


def test_roialign_tap_weights_symptom_takes_its_findings_case() -> None:
    c = finding_case("RoiAlign", "roialign-u16-inaccurate")
    assert models.check(c, [ROI_ALIGN_CODES], ROI_ALIGN_WEIGHTS)["matches"]


def test_roialign_tap_weights_symptom_refuses_a_dropped_low_byte_and_an_element_moved_past_its_slack() -> None:
    c = finding_case("RoiAlign", "roialign-u16-inaccurate")
    assert not models.check(c, [low_byte_dropped(ROI_ALIGN_CODES)], ROI_ALIGN_WEIGHTS)["matches"]
    moved = ROI_ALIGN_CODES.copy()
    moved[0, 0, 1, 1] -= 200  # 0.032 off where 2^-11 of its taps allows 0.004 beside the budget
    result = models.check(c, [moved], ROI_ALIGN_WEIGHTS)
    assert result["matches"] is False and "further off than 2^-11" in result["message"], result


def test_roialign_tap_sums_read_the_four_taps_of_a_one_sample_bin() -> None:
    """A 2x2 map, one RoI over the whole map with one sample at its centre (1, 1) clamped onto the last cell: the
    taps are that cell's (read twice on each axis), and a sample off the map reads nothing."""
    from reference.expected import arguments
    from reference.roi import _tap_abs_means
    from tests.reference_helpers import case

    fm = np.array([[[[1.0], [-2.0]], [[3.0], [-4.0]]]], np.float32)
    c = case("RoiAlign", [fm, np.array([[0.0, 0.0, 2.0, 2.0], [9.0, 9.0, 12.0, 12.0]], np.float32),
                          ("UINT_32", np.array([0, 0], np.uint32))],
             {"img_size_ratio": [1.0, 1.0], "num_samples_x": 1, "num_samples_y": 1}, [("FLOAT_32", (2, 1, 1, 1))])
    inputs, params = arguments(c)
    np.testing.assert_allclose(_tap_abs_means(inputs, params, [(2, 1, 1, 1)]).ravel(), [16.0, 0.0])
