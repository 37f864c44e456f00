"""The constraint language: Python-shaped expressions parsed with ``ast`` and walked by a whitelist.

Nothing is ever handed to ``eval``/``exec``/``compile``. A spec expression may use: numbers,
strings, names (inputs as ``in[k]`` / ``out[k]``, parameters, symbolic dims, enum member names),
tuples/lists, subscripts, arithmetic, comparisons (chained, ``in``/``not in``), ``and``/``or``/``not``,
``a if c else b``, and calls of the functions in ``FUNCTIONS`` only. Attribute access, lambdas,
comprehensions, starred args, keyword args, f-strings, walrus and dunder names are rejected with a
message naming the construct, at lint time, before any case exists.

``in`` is a Python keyword, so ``in[0]`` is rewritten to ``_in[0]`` (and ``out[0]`` to ``_out[0]``)
before parsing; user names may not start with ``_``.

Bounded, because a spec is untrusted input: an expression holds at most ``MAX_SOURCE_CHARS``
characters and nests at most ``MAX_DEPTH`` deep (Python's own parser and this module's compiler
recurse); no integer result may need more than ``MAX_INT_BITS`` bits, so ``9**9**9`` is an error and
not an hour of arithmetic; text is never repeated and ``bits`` gives at most 64. Constant parts are
evaluated when the expression is parsed, so lint reports a constant that breaks a bound.
"""

from __future__ import annotations

import ast
import functools
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

_IO = re.compile(r"(?<![A-Za-z0-9_])(in|out)\s*\[")


MAX_SOURCE_CHARS = 4000  # the longest built-in expression has ~250
MAX_DEPTH = 64  # of the syntax tree: the built-in ones stay under 15
MAX_INT_BITS = 1024  # no dim, count or index of a QNN op needs more than 64


class ExprError(ValueError):
    """An expression that is not in the language (syntax or a forbidden construct)."""


class EvalError(ValueError):
    """An expression that is in the language but cannot be evaluated on this case."""


@dataclass
class TensorInfo:
    """What constraints may ask of a tensor: never its data unless the case has it."""

    shape: tuple[int, ...]
    dtype: str
    data: np.ndarray | None = None  # real values where a constraint reads values (indices...)
    dynamic: tuple[bool, ...] | None = None
    sparse: bool = False
    present: bool = True

    @property
    def dyn(self) -> tuple[bool, ...]:
        return self.dynamic if self.dynamic is not None else (False,) * len(self.shape)


_ABSENT = TensorInfo((), "", present=False)


def _t(x: Any) -> TensorInfo:
    if not isinstance(x, TensorInfo):
        raise EvalError(f"expected a tensor, got {type(x).__name__}")
    if not x.present:
        raise EvalError("tensor is absent")
    return x


def _values(x: Any) -> np.ndarray:
    if isinstance(x, TensorInfo):
        if x.data is None:
            raise EvalError("tensor values are not known in this case")
        return np.asarray(x.data)
    return np.asarray(x)


def _broadcastable(*ts: Any) -> bool:
    shapes = [_t(t).shape if isinstance(t, TensorInfo) else tuple(t) for t in ts]
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def _broadcast_shape(*ts: Any) -> tuple[int, ...]:
    shapes = [_t(t).shape if isinstance(t, TensorInfo) else tuple(t) for t in ts]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise EvalError(f"shapes {shapes} do not broadcast") from None


def _is_kind(*kinds: str) -> Callable[[Any], bool]:
    from opdefs import dtypes

    def f(t: Any) -> bool:
        return dtypes.get(_t(t).dtype).kind in kinds

    return f


def _implies(a: Any, b: Any) -> Any:
    return np.logical_or(np.logical_not(a), b)


def _all(x: Any) -> bool:
    return bool(np.all(_values(x)))


def _any(x: Any) -> bool:
    return bool(np.any(_values(x)))


def _unique(x: Any) -> bool:
    v = _values(x).ravel()
    return len(set(v.tolist())) == v.size


def _increasing(x: Any) -> bool:
    v = _values(x).ravel()
    return bool(np.all(v[1:] > v[:-1]))


def _bits(x: Any, n: Any) -> np.ndarray:
    if not 0 <= int(n) <= 64:
        raise EvalError(f"bits(x, {int(n)}): at most 64 bits")
    return (int(x) >> np.arange(int(n))) & 1


def _size(t: Any) -> int:
    """Python integers: a product of dims in int64 wraps to 0 at 2**64 (65536**4 elements)."""
    n = 1
    for d in _t(t).shape:
        n *= int(d)
    return n


def _dim(t: Any, i: Any) -> int:
    s = _t(t).shape
    i = int(i)
    if not -len(s) <= i < len(s):
        raise EvalError(f"dimension {i} out of range for rank {len(s)}")
    return s[i]


# name -> (function, short description for docs and lint)
FUNCTIONS: dict[str, tuple[Callable[..., Any], str]] = {
    "rank": (lambda t: len(_t(t).shape), "number of dimensions of a tensor"),
    "shape": (lambda t: _t(t).shape, "tuple of dimensions of a tensor"),
    "dim": (_dim, "dim(t, i): size of dimension i"),
    "size": (_size, "number of elements of a tensor"),
    "dtype": (lambda t: _t(t).dtype, "QNN datatype name, e.g. 'UFIXED_POINT_8'"),
    "is_float": (_is_kind("float"), "datatype is a floating-point type"),
    "is_quantized": (_is_kind("ufixed", "sfixed"), "datatype is a fixed-point type"),
    "is_integer": (_is_kind("int", "uint"), "datatype is a plain integer type"),
    "is_bool": (_is_kind("bool"), "datatype is BOOL_8"),
    "present": (lambda t: bool(t.present) if isinstance(t, TensorInfo) else t is not None, "optional input given"),
    "dynamic": (lambda t, i=None: _t(t).dyn if i is None else _t(t).dyn[int(i)], "dynamic flags of a tensor"),
    "sparse": (lambda t: _t(t).sparse, "tensor uses the sparse data format"),
    "values": (_values, "the values of a tensor or parameter"),
    "len": (lambda x: len(_values(x).ravel()) if not isinstance(x, tuple | list) else len(x), "length"),
    "all": (_all, "every element true"),
    "any": (_any, "some element true"),
    "unique": (_unique, "no repeated value"),
    "increasing": (_increasing, "strictly increasing"),
    "implies": (_implies, "a -> b, elementwise"),
    "min": (lambda *a: np.min(_values(a[0])) if len(a) == 1 else min(a), "minimum"),
    "max": (lambda *a: np.max(_values(a[0])) if len(a) == 1 else max(a), "maximum"),
    "abs": (lambda x: np.abs(_values(x)), "absolute value"),
    "sum": (lambda x: np.sum(_values(x)), "sum of elements"),
    "prod": (lambda x: np.prod(_values(x), dtype=np.int64), "product of elements"),
    "floor": (lambda x: np.floor(_values(x)), "floor"),
    "ceil": (lambda x: np.ceil(_values(x)), "ceiling"),
    "int": (lambda x: int(x), "integer"),
    "bits": (lambda x, n: _bits(x, n), "bits(x, n): the n lowest bits of x (n <= 64), bit 0 first"),
    "broadcastable": (_broadcastable, "shapes broadcast together (numpy rules)"),
    "broadcast_shape": (_broadcast_shape, "the broadcast shape"),
    "num_inputs": (None, "number of inputs given (bound per case)"),  # bound by the evaluator
    "num_outputs": (None, "number of outputs declared (bound per case)"),
}

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: lambda a, b: _eq(a, b),
    ast.NotEq: lambda a, b: np.logical_not(_eq(a, b)),
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _eq(a: Any, b: Any) -> Any:
    if isinstance(a, tuple | list) or isinstance(b, tuple | list):
        return tuple(np.asarray(a).tolist()) == tuple(np.asarray(b).tolist()) if np.ndim(a) and np.ndim(b) else a == b
    return np.equal(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else a == b


_ALLOWED = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd, ast.BinOp,
    ast.Compare, ast.Call, ast.Name, ast.Load, ast.Constant, ast.Subscript, ast.Tuple, ast.List, ast.IfExp,
    ast.Slice, *_BINOPS, *_CMPOPS,
)  # fmt: skip

_FORBIDDEN_NAMES = {
    ast.Attribute: "attribute access",
    ast.Lambda: "lambda",
    ast.ListComp: "comprehension",
    ast.SetComp: "comprehension",
    ast.DictComp: "comprehension",
    ast.GeneratorExp: "comprehension",
    ast.Starred: "starred argument",
    ast.NamedExpr: "assignment expression",
    ast.JoinedStr: "f-string",
    ast.Dict: "dict literal",
    ast.Set: "set literal",
    ast.Await: "await",
    ast.Yield: "yield",
}


@dataclass(frozen=True)
class Expr:
    source: str
    tree: ast.Expression

    def names(self) -> set[str]:
        """Free names the expression uses, with ``_in``/``_out`` shown as ``in``/``out``. A fresh set per call
        (callers may change it) copied from one walk of the tree: the generator asks it inside every draw,
        and walking the tree each time was about 8% of drawing a case."""
        return set(self._names)

    @functools.cached_property
    def _names(self) -> frozenset[str]:
        return frozenset(node.id.lstrip("_") for node in ast.walk(self.tree)
                         if isinstance(node, ast.Name) and node.id not in FUNCTIONS)  # fmt: skip

    def tensor_refs(self) -> set[str]:
        """``in[0]``-style references with a constant index (a fresh set, from one walk, as ``names``)."""
        return set(self._tensor_refs)

    @functools.cached_property
    def _tensor_refs(self) -> frozenset[str]:
        return frozenset(
            f"{node.value.id[1:]}[{node.slice.value}]"
            for node in ast.walk(self.tree)
            if isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("_in", "_out")
            and isinstance(node.slice, ast.Constant)
        )

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return self._compiled(env)

    @functools.cached_property
    def _compiled(self) -> _Fn:
        return _compile(self.tree.body)

    # ---- structure, for the generator: it asks the parsed constraint, never its spelling ----------
    def conjuncts(self) -> list[ast.expr]:
        """The top-level ``and``-ed parts (the whole expression when there is no ``and``)."""
        body = self.tree.body
        if isinstance(body, ast.BoolOp) and isinstance(body.op, ast.And):
            return list(body.values)
        return [body]

    def same_shape_pair(self) -> tuple[str, str] | None:
        """``(a, b)`` when the expression is exactly ``shape(a) == shape(b)`` for two tensors."""
        body = self.tree.body
        if not (isinstance(body, ast.Compare) and len(body.ops) == 1 and isinstance(body.ops[0], ast.Eq)):
            return None
        sides = [_shape_of(body.left), _shape_of(body.comparators[0])]
        return (sides[0], sides[1]) if all(sides) else None

    def lower_bound(self, name: str) -> float | None:
        """The constant a conjunct bounds ``name`` (or every element of it) from below by, in integer
        terms: ``x > 0`` and ``all(x >= 1)`` give 1, ``0 <= x < N`` gives 0; None when nothing says."""
        best: float | None = None
        for op, left, right in self._comparisons():
            bound = None
            if _is_name(left, name) and isinstance(right, ast.Constant) and isinstance(op, ast.Gt | ast.GtE):
                bound = right.value + (1 if isinstance(op, ast.Gt) else 0)
            elif _is_name(right, name) and isinstance(left, ast.Constant) and isinstance(op, ast.Lt | ast.LtE):
                bound = left.value + (1 if isinstance(op, ast.Lt) else 0)
            if isinstance(bound, int | float) and not isinstance(bound, bool):
                best = bound if best is None else max(best, bound)
        return best

    def _comparisons(self) -> list[tuple[ast.cmpop, ast.expr, ast.expr]]:
        """Every (operator, left, right) link of the conjuncts that are comparisons, bare or inside
        ``all(...)``: ``0 <= x < N`` gives two links."""
        out = []
        for part in self.conjuncts():
            if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "all" and part.args:
                part = part.args[0]
            if isinstance(part, ast.Compare):
                operands = [part.left, *part.comparators]
                out += list(zip(part.ops, operands, operands[1:], strict=False))
        return out

    def bounds(self, name: str) -> tuple[list[Expr], list[Expr]]:
        """Expressions bounding ``name`` (or every element of it) from below and from above, in integer
        terms, from conjuncts such as ``all(0 <= axis <= rank(in[0])-1)`` or ``all(perm < rank(in[0]))``:
        the generator evaluates them once the tensors they name exist and draws inside, instead of
        drawing blind and refusing. ``values(name)`` counts as ``name``; comparisons inside other
        calls (``implies``) say nothing unconditional and are skipped. Worked out once per name: the
        generator asks on every draw."""
        memo = self.__dict__.setdefault("_bounds", {})  # a frozen dataclass: its __dict__ is still ours
        if name not in memo:
            memo[name] = self._find_bounds(name)
        return memo[name]

    def _find_bounds(self, name: str) -> tuple[list[Expr], list[Expr]]:
        lows: list[Expr] = []
        highs: list[Expr] = []
        for op, left, right in self._comparisons():
            if isinstance(op, ast.Gt | ast.GtE) and _is_value_of(left, name):
                lows.append(_bound_expr(right, 1 if isinstance(op, ast.Gt) else 0))
            elif isinstance(op, ast.Lt | ast.LtE) and _is_value_of(left, name):
                highs.append(_bound_expr(right, -1 if isinstance(op, ast.Lt) else 0))
            elif isinstance(op, ast.Lt | ast.LtE) and _is_value_of(right, name):
                lows.append(_bound_expr(left, 1 if isinstance(op, ast.Lt) else 0))
            elif isinstance(op, ast.Gt | ast.GtE) and _is_value_of(right, name):
                highs.append(_bound_expr(left, -1 if isinstance(op, ast.Gt) else 0))
        return lows, highs

    def dim_equalities(self) -> list[tuple[Expr | None, str, str]]:
        """``(condition, a, b)`` from conjuncts ``a == b`` (condition None) or ``implies(c, a == b)``, for two
        plain names (MaskedSoftmax: COMPRESSED mode ties width to channel)."""
        out = []
        for part in self.conjuncts():
            cond = None
            if (isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "implies"
                    and len(part.args) == 2):  # fmt: skip
                tree = ast.fix_missing_locations(ast.Expression(part.args[0]))
                cond, part = Expr(ast.unparse(tree), tree), part.args[1]
            if (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.Eq)
                    and isinstance(part.left, ast.Name) and isinstance(part.comparators[0], ast.Name)):  # fmt: skip
                out.append((cond, part.left.id, part.comparators[0].id))
        return out

    def all_arguments(self) -> list[Expr] | None:
        """The arguments of the conjuncts when every one is ``all(x)``, each as an expression of its own
        (what must hold element by element), else None."""
        out = []
        for part in self.conjuncts():
            if not (isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "all"
                    and len(part.args) == 1):  # fmt: skip
                return None
            tree = ast.fix_missing_locations(ast.Expression(part.args[0]))
            out.append(Expr(ast.unparse(tree), tree))
        return out

    def indexed_shape_equals(self, name: str) -> tuple[str, int] | None:
        """``(tensor, c)`` when a conjunct is ``all(values(shape(tensor))[name] == c)``: the values of
        ``name`` index dims of ``tensor`` whose size is ``c`` (Squeeze's axes: dims of size 1)."""
        for part in self.conjuncts():
            if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "all" and part.args:
                part = part.args[0]
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.Eq)):
                continue
            left, right = part.left, part.comparators[0]
            if not (isinstance(right, ast.Constant) and isinstance(right.value, int) and isinstance(left, ast.Subscript)
                    and _is_name(left.slice, name)):  # fmt: skip
                continue
            base = left.value
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "values":
                base = base.args[0] if base.args else base
            tensor = _shape_of(base)
            if tensor:
                return tensor, int(right.value)
        return None

    def divisibility(self) -> list[tuple[str, str]]:
        """``(dividend, divisor)`` from conjuncts ``a % b == 0``: a name and the divisor's source, a name
        (GroupNorm's channel and group) or an expression (SpaceToDepth's ``block_size[0]``, DepthToSpace's
        ``block_size[0] * block_size[1]``)."""
        out = []
        for part in self.conjuncts():
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.Eq)):
                continue
            left, right = part.left, part.comparators[0]
            if (isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod) and isinstance(left.left, ast.Name)
                    and isinstance(right, ast.Constant) and right.value == 0):  # fmt: skip
                divisor = left.right.id if isinstance(left.right, ast.Name) else ast.unparse(left.right)
                out.append((left.left.id, divisor))
        return out

    def memberships(self) -> list[tuple[str, list[Expr]]]:
        """``(name, options)`` from conjuncts ``name in (a, b, ...)`` (CombinedNms's ``q in (1, num_classes)``):
        a dim drawn as one of its options is valid by construction."""
        out = []
        for part in self.conjuncts():
            if (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.In)
                    and isinstance(part.left, ast.Name)
                    and isinstance(part.comparators[0], ast.Tuple | ast.List)):  # fmt: skip
                options = []
                for e in part.comparators[0].elts:
                    tree = ast.fix_missing_locations(ast.Expression(e))
                    options.append(Expr(ast.unparse(tree), tree))
                out.append((part.left.id, options))
        return out

    def ratio(self) -> tuple[str, str] | None:
        """``(a, b)`` when the expression is exactly ``a / b`` of two names: a dim derived this way exists only
        where ``b`` divides ``a`` (DepthWiseConv2d's depth_multiplier = channel_out / channel_in)."""
        body = self.tree.body
        if (isinstance(body, ast.BinOp) and isinstance(body.op, ast.Div | ast.FloorDiv)
                and isinstance(body.left, ast.Name) and isinstance(body.right, ast.Name)):  # fmt: skip
            return body.left.id, body.right.id
        return None

    def requires_unique(self, name: str) -> bool:
        """Whether a conjunct is ``unique(name)``."""
        def of(node: ast.expr) -> bool:  # ``values(in[1])`` given as the name matches that call
            return _is_name(node, name) or ("(" in name and _is_value_of(node, name))

        return any(isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "unique"
                   and len(p.args) == 1 and of(p.args[0]) for p in self.conjuncts())  # fmt: skip


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_value_of(node: ast.expr, name: str) -> bool:
    """``name`` itself or ``values(name)``; a ``name`` such as ``rank(in[0])`` matches that call."""
    if "(" in name:
        return ast.unparse(node) == _IO.sub(lambda m: f"_{m.group(1)}[", name)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "values" and node.args:
        node = node.args[0]
    return _is_name(node, name)


def _bound_expr(node: ast.expr, shift: int) -> Expr:
    """``node + shift`` as an expression of its own (a strict bound moved onto the integers)."""
    body = node if not shift else ast.BinOp(node, ast.Add(), ast.Constant(shift))
    tree = ast.fix_missing_locations(ast.Expression(body))
    return Expr(ast.unparse(tree), tree)


def _shape_of(node: ast.expr) -> str | None:
    """``in[k]`` / ``out[k]`` when ``node`` is ``shape(in[k])``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "shape"
            and len(node.args) == 1):  # fmt: skip
        return None
    arg = node.args[0]
    if (isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and arg.value.id in ("_in", "_out")
            and isinstance(arg.slice, ast.Constant)):  # fmt: skip
        return f"{arg.value.id[1:]}[{arg.slice.value}]"
    return None


@functools.lru_cache(maxsize=8192)
def parse(source: str) -> Expr:
    """Parse and whitelist-check; raises ExprError naming the offending construct. Cached: the generator
    asks for the same dim formulas and bounds on every draw, and an ``Expr`` never changes."""
    if not isinstance(source, str) or not source.strip():
        raise ExprError("empty expression")
    if len(source) > MAX_SOURCE_CHARS:
        raise ExprError(f"an expression of {len(source)} characters (at most {MAX_SOURCE_CHARS})")
    text = _IO.sub(lambda m: f"_{m.group(1)}[", source)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ExprError(f"syntax error: {e.msg} (column {e.offset})") from None
    except (ValueError, RecursionError, MemoryError) as e:  # a literal past Python's digit limit, deep nesting
        raise ExprError(f"cannot be parsed: {type(e).__name__}: {str(e)[:200]}") from None
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        raise ExprError(f"nested {depth} deep (at most {MAX_DEPTH})")
    nodes = list(ast.walk(tree))
    for node in nodes:  # constructs first: "lambda is not allowed" says more than "call of ... "
        for bad, what in _FORBIDDEN_NAMES.items():
            if isinstance(node, bad):
                raise ExprError(f"{what} is not allowed in constraint expressions")
    for node in nodes:
        if not isinstance(node, _ALLOWED):
            raise ExprError(f"{type(node).__name__} is not allowed in constraint expressions")
        if isinstance(node, ast.Name) and node.id.startswith("_") and node.id not in ("_in", "_out"):
            raise ExprError(f"name {node.id!r} is not allowed (names may not start with '_')")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                fname = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
                raise ExprError(f"call of {fname!r} is not allowed; known functions: {', '.join(sorted(FUNCTIONS))}")
            if node.keywords:
                raise ExprError("keyword arguments are not allowed")
        if isinstance(node, ast.Constant) and not isinstance(node.value, int | float | str | bool | type(None)):
            raise ExprError(f"constant {node.value!r} is not allowed")
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and node.value.bit_length() > MAX_INT_BITS:
            raise ExprError(f"integer constant of {node.value.bit_length()} bits (at most {MAX_INT_BITS})")
    _check_constants(tree.body)
    return Expr(source, tree)


def _depth(tree: ast.AST) -> int:
    """Depth of the syntax tree, without recursion (the tree to measure may be deeper than the stack)."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, d = todo.pop()
        deepest = max(deepest, d)
        todo += [(child, d + 1) for child in ast.iter_child_nodes(node)]
    return deepest


_CONSTANT_PARTS = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.List, ast.operator, ast.unaryop,
                   ast.Load)  # fmt: skip


def _check_constants(node: ast.AST) -> None:
    """Evaluate every largest part made of constants and arithmetic alone (``9**9**9``), so a constant that
    breaks a bound is an ExprError here, at lint time, rather than at every draw."""
    if isinstance(node, ast.BinOp | ast.UnaryOp) and all(isinstance(n, _CONSTANT_PARTS) for n in ast.walk(node)):
        try:
            _compile(node)({})
        except (EvalError, TypeError, ValueError, OverflowError, ZeroDivisionError) as e:
            raise ExprError(f"{ast.unparse(node)[:80]} cannot be evaluated: {e}") from None
        return
    for child in ast.iter_child_nodes(node):
        _check_constants(child)


_Fn = Callable[[Mapping[str, Any]], Any]


def _compile(node: ast.AST) -> _Fn:
    """The whitelisted tree as nested closures, built once per expression: the generator evaluates the same
    few hundred constraints on every draw, and walking the tree by method lookup cost twice as much. Only
    our own closures run; nothing of the spec becomes code."""
    kind = type(node).__name__
    make = _COMPILERS.get(kind)
    if make is None:  # parse() already refused it; this is a second wall
        raise ExprError(f"{kind} is not allowed")
    return make(node)


def _c_constant(n: ast.Constant) -> _Fn:
    value = n.value
    return lambda env: value


def _c_name(n: ast.Name) -> _Fn:
    name = n.id
    missing = f"name {name.lstrip('_')!r} is not bound in this case"

    def f(env: Mapping[str, Any]) -> Any:
        try:
            return env[name]
        except KeyError:
            raise EvalError(missing) from None

    return f


def _c_tuple(n: ast.Tuple | ast.List) -> _Fn:
    parts = [_compile(e) for e in n.elts]
    return lambda env: tuple(p(env) for p in parts)


def _c_slice(n: ast.Slice) -> _Fn:
    parts = [None if x is None else _compile(x) for x in (n.lower, n.upper, n.step)]
    return lambda env: slice(*(None if p is None else int(p(env)) for p in parts))


def _c_subscript(n: ast.Subscript) -> _Fn:
    base_f = _compile(n.value)
    io = isinstance(n.value, ast.Name) and n.value.id in ("_in", "_out")
    if isinstance(n.slice, ast.Slice):
        slice_f = _c_slice(n.slice)
        return lambda env: base_f(env)[slice_f(env)]
    idx_f = _compile(n.slice)

    def f(env: Mapping[str, Any]) -> Any:
        return _subscript(base_f(env), idx_f(env), io)

    return f


def _subscript(base: Any, idx: Any, io: bool) -> Any:
    if isinstance(idx, np.ndarray) or (isinstance(idx, tuple) and any(isinstance(i, slice) for i in idx)):
        try:
            return np.asarray(base)[idx if not isinstance(idx, np.ndarray) else idx.astype(np.int64)]
        except IndexError as e:
            raise EvalError(f"index out of range: {e}") from None
    if isinstance(base, TensorInfo):
        raise EvalError("index a tensor through shape(t)[i] or values(t)[i]")
    try:
        if isinstance(idx, tuple):
            return np.asarray(base)[idx]
        if io and isinstance(base, list) and isinstance(idx, int | np.integer) and not -len(base) <= idx < len(base):
            return _ABSENT  # in[k] beyond the given inputs: an absent optional input
        return base[int(idx)] if not isinstance(base, dict) else base[idx]
    except (IndexError, KeyError, TypeError) as e:
        raise EvalError(f"index {idx!r} out of range: {e}") from None


def _c_unary(n: ast.UnaryOp) -> _Fn:
    operand = _compile(n.operand)
    if isinstance(n.op, ast.Not):
        def f(env: Mapping[str, Any]) -> Any:
            v = operand(env)
            return np.logical_not(v) if isinstance(v, np.ndarray) else not v
    elif isinstance(n.op, ast.USub):
        def f(env: Mapping[str, Any]) -> Any:
            v = operand(env)
            return -np.asarray(v) if isinstance(v, tuple | list) else -v
    else:
        f = operand
    return f


def _bounded_pow(a: Any, b: Any) -> Any:
    """``a ** b``, refused where Python integers would need more than MAX_INT_BITS bits (it would take
    minutes, and no spec quantity is that large)."""
    big = isinstance(a, int) and isinstance(b, int) and b > 1 and abs(a) > 1
    if big and (abs(a).bit_length() - 1) * b > MAX_INT_BITS:
        raise EvalError(f"{a}**{b}: integer too large (more than {MAX_INT_BITS} bits)")
    return operator.pow(a, b)


def _bounded_mul(a: Any, b: Any) -> Any:
    if isinstance(a, str) or isinstance(b, str):
        raise EvalError("text cannot be multiplied")
    r = operator.mul(a, b)
    if type(r) is int and r.bit_length() > MAX_INT_BITS:
        raise EvalError(f"integer too large (more than {MAX_INT_BITS} bits)")
    return r


def _c_binop(n: ast.BinOp) -> _Fn:
    fn = _BINOPS[type(n.op)]
    fn = _bounded_pow if fn is operator.pow else _bounded_mul if fn is operator.mul else fn
    left, right = _compile(n.left), _compile(n.right)
    concat = isinstance(n.op, ast.Add)

    def f(env: Mapping[str, Any]) -> Any:
        a, b = left(env), right(env)
        if concat and isinstance(a, tuple | list) and isinstance(b, tuple | list):
            return tuple(a) + tuple(b)
        if isinstance(a, tuple | list):
            a = np.asarray(a)
        if isinstance(b, tuple | list):
            b = np.asarray(b)
        if isinstance(a, np.ndarray | np.generic) or isinstance(b, np.ndarray | np.generic):
            with np.errstate(all="ignore"):  # numpy's x/0 is inf or nan with a warning, not an error
                return fn(a, b)
        try:
            return fn(a, b)
        except ZeroDivisionError:
            raise EvalError("division by zero") from None
        except OverflowError as e:  # float arithmetic past 1e308
            raise EvalError(f"overflow: {e}") from None

    return f


def _c_boolop(n: ast.BoolOp) -> _Fn:
    parts = [_compile(v) for v in n.values]
    stop_when = not isinstance(n.op, ast.And)  # "and" stops at the first false part, "or" at the first true

    def f(env: Mapping[str, Any]) -> Any:
        result: Any = not stop_when
        for p in parts:
            result = p(env)
            if _truth(result) is stop_when:
                return result
        return result

    return f


def _c_compare(n: ast.Compare) -> _Fn:
    left_f = _compile(n.left)
    links = []
    for op, comp in zip(n.ops, n.comparators, strict=True):
        membership = isinstance(op, ast.In | ast.NotIn)
        links.append((_CMPOPS[type(op)], _compile(comp), membership, membership or isinstance(op, ast.Eq | ast.NotEq)))

    def f(env: Mapping[str, Any]) -> Any:
        left = left_f(env)
        result: Any = True
        for fn, right_f, membership, keep_right in links:
            right = right_f(env)
            lv = np.asarray(left) if not membership and isinstance(left, tuple | list) else left
            rv = np.asarray(right) if not keep_right and isinstance(right, tuple | list) else right
            r = fn(lv, rv)
            result = np.logical_and(result, r) if isinstance(r, np.ndarray) else (result and r)
            left = right
        return result

    return f


def _c_ifexp(n: ast.IfExp) -> _Fn:
    test, body, orelse = _compile(n.test), _compile(n.body), _compile(n.orelse)
    return lambda env: body(env) if _truth(test(env)) else orelse(env)


def _c_call(n: ast.Call) -> _Fn:
    name = n.func.id  # type: ignore[attr-defined]
    if name == "present" and len(n.args) == 1 and isinstance(n.args[0], ast.Name):
        # a parameter left out takes its default for every other use, but is not "present"
        pname = n.args[0].id
        return lambda env: pname in env and pname not in env.get("__absent__", ())
    args = [_compile(a) for a in n.args]
    bound, default = f"__fn_{name}", FUNCTIONS[name][0]

    def f(env: Mapping[str, Any]) -> Any:
        fn = env.get(bound) or default
        if fn is None:
            raise EvalError(f"{name}() is not bound in this case")
        values = [a(env) for a in args]
        try:
            return fn(*values)
        except EvalError:
            raise
        except (TypeError, ValueError, IndexError, KeyError, OverflowError) as e:
            raise EvalError(f"{name}(): {e}") from None

    return f


_COMPILERS: dict[str, Callable[[Any], _Fn]] = {
    "Constant": _c_constant, "Name": _c_name, "Tuple": _c_tuple, "List": _c_tuple, "Slice": _c_slice,
    "Subscript": _c_subscript, "UnaryOp": _c_unary, "BinOp": _c_binop, "BoolOp": _c_boolop,
    "Compare": _c_compare, "IfExp": _c_ifexp, "Call": _c_call,
}  # fmt: skip


def _truth(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return bool(np.all(v))
    return bool(v)


def holds(expr: Expr, env: Mapping[str, Any]) -> bool:
    """True/False for a constraint on one case; EvalError when it cannot be decided (including
    operands that do not fit together, e.g. vectors of different lengths after a mutation)."""
    try:
        return _truth(expr.evaluate(env))
    except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, OverflowError) as e:
        if isinstance(e, EvalError | ExprError):
            raise
        raise EvalError(f"{type(e).__name__}: {e}") from None


def function_binding(name: str, fn: Callable[..., Any]) -> tuple[str, Callable[..., Any]]:
    """Env entry that binds a per-case function such as ``num_inputs``."""
    return f"__fn_{name}", fn


__all__ = ["Expr", "ExprError", "EvalError", "TensorInfo", "FUNCTIONS", "parse", "holds"]
