"""Element-wise unary and binary ops, ElementWiseSelect, IsInf/IsNan and Logit.

One table per arity maps an operation to its numpy function. The dedicated ops (ElementWiseAbs,
ElementWiseAdd ...) and the ``operation`` enums of ElementWiseUnary / ElementWiseBinary both look up
the same table, so a dedicated op and its enum variant cannot drift apart. The tables are keyed by
the enum's member names; their numbers live only in opdefs/ElementWiseUnary.yaml / ElementWiseBinary.yaml.

Values arrive real (quantized inputs already dequantized; integer-typed data as integer-valued
floats). Results are the exact real results in float64; wrapping or saturating to the output type is
the comparator's business. The only place where the integer type changes the arithmetic is
DIVIDE, whose quotient is floored when the declared output is an integer type.

Every reading taken where the seed is silent is recorded in opdefs/<Op>.yaml under `decisions:`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

import numpy as np

import opdefs
from reference import register
from reference.models import register_combination, register_model


class Kind(Enum):
    """The spec's classification of an operation (seed 3540-3544, 5527-5530): it decides the output's type."""

    NUMERICAL = "numerical"
    COMPARISON = "comparison"
    LOGICAL = "logical"


Array = np.ndarray


def _rsqrt(x: Array) -> Array:
    return 1.0 / np.sqrt(x)


# Numerical unary operations. ROUND is numpy's rint: ties to even, as the spec demands (4875, 5441).
UNARY: dict[str, Callable[[Array], Array]] = {
    "ABS": np.abs,
    "ASIN": np.arcsin,
    "ATAN": np.arctan,
    "CEIL": np.ceil,
    "COS": np.cos,
    "EXP": np.exp,
    "FLOOR": np.floor,
    "LOG": np.log,
    "NEG": np.negative,
    "RECIPROCAL": np.reciprocal,
    "ROUND": np.rint,
    "RSQRT": _rsqrt,
    "SIGN": np.sign,
    "SIN": np.sin,
    "SQRT": np.sqrt,
}

# NOT is the one logical unary operation: "non-zero values are treated as true" (4680).
LOGICAL_UNARY: dict[str, Callable[[Array], Array]] = {"NOT": lambda x: x == 0}

def _squared_difference(a: Array, b: Array) -> Array:
    d = a - b
    return d * d


def _floor_div(a: Array, b: Array) -> Array:
    # The spec's formula, floor(in0 / in1) (3870), and TensorFlow's for floats; not numpy's
    # floor_divide, which floors the exact quotient of the binary values (1 // 0.1 == 9).
    return np.floor(a / b)


# (kind, function) per binary operation. MOD takes the divisor's sign (numpy mod, 3406, 4281), FMOD
# the dividend's (C fmod, 3332, 3917).
BINARY: dict[str, tuple[Kind, Callable[[Array, Array], Array]]] = {
    "ADD": (Kind.NUMERICAL, np.add),
    "DIVIDE": (Kind.NUMERICAL, np.true_divide),
    "FLOOR_DIV": (Kind.NUMERICAL, _floor_div),
    "FMOD": (Kind.NUMERICAL, np.fmod),
    "MAXIMUM": (Kind.NUMERICAL, np.maximum),
    "MINIMUM": (Kind.NUMERICAL, np.minimum),
    "MOD": (Kind.NUMERICAL, np.mod),
    "MULTIPLY": (Kind.NUMERICAL, np.multiply),
    "POWER": (Kind.NUMERICAL, np.power),
    "SQUARED_DIFFERENCE": (Kind.NUMERICAL, _squared_difference),
    "SUBTRACT": (Kind.NUMERICAL, np.subtract),
    "EQUAL": (Kind.COMPARISON, np.equal),
    "GREATER": (Kind.COMPARISON, np.greater),
    "GREATER_EQUAL": (Kind.COMPARISON, np.greater_equal),
    "LESS": (Kind.COMPARISON, np.less),
    "LESS_EQUAL": (Kind.COMPARISON, np.less_equal),
    "NOT_EQUAL": (Kind.COMPARISON, np.not_equal),
    "AND": (Kind.LOGICAL, np.logical_and),
    "OR": (Kind.LOGICAL, np.logical_or),
    "XOR": (Kind.LOGICAL, np.logical_xor),
}

# How a quotient becomes an integer when the declared output type is an integer type. The spec is
# silent (3678-3690); NNAPI DIV, which the spec cites, floors (opdefs/ElementWiseDivide.yaml decisions).
INTEGER_QUOTIENT_ROUNDING: dict[str, Callable[[Array], Array]] = {"DIVIDE": np.floor}

# --- helpers -------------------------------------------------------------------------------------


def _declared(out_dtypes: Sequence[Any] | None) -> np.dtype | None:
    if not out_dtypes or out_dtypes[0] is None:
        return None
    return np.dtype(out_dtypes[0])


def _integer_output(out_dtypes: Sequence[Any] | None, operands: Sequence[Array]) -> bool:
    """Whether the result is of an integer type: the declared output says so, or, when no output
    is declared, every operand is an integer array."""
    dt = _declared(out_dtypes)
    if dt is not None:
        return bool(np.issubdtype(dt, np.integer))
    return all(np.issubdtype(np.asarray(x).dtype, np.integer) for x in operands)


def _real(x: Any) -> Array:
    return np.asarray(x, dtype=np.float64)


def _truth(x: Any) -> Array:
    """Logical operands: "non-zero values are treated as true and zero as false" (3152)."""
    x = np.asarray(x)
    return x if x.dtype == np.bool_ else x != 0


def _logical_result(mask: Array, out_dtypes: Sequence[Any] | None) -> Array:
    """Comparison and logical results are BOOL_8 unless the case declares a numeric output type
    ("BOOL_8, backend specific"), in which case they are the real values 1 and 0."""
    dt = _declared(out_dtypes)
    if dt is None or dt == np.bool_:
        return np.asarray(mask, dtype=np.bool_)
    return np.asarray(mask, dtype=np.float64)


def _broadcast_shape(op: str, *arrays: Array) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays))
    except ValueError:
        shapes = ", ".join(str(np.shape(a)) for a in arrays)
        raise ValueError(f"{op}: input shapes {shapes} do not broadcast") from None


def _operation(op: str, params: dict[str, Any]) -> str:
    """The ``operation`` member's name, as opdefs/<op>.yaml numbers it."""
    if params.get("operation") is None:
        raise ValueError(f"{op}: the mandatory parameter 'operation' is missing")
    return opdefs.load(op).enum_name("operation", params["operation"])


def _inputs(op: str, inputs: Sequence[Array | None], n: int) -> list[Array]:
    got = list(inputs)[:n]
    if len(got) < n or any(x is None for x in got):
        raise ValueError(f"{op}: needs {n} inputs, got {len(inputs)}")
    return [np.asarray(x) for x in got]


# --- unary ---------------------------------------------------------------------------------------


def apply_unary(operation: str, x: Array, out_dtypes: Sequence[Any] | None = None) -> Array:
    """One unary operation on real values; NOT gives a logical result."""
    if operation in LOGICAL_UNARY:
        return _logical_result(LOGICAL_UNARY[operation](np.asarray(x)), out_dtypes)
    with np.errstate(all="ignore"):  # out-of-domain inputs are "undefined"; numpy's NaN/inf stand for it
        return UNARY[operation](_real(x))


@register("ElementWiseUnary", verified_by="onnxruntime")
def elementwise_unary(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    (x,) = _inputs(op, inputs, 1)
    operation = _operation(op, params)  # ElementWiseAbs ... come with their computed_as operation
    return [apply_unary(operation, x, out_dtypes)]


@register("IsInf", verified_by="onnxruntime")
def is_inf(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    (x,) = _inputs(op, inputs, 1)
    x = _real(x)
    positive = np.isposinf(x) & bool(params["detect_positive"])
    negative = np.isneginf(x) & bool(params["detect_negative"])
    return [positive | negative]


@register_model("IsInf", name="detect-flags-swapped")
def is_inf_flags_swapped(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 IsInf (finding isinf-f16-detect-flags-swapped): detect_positive says whether -inf
    is reported and detect_negative whether +inf is, the other way round from lines 7601-7617."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = _real(inputs[0])
    return [(np.isposinf(x) & bool(params["detect_negative"])) | (np.isneginf(x) & bool(params["detect_positive"]))]


@register_model("IsNan", name="non-finite-past-65568")
def is_nan_past_65568(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_32 IsNan from v69 on (finding isnan-f32-infinity-is-nan): true for NaN, for both
    infinities and for every finite value of magnitude 65568 (2^16 + 32) or more, as if it asked whether the value is
    finite in a float16-sized format. Measured at v73: 65567.992 false, 65568 true, 2^17 to 2^127 all true."""
    from reference.expected import arguments

    x = _real(arguments(case)[0][0])
    with np.errstate(invalid="ignore"):
        return [np.isnan(x) | (np.abs(x) >= 65568.0)]


@register_model("ElementWiseCeil", "ElementWiseFloor", "ElementWiseRound", name="input-rounded-to-float16")
def rounding_of_float16_input(case: Any) -> list[np.ndarray]:
    """The HTP's FLOAT_32 Ceil, Floor and Round from v69 on (finding rounding-f32-input-as-float16): the op applied to
    in[0] rounded to float16, as its float16 arithmetic for float32 graphs does (Ceil 1.00048 -> 1, Floor 1.9999 ->
    2, Round -0.50001 -> -0 and -1.4998 -> -2, halves to even as line 4875 says). The results come out 1 float32 ulp
    above the integer's magnitude (2.0000002), inside the float32 budget."""
    import reference
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = _real(inputs[0]).astype(np.float16).astype(np.float64)
    return reference.run(case.op, [x], params)


@register("IsNan", verified_by="onnxruntime")
def is_nan(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    (x,) = _inputs(op, inputs, 1)
    return [np.isnan(_real(x))]


@register("Logit", verified_by="onnxruntime")
def logit(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    """ln(z / (1 - z)), z clamped to [eps, 1 - eps] only when the optional in[1] is given."""
    (x,) = _inputs(op, inputs, 1)
    z = _real(x)
    eps = inputs[1] if len(inputs) > 1 else None
    if eps is not None:
        e = float(np.asarray(eps, dtype=np.float64).reshape(-1)[0])
        z = np.clip(z, e, 1.0 - e)
    with np.errstate(all="ignore"):  # outside (0, 1) the spec says "undefined" (7953)
        return [np.log(z / (1.0 - z))]


# --- binary --------------------------------------------------------------------------------------


def apply_binary(operation: str, a: Array, b: Array, out_dtypes: Sequence[Any] | None = None) -> Array:
    """One binary operation on real values, numpy-broadcast (multidirectional)."""
    kind, fn = BINARY[operation]
    if kind is Kind.LOGICAL:
        return _logical_result(fn(_truth(a), _truth(b)), out_dtypes)
    integer = _integer_output(out_dtypes, (a, b))
    with np.errstate(all="ignore"):  # zero divisors etc. are "undefined"; numpy's NaN/inf stand for it
        result = fn(_real(a), _real(b))
    if kind is Kind.COMPARISON:
        return _logical_result(result, out_dtypes)
    if integer and operation in INTEGER_QUOTIENT_ROUNDING:
        result = INTEGER_QUOTIENT_ROUNDING[operation](result)
    return result


@register("ElementWiseBinary", verified_by="onnxruntime")
def elementwise_binary(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    a, b = _inputs(op, inputs, 2)
    _broadcast_shape(op, a, b)
    operation = _operation(op, params)  # ElementWiseAdd ... come with their computed_as operation
    return [apply_binary(operation, a, b, out_dtypes)]


@register("ElementWiseFloorDiv", verified_by="onnxruntime")
def elementwise_floor_div(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    """ElementWiseBinary's FLOOR_DIV, except where in[1] is 0: "Result is undefined for any 0 value in the second input
    tensor" (3866-3867), so those elements are NaN, which the op's tolerance reads as any value (decisions)."""
    a, b = _inputs(op, inputs, 2)
    _broadcast_shape(op, a, b)
    result = apply_binary("FLOOR_DIV", a, b, out_dtypes)
    return [np.where(np.broadcast_to(_real(b) == 0, np.shape(result)), np.nan, result)]


# --- models of deviations (reference.models): what a backend with a known bug returns --------------


def _floor_div_operands(case: Any) -> tuple[Array, Array, Array]:
    """A FLOOR_DIV case's real operands and their exact quotient, broadcast to the output's shape."""
    from reference.expected import arguments

    inputs, _ = arguments(case)
    a, b = (np.asarray(x, dtype=np.float64) for x in inputs[:2])
    with np.errstate(all="ignore"):  # a zero divisor's quotient is undefined (3866-3867): NaN, open in every model
        q = np.broadcast_to(np.where(b == 0, np.nan, a / b), case.outputs[0].shape)
    return a, b, q


def _near_integral(q: Array, rel: float = 2.0**-9) -> Array:
    """Quotients within a few binary16 ULPs of a whole number, where the floor of an inexact quotient may land on
    either side of it."""
    return np.abs(q - np.round(q)) <= rel * np.maximum(1.0, np.abs(q))


@register_model("ElementWiseFloorDiv", "ElementWiseBinary", name="integral-quotient-off-by-one")
def floor_div_integral_quotient_off_by_one(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 FloorDiv (finding floordiv-f16-exact-quotient-off-by-one) truncates a reciprocal
    product and takes one off every negative quotient without asking whether it is whole: 4 // -4 gives -2. With a
    power-of-two divisor the reciprocal is exact, so a whole negative quotient n comes out n - 1 and a whole positive
    one n. With any other divisor the reciprocal's rounding decides (5 // -5 is right, 6 // -3 is not; 5 // 5 gives
    0): there, and where a quotient is within a few binary16 ULPs of a whole number, the value is left open (NaN: any
    value). Everywhere else the model is floor(in[0] / in[1])."""
    _, b, q = _floor_div_operands(case)
    mantissa, _ = np.frexp(np.broadcast_to(np.abs(b), q.shape))
    exact = mantissa == 0.5  # |in[1]| a power of two: its reciprocal is exact
    whole = q == np.round(q)
    model = np.where(whole & (q < 0), q - 1.0, np.floor(q))
    return [np.where(_near_integral(q) & ~(whole & exact), np.nan, model)]


@register_model("ElementWiseFloorDiv", "ElementWiseBinary", name="small-quotient-not-integral")
def floor_div_small_quotient_not_integral(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point FloorDiv (finding floordiv-fixed-not-integral): a quotient within 2^-4 of 0
    comes out floor(q) plus a fraction up to 1/4 (0.0136 -> 0.125, -0.0136 -> -1.1247), and a quotient at a whole
    number may land one off (-67 for -68). Those elements are left open (NaN: any value); everywhere else the model is
    floor(in[0] / in[1])."""
    _, _, q = _floor_div_operands(case)
    return [np.where((np.abs(q) < 2.0**-4) | _near_integral(q), np.nan, np.floor(q))]


@register_model("ElementWiseFloorDiv", name="broadcast-divisor-read-past-its-row")
def floor_div_broadcast_divisor_read_past_its_row(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 FloorDiv with in[1] broadcast along an axis (finding floordiv-f16-broadcast-nan):
    only the first element of each broadcast row is divided by its divisor; the others read memory past it and come
    out NaN or another value from run to run. The model: floor(in[0] / in[1]) at index 0 of every axis along which
    in[1] is broadcast, any value elsewhere (NaN)."""
    a, b, q = _floor_div_operands(case)
    shape = case.outputs[0].shape
    lead = len(shape) - b.ndim
    keep = np.ones(shape, dtype=bool)
    for ax, n in enumerate(shape):
        if n > 1 and (ax < lead or b.shape[ax - lead] == 1):
            index = [slice(None)] * len(shape)
            index[ax] = slice(1, None)
            keep[tuple(index)] = False
    return [np.where(keep, np.floor(q), np.nan)]


@register_model("ElementWiseFmod", name="sign-of-divisor")
def fmod_sign_of_divisor(case: Any) -> list[np.ndarray]:
    """The QNN CPU backend's FLOAT_32 ElementWiseFmod (finding elementwisefmod-f32-sign-of-divisor): the remainder takes
    the sign of in[1] (the floor modulus, Python's %), not of in[0] as line 3916 says: fmod(0.5, -2) comes back -1.5
    and fmod(-0.5, 2) 1.5; operands of the same sign give the same value either way."""
    from reference.expected import arguments

    inputs, _ = arguments(case)
    a, b = (np.asarray(t, dtype=np.float64) for t in inputs[:2])
    with np.errstate(divide="ignore", invalid="ignore"):
        return [np.mod(a, b)]


_FLOOR_DIV_F16_BUGS = ("integral-quotient-off-by-one", "broadcast-divisor-read-past-its-row")


@register_combination("ElementWiseFloorDiv")
def floor_div_with(case: Any, names: list[str]) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 FloorDiv with both its bugs (findings floordiv-f16-exact-quotient-off-by-one and
    floordiv-f16-broadcast-nan): the elements a broadcast in[1] leaves to memory past its row are open (any value),
    the others are the off-by-one model's. Each applies where the case meets its condition: the broadcast one where
    in[1] is broadcast along an axis (otherwise it leaves nothing open), the off-by-one one always."""
    unknown = [n for n in names if n not in _FLOOR_DIV_F16_BUGS]
    if unknown or not names:
        raise ValueError(f"ElementWiseFloorDiv has no combined deviation {unknown or names}")
    y = floor_div_integral_quotient_off_by_one(case)[0] if _FLOOR_DIV_F16_BUGS[0] in names else None
    if _FLOOR_DIV_F16_BUGS[1] in names:
        b = floor_div_broadcast_divisor_read_past_its_row(case)[0]
        y = b if y is None else np.where(np.isnan(b), np.nan, y)
    return [y]


@register("ElementWiseSelect", verified_by="onnxruntime")
def elementwise_select(inputs, params, out_shapes, out_dtypes, *, op: str) -> list[np.ndarray]:
    """in[0] ? in[1] : in[2], the three broadcast to a common shape (4959-4963)."""
    cond, a, b = _inputs(op, inputs, 3)
    _broadcast_shape(op, cond, a, b)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        return [np.where(_truth(cond), a, b)]
    return [np.where(_truth(cond), _real(a), _real(b))]


@register_model("ElementWiseUnary", "LogSoftmax", name="every-output-code-zero")
def unary_every_output_code_zero(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_16 ElementWiseUnary LOG (finding unary-log-u16-code-zero) and LogSoftmax with a
    fine out[0] grid (logsoftmax-u16-fine-output-code-zero): every output element is stored code 0, whatever the
    input, so each reads as out[0]'s encoding at code 0 (-0.7478 with offset -13927 and scale 5.37e-5; 0 with offset
    0)."""
    from cases.quant import dequantize

    return [dequantize(np.zeros(t.shape), t.encoding) if t.encoding is not None else np.zeros(t.shape)
            for t in case.outputs]  # fmt: skip


@register_model("ElementWiseUnary", name="logical-result-as-code-one")
def unary_logical_result_as_code_one(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_8 ElementWiseUnary NOT (finding unary-not-fixed-true-as-code-one): the result is
    stored as code 1 for true and code 0 for false, out[0]'s encoding ignored, so a true element reads as scale x (1 +
    offset) (0.0039 with scale 1/255, offset 0) where the real 1 belongs."""
    from cases.quant import dequantize
    from reference.expected import arguments

    inputs, _ = arguments(case)
    codes = (np.asarray(inputs[0], dtype=np.float64) == 0).astype(np.float64)
    t = case.outputs[0]
    return [dequantize(np.broadcast_to(codes, t.shape), t.encoding) if t.encoding is not None else codes]


_COMPARISONS = ("ElementWiseEqual", "ElementWiseNotEqual", "ElementWiseLess", "ElementWiseLessEqual",
                "ElementWiseGreater", "ElementWiseGreaterEqual")  # fmt: skip


@register_model(*_COMPARISONS, "ElementWiseBinary", name="near-values-within-a-128th-of-the-coarser-step")
def comparison_near_values_within_a_128th_of_the_coarser_step(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 8-bit fixed-point comparisons (finding compare-8bit-near-values): two different values
    closer than 1/128 of the coarser input's scale (|in[0] - in[1]| <= max(scale0, scale1) / 128) may come out
    equal, or in either order: both are rescaled onto a grid 64 times finer than the coarser input's, with a
    precision that varies from case to case. Those elements are left open (NaN: any value); every other element is
    the exact comparison (3.74937 == 3.74952 is open with scales 0.0305 and 0.0379; 3.7494 == 3.7506 is false)."""
    from reference.expected import arguments, expected

    inputs, _ = arguments(case)
    a, b = (np.asarray(x, dtype=np.float64) for x in inputs[:2])
    coarse = max(float(t.encoding.scales[0]) for t in case.inputs[:2] if t is not None and t.encoding is not None)
    d = np.broadcast_to(np.abs(a - b), case.outputs[0].shape)
    near = (d > 0) & (d <= coarse / 128 * (1 + 1e-9))
    y = np.asarray(expected(case)[0], dtype=np.float64)
    return [np.where(near, np.nan, y)]
