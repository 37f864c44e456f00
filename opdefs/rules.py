"""Seed constraint sentences -> checkable expressions, by pattern.

Each rule is a regex over the cleaned sentence (its ``Kind:`` prefix removed) and a template. The
template sees ``{self}`` (the tensor or parameter the sentence is attached to), the regex groups,
and ``{rank}`` (the rank symbol the owner's shape declares, e.g. ``N`` for "a tensor of rank N").
A sentence no rule matches stays as text; curators can add ``check:`` by hand in the YAML and the
importer keeps it. Rules return None when they cannot be sure (e.g. an unknown rank symbol).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_IO = r"(?:in|out)\[\d+\]"


@dataclass
class Context:
    owner: str  # "in[0]", "out[1]", or a parameter name
    owner_is_tensor: bool
    rank_symbols: dict[str, str]  # symbol -> tensor whose rank it is, e.g. {"N": "in[0]"}
    params: set[str]
    dims: dict[str, tuple[str, int]]  # dim name -> (tensor, index) where first declared
    tensor_dims: dict[str, list[str]]  # tensor -> its dims as written, e.g. ["fh", "fw", "channel_in/group"]


Rule = tuple[re.Pattern[str], Callable[[re.Match[str], Context], str | None]]


def _sym(expr: str, ctx: Context) -> str | None:
    """Replace rank symbols (n, N, M...) by rank(tensor); unknown single letters -> None."""
    out = re.sub(r"QNN_OP_[A-Z0-9_]+?_PARAM_([A-Z0-9_]+)", lambda m: m.group(1).lower(), expr)
    for sym, tensor in ctx.rank_symbols.items():
        out = re.sub(rf"(?<![A-Za-z0-9_\[]){re.escape(sym)}(?![A-Za-z0-9_\]])", f"rank({tensor})", out)
    return out


def _shape_ref(text: str) -> str:
    """``shape(in[0])[axis]`` stays; ``Shape(in[0])[x]`` is lower-cased."""
    return re.sub(r"Shape\(", "shape(", text)


def _range(m: re.Match[str], ctx: Context) -> str | None:
    lo, hi, closed = m.group("lo"), m.group("hi"), m.group("close") == "]"
    lo_e, hi_e = _sym(_shape_ref(lo), ctx), _sym(_shape_ref(hi), ctx)
    if lo_e is None or hi_e is None or re.search(r"\b[a-zA-Z]\b", hi_e.replace("rank", "")):
        # a bare one-letter symbol the owner's shapes do not bind
        if not re.fullmatch(r"[\w\[\]()+\-* ./]+", hi_e or ""):
            return None
    target = ctx.owner
    cmp = "<=" if closed else "<"
    body = f"{lo_e} <= values({target}) {cmp} {hi_e}" if ctx.owner_is_tensor else f"{lo_e} <= {target} {cmp} {hi_e}"
    return f"all({body})"


RULES: list[Rule] = []


def rule(pattern: str) -> Callable[[Callable[[re.Match[str], Context], str | None]], None]:
    def deco(fn: Callable[[re.Match[str], Context], str | None]) -> None:
        RULES.append((re.compile(pattern, re.IGNORECASE), fn))

    return deco


@rule(rf"^Same data ?types? as (?P<t>{_IO})\.?$")
def _same_dtype(m: re.Match[str], ctx: Context) -> str | None:
    return f"dtype({ctx.owner}) == dtype({m.group('t')})" if ctx.owner_is_tensor else None


@rule(r"^Rank (?:[A-Za-z] )?(?P<op>>|>=) (?P<n>\d+)$")
def _rank_bound(m: re.Match[str], ctx: Context) -> str | None:
    return f"rank({ctx.owner}) {m.group('op')} {m.group('n')}" if ctx.owner_is_tensor else None


@rule(r"^Rank (?:must be |= |== )?(?P<n>\d+)$")
def _rank_eq(m: re.Match[str], ctx: Context) -> str | None:
    return f"rank({ctx.owner}) == {m.group('n')}" if ctx.owner_is_tensor else None


@rule(rf"^Same shape as (?P<t>{_IO})\.?$")
def _same_shape(m: re.Match[str], ctx: Context) -> str | None:
    return f"shape({ctx.owner}) == shape({m.group('t')})" if ctx.owner_is_tensor else None


@rule(rf"^Same rank as (?P<t>{_IO})\.?$")
def _same_rank(m: re.Match[str], ctx: Context) -> str | None:
    return f"rank({ctx.owner}) == rank({m.group('t')})" if ctx.owner_is_tensor else None


@rule(r"^(?:Strides|Dilations|Sizes|Rates|Elements|Values?|Must|[a-z_]+) (?:must )?(?:be )?(?P<op>>|>=|<|<=) ?(?P<n>-?\d+(?:\.\d+)?)\.?$")
def _positive(m: re.Match[str], ctx: Context) -> str | None:
    target = ctx.owner if not ctx.owner_is_tensor else f"values({ctx.owner})"
    return f"all({target} {m.group('op')} {m.group('n')})"


@rule(r"^(?:(?P<p>[a-z_]+) must be |Must be |Index values must be |Indices must be )?in range (?P<open>[\[(])\s*(?P<lo>[^,]+?)\s*,\s*(?P<hi>.+?)\s*(?P<close>[\])])\.?$")
def _in_range(m: re.Match[str], ctx: Context) -> str | None:
    if m.group("open") == "(":
        return None
    if m.group("p") and m.group("p") in ctx.params:  # "start must be in range": about another param
        ctx = Context(m.group("p"), False, ctx.rank_symbols, ctx.params, ctx.dims, ctx.tensor_dims)
    return _range(m, ctx)


@rule(r"^(?:Must be |Valid index values must be )?unique\.?$")
def _unique(m: re.Match[str], ctx: Context) -> str | None:
    return f"unique({ctx.owner})" if not ctx.owner_is_tensor else f"unique(values({ctx.owner}))"


@rule(r"^(?P<lo>0) < (?P<m>[A-Z]) <= ?(?P<n>[A-Z])$")
def _m_le_n(m: re.Match[str], ctx: Context) -> str | None:
    a, b = _sym(m.group("m"), ctx), _sym(m.group("n"), ctx)
    if a == m.group("m") or b == m.group("n"):
        # M is the owner's own length when the owner is a 1-D parameter with shape [M]
        if ctx.owner_is_tensor:
            return None
        a = f"len({ctx.owner})" if a == m.group("m") else a
        if b == m.group("n"):
            return None
    return f"0 < {a} <= {b}"


@rule(r"^(?P<a>[a-z_]+) must be (?:evenly )?divisible by (?P<b>[a-z_]+)$")
def _divisible(m: re.Match[str], ctx: Context) -> str | None:
    a, b = m.group("a"), m.group("b")
    if a.lower() not in ctx.dims and a.lower() not in ctx.params:
        return None
    return f"{a.lower()} % {b} == 0"


@rule(r"^(?P<a>[a-z_]+) must be divisible by \((?P<b>[a-z_]+)\[0\] \* (?P=b)\[1\]\)$")
def _divisible_block(m: re.Match[str], ctx: Context) -> str | None:
    a, b = m.group("a"), m.group("b")
    if a not in ctx.dims:
        return None
    return f"{a} % ({b}[0] * {b}[1]) == 0"


@rule(r"^If True (?P<p>[a-z_]+) parameter MUST be false$")
def _exclusive(m: re.Match[str], ctx: Context) -> str | None:
    return f"implies({ctx.owner}, not {m.group('p')})"


@rule(r"^Must have \*?operation\*? set to (?P<a>[A-Z_]+)(?: or (?P<b>[A-Z_]+))? for this parameter to be valid\.?$")
def _valid_only_for(m: re.Match[str], ctx: Context) -> str | None:
    allowed = [x for x in (m.group("a"), m.group("b")) if x]
    return f"implies(present({ctx.owner}), operation in ({', '.join(allowed)},))"


@rule(r"^Must be provided when \*?operation\*? is set to (?P<a>[A-Z_]+)\.?$")
def _required_for(m: re.Match[str], ctx: Context) -> str | None:
    return f"implies(operation == {m.group('a')}, present({ctx.owner}))"


@rule(r"^(?P<a>[a-z_]+) must be <= (?P<b>[a-z_]+)$")
def _le_param(m: re.Match[str], ctx: Context) -> str | None:
    if m.group("a") not in ctx.params or m.group("b") not in ctx.params:
        return None
    return f"implies(present({m.group('a')}) and present({m.group('b')}), {m.group('a')} <= {m.group('b')})"


@rule(r"^Must be >= (?P<p>[a-z_]+)$")
def _ge_param(m: re.Match[str], ctx: Context) -> str | None:
    return f"{ctx.owner} >= {m.group('p')}" if m.group("p") in ctx.params else None


@rule(r"^Does not support floating point data types$")
def _no_float(m: re.Match[str], ctx: Context) -> str | None:
    return f"not is_float({ctx.owner})" if ctx.owner_is_tensor else None


@rule(r"^For each dimension, if shape\((?P<a>" + _IO + r")\)\[i\] is dynamic then shape\((?P<b>" + _IO + r")\)\[i\] must be dynamic\.$")
def _dyn_follow(m: re.Match[str], ctx: Context) -> str | None:
    return f"all(implies(dynamic({m.group('a')}), dynamic({m.group('b')})))"


@rule(r"^shape\((?P<a>" + _IO + r")\)\[(?P<da>[a-z_/ ]+)\] and shape\((?P<b>" + _IO + r")\)\[(?P<db>[a-z_/ ]+)\] must (?:both )?be (?:both )?dynamic or both static\.?$")
def _dyn_pair(m: re.Match[str], ctx: Context) -> str | None:
    da, db = m.group("da").replace(" ", ""), m.group("db").replace(" ", "")
    ia, ib = _dim_index(m.group("a"), da, ctx), _dim_index(m.group("b"), db, ctx)
    if ia is None or ib is None:
        return None
    return f"dynamic({m.group('a')}, {ia}) == dynamic({m.group('b')}, {ib})"


def _dim_index(tensor: str, dim: str, ctx: Context) -> int | None:
    dims = [d.replace(" ", "") for d in ctx.tensor_dims.get(tensor, [])]
    return dims.index(dim) if dim in dims else None


@rule(r"^Must (?P<neg>not )?be a sparse tensor\.?$")
def _sparse(m: re.Match[str], ctx: Context) -> str | None:
    return f"{'not ' if m.group('neg') else ''}sparse({ctx.owner})" if ctx.owner_is_tensor else None


@rule(rf"^Must have same data format as (?P<t>{_IO}) \(e\.g\. both sparse or both dense\)$")
def _same_format(m: re.Match[str], ctx: Context) -> str | None:
    return f"sparse({ctx.owner}) == sparse({m.group('t')})" if ctx.owner_is_tensor else None


@rule(r"^(?P<p>[a-z_]+) must be set to (?P<v>[A-Z_]+) for this parameter to be valid\.?$")
def _valid_only_if_param(m: re.Match[str], ctx: Context) -> str | None:
    return f"implies(present({ctx.owner}), {m.group('p')} == {m.group('v')})" if m.group("p") in ctx.params else None


@rule(r"^Must be (?P<rel>less|greater) than (?P<p>[a-z_]+)$")
def _vs_param(m: re.Match[str], ctx: Context) -> str | None:
    op = "<" if m.group("rel") == "less" else ">"
    return f"{ctx.owner} {op} {m.group('p')}" if m.group("p") in ctx.params else None


@rule(r"^(?:Must be )?(?P<op><=|<|>=|>) (?P<p>[a-z_]+)$")
def _cmp_param(m: re.Match[str], ctx: Context) -> str | None:
    if m.group("p") not in ctx.params:
        return None
    target = f"values({ctx.owner})" if ctx.owner_is_tensor else ctx.owner
    return f"all({target} {m.group('op')} {m.group('p')})"


@rule(r"^(?:Stride|Strides|Value) must be nonzero$")
def _nonzero(m: re.Match[str], ctx: Context) -> str | None:
    return f"all({ctx.owner} != 0)" if not ctx.owner_is_tensor else f"all(values({ctx.owner}) != 0)"


@rule(rf"^Rank\((?P<t>{_IO})\) must equal (?P<a>\d+) or (?P<b>\d+)$")
def _rank_either(m: re.Match[str], ctx: Context) -> str | None:
    return f"rank({m.group('t')}) in ({m.group('a')}, {m.group('b')})"


@rule(r"^(?P<a>[a-z_]+) must be divisible by (?P<b>[a-z_]+)\[(?P<i>\d)\]$")
def _divisible_elem(m: re.Match[str], ctx: Context) -> str | None:
    if m.group("a") not in ctx.dims or m.group("b") not in ctx.params:
        return None
    return f"{m.group('a')} % {m.group('b')}[{m.group('i')}] == 0"


KINDS = {
    "Datatype": "datatype",
    "Shape": "shape",
    "Value": "value",
    "Dynamic Shape": "dynamic",
    "Number": "number",
}


def split_kind(sentence: str) -> tuple[str, str]:
    """("Shape: Rank > 0") -> ("shape", "Rank > 0"); unprefixed sentences are "structural"."""
    m = re.match(r"^(Datatype|Shape|Value|Dynamic Shape|Number):\s*(.*)$", sentence)
    if m:
        return KINDS[m.group(1)], m.group(2).strip()
    return "structural", sentence.strip()


def translate(sentence: str, ctx: Context) -> str | None:
    _, body = split_kind(sentence)
    body = re.sub(r"\*([A-Za-z_][A-Za-z0-9_\[\].]*)\*", r"\1", body).strip()  # *emphasis*, not a product
    for pat, fn in RULES:
        m = pat.match(body)
        if m:
            out = fn(m, ctx)
            if out is not None:
                return out
    return None
