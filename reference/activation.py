"""Activations: ElementWiseNeuron and the dedicated activation ops, Prelu, and the softmax family.

The dedicated ops (Elu, Gelu, Relu6 ...) are ElementWiseNeuron with the operation and parameters their
spec's ``computed_as`` fixes (reference.run), so a dedicated op and its Neuron variant cannot drift apart.
Each formula is the seed's, computed in float64 in a numerically stable arrangement of the same mathematics.

The tables are keyed by the member names of ElementWiseNeuron's ``operation`` enum; the numbers live
only in opdefs/ElementWiseNeuron.yaml. Its alpha and beta have per-operation defaults (seed 4582-4602),
which reference.run fills in from the spec (opdefs.OpDef.resolved_params) like every other default.

Every reading taken where the seed is silent is recorded in opdefs/<Op>.yaml under `decisions:`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import opdefs
from reference import register
from reference.models import register_model

Array = np.ndarray


_erf = np.frompyfunc(math.erf, 1, 1)


def elu(x: Array, alpha: float) -> Array:
    """max(0, x) + min(0, alpha (e^x - 1)), literally (4444, 5623): with a negative alpha this is
    not ONNX's piecewise Elu (opdefs YAML decisions)."""
    return np.maximum(0.0, x) + np.minimum(0.0, alpha * np.expm1(x))


def gelu(x: Array) -> Array:
    """The exact (erf) form, not the tanh approximation (4453, 6329)."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def hard_sigmoid(x: Array, alpha: float, beta: float) -> Array:
    return np.maximum(0.0, np.minimum(1.0, alpha * x + beta))


def hard_swish(x: Array) -> Array:
    return x * np.maximum(0.0, np.minimum(6.0, x + 3.0)) / 6.0


def relu_min_max(x: Array, min_value: float, max_value: float) -> Array:
    return np.minimum(max_value, np.maximum(min_value, x))


def sigmoid(x: Array) -> Array:
    # 1 / (1 + e^-x) written as exp(-log(1 + e^-x)): no overflow at either end.
    return np.exp(-np.logaddexp(0.0, -x))


def softplus(x: Array, beta: float, threshold: float) -> Array:
    """(1/beta) ln(1 + e^(beta x)), reverting to x where x*beta > threshold; a negative threshold
    disables the reversion (4504-4510, 5109, 5150-5153)."""
    y = np.logaddexp(0.0, beta * x) / beta
    if threshold >= 0:
        y = np.where(x * beta > threshold, x, y)
    return y


def _neuron_param(params: dict[str, Any], name: str, operation: str) -> float:
    """alpha / beta for ``operation``: reference.run has already put the operation's default in
    place of a missing value, so a value that is still not a plain number means there is none."""
    v = params.get(name)
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, np.ndarray) and v.size == 1:
        return float(v.reshape(-1)[0])
    raise ValueError(f"ElementWiseNeuron: {name} is not a parameter of {operation}")


def _required(op: str, params: dict[str, Any], name: str) -> float:
    v = params.get(name)
    if v is None:
        raise ValueError(f"{op}: {name} must be provided")
    return float(np.asarray(v, dtype=np.float64).reshape(-1)[0])


# Each entry: operation -> function(x, params) with params already holding what the op needs.
NEURON: dict[str, Callable[[Array, dict[str, Any]], Array]] = {
    "ELU": lambda x, p: elu(x, _neuron_param(p, "alpha", "ELU")),
    "GELU": lambda x, p: gelu(x),
    "HARD_SIGMOID": lambda x, p: hard_sigmoid(
        x, _neuron_param(p, "alpha", "HARD_SIGMOID"), _neuron_param(p, "beta", "HARD_SIGMOID")
    ),
    "HARD_SWISH": lambda x, p: hard_swish(x),
    "RELU": lambda x, p: np.maximum(0.0, x),
    "RELU_MIN_MAX": lambda x, p: relu_min_max(
        x, _required("ElementWiseNeuron", p, "min_value"), _required("ElementWiseNeuron", p, "max_value")
    ),
    "SIGMOID": lambda x, p: sigmoid(x),
    "SOFTPLUS": lambda x, p: softplus(x, _neuron_param(p, "beta", "SOFTPLUS"), float(p.get("threshold", -1.0))),
    "TANH": lambda x, p: np.tanh(x),
}

def _input(op: str, inputs: Sequence[Array | None], i: int = 0) -> Array:
    if len(inputs) <= i or inputs[i] is None:
        raise ValueError(f"{op}: input {i} is missing")
    return np.asarray(inputs[i], dtype=np.float64)


@register("ElementWiseNeuron", verified_by="onnxruntime")
def neuron(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    """The dedicated ops (Elu, Relu6, Sigmoid ...) come here too, with the operation and fixed parameters
    their spec's ``computed_as`` names (reference.run)."""
    x = _input(op, inputs)
    if params.get("operation") is None:
        raise ValueError(f"{op}: the mandatory parameter 'operation' is missing")
    operation = opdefs.load(op).enum_name("operation", params["operation"])
    with np.errstate(over="ignore"):
        return [NEURON[operation](x, params)]


@register("Prelu", verified_by="onnxruntime")
def prelu(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    """x for x >= 0, slope * x otherwise; the slope broadcasts one way, onto in[0] (10066)."""
    x, slope = _input(op, inputs, 0), _input(op, inputs, 1)
    try:
        slope = np.broadcast_to(slope, x.shape)
    except ValueError:
        raise ValueError(f"{op}: slope shape {slope.shape} does not broadcast onto input {x.shape}") from None
    return [np.where(x >= 0, x, slope * x)]


def _axis(op: str, params: dict[str, Any], ndim: int) -> int:
    """UINT_32 axis in [0, N-1]; Softmax's symbolic default N-1 (11954) is resolved by reference.run
    from the spec, so a missing axis here is LogSoftmax's mandatory one."""
    v = params.get("axis")
    if v is None or isinstance(v, str):
        raise ValueError(f"{op}: the mandatory parameter 'axis' is missing")
    axis = int(v)
    if not 0 <= axis < ndim:
        raise ValueError(f"{op}: axis {axis} outside [0, {ndim - 1}]")
    return axis


def log_softmax(x: Array, axis: int, beta: float = 1.0) -> Array:
    """beta x - log(sum(exp(beta x), axis)) (8018)."""
    z = beta * x
    m = np.max(z, axis=axis, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True))


def softmax(x: Array, axis: int, beta: float = 1.0) -> Array:
    z = beta * x
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@register("Softmax", "LogSoftmax", verified_by="onnxruntime")
def softmax_family(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    x = _input(op, inputs)
    axis = _axis(op, params, x.ndim)
    beta = float(params["beta"])
    fn = log_softmax if op == "LogSoftmax" else softmax
    return [fn(x, axis, beta)]


def compressed_mask(lengths: Array, channel: int) -> Array:
    """The [channel, channel] additive mask a COMPRESSED row of sequence lengths stands for.

    The sequences lie packed one after another along width and channel (width == channel, 8756);
    position i may attend to position j only when both lie in the same sequence, so the mask is
    block diagonal: 0 inside the blocks, -inf elsewhere. Rows past the last sequence (padding)
    see no valid column at all.
    """
    mask = np.full((channel, channel), -np.inf)
    start = 0
    for n in np.rint(np.asarray(lengths, dtype=np.float64)).astype(np.int64).reshape(-1):
        if n < 0 or start + n > channel:
            raise ValueError(f"MaskedSoftmax: sequence lengths {lengths} exceed channel {channel}")
        mask[start : start + n, start : start + n] = 0.0
        start += n
    return mask


@register("MaskedSoftmax", verified_by="onnxruntime")
def masked_softmax(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    """softmax over channel of in[0] + mask, the mask broadcast per batch over height and width.

    UNCOMPRESSED: in[1] is [batch, channel], already additive (0 keeps, a large negative value
    masks, 8768-8774). COMPRESSED: in[1] is [batch, sequences] of lengths, see compressed_mask.
    A row with no unmasked position outputs zeros (opdefs YAML decisions).
    """
    x, m = _input(op, inputs, 0), _input(op, inputs, 1)
    if x.ndim != 4 or m.ndim != 2 or m.shape[0] != x.shape[0]:
        raise ValueError(f"{op}: needs in[0] [batch, h, w, channel], in[1] [batch, M]; got {x.shape}, {m.shape}")
    batch, _, width, channel = x.shape
    mode = opdefs.load(op).enum_name("mode", params["mode"])
    if mode == "UNCOMPRESSED":
        if m.shape[1] != channel:
            raise ValueError(f"{op}: UNCOMPRESSED mask has {m.shape[1]} columns, channel is {channel}")
        additive = m[:, None, None, :]
    else:
        if width != channel:
            raise ValueError(f"{op}: COMPRESSED mode needs width == channel, got {width} and {channel}")
        additive = np.stack([compressed_mask(m[b], channel) for b in range(batch)])[:, None, :, :]
    z = x + additive
    top = np.max(z, axis=-1, keepdims=True)
    e = np.exp(z - np.where(np.isfinite(top), top, 0.0))
    total = np.sum(e, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0, e / total, 0.0)
    return [out]


@register_model("ElementWiseNeuron", name="result-on-a-unit-grid")
def neuron_result_on_a_unit_grid(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_16 HARD_SIGMOID (finding neuron-hard-sigmoid-u16-unit-grid): the result, in
    [0, 1], is written as codes of a [0, 1] grid whatever out[0]'s encoding says, so it lands stretched over out[0]'s
    whole range (0.5 comes back as 4.0 on a [0, 8] grid, and a [0, 1] grid is right)."""
    from cases.quant import dequantize
    from reference.expected import expected

    out = case.outputs[0]
    d = opdefs.dtypes.get(out.dtype)
    codes = np.round(np.clip(expected(case)[0], 0.0, 1.0) * (d.qmax - d.qmin)) + d.qmin
    return [dequantize(codes, out.encoding)]


def softplus_arguments(case: Any) -> tuple[np.ndarray, float, float]:
    """in[0], beta and threshold of an ElementWiseNeuron SOFTPLUS case or an ElementWiseSoftplus case (ValueError for
    another operation): what the SOFTPLUS models read (a negative threshold: the linear branch is off)."""
    from reference import member
    from reference.expected import arguments

    inputs, params = arguments(case)
    if case.op != "ElementWiseSoftplus" and member(case.op, params, "operation") != "SOFTPLUS":
        raise ValueError("the model is SOFTPLUS's")
    x = np.asarray(inputs[0], dtype=np.float64)
    return x, _neuron_param(params, "beta", "SOFTPLUS"), float(params.get("threshold", -1.0))


@register_model("ElementWiseNeuron", name="softplus-linear-from-threshold")
def neuron_softplus_linear_from_threshold(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 SOFTPLUS (finding neuron-softplus-linear-at-threshold): out[0] is in[0] where
    in[0] x beta >= threshold and in[0] x beta > 0, with beta rounded to float16 (the product taken exactly), where the
    spec reverts to in[0] only where in[0] x beta > threshold (line 4509); ln(e^(beta x) + 1) / beta elsewhere. At
    x = 2, beta 0.5, threshold 1 that is 2 for 2.6265; at threshold 0, x = 0 stays ln 2 / beta; beta 0.1 as float16
    (0.09998) puts x = 5 below threshold 0.5. A case with no element where the two tests differ does not show the
    bug: the model refuses it (it then covers nothing), so plain inaccuracy stays the accuracy findings'."""
    x, beta, threshold = softplus_arguments(case)
    if threshold < 0:
        raise ValueError("threshold disabled (negative): nothing to compare")
    product = x * float(np.float16(beta))
    linear = (product >= threshold) & (product > 0)
    if not np.any(linear != (x * beta > threshold)):
        raise ValueError("no element where the backend's threshold test and the spec's differ")
    return [np.where(linear, x, np.logaddexp(0.0, beta * x) / beta)]


# The output grids the ONNX Runtime QNN EP puts on 16-bit Sigmoid and Tanh whatever the model's QuantizeLinear says
# (finding ep-sigmoid-tanh-16bit-output-encoding), measured with onnxruntime-qnn 2.7.0: (scale, QNN offset).
_EP_FIXED_GRIDS = {
    ("Sigmoid", "UFIXED_POINT_16"): (2.0**-16, 0),
    ("Sigmoid", "SFIXED_POINT_16"): (2.0**-15, 0),
    ("Tanh", "UFIXED_POINT_16"): (2.0**-15, -32768),
    ("Tanh", "SFIXED_POINT_16"): (2.0**-15, 0),
}


@register_model("Sigmoid", "Tanh", "ElementWiseNeuron", name="result-on-the-eps-fixed-grid")
def result_on_the_eps_fixed_grid(case: Any) -> list[np.ndarray]:
    """The ONNX Runtime QNN EP's 16-bit Sigmoid and Tanh, and ElementWiseNeuron's SIGMOID and TANH, which reach it as
    the same ONNX ops (findings ep-sigmoid-tanh-16bit-output-encoding, ep-neuron-sigmoid-tanh-16bit-output-encoding):
    the output codes are the result on a fixed grid of the EP's (sigmoid: 2^-16 from 0 unsigned, 2^-15 from 0
    signed; tanh: 2^-15 around code 32768 unsigned, around 0 signed), read back through out[0]'s own encoding. Other
    configurations and operations were not measured: the model refuses them (it then covers nothing)."""
    from cases.case import Encoding
    from cases.quant import dequantize, quantize
    from reference.expected import expected

    out = case.outputs[0]
    op = case.op
    if op == "ElementWiseNeuron":  # its SIGMOID and TANH reach the EP as ONNX Sigmoid and Tanh
        from reference import member

        op = {"SIGMOID": "Sigmoid", "TANH": "Tanh"}.get(member(op, {k: p.value for k, p in case.params.items()},
                                                                "operation"), "")  # fmt: skip
    grid = _EP_FIXED_GRIDS.get((op, out.dtype))
    if grid is None or out.encoding is None:
        raise ValueError(f"{case.op} {out.dtype}: no measured EP grid")
    codes = quantize(expected(case)[0], Encoding((grid[0],), (grid[1],)), out.dtype)
    return [dequantize(codes, out.encoding)]


# --- models of deviations (reference.models) ------------------------------------------------------------------------

HTP_PAD_LANES = 32  # measured: see the model below


@register_model("LogSoftmax", name="unit-axis-sums-32-zero-lanes")
def log_softmax_unit_axis_sums_32_zero_lanes(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 LogSoftmax along an axis of size 1 (finding logsoftmax-f16-unit-axis-padded-lanes):
    where the spec's result is 0 (each element is the whole of its softmax), it returns beta x - ln(e^(beta x) + 32),
    as if its sum of exponentials took 32 more lanes holding 0. Measured on [1] and [4, 1] (axis 1): x = 0 gives
    -3.496 (ln 33), x = 1 gives -2.549, x = -3 gives -6.467, the same in every run."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    axis = _axis("LogSoftmax", params, x.ndim)
    if x.shape[axis] != 1:
        raise ValueError("the axis is longer than 1: another model")
    z = float(params["beta"]) * x
    return [z - np.log(np.exp(z) + HTP_PAD_LANES)]
