"""The activation references (reference/activation.py) against onnxruntime, onnx.reference, scipy
and hand-computed values from the MasterOpDef's formulas.

ElementWiseNeuron is checked operation by operation against the ONNX op of the same mathematics,
with its per-operation alpha / beta defaults; the dedicated ops (Elu, Relu6 ...) against the same
ONNX ops. Where the spec's formula and ONNX part ways (Elu with a negative alpha, Softplus's
threshold) or the spec has no counterpart (MaskedSoftmax's COMPRESSED mode), the expected numbers
are written out.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import opdefs
import reference
from cases import quant
from reference import activation
from tests.onnx_oracle import ORT, node_function
from tests.reference_helpers import assert_reading_recorded, member

RNG = np.random.default_rng(20240612)
SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)
NEURON_SPEC = opdefs.load("ElementWiseNeuron")
UNCOMPRESSED, COMPRESSED = (member("MaskedSoftmax", "mode", m) for m in ("UNCOMPRESSED", "COMPRESSED"))


# ---- independent implementations ---------------------------------------------------------------


def onnx_op(op_type: str, *, engine: str = ORT, opset: int = 21, **attrs):
    """A function running the one-node ONNX model ``op_type`` on float32 copies of numpy arrays."""
    run = node_function(op_type, engine=engine, opset=opset, **attrs)
    return lambda *arrays: run(*(np.asarray(a, np.float32) for a in arrays))


def clip(lo: float, hi: float):
    return lambda x: onnx_op("Clip")(x, np.array(lo, np.float32), np.array(hi, np.float32))


def qnn(op: str, inputs: list[np.ndarray], params: dict | None = None) -> np.ndarray:
    """The reference on the float64 view of the test's data; omitted params take the spec default."""
    return reference.run(op, [np.asarray(x, np.float64) for x in inputs], params or {})[0]


def check_close(got: np.ndarray, want: np.ndarray, what: str, rtol: float = 5e-6, atol: float = 2e-6) -> None:
    """float64 reference vs a float32 implementation (or vs numbers written to a few digits)."""
    assert got.shape == np.shape(want), f"{what}: shape {got.shape}, expected {np.shape(want)}"
    np.testing.assert_allclose(got, np.asarray(want, np.float64), rtol=rtol, atol=atol, err_msg=what)


def uniform(shape, lo: float = -6.0, hi: float = 6.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


SHAPES = [(9,), (3, 5), (2, 3, 4), (1, 4, 4, 3)]


@pytest.mark.parametrize(
    ("op", "about"),
    [
        ("ElementWiseNeuron", "alpha / beta defaults depend on operation"),
        ("Elu", "negative alpha"),
        ("ElementWiseSoftplus", "threshold"),
        ("MaskedSoftmax", "COMPRESSED mask"),
        ("Prelu", "slope broadcast"),
        ("Softmax", "axis default"),
    ],
)
def test_the_readings_this_reference_takes_are_recorded_in_the_spec(op, about):
    assert_reading_recorded(op, about)


# ---- ElementWiseNeuron and the dedicated activations ---------------------------------------------


def test_every_neuron_operation_the_spec_lists_has_a_formula():
    listed, known = set(NEURON_SPEC.enum("operation")), set(activation.NEURON)
    assert known == listed, f"spec members without a formula {sorted(listed - known)}, " \
                            f"formulas for no member {sorted(known - listed)}"


# (QNN op, params) -> independent implementation with the same meaning. Written out here, not
# taken from the module's tables, so a wrong mapping there cannot hide.
N = SimpleNamespace(**NEURON_SPEC.enum("operation"))  # member name -> the spec's number
ACTIVATION_CHECKS = [
    ("ElementWiseNeuron", {"operation": N.ELU, "alpha": 0.7}, onnx_op("Elu", alpha=0.7)),
    ("ElementWiseNeuron", {"operation": N.GELU}, onnx_op("Gelu", opset=20)),
    (
        "ElementWiseNeuron",
        {"operation": N.HARD_SIGMOID, "alpha": 0.3, "beta": 0.4},
        onnx_op("HardSigmoid", alpha=0.3, beta=0.4),
    ),
    ("ElementWiseNeuron", {"operation": N.HARD_SWISH}, onnx_op("HardSwish")),
    ("ElementWiseNeuron", {"operation": N.RELU}, onnx_op("Relu")),
    ("ElementWiseNeuron", {"operation": N.RELU_MIN_MAX, "min_value": -0.5, "max_value": 2.5}, clip(-0.5, 2.5)),
    ("ElementWiseNeuron", {"operation": N.SIGMOID}, onnx_op("Sigmoid")),
    ("ElementWiseNeuron", {"operation": N.SOFTPLUS, "beta": 1.0, "threshold": -1.0}, onnx_op("Softplus")),
    ("ElementWiseNeuron", {"operation": N.TANH}, onnx_op("Tanh")),
    ("Elu", {"alpha": 1.0}, onnx_op("Elu", alpha=1.0)),
    ("Elu", {"alpha": 0.25}, onnx_op("Elu", alpha=0.25)),
    ("Gelu", {}, onnx_op("Gelu", opset=20)),
    ("HardSwish", {}, onnx_op("HardSwish")),
    ("Relu", {}, onnx_op("Relu")),
    ("Relu1", {}, clip(-1.0, 1.0)),
    ("Relu6", {}, clip(0.0, 6.0)),
    ("ReluMinMax", {"min_value": -2.0, "max_value": 3.0}, clip(-2.0, 3.0)),
    ("ReluMinMax", {"min_value": 1.5, "max_value": 1.5}, clip(1.5, 1.5)),
    ("Sigmoid", {}, onnx_op("Sigmoid")),
    ("Tanh", {}, onnx_op("Tanh")),
    ("ElementWiseSoftplus", {"beta": 1.0, "threshold": -1.0}, onnx_op("Softplus")),
]


@pytest.mark.parametrize(
    ("op", "params", "independent"),
    ACTIVATION_CHECKS,
    ids=[f"{op}-{NEURON_SPEC.enum_name('operation', p['operation']) if 'operation' in p else p}"
         for op, p, _ in ACTIVATION_CHECKS],
)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_activation_matches_onnx(op, params, independent, shape):
    x = uniform(shape)
    check_close(qnn(op, [x], params), independent(x), f"{op} {params} on {shape}")


@pytest.mark.parametrize(
    ("onnx_type", "operation", "attrs"),
    [
        ("Elu", N.ELU, {"alpha": 1.0}),
        ("HardSigmoid", N.HARD_SIGMOID, {"alpha": 0.2, "beta": 0.5}),
        ("Sigmoid", N.SIGMOID, {}),
        ("Tanh", N.TANH, {}),
        ("Relu", N.RELU, {}),
    ],
)
def test_neuron_matches_onnx_reference_evaluator(onnx_type, operation, attrs):
    x = uniform((4, 7))
    want = onnx_op(onnx_type, engine="onnx.reference", **attrs)(x)
    check_close(qnn("ElementWiseNeuron", [x], {"operation": operation, **attrs}), want, f"onnx.reference {onnx_type}")


@pytest.mark.parametrize(
    ("operation", "independent"),
    [
        (N.ELU, onnx_op("Elu", alpha=1.0)),  # alpha 1.0 for ELU (seed 4582)
        (N.HARD_SIGMOID, onnx_op("HardSigmoid", alpha=0.2, beta=0.5)),  # alpha 0.2, beta 0.5 (4583, 4601)
        (N.SOFTPLUS, onnx_op("Softplus")),  # beta 1.0 (4602), threshold -1.0: off (4649)
    ],
    ids=lambda v: NEURON_SPEC.enum_name("operation", v) if isinstance(v, int) else "",
)
def test_neuron_alpha_and_beta_take_their_per_operation_defaults(operation, independent):
    x = uniform((5, 6))
    check_close(qnn("ElementWiseNeuron", [x], {"operation": operation}), independent(x), f"{operation} defaults")


def test_neuron_relu_min_max_requires_both_bounds():
    with pytest.raises(ValueError, match="min_value must be provided"):
        qnn("ElementWiseNeuron", [uniform((3,))], {"operation": N.RELU_MIN_MAX, "max_value": 1.0})


def test_elu_with_negative_alpha_follows_the_spec_formula_not_onnx():
    # seed 4444 / 5623: max(0, x) + min(0, alpha (e^x - 1)); alpha = -0.5
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    want = [
        0.0,  # min(0, -0.5 (e^-2 - 1) = +0.432) = 0
        0.0,
        0.0,
        0.5 - 0.5 * (math.exp(0.5) - 1),  # 0.5 + min(0, -0.324) = 0.17564
        2.0 - 0.5 * (math.exp(2.0) - 1),  # 2 - 3.19453 = -1.19453
    ]
    for op, params in [("Elu", {"alpha": -0.5}), ("ElementWiseNeuron", {"operation": N.ELU, "alpha": -0.5})]:
        check_close(qnn(op, [x], params), np.array(want), f"{op} alpha=-0.5", rtol=1e-12)


def test_gelu_is_the_exact_erf_form():
    x = np.linspace(-5, 5, 41)
    want = 0.5 * x * (1 + scipy.special.erf(x / np.sqrt(2)))
    check_close(qnn("Gelu", [x]), want, "Gelu vs scipy erf", rtol=1e-13, atol=1e-15)
    check_close(qnn("ElementWiseNeuron", [x], {"operation": N.GELU}), want, "Neuron GELU", rtol=1e-13, atol=1e-15)


def test_sigmoid_matches_scipy_expit_without_overflow_at_the_ends():
    x = np.concatenate([np.linspace(-40, 40, 81), [-1000.0, 1000.0]])
    check_close(qnn("Sigmoid", [x]), scipy.special.expit(x), "Sigmoid vs expit", rtol=1e-13, atol=0)


@pytest.mark.parametrize("beta", [0.5, 2.0, 3.0])
def test_softplus_with_beta_matches_the_formula(beta):
    # (1/beta) ln(e^(beta x) + 1), seed 5109; threshold off
    x = uniform((4, 5), -4, 4).astype(np.float64)
    want = np.log1p(np.exp(beta * x)) / beta
    for op, params in [
        ("ElementWiseSoftplus", {"beta": beta, "threshold": -1.0}),
        ("ElementWiseNeuron", {"operation": N.SOFTPLUS, "beta": beta, "threshold": -1.0}),
    ]:
        check_close(qnn(op, [x], params), want, f"{op} beta={beta}", rtol=1e-12)


def test_softplus_reverts_to_linear_above_the_threshold():
    # seed 4505-4510: out = x where x * beta > threshold; beta = 2, threshold = 3 -> linear for x > 1.5
    x = np.array([-1.0, 0.0, 1.0, 1.5, 1.6, 4.0])
    smooth = np.log1p(np.exp(2 * x)) / 2
    want = np.where(x * 2 > 3, x, smooth)  # 1.5 * 2 == 3 is not > 3: still smooth
    assert want[3] == smooth[3] and want[4] == 1.6
    for op, params in [
        ("ElementWiseSoftplus", {"beta": 2.0, "threshold": 3.0}),
        ("ElementWiseNeuron", {"operation": N.SOFTPLUS, "beta": 2.0, "threshold": 3.0}),
    ]:
        check_close(qnn(op, [x], params), want, f"{op} threshold=3", rtol=1e-12)


def test_softplus_threshold_zero_is_on():
    # seed 4644: only a negative threshold disables the reversion; with 0, every positive x is linear
    x = np.array([-1.0, 0.0, 0.5])
    want = np.array([math.log1p(math.exp(-1.0)), math.log(2.0), 0.5])
    check_close(
        qnn("ElementWiseSoftplus", [x], {"beta": 1.0, "threshold": 0.0}), want, "Softplus threshold 0", rtol=1e-12
    )


def test_softplus_threshold_is_off_when_negative():
    x = np.array([5.0, 20.0])
    got = qnn("ElementWiseSoftplus", [x], {"beta": 1.0, "threshold": -0.5})
    check_close(got, np.log1p(np.exp(x)), "Softplus threshold -0.5", rtol=1e-12)


def test_hard_swish_hand_values():
    # x * max(0, min(6, x + 3)) / 6 (seed 7133)
    x = np.array([-4.0, -3.0, -1.0, 0.0, 1.0, 3.0, 4.0])
    want = np.array([0.0, 0.0, -1 * 2 / 6, 0.0, 1 * 4 / 6, 3.0, 4.0])
    check_close(qnn("HardSwish", [x]), want, "HardSwish", rtol=1e-12)


def test_relu1_and_relu6_clamp_to_their_fixed_bounds():
    x = np.array([-7.0, -1.0, -0.5, 0.0, 0.5, 1.0, 5.0, 6.0, 7.0])
    check_close(qnn("Relu1", [x]), np.array([-1, -1, -0.5, 0, 0.5, 1, 1, 1, 1.0]), "Relu1", rtol=0)
    check_close(qnn("Relu6", [x]), np.array([0, 0, 0, 0, 0.5, 1, 5, 6, 6.0]), "Relu6", rtol=0)


@pytest.mark.parametrize("dtype", ["UFIXED_POINT_8", "UFIXED_POINT_16", "SFIXED_POINT_8"])
@pytest.mark.parametrize(("op", "onnx_type"), [("Sigmoid", "Sigmoid"), ("Relu6", None), ("Tanh", "Tanh")])
def test_quantized_activation_is_within_one_step_of_onnx(op, onnx_type, dtype):
    """Input quantized, the reference run on its dequantized values; its quantized result and
    onnxruntime's (float32 on the same values) quantize within one step of each other."""
    x = uniform((2, 5, 5, 3), -8, 8)
    ex = quant.encoding_for_range(-8, 8, dtype)
    rx = quant.dequantize(quant.quantize(x, ex, dtype), ex)
    independent = onnx_op(onnx_type) if onnx_type else clip(0.0, 6.0)
    want = independent(rx)
    got = reference.run(op, [rx], {})[0]
    eo = quant.encoding_for_range(float(want.min()), float(want.max()), dtype)
    diff = np.abs(quant.quantize(got, eo, dtype).astype(np.int64) - quant.quantize(want, eo, dtype).astype(np.int64))
    assert diff.max() <= 1, f"{op} {dtype}: quantized outputs differ by {diff.max()} steps"


# ---- Prelu ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x_shape", "slope_shape"),
    [
        ((2, 4, 4, 3), (3,)),  # per channel, NHWC
        ((2, 4, 4, 3), (1, 1, 3)),
        ((2, 4, 4, 3), (4, 1, 3)),
        ((2, 4, 4, 3), (2, 4, 4, 3)),
        ((2, 4, 4, 3), (1,)),
        ((5, 6), (6,)),
        ((7,), (7,)),
    ],
    ids=str,
)
@pytest.mark.parametrize("engine", ["onnxruntime", "onnx.reference"])
def test_prelu_broadcasts_the_slope_onto_the_input_like_onnx(x_shape, slope_shape, engine):
    x, slope = uniform(x_shape), uniform(slope_shape, -2, 2)
    want = onnx_op("PRelu", engine=engine)(x, slope)
    check_close(qnn("Prelu", [x, slope]), want, f"Prelu {x_shape} slope {slope_shape}")


def test_prelu_keeps_zero_and_scales_negatives():
    x, slope = np.array([-2.0, 0.0, 3.0]), np.array([0.5, 0.5, 0.5])
    check_close(qnn("Prelu", [x, slope]), np.array([-1.0, 0.0, 3.0]), "Prelu", rtol=0)


def test_prelu_slope_does_not_broadcast_the_input():
    # seed 10066: only in[1] broadcasts onto in[0]; a slope larger than the input is an error
    with pytest.raises(ValueError, match="does not broadcast"):
        qnn("Prelu", [np.zeros((3,)), np.zeros((2, 3))])


# ---- Softmax, LogSoftmax -------------------------------------------------------------------------


@st.composite
def tensor_axis_beta(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    axis = draw(st.integers(0, len(shape) - 1))
    beta = draw(st.sampled_from([1.0, 0.5, 2.0, -1.0, 0.1]))
    return shape, axis, beta


@pytest.mark.parametrize(("op", "onnx_type"), [("Softmax", "Softmax"), ("LogSoftmax", "LogSoftmax")])
@SETTINGS
@given(case=tensor_axis_beta())
def test_softmax_family_matches_onnx_on_beta_scaled_logits(op, onnx_type, case):
    # seed 8018 and NNAPI SOFTMAX: the op is the ONNX op applied to beta * x along axis
    shape, axis, beta = case
    x = uniform(shape, -8, 8)
    want = onnx_op(onnx_type, axis=axis)(np.float32(beta) * x)
    check_close(qnn(op, [x], {"axis": axis, "beta": beta}), want, f"{op} {shape} axis={axis} beta={beta}")


def test_softmax_default_axis_is_the_last_and_default_beta_is_one():
    # seed 11954 (axis N-1) and 11966 (beta 1.0)
    x = uniform((2, 3, 4))
    check_close(qnn("Softmax", [x]), onnx_op("Softmax", axis=2)(x), "Softmax with spec defaults")


def test_log_softmax_requires_an_axis():
    with pytest.raises(ValueError, match="axis"):
        qnn("LogSoftmax", [uniform((2, 3))])


def test_softmax_matches_onnx_reference_evaluator():
    x = uniform((3, 4, 5))
    want = onnx_op("Softmax", axis=1, engine="onnx.reference")(x)
    check_close(qnn("Softmax", [x], {"axis": 1, "beta": 1.0}), want, "Softmax axis 1 vs onnx.reference")


def test_softmax_is_stable_for_large_logits():
    x = np.array([[1000.0, 1000.0, -1000.0]])
    check_close(qnn("Softmax", [x], {"axis": 1, "beta": 1.0}), np.array([[0.5, 0.5, 0.0]]), "Softmax", atol=0)
    check_close(
        qnn("LogSoftmax", [x], {"axis": 1}),
        np.array([[-math.log(2), -math.log(2), -2000 - math.log(2)]]),
        "LogSoftmax",
        rtol=1e-12,
    )


# ---- MaskedSoftmax -------------------------------------------------------------------------------


def test_masked_softmax_uncompressed_adds_the_mask_per_batch_before_softmax():
    # seed 8760-8774: the mask is additive, (boolean - 1) * 10000, broadcast over height and width
    x = uniform((2, 3, 4, 5), -4, 4)
    boolean = (RNG.random((2, 5)) < 0.7).astype(np.float32)
    boolean[:, 0] = 1  # every row keeps one position
    mask = (boolean - 1) * 10000
    want = onnx_op("Softmax", axis=-1)(x + mask[:, None, None, :])
    got = qnn("MaskedSoftmax", [x, mask], {"mode": UNCOMPRESSED})
    check_close(got, want, "MaskedSoftmax UNCOMPRESSED")
    assert np.all(got[np.broadcast_to(boolean[:, None, None, :] == 0, got.shape)] < 1e-30), "masked positions ~ 0"


def test_masked_softmax_mode_defaults_to_uncompressed():
    x, mask = uniform((1, 2, 2, 3)), np.array([[0.0, -10000.0, 0.0]], np.float32)
    check_close(
        qnn("MaskedSoftmax", [x, mask]),
        qnn("MaskedSoftmax", [x, mask], {"mode": UNCOMPRESSED}),
        "MaskedSoftmax default mode",
        rtol=0,
    )


def _block_diagonal_mask(lengths: list[int], channel: int) -> np.ndarray:
    """The compressed mask written out as an additive one, position by position."""
    owner = []
    for s, n in enumerate(lengths):
        owner += [s] * n
    owner += [-1] * (channel - len(owner))
    return np.array([[0.0 if owner[i] == owner[j] != -1 else -1e9 for j in range(channel)] for i in range(channel)])


@pytest.mark.parametrize("lengths", [[[1, 3, 4]], [[8]], [[2, 2, 2, 2]], [[3, 5], [1, 7]]], ids=str)
def test_masked_softmax_compressed_is_softmax_within_each_packed_sequence(lengths):
    # seed 8777-8811: lengths [1, 3, 4] pack three sequences along width and channel (width == channel)
    batch, channel = len(lengths), 8
    x = uniform((batch, 2, channel, channel), -4, 4)
    additive = np.stack([_block_diagonal_mask(row, channel) for row in lengths])[:, None]
    want = onnx_op("Softmax", axis=-1)(x + additive)
    got = qnn("MaskedSoftmax", [x, np.array(lengths, np.float32)], {"mode": COMPRESSED})
    check_close(got, want, f"MaskedSoftmax COMPRESSED {lengths}")


def test_masked_softmax_compressed_hand_values():
    # lengths [1, 2] on width = channel = 3, all logits 0 except x[.., 2, 1] = ln 3:
    # row 0 is sequence 0 alone -> [1, 0, 0]; rows 1, 2 are sequence 1 -> uniform over columns 1, 2,
    # except row 2 where column 1 weighs 3: [0, 3/4, 1/4]
    x = np.zeros((1, 1, 3, 3))
    x[0, 0, 2, 1] = math.log(3)
    got = qnn("MaskedSoftmax", [x, np.array([[1, 2]])], {"mode": COMPRESSED})
    want = np.array([[[[1, 0, 0], [0, 0.5, 0.5], [0, 0.75, 0.25]]]])
    check_close(got, want, "MaskedSoftmax COMPRESSED [1, 2]", rtol=1e-12, atol=1e-15)


def test_masked_softmax_compressed_padding_rows_are_zero():
    # decision MaskedSoftmax (seed 8811): lengths summing to less than channel leave rows with no
    # column to attend to; they output 0
    x = uniform((1, 1, 4, 4))
    got = qnn("MaskedSoftmax", [x, np.array([[1, 2]])], {"mode": COMPRESSED})
    assert np.all(got[0, 0, 3] == 0) and np.all(got[0, 0, :3, 3] == 0), "padding row and column are zero"
    np.testing.assert_allclose(got[0, 0, :3].sum(axis=-1), 1.0, err_msg="valid rows sum to 1")


def test_masked_softmax_compressed_rejects_lengths_beyond_channel():
    with pytest.raises(ValueError, match="exceed channel"):
        qnn("MaskedSoftmax", [uniform((1, 1, 3, 3)), np.array([[2, 2]])], {"mode": COMPRESSED})


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_hard_sigmoid_model_writes_the_result_on_a_unit_grid() -> None:
    """alpha 0.2, beta 0.5: hard_sigmoid(0) = 0.5 written as code 0.5 x 65535 of a [0, 8] grid is 4.0; a saturated
    input gives the grid's top, 8."""
    from tests.reference_helpers import case, modelled

    enc = ([8 / 65535], [0])
    x = ("UFIXED_POINT_16", np.array([0, 65535], np.uint16), ([40 / 65535], [0]))  # 0 and 40
    c = case("ElementWiseNeuron", [x], {"operation": 2, "alpha": 0.2, "beta": 0.5}, [("UFIXED_POINT_16", (2,), enc)])
    np.testing.assert_allclose(modelled(c, "result-on-a-unit-grid")[0], [4.0, 8.0], atol=1e-3)


def test_sigmoid_model_puts_the_result_on_the_eps_fixed_grid() -> None:
    """sigmoid(0) = 0.5 on the EP's UFIXED_POINT_16 grid (2^-16 from 0) is code 32768, which out[0]'s own grid (scale
    2^-17, offset 0) reads as 0.25; tanh(0) on the UFIXED_POINT_16 grid around 32768 is code 32768, read as 0.25 too."""
    from tests.reference_helpers import case, modelled

    enc_in, enc_out = ([2.0**-10], [-32768]), ([2.0**-17], [0])
    x = ("UFIXED_POINT_16", np.array([32768], np.uint16), enc_in)  # real 0
    for op in ("Sigmoid", "Tanh"):
        c = case(op, [x], {}, [("UFIXED_POINT_16", (1,), enc_out)])
        np.testing.assert_allclose(modelled(c, "result-on-the-eps-fixed-grid")[0], [0.25])


def test_softplus_model_reverts_to_the_input_at_the_threshold() -> None:
    """beta 0.5, threshold 1: x = 2 (x beta == threshold) comes back 2 where the spec has 2 ln(e + 1) = 2.6265; x = 1.75
    and 2.25 stay the reference's. A case with no element where the backend's test and the spec's differ does not show
    the bug and the model refuses it: threshold 0 (x = 0 stays ln 2 in both), and beta 0.1, which is float16 0.09998,
    so x = 5 is below threshold 0.5 for the backend as x beta = 0.5 is not above it for the spec."""
    from tests.reference_helpers import case, modelled, ref

    params = {"operation": 7, "beta": 0.5, "threshold": 1.0}
    x = np.array([1.75, 2.0, 2.25], np.float16)
    c = case("ElementWiseNeuron", [x], params, [("FLOAT_16", (3,))])
    np.testing.assert_allclose(modelled(c, "softplus-linear-from-threshold")[0],
                               [2 * np.log1p(np.exp(0.875)), 2.0, 2.25], rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose(ref("ElementWiseNeuron", [x.astype(np.float64)], params)[0][1], 2.6265, atol=1e-4)
    for beta, threshold, x in ((1.0, 0.0, [0.0, 5.0]), (0.1, 0.5, [5.0, 6.0])):
        c = case("ElementWiseNeuron", [np.array(x, np.float16)], {"operation": 7, "beta": beta, "threshold": threshold},
                 [("FLOAT_16", (2,))])  # fmt: skip
        with pytest.raises(ValueError, match="differ"):
            modelled(c, "softplus-linear-from-threshold")
