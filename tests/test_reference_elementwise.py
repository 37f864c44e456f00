"""The element-wise references (reference/elementwise.py) against onnxruntime, onnx.reference,
numpy / scipy, and the MasterOpDef's own examples.

Each QNN op is checked against an independent implementation on float32 data (the reference gets
the same values as float64), over broadcasting shapes drawn by hypothesis. Where the spec picks a
behaviour ONNX does not share (NNAPI's floored integer DIVIDE), or states an example (Round's ties,
Mod's and Fmod's signs), a hand-written case says so.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import opdefs
import reference
from cases import quant
from reference import elementwise
from tests.onnx_oracle import ENGINES, ORT, node_function
from tests.reference_helpers import assert_reading_recorded, member

RNG = np.random.default_rng(20240611)


def unary_op(name: str) -> int:
    return member("ElementWiseUnary", "operation", name)


def binary_op(name: str) -> int:
    return member("ElementWiseBinary", "operation", name)

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)


# ---- independent implementations ---------------------------------------------------------------


def onnx_op(op_type: str, *, out: type | None = None, engine: str = ORT, opset: int = 21, **attrs):
    """A function running the one-node ONNX model ``op_type`` on numpy arrays."""
    return node_function(op_type, engine=engine, out=out, opset=opset, **attrs)


def qnn(op: str, inputs: list[np.ndarray], params: dict | None = None, out_dtypes=None) -> np.ndarray:
    """The reference on the float64 view of the test's data; omitted params take the spec default."""
    real = [x if x.dtype == np.bool_ else x.astype(np.float64) for x in inputs]
    return reference.run(op, real, params or {}, None, out_dtypes)[0]


def check_close(got: np.ndarray, want: np.ndarray, what: str, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    """float64 reference vs a float32 implementation: a few float32 ulps apart at most."""
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    np.testing.assert_allclose(got, want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def check_equal(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    np.testing.assert_array_equal(got, want, err_msg=what)


def uniform(shape, lo: float, hi: float) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def small_ints(shape, lo: int = -4, hi: int = 4) -> np.ndarray:
    """Integer-valued float32 data drawn from few values, so comparisons meet equality often."""
    return RNG.integers(lo, hi + 1, size=shape).astype(np.float32)


def nonzero(shape, lo: float = -5.0, hi: float = 5.0) -> np.ndarray:
    x = uniform(shape, lo, hi)
    return np.where(np.abs(x) < 0.25, np.float32(0.5), x).astype(np.float32)


def halves(shape) -> np.ndarray:
    """Ties for rounding (k + 0.5) mixed with ordinary values."""
    ties = (RNG.integers(-8, 8, size=shape) + 0.5).astype(np.float32)
    return np.where(RNG.random(shape) < 0.5, ties, uniform(shape, -8, 8))


# ---- bookkeeping ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "about"),
    [
        ("ElementWiseDivide", "integer division rounding"),
        ("ElementWiseLessEqual", "rank and broadcast restriction"),
        ("ElementWiseMod", "sign of the result"),
        ("ElementWiseFmod", "sign of the result"),
        ("ElementWiseFloorDiv", "rounding"),
        ("ElementWiseRound", "ties"),
        ("Logit", "formula"),
    ],
)
def test_the_readings_this_reference_takes_are_recorded_in_the_spec(op, about):
    assert_reading_recorded(op, about)


# ---- the spec's enum values ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "tables"),
    [("ElementWiseUnary", [elementwise.UNARY, elementwise.LOGICAL_UNARY]), ("ElementWiseBinary", [elementwise.BINARY])],
)
def test_every_operation_the_spec_lists_has_a_formula(op, tables):
    listed = set(opdefs.load(op).enum("operation"))
    known = set().union(*tables)
    assert known == listed, f"{op}: spec members without a formula {sorted(listed - known)}, " \
                            f"formulas for no member {sorted(known - listed)}"


# ---- unary ---------------------------------------------------------------------------------------

# QNN unary operation -> (independent implementation, input generator). Written out here, not taken
# from the module's tables, so a wrong mapping there cannot hide.
UNARY_CHECKS = {
    "ABS": (onnx_op("Abs"), lambda s: uniform(s, -10, 10)),
    "ASIN": (onnx_op("Asin"), lambda s: uniform(s, -1, 1)),
    "ATAN": (onnx_op("Atan"), lambda s: uniform(s, -10, 10)),
    "CEIL": (onnx_op("Ceil"), lambda s: halves(s)),
    "COS": (onnx_op("Cos"), lambda s: uniform(s, -7, 7)),
    "EXP": (onnx_op("Exp"), lambda s: uniform(s, -10, 10)),
    "FLOOR": (onnx_op("Floor"), lambda s: halves(s)),
    "LOG": (onnx_op("Log"), lambda s: uniform(s, 1e-3, 100)),
    "NEG": (onnx_op("Neg"), lambda s: uniform(s, -10, 10)),
    "RECIPROCAL": (onnx_op("Reciprocal"), lambda s: nonzero(s)),
    "ROUND": (onnx_op("Round"), lambda s: halves(s)),
    "RSQRT": (lambda x: onnx_op("Pow")(x, np.array(-0.5, np.float32)), lambda s: uniform(s, 1e-2, 100)),
    "SIGN": (onnx_op("Sign"), lambda s: small_ints(s, -2, 2) * uniform(s, 0.5, 2)),
    "SIN": (onnx_op("Sin"), lambda s: uniform(s, -7, 7)),
    "SQRT": (onnx_op("Sqrt"), lambda s: uniform(s, 0, 100)),
}
# Dedicated op -> the generic op's member it is: the op is named for the member in CamelCase
# (ElementWiseFloorDiv is FLOOR_DIV), derived here from the names rather than copied from the module's
# table, so a wrong entry there cannot hide. RECIPROCAL has no dedicated op; SQRT's is ElementWiseSquareRoot.
def _camel(member_name: str) -> str:
    return "".join(part.capitalize() for part in member_name.split("_"))


DEDICATED_UNARY = {("ElementWiseSquareRoot" if n == "SQRT" else f"ElementWise{_camel(n)}"): n
                   for n in UNARY_CHECKS if n != "RECIPROCAL"}  # fmt: skip
SHAPES = [(7,), (3, 5), (2, 3, 4), (1, 2, 3, 4), (2, 1, 3, 1, 2)]


def _invocations(dedicated: dict[str, str], checks, generic: str) -> list:
    """Each checked operation twice: as its dedicated op and as the generic op with ``operation`` set."""
    out = [pytest.param(op, {}, name, id=op) for op, name in dedicated.items()]
    kind = generic.removeprefix("ElementWise")
    operation = {n: member(generic, "operation", n) for n in checks}
    return out + [pytest.param(generic, {"operation": operation[n]}, n, id=f"{kind}-{n}") for n in checks]


@pytest.mark.parametrize(
    ("op", "params", "name"), _invocations(DEDICATED_UNARY, UNARY_CHECKS, "ElementWiseUnary")
)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_numerical_unary_matches_onnx(op, params, name, shape):
    independent, gen = UNARY_CHECKS[name]
    x = gen(shape)
    check_close(qnn(op, [x], params), independent(x), f"{op} {name} on {shape}")


@pytest.mark.parametrize("engine", ENGINES)
def test_numerical_unary_matches_onnx_reference_evaluator(engine):
    """The same table once more through onnx.reference, a second independent engine."""
    for name in ["ABS", "ASIN", "ATAN", "CEIL", "COS", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "SIGN", "SIN", "SQRT"]:
        _, gen = UNARY_CHECKS[name]
        x = gen((4, 6))
        want = onnx_op(name.capitalize(), engine=engine)(x)
        check_close(qnn("ElementWiseUnary", [x], {"operation": unary_op(name)}), want, f"{engine} {name}")


def test_round_breaks_ties_to_even_as_the_spec_example_says():
    # seed 4875-4877 and 5441-5442: 2.5 -> 2, -3.5 -> -4, round([2.5, -4.5, 1.5]) = [2, -4, 2]
    x = np.array([2.5, -3.5, -4.5, 1.5, 0.5, -0.5], np.float32)
    want = np.array([2.0, -4.0, -4.0, 2.0, 0.0, -0.0])
    check_equal(qnn("ElementWiseRound", [x]), want, "ElementWiseRound ties")
    check_equal(qnn("ElementWiseUnary", [x], {"operation": unary_op("ROUND")}), want, "ElementWiseUnary ROUND ties")


def test_ceil_and_floor_follow_the_spec_examples():
    # seed 5382-5383 and 5396-5397: ceil([-1.5, 1.2, 2.0]) = [-1, 2, 2], floor(...) = [-2, 1, 2]
    x = np.array([-1.5, 1.2, 2.0], np.float32)
    check_equal(qnn("ElementWiseUnary", [x], {"operation": unary_op("CEIL")}), np.array([-1.0, 2, 2]), "CEIL")
    check_equal(qnn("ElementWiseUnary", [x], {"operation": unary_op("FLOOR")}), np.array([-2.0, 1, 2]), "FLOOR")


def test_sign_of_zero_is_zero():
    x = np.array([-3.0, -0.0, 0.0, 1e-30, 7.0], np.float32)
    check_equal(qnn("ElementWiseSign", [x]), np.sign(x.astype(np.float64)), "ElementWiseSign")
    check_equal(qnn("ElementWiseSign", [x]), np.array([-1.0, 0, 0, 1, 1]), "ElementWiseSign")


@pytest.mark.parametrize(("op", "params"), [("ElementWiseNot", {}), ("ElementWiseUnary", {"operation": 9})])
def test_not_matches_onnx_on_bool_and_treats_nonzero_as_true(op, params):
    b = RNG.random((3, 4)) < 0.5
    check_equal(qnn(op, [b], params), onnx_op("Not")(b), f"{op} on BOOL_8")
    x = small_ints((3, 4), -2, 2)
    check_equal(qnn(op, [x], params), onnx_op("Not")(x != 0), f"{op} on numbers: non-zero is true")
    assert qnn(op, [x], params).dtype == np.bool_, f"{op}: a BOOL_8 output by default"


def test_not_with_a_numeric_output_gives_real_ones_and_zeros():
    x = np.array([0.0, 2.0, -1.0], np.float32)
    got = qnn("ElementWiseNot", [x], out_dtypes=[np.float64])
    check_equal(got, np.array([1.0, 0.0, 0.0]), "ElementWiseNot with a numeric out[0]")
    assert got.dtype == np.float64


@pytest.mark.parametrize(("detect_negative", "detect_positive"), [(1, 1), (1, 0), (0, 1), (0, 0)])
@pytest.mark.parametrize("engine", ENGINES)
def test_isinf_detect_flags_match_onnx(detect_negative, detect_positive, engine):
    x = np.array([[np.inf, -np.inf, np.nan, 0.0, 3.0e38, -1.0]], np.float32)
    params = {"detect_negative": bool(detect_negative), "detect_positive": bool(detect_positive)}
    want = onnx_op(
        "IsInf", out=np.bool_, engine=engine, detect_negative=detect_negative, detect_positive=detect_positive
    )(x)
    check_equal(qnn("IsInf", [x], params), want, f"IsInf {params}")


def test_isinf_detects_both_infinities_by_default():
    x = np.array([np.inf, -np.inf, 1.0], np.float32)
    check_equal(qnn("IsInf", [x]), np.array([True, True, False]), "IsInf with spec defaults (1, 1)")


@pytest.mark.parametrize("engine", ENGINES)
def test_isnan_matches_onnx(engine):
    x = np.array([[np.nan, np.inf, -np.inf, 0.0], [1.0, -np.nan, 2.0, -0.0]], np.float32)
    check_equal(qnn("IsNan", [x]), onnx_op("IsNaN", out=np.bool_, engine=engine)(x), "IsNan")


def test_logit_without_epsilon_matches_scipy():
    x = uniform((4, 5), 1e-3, 1 - 1e-3)
    check_close(qnn("Logit", [x]), scipy.special.logit(x.astype(np.float64)), "Logit without epsilon", rtol=1e-12)


@pytest.mark.parametrize("eps", [1e-6, 0.05, 0.25, 0.5])
def test_logit_with_epsilon_clamps_to_eps_and_one_minus_eps(eps):
    # seed 7951-7961: z = max(min(x, 1 - eps), eps) when in[1] = [eps] is given
    x = np.concatenate([uniform((20,), 0, 1), np.array([0.0, 1.0, 1e-9, 1 - 1e-7], np.float32)])
    e = np.array([eps], np.float32)
    z = np.clip(x.astype(np.float64), np.float64(e[0]), 1 - np.float64(e[0]))
    check_close(qnn("Logit", [x, e]), scipy.special.logit(z), f"Logit eps={eps}", rtol=1e-12)


def test_logit_is_the_inverse_of_sigmoid_not_the_seed_typo():
    # seed 7957 writes ln(z / (z - 1)); the logit of 0.75 is ln 3, not ln(-3)
    got = qnn("Logit", [np.array([0.75, 0.5, 0.25], np.float32)])
    check_close(got, np.array([np.log(3.0), 0.0, -np.log(3.0)]), "Logit", rtol=1e-12)


# ---- binary --------------------------------------------------------------------------------------


def _ints(shape, lo=-20, hi=20) -> np.ndarray:
    return RNG.integers(lo, hi + 1, size=shape).astype(np.float32)


def _int_divisors(shape) -> np.ndarray:
    d = RNG.integers(1, 8, size=shape) * RNG.choice([-1, 1], size=shape)
    return d.astype(np.float32)


def _via_int32(fn):
    """Run an integer-only ONNX op (Mod fmod=0) on integer-valued float data."""
    return lambda a, b: fn(a.astype(np.int32), b.astype(np.int32)).astype(np.float64)


def _select_bool(fn):
    """ONNX logical ops take BOOL; QNN's treat non-zero as true."""
    return lambda a, b: fn(a != 0, b != 0)


def _floor_of_float64_quotient(a, b):
    return np.floor(a.astype(np.float64) / b.astype(np.float64))


# QNN binary operation -> (independent implementation, generator of in[0], of in[1], exact?).
BINARY_CHECKS = {
    "ADD": (onnx_op("Add"), lambda s: uniform(s, -5, 5), lambda s: uniform(s, -5, 5), False),
    "SUBTRACT": (onnx_op("Sub"), lambda s: uniform(s, -5, 5), lambda s: uniform(s, -5, 5), False),
    "MULTIPLY": (onnx_op("Mul"), lambda s: uniform(s, -5, 5), lambda s: uniform(s, -5, 5), False),
    "DIVIDE": (onnx_op("Div"), lambda s: uniform(s, -5, 5), nonzero, False),
    "POWER": (onnx_op("Pow"), lambda s: uniform(s, 0.1, 4), lambda s: uniform(s, -3, 3), False),
    "MAXIMUM": (onnx_op("Max"), small_ints, lambda s: uniform(s, -4, 4), True),
    "MINIMUM": (onnx_op("Min"), small_ints, lambda s: uniform(s, -4, 4), True),
    "SQUARED_DIFFERENCE": (
        lambda a, b: np.square(a.astype(np.float64) - b.astype(np.float64)),
        lambda s: uniform(s, -5, 5),
        lambda s: uniform(s, -5, 5),
        False,
    ),
    "FMOD": (onnx_op("Mod", fmod=1), lambda s: uniform(s, -10, 10), nonzero, False),
    "MOD": (_via_int32(onnx_op("Mod", fmod=0)), _ints, _int_divisors, True),
    "FLOOR_DIV": (lambda a, b: np.floor_divide(a.astype(np.int64), b.astype(np.int64)), _ints, _int_divisors, True),
    "EQUAL": (onnx_op("Equal", out=np.bool_), small_ints, small_ints, True),
    "NOT_EQUAL": (np.not_equal, small_ints, small_ints, True),
    "GREATER": (onnx_op("Greater", out=np.bool_), small_ints, small_ints, True),
    "GREATER_EQUAL": (onnx_op("GreaterOrEqual", out=np.bool_), small_ints, small_ints, True),
    "LESS": (onnx_op("Less", out=np.bool_), small_ints, small_ints, True),
    "LESS_EQUAL": (onnx_op("LessOrEqual", out=np.bool_), small_ints, small_ints, True),
    "AND": (_select_bool(onnx_op("And")), lambda s: small_ints(s, -1, 1), lambda s: small_ints(s, -1, 1), True),
    "OR": (_select_bool(onnx_op("Or")), lambda s: small_ints(s, -1, 1), lambda s: small_ints(s, -1, 1), True),
    "XOR": (_select_bool(onnx_op("Xor")), lambda s: small_ints(s, -1, 1), lambda s: small_ints(s, -1, 1), True),
}
DEDICATED_BINARY = {f"ElementWise{_camel(n)}": n for n in BINARY_CHECKS}
COVERS = set(DEDICATED_UNARY) | set(DEDICATED_BINARY)  # the ops this module checks without spelling them out
broadcastable_pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=4, min_side=1, max_side=4)


@pytest.mark.parametrize(
    ("op", "params", "name"), _invocations(DEDICATED_BINARY, BINARY_CHECKS, "ElementWiseBinary")
)
@SETTINGS
@given(shapes=broadcastable_pairs)
def test_binary_matches_independent_implementation_under_broadcasting(op, params, name, shapes):
    independent, gen_a, gen_b, exact = BINARY_CHECKS[name]
    (sa, sb), _ = shapes
    a, b = gen_a(sa), gen_b(sb)
    got, want = qnn(op, [a, b], params), np.asarray(independent(a, b))
    what = f"{op} {name} on {sa} and {sb}"
    if exact:
        check_equal(got, want.astype(got.dtype), what)
    else:
        check_close(got, want, what, rtol=5e-6)


@pytest.mark.parametrize("name", ["ADD", "SUBTRACT", "MULTIPLY", "DIVIDE", "MAXIMUM", "MINIMUM", "EQUAL", "LESS"])
def test_binary_matches_onnx_reference_evaluator(name):
    onnx_type = {"ADD": "Add", "SUBTRACT": "Sub", "MULTIPLY": "Mul", "DIVIDE": "Div", "MAXIMUM": "Max"}
    onnx_type |= {"MINIMUM": "Min", "EQUAL": "Equal", "LESS": "Less"}
    out = np.bool_ if name in ("EQUAL", "LESS") else None
    _, gen_a, gen_b, _ = BINARY_CHECKS[name]
    a, b = gen_a((2, 1, 4)), gen_b((3, 1))
    want = onnx_op(onnx_type[name], out=out, engine="onnx.reference")(a, b)
    check_close(qnn("ElementWiseBinary", [a, b], {"operation": binary_op(name)}), want, f"onnx.reference {name}")


def test_comparisons_and_logical_ops_give_bool_by_default_and_real_values_when_declared_numeric():
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([2.0, 2.0, 2.0], np.float32)
    assert qnn("ElementWiseLess", [a, b]).dtype == np.bool_
    check_equal(qnn("ElementWiseLess", [a, b], out_dtypes=[np.float64]), np.array([1.0, 0, 0]), "Less, numeric out")
    check_equal(qnn("ElementWiseAnd", [a - 1, b], out_dtypes=[np.uint8]), np.array([0.0, 1, 1]), "And, numeric out")


def test_mod_takes_the_sign_of_the_divisor():
    # seed 3405-3406, 4280-4281
    a = np.array([7, -7, 7, -7, 6, -6], np.float32)
    b = np.array([3, 3, -3, -3, 3, -3], np.float32)
    check_equal(qnn("ElementWiseMod", [a, b]), np.array([1.0, 2, -2, -1, 0, 0]), "ElementWiseMod")


def test_fmod_takes_the_sign_of_the_dividend():
    # seed 3331-3332, 3916-3917
    a = np.array([7, -7, 7, -7, 5.5, -5.5], np.float32)
    b = np.array([3, 3, -3, -3, 2, 2], np.float32)
    check_equal(qnn("ElementWiseFmod", [a, b]), np.array([1.0, -1, 1, -1, 1.5, -1.5]), "ElementWiseFmod")


def test_floor_div_rounds_toward_minus_infinity_as_the_spec_example_says():
    # seed 3866-3868: -2.3 rounds to -3 and 2.3 rounds to 2
    a = np.array([-2.3, 2.3, -7, 7, -6], np.float32)
    b = np.array([1, 1, 2, 2, 3], np.float32)
    check_equal(qnn("ElementWiseFloorDiv", [a, b]), np.array([-3.0, 2, -4, 3, -2]), "ElementWiseFloorDiv")


def test_integer_divide_floors_like_nnapi_not_truncates_like_onnx():
    # decision ElementWiseDivide (seed 3678-3690): NNAPI's int32 DIV floors; ONNX Div truncates
    a = np.array([-7, 7, -7, 7, 6, -1], np.float32)
    b = np.array([2, 2, -2, -2, 3, 4], np.float32)
    got = qnn("ElementWiseDivide", [a, b], out_dtypes=[np.int32])
    check_equal(got, np.array([-4.0, 3, 3, -4, 2, -1]), "ElementWiseDivide on INT_32")
    onnx_trunc = onnx_op("Div")(a.astype(np.int32), b.astype(np.int32))
    assert not np.array_equal(got, onnx_trunc), "the decision is visible: ONNX truncates -7 / 2 to -3"
    check_equal(
        qnn("ElementWiseBinary", [a, b], {"operation": binary_op("DIVIDE")}, out_dtypes=[np.int32]),
        got,
        "ElementWiseBinary DIVIDE on INT_32",
    )


@SETTINGS
@given(shapes=broadcastable_pairs)
def test_integer_divide_equals_numpy_floor_divide(shapes):
    (sa, sb), _ = shapes
    a, b = _ints(sa, -100, 100), _int_divisors(sb)
    want = np.floor_divide(a.astype(np.int32), b.astype(np.int32))
    check_equal(qnn("ElementWiseDivide", [a, b], out_dtypes=[np.int32]), want.astype(np.float64), "int Divide")


def test_float_divide_is_not_rounded():
    a, b = np.array([-7.0, 1.0], np.float32), np.array([2.0, 3.0], np.float32)
    check_close(qnn("ElementWiseDivide", [a, b], out_dtypes=[np.float64]), np.array([-3.5, 1 / 3]), "float Divide")


def test_power_of_negative_base_with_integer_exponents_matches_onnx():
    a = uniform((3, 4), -3, 3)
    b = small_ints((4,), -3, 3)
    check_close(qnn("ElementWisePower", [a, b]), onnx_op("Pow")(a, b), "ElementWisePower, negative bases", rtol=5e-6)


def test_less_equal_on_the_restricted_broadcast_the_spec_text_demands():
    # seed 4097-4099: equal ranks, only in[1] broadcast; a special case of the multidirectional rule
    a, b = small_ints((2, 3, 4)), small_ints((1, 3, 1))
    check_equal(qnn("ElementWiseLessEqual", [a, b]), onnx_op("LessOrEqual", out=np.bool_)(a, b), "LessEqual")


def test_binary_rejects_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match="do not broadcast"):
        qnn("ElementWiseAdd", [np.zeros((2, 3), np.float32), np.zeros((4,), np.float32)])


# ---- select --------------------------------------------------------------------------------------

broadcastable_triples = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=1, max_dims=4, max_side=4)


@SETTINGS
@given(shapes=broadcastable_triples, numeric_condition=st.booleans())
def test_select_matches_onnx_where_under_three_way_broadcasting(shapes, numeric_condition):
    (sc, sa, sb), _ = shapes
    cond = small_ints(sc, -1, 1) if numeric_condition else RNG.random(sc) < 0.5
    a, b = uniform(sa, -5, 5), uniform(sb, -5, 5)
    want = onnx_op("Where", out=np.float32)(cond != 0, a, b)
    check_equal(qnn("ElementWiseSelect", [cond, a, b]), want.astype(np.float64), f"Select on {sc}, {sa}, {sb}")


def test_select_of_bool_values_stays_bool():
    cond = np.array([True, False])
    got = qnn("ElementWiseSelect", [cond, np.array([True, True]), np.array([False, False])])
    check_equal(got, np.array([True, False]), "Select of BOOL_8 values")


# ---- quantized -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("op", "onnx_type"), [("ElementWiseAdd", "Add"), ("ElementWiseMultiply", "Mul")])
@pytest.mark.parametrize("dtype", ["UFIXED_POINT_8", "SFIXED_POINT_8", "UFIXED_POINT_16"])
def test_quantized_binary_is_within_one_step_of_onnx(op, onnx_type, dtype):
    """Inputs quantized, the reference run on their dequantized values; its quantized result and
    onnxruntime's (float32 on the same dequantized values) quantize within one step of each other."""
    a, b = uniform((2, 3, 4), -3, 2), uniform((1, 3, 1), -1, 4)
    ea, eb = quant.encoding_for_range(-3, 2, dtype), quant.encoding_for_range(-1, 4, dtype)
    ra = quant.dequantize(quant.quantize(a, ea, dtype), ea)
    rb = quant.dequantize(quant.quantize(b, eb, dtype), eb)
    got = reference.run(op, [ra, rb])[0]
    want = onnx_op(onnx_type)(ra.astype(np.float32), rb.astype(np.float32))
    eo = quant.encoding_for_range(float(want.min()), float(want.max()), dtype)
    q_got = quant.quantize(got, eo, dtype).astype(np.int64)
    q_want = quant.quantize(want, eo, dtype).astype(np.int64)
    assert np.max(np.abs(q_got - q_want)) <= 1, f"{op} {dtype}: quantized outputs differ by more than one step"


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_floordiv_model_takes_one_off_a_whole_negative_quotient_of_a_power_of_two_divisor() -> None:
    """4 // -4 and -4 // 2 are whole and negative with exact reciprocals: -2 and -3 (floor gives -1 and -2); 6 // 3 has
    an inexact reciprocal (open: NaN); 5 // 2 is not whole: floor, 2."""
    from tests.reference_helpers import case, modelled

    c = case("ElementWiseFloorDiv", [np.array([4.0, -4.0, 6.0, 5.0], np.float16), np.array([-4.0, 2.0, 3.0, 2.0],
             np.float16)], {}, [("FLOAT_16", (4,))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "integral-quotient-off-by-one")[0], [-2, -3, np.nan, 2])


def test_fixed_floordiv_model_leaves_quotients_near_zero_and_near_whole_numbers_open() -> None:
    from tests.reference_helpers import case, modelled

    c = case("ElementWiseFloorDiv", [np.array([0.03, -0.03, 7.5, 6.0]), np.array([-2.2, 2.2, 2.0, 2.0])], {},
             [("FLOAT_32", (4,))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "small-quotient-not-integral")[0], [np.nan, np.nan, 3, np.nan])


def test_floordiv_broadcast_model_holds_only_the_first_element_of_each_broadcast_row() -> None:
    """[[5, 5], [7, 7]] // [[-4], [2]]: column 0 is [-2, 3]; column 1, past each divisor's row, is open."""
    from tests.reference_helpers import case, modelled

    c = case("ElementWiseFloorDiv", [np.array([[5.0, 5.0], [7.0, 7.0]], np.float16), np.array([[-4.0], [2.0]],
             np.float16)], {}, [("FLOAT_16", (2, 2))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "broadcast-divisor-read-past-its-row")[0], [[-2, np.nan], [3, np.nan]])


def test_fmod_model_gives_the_remainder_the_sign_of_the_divisor() -> None:
    """fmod(0.5, -2) as -1.5 and fmod(-0.5, 2) as 1.5 (the floor modulus); operands of one sign as the spec's."""
    from tests.reference_helpers import case, modelled

    a, b = np.array([0.5, -0.5, 3.0, -3.0]), np.array([-2.0, 2.0, 2.0, -2.0])
    c = case("ElementWiseFmod", [a, b], {}, [("FLOAT_32", (4,))])
    np.testing.assert_array_equal(modelled(c, "sign-of-divisor")[0], [-1.5, 1.5, 1.0, -1.0])


def test_unary_log_code_zero_model_reads_code_zero_through_the_output_encoding() -> None:
    """Every element code 0: with out[0] scale 0.5 and offset -2 that is 0.5 x (0 - 2) = -1, whatever log(x) is."""
    from tests.reference_helpers import case, modelled

    c = case("ElementWiseUnary", [("UFIXED_POINT_16", np.array([4, 8, 16], np.uint16), ([0.25], [0]))],
             {"operation": 7}, [("UFIXED_POINT_16", (3,), ([0.5], [-2]))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "every-output-code-zero")[0], [-1.0, -1.0, -1.0])


def test_unary_not_model_writes_true_as_code_one_of_the_output_grid() -> None:
    """in[0] codes [118, 119, 0] with offset -118 are 0, 0.5, -59: NOT is [1, 0, 0]; stored as codes [1, 0, 0] on
    out[0]'s grid (scale 1/255, offset 0) they read [1/255, 0, 0]."""
    from tests.reference_helpers import case, modelled

    c = case("ElementWiseUnary", [("UFIXED_POINT_8", np.array([118, 119, 0], np.uint8), ([0.5], [-118]))],
             {"operation": 9}, [("UFIXED_POINT_8", (3,), ([1 / 255], [0]))])  # fmt: skip
    np.testing.assert_allclose(modelled(c, "logical-result-as-code-one")[0], [1 / 255, 0.0, 0.0])


def test_comparison_model_leaves_values_within_a_128th_of_the_coarser_step_open() -> None:
    """Scales 0.5 and 0.25: the coarser step is 0.5, so values closer than 0.5 / 128 = 0.00390625 are open.
    in[0] codes [8, 8, 8, 9] are 4, 4, 4, 4.5; in[1] codes with offset -16 are [32, 33, 16, 34] -> 4, 4.25, 0, 4.5:
    4 == 4 and 4.5 == 4.5 are exact (true), 4 vs 4.25 and 4 vs 0 are far apart (false). Less with in[1]'s scale
    0.2501 and offset 0 (codes [32, 33, 16, 34] -> 8.0032, 8.2533, 4.0016, 8.5034) against in[0] 8, 4, 4, 4.5: the
    first and third pairs are 0.0032 and 0.0016 apart (open), the others less."""
    from tests.reference_helpers import case, modelled

    b = ("SFIXED_POINT_8", np.array([32, 33, 16, 34], np.int8), ([0.25], [-16]))
    c = case("ElementWiseEqual", [("SFIXED_POINT_8", np.array([8, 8, 8, 9], np.int8), ([0.5], [0])), b], {},
             [("BOOL_8", (4,))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "near-values-within-a-128th-of-the-coarser-step")[0], [1, 0, 0, 1])
    b = ("SFIXED_POINT_8", np.array([32, 33, 16, 34], np.int8), ([0.2501], [0]))
    c = case("ElementWiseLess", [("SFIXED_POINT_8", np.array([16, 8, 8, 9], np.int8), ([0.5], [0])), b], {},
             [("BOOL_8", (4,))])  # fmt: skip
    got = modelled(c, "near-values-within-a-128th-of-the-coarser-step")[0]
    np.testing.assert_array_equal(got, [np.nan, 1, np.nan, 1])


def test_comparison_model_serves_element_wise_binary_and_a_far_error_stays_a_failure() -> None:
    """ElementWiseBinary LESS (operation 8) with the Less case above: the same open elements; a backend that answers
    a far pair wrongly (4.5 < 8.5034 as false) does not match the model (finding binary-compare-8bit-near-values)."""
    from reference import models
    from tests.reference_helpers import case, modelled

    b = ("SFIXED_POINT_8", np.array([32, 33, 16, 34], np.int8), ([0.2501], [0]))
    c = case("ElementWiseBinary", [("SFIXED_POINT_8", np.array([16, 8, 8, 9], np.int8), ([0.5], [0])), b],
             {"operation": 8}, [("BOOL_8", (4,))])  # fmt: skip
    model = {"diagnosis": "near-values-within-a-128th-of-the-coarser-step"}
    np.testing.assert_array_equal(modelled(c, model["diagnosis"])[0], [np.nan, 1, np.nan, 1])
    assert models.check(c, [np.array([True, True, True, True])], model)["matches"]  # open pairs either way
    assert not models.check(c, [np.array([False, True, False, False])], model)["matches"]


def test_floordiv_combination_holds_the_off_by_one_model_on_the_elements_a_broadcast_divisor_reaches() -> None:
    """[[4, 5], [-6, 7]] // [[-4], [2]]: in[1] broadcast along axis 1, so column 1 is open; column 0 is 4 // -4 = -1
    taken one lower (-2, a whole negative quotient of a power-of-two divisor) and -6 // 2 = -3 taken one lower (-4)."""
    from tests.reference_helpers import case, modelled

    c = case("ElementWiseFloorDiv", [np.array([[4.0, 5.0], [-6.0, 7.0]], np.float16), np.array([[-4.0], [2.0]],
             np.float16)], {}, [("FLOAT_16", (2, 2))])  # fmt: skip
    names = ["broadcast-divisor-read-past-its-row", "integral-quotient-off-by-one"]
    for order in (names, names[::-1]):
        np.testing.assert_array_equal(modelled(c, order)[0], [[-2, np.nan], [-4, np.nan]])


def test_rounding_of_float16_input_model_rounds_the_float16_value() -> None:
    """Ceil 1.00048 (float16 1.0) is 1, Floor 1.9999 (float16 2.0) is 2, Round -0.50001 (float16 -0.5, a half) is -0:
    the op on in[0] rounded to float16 (finding rounding-f32-input-as-float16)."""
    from tests.reference_helpers import case, modelled

    for op, x, want in [("ElementWiseCeil", 1.0004802, 1.0), ("ElementWiseFloor", 1.9999, 2.0),
                        ("ElementWiseRound", -0.5000084, 0.0)]:  # fmt: skip
        c = case(op, [np.array([x], np.float32)], {}, [("FLOAT_32", (1,))])
        assert modelled(c, "input-rounded-to-float16")[0][0] == want, op


def test_rounding_of_float16_input_model_refuses_the_binary32_answer_and_another_error() -> None:
    """Falsifiable: the HTP's Ceil of [1.00048, 2.5] at v73 (1.0000001, 3.0000002) matches the model; the spec's [2, 3]
    and a planted error (floor: [1, 2]) do not."""
    from reference import models
    from tests.reference_helpers import case

    c = case("ElementWiseCeil", [np.array([1.0004802, 2.5], np.float32)], {}, [("FLOAT_32", (2,))])
    model = {"diagnosis": "input-rounded-to-float16"}
    assert models.check(c, [np.array([1.0000001, 3.0000002], np.float32)], model)["matches"]
    assert not models.check(c, [np.array([2.0, 3.0], np.float32)], model)["matches"]
    assert not models.check(c, [np.array([1.0, 2.0], np.float32)], model)["matches"]


def test_floor_div_leaves_a_zero_divisor_open() -> None:
    """ElementWiseFloorDiv: 'Result is undefined for any 0 value in the second input tensor' (3866-3867): such elements
    are NaN (the op's tolerance reads NaN as any value); the others are floor(in0 / in1)."""
    import opdefs

    (got,) = reference.run("ElementWiseFloorDiv", [np.array([5.0, 0.0, -7.0]), np.array([0.0, 0.0, 2.0])], {})
    assert np.isnan(got[:2]).all()
    assert got[2] == -4.0
    assert opdefs.load("ElementWiseFloorDiv").tolerance.get("nan_means_any") is True
