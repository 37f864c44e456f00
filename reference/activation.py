"""Activations: ElementWiseNeuron and the dedicated activation ops, Prelu, and the softmax family.

The ElementWiseNeuron ``operation`` enum and the dedicated ops (Elu, Gelu, Relu6 ...) share one
table of formulas, so a dedicated op and its Neuron variant cannot drift apart. Each formula is the
seed's, computed in float64 in a numerically stable arrangement of the same mathematics.

ElementWiseNeuron's alpha and beta have per-operation defaults (1.0 for ELU, 0.2 for HARD_SIGMOID;
0.5 for HARD_SIGMOID, 1.0 for SOFTPLUS: seed 4582-4602) that a flat spec default cannot express, so
reference.run cannot fill them; they are resolved here from the spec's per-operation table: a missing
or non-numeric value takes the operation's default.

Every reading taken where the seed is silent is recorded in opdefs/<Op>.yaml under `decisions:`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any

import numpy as np

from reference import register

Array = np.ndarray


class NeuronOperation(IntEnum):
    """ElementWiseNeuron ``operation`` values (seed lines 4561-4569)."""

    ELU = 0
    GELU = 1
    HARD_SIGMOID = 2
    HARD_SWISH = 3
    RELU = 4
    RELU_MIN_MAX = 5
    SIGMOID = 6
    SOFTPLUS = 7
    TANH = 8


class MaskedSoftmaxMode(IntEnum):
    """MaskedSoftmax ``mode`` values (seed lines 8828-8829)."""

    UNCOMPRESSED = 0
    COMPRESSED = 1


N = NeuronOperation


@functools.cache
def neuron_defaults() -> dict[str, dict[NeuronOperation, float]]:
    """ElementWiseNeuron's per-operation alpha / beta defaults, read from the op's spec, which holds
    them as ``default: {by_operation: {ELU: 1.0, ...}}`` (seed 4582-4583, 4601-4602)."""
    import opdefs

    params = opdefs.load("ElementWiseNeuron").params
    return {
        name: {NeuronOperation[k]: float(v) for k, v in params[name]["default"]["by_operation"].items()}
        for name in ("alpha", "beta")
    }


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


def _neuron_param(params: dict[str, Any], name: str, operation: NeuronOperation) -> float:
    """alpha / beta for ``operation``: the given value, else the operation's own default. A value
    that is not a plain number (None, or a per-operation table a spec loader may carry) counts as
    not given."""
    v = params.get(name)
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, np.ndarray) and v.size == 1:
        return float(v.reshape(-1)[0])
    try:
        return neuron_defaults()[name][operation]
    except KeyError:
        raise ValueError(f"ElementWiseNeuron: {name} is not a parameter of {operation.name}") from None


def _required(op: str, params: dict[str, Any], name: str) -> float:
    v = params.get(name)
    if v is None:
        raise ValueError(f"{op}: {name} must be provided")
    return float(np.asarray(v, dtype=np.float64).reshape(-1)[0])


# Each entry: operation -> function(x, params) with params already holding what the op needs.
NEURON: dict[NeuronOperation, Callable[[Array, dict[str, Any]], Array]] = {
    N.ELU: lambda x, p: elu(x, _neuron_param(p, "alpha", N.ELU)),
    N.GELU: lambda x, p: gelu(x),
    N.HARD_SIGMOID: lambda x, p: hard_sigmoid(
        x, _neuron_param(p, "alpha", N.HARD_SIGMOID), _neuron_param(p, "beta", N.HARD_SIGMOID)
    ),
    N.HARD_SWISH: lambda x, p: hard_swish(x),
    N.RELU: lambda x, p: np.maximum(0.0, x),
    N.RELU_MIN_MAX: lambda x, p: relu_min_max(
        x, _required("ElementWiseNeuron", p, "min_value"), _required("ElementWiseNeuron", p, "max_value")
    ),
    N.SIGMOID: lambda x, p: sigmoid(x),
    N.SOFTPLUS: lambda x, p: softplus(x, _neuron_param(p, "beta", N.SOFTPLUS), float(p.get("threshold", -1.0))),
    N.TANH: lambda x, p: np.tanh(x),
}

# Dedicated ops: the Neuron operation each one is, and the fixed parameters it implies. Params the
# dedicated op itself declares (Elu's alpha, ElementWiseSoftplus's beta/threshold, ReluMinMax's
# bounds) are passed through from the case.
DEDICATED: dict[str, tuple[NeuronOperation, dict[str, float]]] = {
    "Elu": (N.ELU, {}),
    "Gelu": (N.GELU, {}),
    "HardSwish": (N.HARD_SWISH, {}),
    "Relu": (N.RELU, {}),
    "Relu1": (N.RELU_MIN_MAX, {"min_value": -1.0, "max_value": 1.0}),
    "Relu6": (N.RELU_MIN_MAX, {"min_value": 0.0, "max_value": 6.0}),
    "ReluMinMax": (N.RELU_MIN_MAX, {}),
    "Sigmoid": (N.SIGMOID, {}),
    "ElementWiseSoftplus": (N.SOFTPLUS, {}),
    "Tanh": (N.TANH, {}),
}


def _input(op: str, inputs: Sequence[Array | None], i: int = 0) -> Array:
    if len(inputs) <= i or inputs[i] is None:
        raise ValueError(f"{op}: input {i} is missing")
    return np.asarray(inputs[i], dtype=np.float64)


@register("ElementWiseNeuron", *DEDICATED, verified_by="onnxruntime")
def neuron(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    x = _input(op, inputs)
    if op in DEDICATED:
        operation, fixed = DEDICATED[op]
        params = {**params, **fixed}
    else:
        try:
            operation = NeuronOperation(int(params["operation"]))
        except (KeyError, ValueError):
            raise ValueError(f"{op}: operation {params.get('operation')!r} is not one of 0..8") from None
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
    """UINT_32 axis in [0, N-1]; Softmax's symbolic default N-1 (11954) resolved here."""
    v = params.get("axis")
    if v is None or isinstance(v, str):
        if op == "LogSoftmax":
            raise ValueError("LogSoftmax: the mandatory parameter 'axis' is missing")
        return ndim - 1
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
    mode = MaskedSoftmaxMode(int(params["mode"]))
    if mode is MaskedSoftmaxMode.UNCOMPRESSED:
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
