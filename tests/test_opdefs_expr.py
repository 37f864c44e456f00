"""The constraint language: what it accepts, what it refuses, and what it means on a case."""

import numpy as np
import pytest

from opdefs import expr
from opdefs.expr import EvalError, ExprError, TensorInfo, holds, parse


def env(**kw):
    base = {"_in": [TensorInfo((1, 4, 4, 8), "FLOAT_32"), TensorInfo((3, 3, 4, 16), "FLOAT_32")],
            "_out": [TensorInfo((1, 2, 2, 16), "FLOAT_32")]}  # fmt: skip
    base.update(kw)
    return base


@pytest.mark.parametrize(
    "source, expected",
    [
        ("rank(in[0]) > 0", True),
        ("dtype(in[1]) == dtype(in[0])", True),
        ("shape(in[1])[-1] == shape(out[0])[-1]", True),
        ("0 <= axis < rank(in[0])", True),
        ("0 <= axis < rank(in[0])", True),
        ("channel_in % group == 0", True),
        ("all(stride > 0)", True),
        ("unique(perm)", False),
        ("implies(group > 1, channel_in % group == 0)", True),
        ("shape(in[0])[:2] == (1, 4)", True),
        ("broadcastable(in[0], out[0])", False),
    ],
)
def test_expression_meaning(source, expected):
    e = env(axis=3, channel_in=8, group=2, stride=np.array([1, 2]), perm=np.array([0, 1, 1]))
    assert holds(parse(source), e) is expected, source


@pytest.mark.parametrize(
    "source, message",
    [
        ("__import__('os')", "not allowed"),
        ("in[0].shape", "attribute access"),
        ("(lambda: 1)()", "lambda"),
        ("[x for x in y]", "comprehension"),
        ("f(1)", "call of 'f'"),
        ("rank(t=in[0])", "keyword"),
        ("_secret", "names may not start"),
        ("rank(in[0]) >", "syntax error"),
        ("{1: 2}", "dict literal"),
    ],
)
def test_forbidden_constructs_are_refused_at_parse_time(source, message):
    with pytest.raises(ExprError, match=message):
        parse(source)


def test_unbound_name_is_an_evaluation_error_not_a_false():
    with pytest.raises(EvalError, match="not bound"):
        holds(parse("axis < 3"), env())


def test_in_is_rewritten_only_where_it_indexes_a_tensor():
    e = parse("axis in (0, 1) and rank(in[0]) == 4")
    assert holds(e, env(axis=1))
    assert e.tensor_refs() == {"in[0]"}


# ---- structure the generator asks for -------------------------------------------------------------


def test_same_shape_pair_is_read_from_the_parsed_check():
    assert expr.parse("shape(out[0]) == shape(in[1])").same_shape_pair() == ("out[0]", "in[1]")
    assert expr.parse("rank(out[0]) == rank(in[1])").same_shape_pair() is None


@pytest.mark.parametrize(("source", "name", "bound"), [
    ("all(stride > 0)", "stride", 1), ("k >= 1", "k", 1), ("0 < k <= 4", "k", 1), ("all(2 <= level <= 6)", "level", 2),
    ("0 <= k < N", "k", 0), ("k != 0", "k", None), ("len(k) > 0", "k", None),
])  # fmt: skip
def test_lower_bound_comes_from_comparisons_with_constants(source, name, bound):
    got = expr.parse(source).lower_bound(name)
    assert got == bound, f"{source}: lower bound of {name} read as {got}, expected {bound}"


def test_uniqueness_is_a_unique_call_on_the_name():
    assert expr.parse("unique(axes) and all(axes < 4)").requires_unique("axes")
    assert not expr.parse("unique(values(in[1]))").requires_unique("axes")
