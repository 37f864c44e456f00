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
POWER = {"diagnosis": "exponent-on-a-256th-grid-negative-one-step-up"}


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
