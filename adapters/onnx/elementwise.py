"""Lowerings of the element-wise, activation and conversion families.

Most QNN ops here are one ONNX node with renamed attributes, so a handful of factories (unary, binary,
comparison, logical, clip, softmax) cover them. The ``operation`` enums of ElementWiseUnary / Binary /
Neuron map member names (the spec's, opdefs/<Op>.yaml) to the same entries the dedicated ops use, so
the two spellings cannot drift apart. A few ops have no single ONNX node (Rsqrt, SquaredDifference,
Softplus with beta, float Mod ...): their lowering is a short composite, still in the same table.
"""

from __future__ import annotations

from typing import Any

from onnx import TensorProto as T

from adapters.onnx.builder import FLOAT_TYPES, INT_TYPES, Builder, Lowering, Unlowerable
from opdefs import dtypes

FAMILIES = frozenset({"elementwise", "activation", "conversion"})


def unary(onnx_op: str, **attrs: Any) -> Lowering:
    return lambda b: [b.node(onnx_op, [b.input(0)], **attrs)]


def binary(onnx_op: str, **attrs: Any) -> Lowering:
    return lambda b: [b.node(onnx_op, [b.input(0), b.input(1)], **attrs)]


def comparison(onnx_op: str, negate: bool = False) -> Lowering:
    def lower(b: Builder) -> list[str]:
        out = b.node(onnx_op, [b.input(0), b.input(1)], out_type=T.BOOL)
        return [b.converts(b.node("Not", [out], out_type=T.BOOL) if negate else out)]

    return lower


def logical(onnx_op: str) -> Lowering:
    def lower(b: Builder) -> list[str]:
        operands = [b.to_bool(b.input(i)) for i in range(1 if onnx_op == "Not" else 2)]
        return [b.converts(b.node(onnx_op, operands, out_type=T.BOOL))]

    return lower


def clip(lo: float | None, hi: float | None) -> Lowering:
    def lower(b: Builder) -> list[str]:
        x = b.input(0)
        lo_, hi_ = lo, hi
        if lo_ is None:
            lo_, hi_ = b.p.float("min_value"), b.p.float("max_value")
        return [b.node("Clip", [x, b.like(lo_, x), b.like(hi_, x)])]

    return lower


def _rsqrt(b: Builder) -> list[str]:
    return [b.node("Reciprocal", [b.node("Sqrt", [b.input(0)])])]


def _squared_difference(b: Builder) -> list[str]:
    d = b.node("Sub", [b.input(0), b.input(1)])
    return [b.node("Mul", [d, d])]


def _floor_div(b: Builder) -> list[str]:
    """floor(in0 / in1) on the real quotient: integer operands go through double, as ONNX's integer
    Div truncates toward zero."""
    x, y = b.input(0), b.input(1)
    if b.types[x] in INT_TYPES and b.types[y] in INT_TYPES:
        return [b.converts(b.node("Floor", [b.node("Div", [b.cast(x, T.DOUBLE), b.cast(y, T.DOUBLE)])]))]
    return [b.node("Floor", [b.node("Div", [x, y])])]


def _mod(b: Builder) -> list[str]:
    """Sign of the divisor. ONNX Mod does it for integers only (fmod=0 is invalid on floats), so
    floats take in0 - in1 * floor(in0 / in1)."""
    x, y = b.input(0), b.input(1)
    if b.types[x] not in FLOAT_TYPES:
        return [b.node("Mod", [x, y], fmod=0)]
    return [b.node("Sub", [x, b.node("Mul", [y, b.node("Floor", [b.node("Div", [x, y])])])])]


def _softplus(b: Builder, beta: float, threshold: float) -> list[str]:
    x = b.input(0)
    if beta == 1.0 and threshold < 0:
        return [b.node("Softplus", [x])]
    bx = b.node("Mul", [x, b.like(beta, x)])
    y = b.node("Div", [b.node("Softplus", [bx]), b.like(beta, x)])
    if threshold >= 0:  # the QNN reversion to x above the threshold; negative disables it
        y = b.node("Where", [b.node("Greater", [bx, b.like(threshold, x)], out_type=T.BOOL), x, y])
    return [y]


def _elementwise_softplus(b: Builder) -> list[str]:
    return _softplus(b, b.p.float("beta"), b.p.float("threshold"))


def _elu(b: Builder) -> list[str]:
    return [b.node("Elu", [b.input(0)], alpha=b.p.float("alpha"))]


def _select(b: Builder) -> list[str]:
    a, c = b.input(1), b.input(2)
    return [b.node("Where", [b.to_bool(b.input(0)), a, c], out_type=b.types[a])]


def _is_inf(b: Builder) -> list[str]:
    return [b.node("IsInf", [b.input(0)], out_type=T.BOOL, detect_negative=int(b.p.bool("detect_negative")),
                   detect_positive=int(b.p.bool("detect_positive")))]  # fmt: skip


# ElementWiseUnary / ElementWiseBinary ``operation`` members (the spec's names) -> lowering.
UNARY: dict[str, Lowering] = {
    "ABS": unary("Abs"), "ASIN": unary("Asin"), "ATAN": unary("Atan"), "CEIL": unary("Ceil"), "COS": unary("Cos"),
    "EXP": unary("Exp"), "FLOOR": unary("Floor"), "LOG": unary("Log"), "NEG": unary("Neg"), "NOT": logical("Not"),
    "RECIPROCAL": unary("Reciprocal"), "ROUND": unary("Round"), "RSQRT": _rsqrt, "SIGN": unary("Sign"),
    "SIN": unary("Sin"), "SQRT": unary("Sqrt"),
}  # fmt: skip
BINARY: dict[str, Lowering] = {
    "ADD": binary("Add"), "AND": logical("And"), "DIVIDE": binary("Div"), "EQUAL": comparison("Equal"),
    "FLOOR_DIV": _floor_div, "FMOD": binary("Mod", fmod=1), "GREATER": comparison("Greater"),
    "GREATER_EQUAL": comparison("GreaterOrEqual"), "LESS": comparison("Less"), "LESS_EQUAL": comparison("LessOrEqual"),
    "MAXIMUM": binary("Max"), "MINIMUM": binary("Min"), "MOD": _mod, "MULTIPLY": binary("Mul"),
    "NOT_EQUAL": comparison("Equal", negate=True), "OR": logical("Or"), "POWER": binary("Pow"),
    "SQUARED_DIFFERENCE": _squared_difference, "SUBTRACT": binary("Sub"), "XOR": logical("Xor"),
}  # fmt: skip


def _hard_sigmoid(b: Builder) -> list[str]:
    return [b.node("HardSigmoid", [b.input(0)], alpha=b.p.float("alpha"), beta=b.p.float("beta"))]


# ElementWiseNeuron ``operation`` members -> lowering; alpha / beta arrive with their per-operation
# defaults already resolved from the spec.
NEURON: dict[str, Lowering] = {
    "ELU": _elu, "GELU": unary("Gelu"), "HARD_SIGMOID": _hard_sigmoid, "HARD_SWISH": unary("HardSwish"),
    "RELU": unary("Relu"), "RELU_MIN_MAX": clip(None, None), "SIGMOID": unary("Sigmoid"),
    "SOFTPLUS": _elementwise_softplus, "TANH": unary("Tanh"),
}  # fmt: skip


def by_operation(table: dict[str, Lowering], what: str) -> Lowering:
    def lower(b: Builder) -> list[str]:
        member = b.p.member("operation")
        if member not in table:
            raise Unlowerable(f"{what} operation {member}")
        return table[member](b)

    return lower


def softmax(onnx_op: str) -> Lowering:
    """QNN's beta scales the logits first; ONNX Softmax has no beta, so a Mul precedes it when beta != 1."""

    def lower(b: Builder) -> list[str]:
        x = b.input(0)
        axis, beta = b.p.int("axis"), b.p.float("beta")
        if beta != 1.0:
            x = b.node("Mul", [x, b.like(beta, x)])
        return [b.node(onnx_op, [x], axis=axis)]

    return lower


def _logit(b: Builder) -> list[str]:
    """ln(z / (1 - z)) (the Logit decision: the seed's z - 1 read as 1 - z); z clamped to [eps, 1 - eps] by Clip
    only when the optional in[1] gives eps."""
    z = b.input(0)
    one = b.like(1.0, z)
    if b.has(1):
        eps = b.cast(b.node("Reshape", [b.input(1), b.i64([])]), b.types[z])
        z = b.node("Clip", [z, eps, b.node("Sub", [one, eps])])
    return [b.node("Log", [b.node("Div", [z, b.node("Sub", [one, z])])])]


def _identity(b: Builder) -> list[str]:
    """Cast/Convert/Quantize/Dequantize: the same real value in another representation; the output
    conversion (Cast, or QuantizeLinear with the output's encoding) is the whole op."""
    x = b.input(0)
    t = b.case.outputs[0]
    if b.case.inputs[0].dtype == t.dtype and not dtypes.get(t.dtype).quantized:
        return [b.node("Identity", [x])]
    return [b.converts(x)]


# The dedicated ops (ElementWiseAbs, ElementWiseAdd, Relu6 ...) are lowered as the general op their spec's
# ``computed_as`` names (adapters.onnx.lower), so they have no entry here.
LOWERINGS: dict[str, Lowering] = {
    "ElementWiseUnary": by_operation(UNARY, "ElementWiseUnary"),
    "IsInf": _is_inf, "IsNan": lambda b: [b.node("IsNaN", [b.input(0)], out_type=T.BOOL)],
    "ElementWiseBinary": by_operation(BINARY, "ElementWiseBinary"),
    "ElementWiseSelect": _select,
    "ElementWiseNeuron": by_operation(NEURON, "ElementWiseNeuron"),
    "Prelu": binary("PRelu"), "Softmax": softmax("Softmax"), "LogSoftmax": softmax("LogSoftmax"), "Logit": _logit,
    "Cast": _identity, "Convert": _identity, "Quantize": _identity, "Dequantize": _identity,
}  # fmt: skip
