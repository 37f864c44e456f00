"""Hypothesis strategies built from an OpDef: datatype configurations, shapes, params, values, encodings.

Everything here is driven by the spec; the generator knows no op by name. It builds cases
constructively where the spec's structure says how (symbolic dims shared between tensors, rank
symbols, "same shape as" and "same datatype as" constraints, enum values, unique-valued vectors,
positive-valued vectors) and then runs every checkable constraint on the result: a case that breaks
one is rejected (``hypothesis.assume``), never used. Array contents come from a numpy generator
seeded by a drawn integer, so hypothesis shrinks shapes, params and regimes, not 4096 floats one by one.

Output shapes and output encodings need the op's meaning. The caller may pass ``infer``, a function
returning the real-valued outputs for a case (the pytest module passes the reference): first asked
with no outputs declared; for ops that read their output size from the declared output (Resize,
CropAndResize...) asked again with the outputs the spec's dims give, so their grids are calibrated
on real results too. Without it, outputs are derived from the spec alone where the spec determines them.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from cases import check, determinism
from cases.case import Case, Encoding, Param, Tensor, encoding_for_range
from opdefs import OpDef, dtypes, expr, presets

determinism.pin_hypothesis_constants()  # the same seed draws the same cases in any process (cases/determinism.py)


def _elements(shape: Sequence[int]) -> int:
    """Elements of a shape in Python integers: in int64 the product of 65536**4 wraps to 0 and passes any cap."""
    return math.prod(int(d) for d in shape)


# ---- hypothesis strategies, each built once per distinct argument ---------------------------------------
# Building ``st.integers(lo, hi)`` costs ~30 us (hypothesis keys its own cache on the arguments' types and
# values), nearly what drawing from it costs, and a case draws about a dozen values. The strategies are the
# ones hypothesis would build: the same draws, the same cases.
@functools.lru_cache(maxsize=4096, typed=True)
def _ints(lo: int | None, hi: int | None) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


_BOOL = st.booleans()


def _pick(values: Sequence[Any]) -> st.SearchStrategy[Any]:
    key = tuple(values)
    try:
        hash(key)
    except TypeError:  # unhashable choices (lists): built afresh
        return st.sampled_from(values)
    return _picks(key, repr(key))


@functools.lru_cache(maxsize=4096)
def _picks(values: tuple, spelling: str) -> st.SearchStrategy[Any]:
    """``spelling``, the values' repr, is part of the key: ``(False,) == (0,)`` with equal hashes (and
    ``(1.0,) == (1,)``), so a cache keyed on the values alone handed a boolean parameter the ``sampled_from((0,))``
    another op had asked for first, and the cases of a cell depended on which cells the process drew before
    (Conv2d's after Concat's; ``tests/test_cases_generation.py``)."""
    return st.sampled_from(values)


# Sequences of a fixed length are tuples of independent draws, not lists with min_size == max_size: a list
# draws a (forced) "one more?" choice per element and every list of ints shares one span label whatever its
# length, so hypothesis' mutator, which copies a span onto another of the same label, copied a 2-list onto a
# 4-list and left the case short of choices (an overrun: a refused draw). A tuple's label names its length.
@functools.lru_cache(maxsize=4096)
def _n_of(element: st.SearchStrategy[Any], n: int) -> st.SearchStrategy[tuple[Any, ...]]:
    """``n`` independent draws of ``element``, built once per (strategy, n): the element strategies come from
    the caches above, so equal values share one object and the key is that object."""
    return st.tuples(*[element] * n)


def _int_list(lo: int, hi: int, n: int) -> st.SearchStrategy[tuple[int, ...]]:
    return _n_of(_ints(lo, hi), n)


def _bool_list(n: int) -> st.SearchStrategy[tuple[bool, ...]]:
    return _n_of(_BOOL, n)


def _pick_list(values: tuple, n: int) -> st.SearchStrategy[tuple[Any, ...]]:
    return _n_of(_pick(values), n)


@functools.lru_cache(maxsize=4096)
def _permutation_picks(n: int) -> st.SearchStrategy[tuple[int, ...]]:
    return st.tuples(*[_ints(0, n - 1 - i) for i in range(n - 1)])


def _permutation(draw: st.DrawFn, values: Sequence[Any]) -> list[Any]:
    """A permutation of ``values`` as ``st.permutations`` gives one (shrinking towards the given order), drawn
    as a tuple of n - 1 picks among the values left: a fixed number of choices under a label that names n, so
    the mutator never copies a permutation of 3 onto one of 5 (hypothesis' permutations share one label)."""
    pool = list(values)
    out = [pool.pop(j) for j in draw(_permutation_picks(len(pool)))] if pool else []
    return out + pool


@functools.lru_cache(maxsize=4096, typed=True)
def _default_or(default: Any, other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The default itself (converters write it out) on a coin, else ``other``. A coin and a value are drawn
    either way: ``one_of(just(default), other)`` drew one choice for the default and two otherwise, so the
    mutator's copy of one such span onto another left the case a choice short (a refused draw)."""
    return st.tuples(_BOOL, other).map(lambda t: t[1] if t[0] else default)

Infer = Callable[[OpDef, Case], list[np.ndarray] | None]


TYPICAL, EDGE = "typical", "edge"
TIERS = (TYPICAL, EDGE)


@dataclass(frozen=True)
class Settings:
    """How cases are drawn. ``tier`` decides what a case looks like (see ``case_strategy``)."""

    max_elements: int = 4096  # per tensor: the simulator is slow on big tensors
    max_rank: int = 4
    max_dim: int = 5  # free dims of the edge tier: 1..max_dim
    tier: str = EDGE
    typical_dims: tuple[int, int] = (2, 6)  # free dims of the typical tier: no size-1 degenerate axes
    typical_ranks: tuple[int, int] = (2, 4)  # free ranks of the typical tier
    onto: bool = False  # the spec's ``broadcast_onto``: later inputs stretch onto the first, never the other way
    infer: Infer | None = field(default=None, compare=False)
    # typical cells take every value of every boolean and enum parameter in turn first (``enumerated_slots``);
    # off for a strategy whose choices must replay to the same case (the shrinking step)
    stratify: bool = True


@dataclass(frozen=True)
class Config:
    """One datatype configuration: a type for every declared tensor (repeated ones share it).

    ``per_axis`` names the declared tensors quantized per axis (the axis comes from the tensor's
    ``quantization: [per_axis(k)]`` curation); ``why`` says where the configuration comes from, so
    ``python -m cases configs OP`` can tell a user why a column exists."""

    label: str
    dtypes: tuple[tuple[str, str], ...]  # (declared tensor name, QNN dtype)
    per_axis: tuple[str, ...] = ()
    why: str = ""
    # (declared tensor name, bits): values that use fewer bits than their datatype holds, sent with QNN's
    # bit-width encoding (4-bit weights in an 8-bit container, as ONNX Runtime's QNN EP hands INT4 weights over)
    bitwidth: tuple[tuple[str, int], ...] = ()

    def dtype_of(self, decl_name: str) -> str:
        return dict(self.dtypes)[decl_name]

    def bits_of(self, decl_name: str) -> int | None:
        return dict(self.bitwidth).get(decl_name)


# ---------------------------------------------------------------------------------------------
# Datatype configurations
# ---------------------------------------------------------------------------------------------
def _usable(name: str) -> bool:
    d = dtypes.get(name)
    return d.storage is not None and d.kind != "string"


def _label(chosen: list[tuple[str, str]], primary: str, per_axis: tuple[str, ...] = (),
           bitwidth: dict[str, int] | None = None) -> str:  # fmt: skip
    """``PRIMARY+the other types, sorted`` (the historical form, stable across runs), or for a
    configuration with per-axis or bit-width tensors every type in declaration order with ``/bw4`` and
    ``/axis`` marks."""
    bitwidth = bitwidth or {}
    if per_axis or bitwidth:
        def mark(n: str, t: str) -> str:
            return t + (f"/bw{bitwidth[n]}" if n in bitwidth else "") + ("/axis" if n in per_axis else "")

        return "+".join(dict.fromkeys(mark(n, t) for n, t in chosen))
    if primary:
        extra = sorted({t for _, t in chosen if t != primary})
        return "+".join([primary] + extra)
    return "+".join(dict.fromkeys(t for _, t in chosen))


def configs(op: OpDef) -> list[Config]:
    """Every datatype configuration worth a column, each with the reason it exists:

    - one per *primary* type (``dtypes.BACKEND_SPECIFIC_DEFAULT`` plus the spec's curated
      ``generate.primaries_extra``, e.g. INT_32 for ops converters use on shapes) for the tensors the
      spec leaves backend specific; tensors with explicit types take their first one;
    - one per further explicit type of a tensor (Quantize to every listed fixed-point type, an index
      output as UINT_32 as well as INT_32), with the first primary for the rest;
    - the curated ``generate.extra_configs`` (mixed precision: 16-bit activations with 8- or 4-bit
      weights, per-axis weights, 32-bit bias), each with its ``why``.

    ``generate.configs`` replaces all of this with an explicit list. Configurations a datatype
    constraint forbids outright are dropped. Empty for an op the spec says cannot be generated."""
    if skip_reason(op):
        return []
    gen = op.generation
    decls = op.inputs + op.outputs
    curated = gen.get("configs")
    if curated:
        return [c for c in (_curated_config(decls, c) for c in curated) if _dtypes_allowed(op, c)]
    flexible = any("backend_specific" in (d.get("dtypes") or ["backend_specific"]) for d in decls)
    if flexible:
        primaries = tuple(dict.fromkeys([*dtypes.BACKEND_SPECIFIC_DEFAULT, *gen.get("primaries_extra", [])]))
    else:  # every type explicit: the float types the data tensors list are the primaries (Log: F32, F16)
        primaries = tuple(dict.fromkeys(t for d in decls if _prefer_primary(d) for t in _listed(d))) or ("",)
    out: list[Config] = []

    def base(primary: str) -> list[tuple[str, str]]:
        chosen = []
        for d in decls:
            listed = _listed(d)
            takes_any = "backend_specific" in (d.get("dtypes") or ["backend_specific"])
            if primary and _prefer_primary(d) and (takes_any or primary in listed):
                chosen.append((d["name"], primary))
            else:
                chosen.append((d["name"], listed[0] if listed else primary or "FLOAT_32"))
        return chosen

    for primary in primaries:
        if not primary:
            why = "the first type the spec lists for each tensor"
        elif flexible:
            why = f"primary {primary}: the tensors the spec leaves backend specific take {primary}"
        else:
            why = f"{primary}: one of the float types the spec lists for its data tensors"
        chosen = base(primary)
        out.append(Config(_label(chosen, primary), tuple(chosen), why=why))
    first = primaries[0]
    for k, d in enumerate(decls):
        listed = _listed(d)
        if len(listed) < 2 or (first and _prefer_primary(d)):
            continue
        for alt in listed[1:]:
            chosen = base(first)
            chosen[k] = (d["name"], alt)
            out.append(Config(_label(chosen, first), tuple(chosen), why=f"{d['name']} also lists {alt}"))
    for c in presets.expand(gen.get("extra_configs")):
        out.append(_curated_config(decls, c))
    unique: dict[str, Config] = {}
    for c in out:
        unique.setdefault(c.label, c)
    return [c for c in unique.values() if _dtypes_allowed(op, c)]


def _listed(decl: dict) -> list[str]:
    return [x for x in (decl.get("dtypes") or []) if x != "backend_specific" and _usable(x)]


def _curated_config(decls: list[dict], c: dict) -> Config:
    """A configuration written in the spec: tensor -> dtype, plus ``per_axis`` and ``why``."""
    per_axis = tuple(c.get("per_axis") or ())
    bitwidth = {str(k): int(v) for k, v in (c.get("bitwidth") or {}).items()}
    chosen = [(d["name"], c.get(d["name"], "FLOAT_32")) for d in decls]
    label = _label(chosen, "", per_axis, bitwidth)
    return Config(label, tuple(chosen), per_axis, c.get("why", "curated in the spec (generate.configs)"),
                  tuple(sorted(bitwidth.items())))


def skip_reason(op: OpDef) -> str | None:
    """Why the spec says no case can be generated for this op (subgraphs, STRING params...), or None."""
    return op.generation.get("skip")


def _dtypes_allowed(op: OpDef, config: Config) -> bool:
    """Drop configurations a datatype constraint forbids outright (ElementWiseMod on floats)."""
    tensors = {}
    for name, dt in config.dtypes:
        tensors[f"{name.split('[')[0]}[{_first_index(name)}]"] = Tensor(name, dt, ())
    ins = [tensors.get(f"in[{i}]") for i in range(max([_first_index(d["name"]) for d in op.inputs] or [-1]) + 1)]
    outs = [tensors[f"out[{i}]"] for i in range(len(op.outputs)) if f"out[{i}]" in tensors]
    probe = Case(op.name, ins, {}, outs)
    env = check.environment(op, probe)
    for c in op.constraints:
        if c.kind == "datatype" and c.check is not None:
            try:
                if not expr.holds(c.check, env):
                    return False
            except expr.EvalError:
                continue
    return True


def _prefer_primary(decl: dict) -> bool:
    """'FLOAT_32, FLOAT_16, backend specific' reads as 'the data type'; 'BOOL_8, backend specific'
    (a comparison's output) or 'INT_32, UINT_32, backend specific' (an index) keeps its own type."""
    listed = [x for x in decl.get("dtypes") or [] if x != "backend_specific"]
    return all(dtypes.get(x).kind == "float" for x in listed)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------
def first_index(name: str) -> int:
    """The first index a declared tensor name covers: 2 for ``in[2]`` and for a repeated ``in[2..N]``."""
    return int(re.match(r"^\w+\[(\d+)", name).group(1))


_first_index = first_index


def _eval_dim(d: Any, env: dict[str, Any]) -> int | None:
    """A dim expression's value: a whole number in [0, 2**31), else None. Unsigned parameter vectors
    (pad_amount, stride) take part as signed integers, so a size formula can go negative, not wrap."""
    if isinstance(d, int):
        return d
    signed = {k: v.astype(np.int64) if isinstance(v, np.ndarray) and v.dtype.kind == "u" else v for k, v in env.items()}
    try:
        v = np.asarray(expr.parse(str(d)).evaluate(signed), dtype=np.float64)
    except (expr.ExprError, expr.EvalError, TypeError, ValueError):
        return None
    if v.shape != () or not np.isfinite(v) or v != np.floor(v) or not 0 <= v < 2**31:
        return None
    return int(v)


def _same_shape_targets(op: OpDef) -> dict[str, str]:
    """tensor -> tensor it must have the same shape as (from 'shape(a) == shape(b)' checks)."""
    out = {}
    for c in op.constraints:
        pair = c.check.same_shape_pair() if c.check is not None else None
        if pair:
            out[pair[0]] = pair[1]
    return out


def _param_checks(op: OpDef, name: str) -> list[expr.Expr]:
    return [c.check for c in op.constraints if c.owner == name and c.check is not None]


def random_encoding(rng: np.random.Generator, dtype: str, lo: float = -4.0, hi: float = 4.0) -> Encoding:
    """Scale/offset with zero representable and the grid covering about [lo, hi]."""
    d = dtypes.get(dtype)
    span = (hi - lo) * float(rng.uniform(0.6, 1.4))
    scale = float(np.float32(max(span, 1e-3) / (d.qmax - d.qmin)))
    zero_point = int(round(d.qmin - lo / scale)) if lo < 0 else d.qmin
    zero_point = int(np.clip(zero_point + int(rng.integers(-2, 3)), d.qmin, d.qmax))
    return Encoding((scale,), (-zero_point,))


def encoding_covering(values: np.ndarray, dtype: str) -> Encoding:
    """The grid for the finite values given (an empty set calibrates to [-1, 1])."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    lo = float(finite.min()) if finite.size else -1.0
    hi = float(finite.max()) if finite.size else 1.0
    return encoding_for_range(lo, hi, dtype)


def _share_encoding(inputs: list[Tensor | None]) -> None:
    """Typical data movement with several value inputs (Concat, Pack, ScatterElements' data and
    updates): one grid for all of them, as converters align the encodings around such ops. Whether a
    backend requantizes inputs of different grids is a reading the spec never settles."""
    first = inputs[0] if inputs else None
    if first is None or first.encoding is None or first.encoding.per_axis:
        return
    for t in inputs[1:]:
        if t is not None and t.dtype == first.dtype and t.encoding is not None and not t.encoding.per_axis:
            t.encoding = first.encoding


def _output_encoding(case: Case, real: np.ndarray | None, dtype: str, moves_values: bool = False) -> Encoding:
    """Calibrate the output grid on the expected values (as QDQ flows do), except for ops that only
    move values: when every expected value is one of in[0]'s values and in[0] has the same type, the
    output keeps in[0]'s encoding. The spec never says whether Transpose or ReduceMax requantize, so
    cases must not depend on it (spec-ambiguities.md: prefer cases that do not depend on a reading).

    ``moves_values`` (typical data movement): out[0] also keeps in[0]'s grid when a value the op fills in
    rather than moves (the zeros SpaceToBatch pads with, Pad's constant) lies inside that grid's range, as
    converters keep a data movement op's grid (``_share_encoding`` does the same for its inputs). Why:
    without it a padded SpaceToBatch case got a grid calibrated afresh, 1% wider than in[0]'s; the HTP
    simulator refused half of those cases and, for SFIXED_POINT_8, copied the codes of the others
    unchanged (2 steps off at the ends of the range): typical verdicts about a grid no converter emits.
    The edge tier keeps the calibrated grid, where a backend that ignores out[0]'s own encoding is judged
    (as Pack's inputs are, finding ``pack-s8-raw-codes``)."""
    if real is None:
        return Encoding((8.0 / 255,), (-128,))
    first = case.inputs[0] if case.inputs else None
    if first is not None and first.dtype == dtype and first.encoding is not None and not first.encoding.per_axis:
        scale, offset = first.encoding.scales[0], first.encoding.offsets[0]
        same_grid = [t for t in case.inputs if t is not None and t.data is not None and t.encoding == first.encoding]
        source = np.unique(np.concatenate([scale * (t.data.astype(np.float64).ravel() + offset) for t in same_grid]))
        values = np.asarray(real, dtype=np.float64).ravel()
        if values.size and np.all(np.isin(values, source)):
            return first.encoding
        if values.size and moves_values and _within_grid(values, scale, offset, dtype):
            return first.encoding
    return encoding_covering(real, dtype)


def _within_grid(values: np.ndarray, scale: float, offset: int, dtype: str) -> bool:
    """Whether every value lies inside the range the grid ``(scale, offset)`` of ``dtype`` represents (within half
    a step of its ends): it keeps its place when quantized there, at most half a step away."""
    d = dtypes.get(dtype)
    with np.errstate(all="ignore"):
        codes = values / scale - offset
    return bool(np.all(np.isfinite(codes)) and np.all((codes >= d.qmin - 0.5) & (codes <= d.qmax + 0.5)))


# Value regimes. The typical tier draws what real activations look like; the edge tier adds values near
# zero, large magnitudes and IEEE specials (+-0, +-inf, NaN, subnormals, the largest finite value).
TYPICAL_REGIMES = ("ordinary", "integer_valued")
EDGE_REGIMES = ("ordinary", "near_zero", "large", "integer_valued", "special")
REGIMES = EDGE_REGIMES


def _special_values(dtype: str) -> np.ndarray:
    fi = np.finfo(dtypes.get(dtype).storage)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
                     float(fi.max), -float(fi.max), 1.0, -1.0])  # fmt: skip


def float_values(rng: np.random.Generator, shape: tuple[int, ...], regime: str, dtype: str) -> np.ndarray:
    if regime == "special":
        v = rng.normal(0, 1.0, shape)
        mask = rng.random(shape) < 0.5
        v[mask] = rng.choice(_special_values(dtype), size=int(mask.sum()))
        with np.errstate(over="ignore"):
            return v.astype(dtypes.get(dtype).storage)
    if regime == "near_zero":
        v = rng.normal(0, 1e-3, shape)
    elif regime == "large":
        v = rng.normal(0, 100.0 if dtype != "FLOAT_16" else 30.0, shape)
    elif regime == "integer_valued":
        v = rng.integers(-5, 6, shape).astype(np.float64)
    else:
        v = rng.normal(0, 1.0, shape)
    return v.astype(dtypes.get(dtype).storage)


# ---------------------------------------------------------------------------------------------
# The strategy
# ---------------------------------------------------------------------------------------------
def case_strategy(op: OpDef, config: Config, settings: Settings = Settings()) -> st.SearchStrategy[Case]:
    """Cases of one configuration and tier.

    ``typical`` is the op as converters and real models use it: the spec's rank and layout (rank 2..4
    where the spec leaves it free), free dims in a moderate range (no size-1 axes), every parameter
    given explicitly, optional inputs only where converters emit them (the weights and biases a spec
    marks ``static: preferred``, passed as STATIC tensors), values inside the op's mathematical domain
    (``values.domain``/``nonzero``) and a finite expected result. ``edge`` is everything else the spec
    allows: rank 1 and size-1 dims, omitted defaults, optional inputs present or absent, dynamic
    weights, values outside the domain and IEEE specials."""
    typical = settings.tier == TYPICAL
    if typical and op.generation.get("typical_dims"):
        settings = replace(settings, typical_dims=tuple(op.generation["typical_dims"]))
    if typical and op.generation.get("typical_ranks"):
        settings = replace(settings, typical_ranks=tuple(op.generation["typical_ranks"]))
    broadcast = list(op.generation.get("broadcast") or op.generation.get("broadcast_onto") or [])
    if op.generation.get("broadcast_onto"):
        settings = replace(settings, onto=True)
    # inputs drawn to shape the case, then left out (the output tensor carries what they say): always in
    # the typical tier, as converters do; on a coin flip in the edge tier, where both forms are valid
    shapers = set(op.generation.get("typical_drop") or [])
    typical_when = [expr.parse(x) for x in op.generation.get("typical_when") or []] if typical else []
    explicit_ranks = {len((d.get("shape") or {}).get("dims") or []) for d in op.inputs + op.outputs}
    same_shape = _same_shape_targets(op)
    domains = op.dims
    derived = op.derived
    counts = op.generation
    deferred = _deferred_params(op)
    divisible = [pair for c in op.constraints if c.check is not None for pair in c.check.divisibility()]
    # a dim that is 'a / b' (a derived one, or one a shape lists: Conv2d's filter has channel_in/group) makes b divide a
    ratio_dims = [*derived.values(), *(d for t in op.inputs for d in (t.get("shape") or {}).get("dims") or []
                                       if isinstance(d, str) and "/" in d)]  # fmt: skip
    divisible += [pair for src in ratio_dims if (pair := _ratio(src))]
    rank_limits = _rank_limits(op)
    last_limits = _last_dim_limits(op)
    unique_values = {f"values(in[{_first_index(d['name'])}])" for d in op.inputs for c in op.constraints
                     if c.check is not None and c.check.requires_unique(f"values(in[{_first_index(d['name'])}])")}
    symbols = op.symbols()
    sized_by: dict[str, list[expr.Expr]] = {}  # dim -> the derived dims' formulas that read it
    for src in derived.values():
        formula = expr.parse(str(src))
        for n in formula.names() & symbols:
            sized_by.setdefault(n, []).append(formula)
    defaults = op.param_defaults()
    # dim -> the divisibility checks on dims and parameters alone that name it (SpaceToBatch's '(height + pad) %
    # block == 0'): the last of their dims drawn takes a size that meets them (their parameters are drawn first)
    dim_checks: dict[str, list[expr.Expr]] = {}
    for c in op.constraints:
        if (c.check is not None and not c.check.tensor_refs() and not ({"in", "out"} & c.check.names())
                and "%" in c.check.source):  # fmt: skip
            for n in c.check.names() & symbols:
                dim_checks.setdefault(n, []).append(c.check)
    # the typical tier's conditions on dims and parameters alone (NonMaxSuppression's 'batch == 1', a pool's 'pad at
    # most half the window'): met while drawing - by the last dim they name, the parameters they name - not refused
    steer = [c for c in typical_when if not c.tensor_refs() and not ({"in", "out"} & c.names())]
    for c in steer:
        for n in c.names() & symbols:
            dim_checks.setdefault(n, []).append(c)
    # those that read tensors only through their datatypes (ScatterNd's 'implies(is_quantized(in[0]), reduction ==
    # NONE)'): the configuration fixes the datatypes before anything is drawn, so they steer the parameters too
    by_type = [c for c in typical_when if c.tensor_refs() and _reads_only_datatypes(c)]
    type_env = _datatype_stand_ins(op, config) if by_type else {}
    members = {name: options for c in op.constraints if c.check is not None
               for name, options in c.check.memberships() if name in symbols}  # fmt: skip
    tied = [(cond, a, b) for c in op.constraints if c.check is not None for cond, a, b in c.check.dim_equalities()
            if a in symbols and b in symbols and a != b]  # fmt: skip
    before_outputs = [c for c in op.constraints if c.check is not None and "out" not in c.check.names()
                      and "num_outputs" not in c.check.source]  # fmt: skip
    # what the last check still has to look at once the outputs exist: the rest held on the same inputs and
    # params (a check owned by an output counted as met while it had none)
    after_outputs = [c for c in op.constraints if c.check is not None
                     and (c not in before_outputs or c.owner.startswith("out"))]  # fmt: skip

    presence = _typical_presence(op, shapers) if typical else None
    needed = _needed_params(op)
    slots = typical_slots(op, config) if typical and settings.stratify else []
    shows = {name: expr.parse(src) for name, src in (op.generation.get("shows_when") or {}).items()}
    schedule = _Schedule(slots, lambda name, case: name not in shows or _holds(shows[name], {
        **op.param_defaults(), **check.environment(op, case)}))  # fmt: skip

    def build(draw: st.DrawFn) -> Case:
        forced = schedule.slot()
        try:
            case = _build(draw, forced)
        except BaseException:  # a refused draw (hypothesis' assume) or an overrun: the slot is tried again
            schedule.refused()
            raise
        schedule.kept(case)
        return case

    def _build(draw: st.DrawFn, forced: dict[str, Any]) -> Case:
        env: dict[str, Any] = dict(op.enum_names())
        if presence is not None:
            env["__presence__"] = presence
        seed = draw(_ints(0, 2**32 - 1), label="data seed")
        rng = np.random.default_rng(seed)
        regime = draw(_pick(TYPICAL_REGIMES if typical else EDGE_REGIMES), label="value regime")

        caps: dict[str, int] = {}  # dim -> a smaller upper end the drawing has found it needs

        def dim_value(name: str) -> int:
            if name in env:
                return env[name]
            if name in derived:  # a formula an input's shape needs (Col2Im's L): its own dims first
                for other in sorted(expr.parse(derived[name]).names() & set(domains)):
                    dim_value(other)
                v = _eval_dim(derived[name], env)
                assume(v is not None and v > 0)
            elif (other := _tied_to(draw, name, tied, env)) is not None:
                v = other  # 'implies(mode == COMPRESSED, width == channel)' with the condition met: the same size
            elif name in members:  # 'q in (1, num_classes)': one of the options, the dims they name drawn first
                v = _one_of_options(draw, name, members[name], env, dim_value, symbols)
            else:
                lo, hi = domains.get(name, settings.typical_dims if typical else [1, settings.max_dim])
                if typical and hi > 2:  # no size-1 axes in typical cases, except in tiny curated ranges (batch)
                    lo = max(lo, settings.typical_dims[0])
                if name in caps and lo <= caps[name] < hi:
                    hi = caps[name]
                step = next((d for a, b in divisible if a == name and (d := _eval_dim(b, env)) is not None and d > 0),
                            1)  # fmt: skip
                k_lo, k_hi = -(-lo // step), hi // step
                if k_lo > k_hi and name not in domains:  # a divisor past the free range (DepthToSpace's depth by a
                    k_hi = k_lo  # 3 x 3 block): its least multiple, not a refusal; a curated range is kept to
                # a parameter left out (not one still to be drawn) stands at its default for these checks
                fit_env = {**{k: v for k, v in defaults.items() if k not in deferred and k not in env}, **env}
                fitting = _sizes_that_fit(name, [step * k for k in range(k_lo, k_hi + 1)], sized_by.get(name, ()),
                                          fit_env, dim_checks.get(name, ()))  # fmt: skip
                if fitting == [] and name not in domains:  # none in the free range (ExtractPatches' dilated window
                    # wider than the typical dims): the least size past it that fits, as for a multiple above
                    past = [step * k for k in range(max(k_lo, k_hi + 1), max(k_lo, k_hi + 1) + 16)]
                    fitting = _sizes_that_fit(name, past, sized_by.get(name, ()), fit_env, dim_checks.get(name, ()))
                    fitting = past[:1] if fitting is None else fitting[:1]  # None: every one of them fits
                if fitting is not None:  # a size a derived output dim needs positive (a window larger than its input)
                    assume(bool(fitting))
                    v = draw(_pick(tuple(fitting)), label=name)
                elif step > 1:  # 'channel % group == 0' with group drawn: a multiple of it, not a refusal
                    assume(k_lo <= k_hi)
                    v = step * draw(_ints(k_lo, k_hi), label=name)
                else:
                    v = draw(_ints(lo, hi), label=name)
            env[name] = v
            return v

        # ---- parameters first: shapes often depend on them (group, block_size, axis) ----------
        params: dict[str, Param] = {}
        for name, p in op.params.items():
            if p["dtype"] == "STRING":
                assume(False)
            optional = p.get("mandatory") is False
            if name in deferred:
                continue
            give = not optional or typical or name in needed or draw(_BOOL, label=f"give {name}")
            sh = p.get("shape") or {}
            if not give and (sh.get("dims") or sh.get("rank")):
                continue  # typical cases give every parameter explicitly, as converters do
            # a scalar is drawn even when its coin leaves it out (and then dropped): as many choices either way, so
            # the mutator's copy of one coin onto another does not leave the case a choice short
            value = _draw_param(draw, op, name, p, env, settings, config, dim_value,
                                [c for c in [*steer, *by_type] if name in c.names()], type_env,
                                forced=forced.get(name, _FREE))  # fmt: skip
            if not give:
                continue
            if value is None:
                continue
            params[name] = Param(name, param_dtype(p, config), value)
            env[name] = value
        # an optional parameter its own constraints rule out given the others is left out (Resize's nearest_mode
        # only with NEAREST; typical cases give every other one explicitly, edge cases those their coin gave); one
        # whose constraints name a parameter still to be drawn waits for it (Resize's cubic_coeff for
        # interpolation_mode, drawn after the tensors)
        params, env = _settle_optional(op, params, env, waiting=frozenset(deferred))

        # ---- inputs --------------------------------------------------------------------------
        inputs: list[Tensor | None] = []
        shapes: dict[str, tuple[int, ...]] = {}
        first_shape: tuple[int, ...] | None = None
        rank_shapes: dict[str, tuple[int, ...]] = {}
        makers: dict[str, Callable[[tuple[int, ...]], Tensor]] = {}
        stop_optional = False
        total_lo, total_hi = counts.get("inputs_count", (0, 2**31))
        settled: set[str] = set()  # deferred parameters drawn (or left out) already

        def draw_deferred(name: str) -> None:
            settled.add(name)
            p = op.params[name]
            if p["dtype"] == "STRING":
                assume(False)
            # the checks of the tensors drawn that name it too (GatherNd's 'shape(in[1])[k - 1] <= n - batch_dims',
            # Lrn's 'implies(region == WITHIN_CHANNEL, N == 4)'): its value is chosen where they hold
            # (not those naming a parameter still to be drawn: its default only holds its place in the env)
            pending = {n for n in deferred if n not in settled}
            so_far = Case(op.name, inputs, params, [])
            # nor the checks of an optional parameter given already: where this value rules it out, it is left out
            # afterwards (``_settle_optional``), so Resize's nearest_mode does not keep interpolation_mode NEAREST
            settles = {n for n, q in op.params.items() if q.get("mandatory") is False and n in params}
            others = [c.check for c in before_outputs if c.owner != name and name in c.check.names()
                      and not (c.check.names() & pending) and not check._owner_absent(op, so_far, c.owner)
                      and c.owner not in settles]  # fmt: skip
            others += [c for c in [*steer, *by_type] if name in c.names() and not (c.names() & pending)]
            if p.get("mandatory") is False and not typical and not draw(_BOOL, label=f"give {name}"):
                if _default_fits(op, name, inputs, params, env, others):
                    # left out: the default stands in, and it is valid here. A formula default (ChannelShuffle's
                    # axis = N - 1) is worked out for the parameters drawn after it, which the checks cannot do
                    resolved = _formula_default(op, name, {**check.environment(op, so_far), **env})
                    if resolved is not None:
                        env[name] = resolved
                    return
            value = _draw_bounded(draw, op, name, p, env, settings, config, dim_value, inputs, params, shapes,
                                  makers, same_shape, others, sorted(pending - {name}),
                                  forced.get(name, _FREE))  # fmt: skip
            if value is not None:
                params[name] = Param(name, param_dtype(p, config), value)
                env[name] = value

        for k_decl, decl in enumerate(op.inputs):
            name = decl["name"]
            idx = _first_index(name)
            rep = decl.get("repeated")
            count = 1
            if rep:
                last = rep.get("last")
                hi = min((int(last) - idx + 1) if isinstance(last, int) else _REPEATED_AT_MOST, total_hi - idx)
                lo = 0 if decl.get("mandatory") is False else 1
                if k_decl < len(op.inputs) - 1:  # inputs are positional: a range others follow is given in full
                    lo = hi
                else:  # the last one makes up the curated number of inputs (generate.inputs_count)
                    lo = max(lo, total_lo - idx)
                lo = _least_count(op, idx, lo, max(lo, hi))  # 'num_inputs() - 1 >= 1' (Concat, Pack): not 1
                count = draw(_ints(lo, max(lo, hi)), label=f"count {name}")
            optional = decl.get("mandatory") is False and not rep
            if optional:
                # typical: present exactly where converters emit the input (weights and biases)
                give = (decl.get("static") in ("preferred", "always") or name in shapers) if typical else \
                    (name in shapers or draw(_BOOL, label=f"give {name}"))  # fmt: skip
                if stop_optional or not give:
                    stop_optional = True
                    continue
            dtype = config.dtype_of(name)
            static = decl.get("static") == "always" or (decl.get("static") == "preferred" and (
                typical or draw(_BOOL, label=f"static {name}")))  # fmt: skip
            values = _value_curation(decl, params, op)
            if f"values(in[{idx}])" in unique_values:
                values["unique"] = True
            for bound in values.get("range") or ():  # a dim the value range names (a batch index's 'batches - 1', the
                for dname in sorted(expr.parse(str(bound)).names() & symbols):  # batches of a later input): drawn now
                    if dname not in env:
                        dim_value(dname)
            dims_named = (decl.get("shape") or {}).get("dims") or []
            if typical and values.get("unique") and "in[0]" in shapes and len(dims_named) == 1 \
                    and isinstance(dims_named[0], str) and shapes["in[0]"]:  # fmt: skip
                # unique indices stay inside in[0]'s smallest dim in typical cases: no more of them than that
                caps[dims_named[0]] = min(shapes["in[0]"])
            for k in range(count):
                ref = f"in[{idx + k}]"
                if decl.get("shape_from"):  # the spec's formula for the whole shape, from earlier tensors
                    # a parameter it reads that waits for the tensors (LayerNorm's axes) is drawn now, on those before
                    for name in deferred:
                        if name not in settled and name in expr.parse(str(decl["shape_from"])).names():
                            draw_deferred(name)
                    shape = _shape_from(op, decl["shape_from"], inputs, params, env)
                else:
                    shape = _draw_shape(draw, decl, ref, env, shapes, same_shape, first_shape, rank_shapes,
                                        dim_value, settings, broadcast, rank_limits.get(ref))  # fmt: skip
                    if shape and ref in last_limits and ref not in same_shape:  # 'shape(in[1])[-1] <= n'
                        shape = _fold_last(shape, last_limits[ref], {**defaults, **env}, settings)
                assume(shape is not None)
                assume(_elements(shape) <= settings.max_elements)
                shapes[ref] = shape
                first_shape = first_shape or shape
                while len(inputs) < idx + k:
                    inputs.append(None)
                def make(shape, ref=ref, dtype=dtype, values=values, decl=decl, static=static) -> Tensor:
                    t = _tensor_with_data(rng, ref, dtype, shape, regime, values, shapes, env, typical,
                                          _axis_of(decl, config), _encoding_source(decl, inputs, typical),
                                          config.bits_of(decl["name"]),
                                          is_weight(decl) or decl.get("role") == "bias")  # fmt: skip
                    t.static = static
                    return t

                makers[ref] = make
                inputs.append(make(shape))
        # ---- parameters no tensor depends on (an axis, a permutation): drawn inside the bounds their
        # checks set from the tensors now drawn, instead of blind and then refused -------------------
        if deferred:
            for name in deferred:
                if name not in settled:
                    draw_deferred(name)
            params, env = _settle_optional(op, params, env)
        if typical and op.family == "data movement":
            _share_encoding(inputs)
        # ---- curated dims no input bound: sizes the spec takes from an output tensor (Resize's
        # new_height) or an output's capacity (a detection op's max boxes) -----------------------
        for dname in domains:
            dim_value(dname)
        # ---- derived dims (curated formulas, e.g. a convolution's height_out) --------------------
        base_case = Case(op.name, inputs, params, [])
        env_now = {**check.environment(op, base_case), **env}
        for dname, src in derived.items():
            v = _eval_dim(src, env_now)
            assume(v is not None and v > 0)
            env[dname] = env_now[dname] = v
        # ---- outputs -------------------------------------------------------------------------
        case = Case(op.name, inputs, params, [], config=config.label, seed=seed, strategy=f"generate:{regime}",
                    tier=settings.tier)  # fmt: skip
        # the checks that do not name the outputs, before the reference is asked for them (cheaper)
        assume(not check.violations(op, case, before_outputs))
        made = _outputs(op, config, case, env, shapes, same_shape, settings)
        assume(made is not None)
        case.outputs, real = made
        drop_later = shapers if typical else {n for n in shapers if draw(_BOOL, label=f"leave out {n}")}
        if drop_later:  # drawn to shape the case; converters leave it out (the output tensor carries it)
            case.inputs = [None if t is not None and t.name in drop_later else t for t in case.inputs]
            while case.inputs and case.inputs[-1] is None:
                case.inputs.pop()
        if typical and real is not None and not op.tolerance.get("nan_means_any"):
            # in the op's domain: finite inputs give a finite result (no x/0, no overflow, no log(-1))
            assume(all(np.all(np.isfinite(np.asarray(r, dtype=np.float64))) for r in real))
        if typical:
            # converters' tensors stay within rank 4 unless the spec names more dims (Conv3d's 5-D layout), and
            # a rank-0 output is degenerate (an edge case) unless the spec declares the output a scalar
            assume(all(len(t.shape) <= max(settings.max_rank, *explicit_ranks) for t in case.outputs))
            assume(all(t.shape or _declared_scalar(op, t.name) for t in case.outputs))
            if typical_when:
                env_case = {**env, **check.environment(op, case)}
                assume(all(_holds(c, env_case) for c in typical_when))
        bad = check.violations(op, case, None if drop_later else after_outputs)
        assume(not bad)
        case.steps = draw_steps(draw, op, case, settings)
        return case

    return _drawn_by(build)


@st.composite
def _drawn_by(draw: st.DrawFn, build: Callable[[st.DrawFn], Case]) -> Case:
    """One composite strategy for every cell: hypothesis reads a composite function's source when it is
    decorated (tens of milliseconds), so a decorator per ``case_strategy`` call would cost that per cell.

    The ``label=`` of each draw in this module names what is drawn, for the reader; it does not reach
    hypothesis. There a composite's ``draw(strategy, label)`` takes the label as the span's kind, which its
    mutator uses to pick spans to copy onto each other: a kind per name ("in[0] dims", "count in[1]")
    kept it from matching draws of the same strategy, and it refused more. On the benchmark's 8 ops at 20
    cases per cell: 226 refused draws with the labels, 171 without."""
    return build(lambda strategy, label=None: draw(strategy))


def _typical_presence(op: OpDef, shapers: set[str]) -> list[expr.TensorInfo]:
    """Which inputs a typical case gives (mandatory ones, weights and biases, shapers), known before any is
    drawn: a condition on ``present(in[k])`` can then steer the dims drawn earlier."""
    out: list[expr.TensorInfo] = []
    stop = False  # as the drawing goes: after an optional input left out, the later ones are left out too
    for decl in op.inputs:
        idx = _first_index(decl["name"])
        optional = decl.get("mandatory") is False and not decl.get("repeated")
        weights = decl.get("static") in ("preferred", "always") or decl["name"] in shapers
        given = not optional or (not stop and weights)
        stop = stop or (optional and not given)
        while len(out) <= idx:
            out.append(expr.TensorInfo((), "", present=False))
        out[idx] = expr.TensorInfo((), "", present=bool(given) and not decl.get("repeated"))
    return out


def _tied_to(draw: st.DrawFn, name: str, tied: list, env: dict[str, Any]) -> int | None:
    """The size of a dim already drawn that a check makes ``name`` equal to, where its condition holds (or
    cannot be told yet - an input not drawn: then on a coin, equal being valid either way), else None."""
    for cond, a, b in tied:
        other = b if name == a else a if name == b else None
        if cond is not None and cond.tensor_refs() and "_in" not in env and "__presence__" in env:
            env = {**env, "_in": env["__presence__"]}  # the typical tier knows which inputs it will give
        if other is None or not isinstance(env.get(other), int | np.integer):
            continue
        if cond is None:
            return int(env[other])
        try:
            met = bool(expr.holds(cond, env))
        except expr.EvalError:  # mostly equal: that holds whatever the condition turns out to be
            met = draw(_ints(0, 3), label=f"{name} = {other}") > 0
        if met:
            return int(env[other])
    return None


def _ratio(source: Any) -> tuple[str, str] | None:
    try:
        return expr.parse(str(source)).ratio()
    except expr.ExprError:
        return None


def _sizes_that_fit(name: str, sizes: list[int], formulas: Sequence[expr.Expr], env: dict[str, Any],
                    checks: Sequence[expr.Expr] = ()) -> list[int] | None:  # fmt: skip
    """The sizes of ``name`` for which every derived dim computable now comes out a positive whole number
    (Conv's height_out, DepthWiseConv2d's depth_multiplier) and every check on dims and parameters
    computable now holds, or None where that rules none out: the last dim a formula or check reads is drawn
    where it fits instead of being refused after. Sizes are drawn as before wherever nothing is ruled out."""
    usable = [f for f in formulas if all(n == name or n in env for n in f.names())]
    holding = [c for c in checks if all(n == name or n in env for n in c.names())]
    if not usable and not holding:
        return None
    fit = [v for v in sizes if all((d := _eval_dim(f.source, {**env, name: v})) is not None and d > 0 for f in usable)
           and _fits(holding, {**env, name: v})]  # fmt: skip
    return fit if len(fit) < len(sizes) else None


def _one_of_options(draw: st.DrawFn, name: str, options: list[expr.Expr], env: dict[str, Any],
                    dim_value: Callable[[str], int], symbols: frozenset[str]) -> int:  # fmt: skip
    """A dim a check allows only a few values of: draw which option, then its value (a dim it names is
    drawn now if it was not yet)."""
    option = options[draw(_ints(0, len(options) - 1), label=f"{name} option")]
    for other in sorted(option.names() & symbols):
        if other != name and other not in env:
            dim_value(other)
    v = _eval_dim(option.source, env)
    assume(v is not None and v > 0)
    return v


def _least_count(op: OpDef, first: int, lo: int, hi: int) -> int:
    """The fewest tensors of a repeated input starting at ``first`` that the ``num_inputs()`` checks allow."""
    checks = [c.check for c in op.constraints if c.check is not None and "num_inputs" in c.check.source]
    for n in range(lo, hi + 1):
        k, fn = expr.function_binding("num_inputs", lambda n=n: first + n)
        if all(_holds(c, {k: fn}) or _unknown(c, {k: fn}) for c in checks):
            return n
    return lo


def _unknown(condition: expr.Expr, env: dict[str, Any]) -> bool:
    try:
        expr.holds(condition, env)
    except expr.EvalError:
        return True
    return False


def _deferred_params(op: OpDef) -> list[str]:
    """Parameters no tensor shape, value range, dim formula or other parameter names, in declaration
    order: they can wait until the tensors exist, so a check such as ``axis <= rank(in[0]) - 1`` bounds
    the draw instead of refusing it afterwards. A parameter some tensor depends on is drawn first."""
    used: set[str] = set(op.derived) | set(op.dims)
    words = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

    def note(x: Any) -> None:
        used.update(words.findall(str(x)))

    for d in op.inputs + op.outputs:
        for key in ("shape", "values", "repeated", "encoding_from"):  # a shape_from draws what it reads when reached
            if key in d:
                note(d[key] if key != "shape" else {k: v for k, v in d[key].items() if k != "text"})
        used.update(_curation_tables(d.get("values") or {}))  # the enum a tensor's values depend on: first
    for src in op.derived.values():
        note(src)
    for name, p in op.params.items():
        for key in ("domain", "generate"):
            if key in p:
                note(p[key])
        dims = (p.get("shape") or {}).get("dims") or []
        used.update(x for d in dims if isinstance(d, str) for x in words.findall(d) if x != name)
    for c in op.constraints:
        if c.check is not None:  # 'channel % group == 0': the dim is drawn as a multiple, so group comes first
            used.update(n for a, b in c.check.divisibility() if a not in op.params
                        for n in words.findall(b) if n in op.params)  # fmt: skip
    for c in op.constraints:  # a condition tying two dims (MaskedSoftmax's mode) is known before the dims
        if c.check is not None:
            for cond, _a, _b in c.check.dim_equalities():
                used.update(cond.names() & set(op.params) if cond is not None else ())
    ranks = {str((d.get("shape") or {}).get("rank")) for d in op.inputs + op.outputs}
    for c in op.constraints:  # a divisibility on named dims and parameters alone (SpaceToBatch's '(height + pad) %
        # block == 0'): the dims are drawn to meet it, so its parameters come first. Not a bound or an equality: those
        # parameters wait and are drawn inside the bounds the tensors give (Stft's frame_length <= signal_length)
        if (c.check is not None and not c.check.tensor_refs() and not ({"in", "out"} & c.check.names())
                and "%" in c.check.source and c.check.names() & (op.symbols() - ranks)):  # fmt: skip
            used.update(c.check.names() & set(op.params))
    order = list(op.params)
    names = {n: set() for n in order}  # parameter -> the other parameters its checks name
    for c in op.constraints:
        if c.check is not None and c.owner in op.params:
            names[c.owner] |= (c.check.names() & set(op.params)) - {c.owner}
    grown = True
    while grown:  # a parameter drawn first (before the tensors) takes the later ones its checks name with it
        grown = False
        for n in order:
            if n in used:
                later = {o for o in names[n] if order.index(o) > order.index(n) and o not in used}
                used |= later
                grown = grown or bool(later)
    deferred = [n for n in order if n not in used]
    placed: list[str] = []  # the deferred ones: each after the deferred parameters its checks name
    while len(placed) < len(deferred):
        ready = [n for n in deferred if n not in placed and names[n] & set(deferred) <= set(placed)]
        placed.append(ready[0] if ready else next(n for n in deferred if n not in placed))
    return placed


def _eval_int(e: expr.Expr, env: dict[str, Any]) -> int | None:
    try:
        v = np.asarray(e.evaluate(env), dtype=np.float64)
    except (expr.ExprError, expr.EvalError, TypeError, ValueError, IndexError, KeyError):
        return None
    return int(np.floor(v)) if v.shape == () and np.isfinite(v) else None


def _draw_bounded(draw: st.DrawFn, op: OpDef, name: str, p: dict, env: dict, settings: Settings, config: Config,
                  dim_value: Callable[[str], int], inputs: list[Tensor | None], params: dict[str, Param],
                  shapes: dict[str, tuple[int, ...]], makers: dict[str, Callable], same_shape: dict[str, str],
                  others: Sequence[expr.Expr] = (), later: Sequence[str] = (), forced: Any = None) -> Any:  # fmt: skip
    """An integer parameter drawn inside the bounds its checks give once the tensors exist: scalars in
    ``[lo, hi]``; vectors unique where a check says ``unique`` (a permutation when the length is the
    range's), increasing where one says ``increasing``; where a check says the values index dims of a
    given size (``values(shape(in[0]))[axes] == 1``), among those dims, pinning some to that size when
    the tensor has none. A scalar (an enum's member too) is taken among the values for which ``others``, the
    checks of other owners that name it, hold as well, and that leaves the parameters drawn ``later`` a range
    (Buffer's buffer_size no smaller than the least stride, Split's axis not a size-1 dim when split_index must lie
    in [1, shape(in[0])[axis] - 1]). Anything else goes the ordinary way (``_draw_param``). ``forced``: the value
    ``enumerated_slots`` schedules for a boolean or an enum, taken where those checks allow it."""
    forced = _FREE if forced is None else forced
    dt = dtypes.get(param_dtype(p, config))
    checks = _param_checks(op, name)
    sh = p.get("shape") or {}
    scalar = bool(sh.get("scalar") or not (sh.get("dims") or sh.get("rank")))
    if p.get("values") and scalar and "generate" not in p:
        full = {**check.environment(op, Case(op.name, inputs, params, [])), **env}
        members = [v for v in sorted(p["values"].values()) if _fits([*checks, *others], {**full, name: v})]
        if members:
            drawn = draw(_pick(members), label=name)
            if forced is not _FREE:
                assume(forced in members)
                return forced
            return drawn
    if dt.kind not in ("int", "uint") or "generate" in p or p.get("values"):
        if dt.kind == "bool" and scalar and forced is not _FREE and "generate" not in p:
            full = {**check.environment(op, Case(op.name, inputs, params, [])), **env}
            _draw_param(draw, op, name, p, env, settings, config, dim_value)
            assume(_fits([*checks, *others], {**full, name: forced}))
            return forced
        return _draw_param(draw, op, name, p, env, settings, config, dim_value)
    full = {**check.environment(op, Case(op.name, inputs, params, [])), **env}
    lows, highs = [], []
    for c in checks:
        lo_e, hi_e = c.bounds(name)
        lows += [v for v in (_eval_int(e, full) for e in lo_e) if v is not None]
        highs += [v for v in (_eval_int(e, full) for e in hi_e) if v is not None]
    if not highs and "domain" not in p and not (scalar and checks):
        return _draw_param(draw, op, name, p, env, settings, config, dim_value)
    positive = any((c.lower_bound(name) or 0) >= 1 for c in checks)
    lo = max(lows) if lows else (1 if positive else 0)
    hi = min(highs) if highs else settings.max_rank
    if not highs and scalar:  # 'buffer_size % shape(in[0])[buffer_dim] == 0': room for a few multiples
        divisor = next((d for c in checks for a, b in c.divisibility()
                        if a == name and (d := _eval_dim(b, full)) is not None and d > 0), None)  # fmt: skip
        hi = max(hi, (divisor or 0) * settings.max_rank)
    if "domain" in p:
        d_lo, d_hi = _bounds(p, env)
        lo, hi = max(lo, d_lo), min(hi, d_hi)
    if dt.kind == "uint":
        lo = max(lo, 0)
    assume(lo <= hi)
    candidates = list(range(lo, hi + 1))
    pin = next((x for x in (c.indexed_shape_equals(name) for c in checks) if x), None)
    if pin is not None:
        ref, size = pin
        idx = _first_index(ref)
        shape = shapes.get(ref)
        assume(shape is not None)
        matching = [i for i in candidates if -len(shape) <= i < len(shape) and shape[i] == size]
        shared = ref in same_shape or ref in same_shape.values()
        if not matching and ref in makers and not shared and candidates:
            # no dim of that size: give the tensor one (its data is drawn again for the new shape)
            pos = [i for i in candidates if 0 <= i < len(shape)]
            assume(bool(pos))
            k = draw(_ints(1, len(pos)), label=f"{name} pinned dims")
            chosen = _permutation(draw, pos)[:k]
            new_shape = tuple(size if i in chosen else d for i, d in enumerate(shape))
            shapes[ref] = new_shape
            inputs[idx] = makers[ref](new_shape)
            matching = sorted(chosen)
        candidates = matching
    if scalar:
        default = p.get("default")
        plain_default = isinstance(default, int) and not isinstance(default, bool) and "domain" not in p
        if plain_default and default not in candidates:
            candidates.append(default)
        # only the values its own checks allow on these tensors (StridedSlice's new_axes_mask)
        candidates = [v for v in candidates if _fits([*checks, *others], {**full, name: v})
                      and _leaves_room(op, name, v, later, full)]  # fmt: skip
        assume(bool(candidates))
        choice = _pick(candidates)
        if isinstance(default, int) and not isinstance(default, bool) and default in candidates:
            choice = _default_or(default, choice)
        return draw(choice, label=name)
    dims = sh.get("dims") or []
    unique = any(c.requires_unique(name) for c in checks)
    increasing = any(_names_call(c, "increasing", name) for c in checks)
    if len(dims) != 1:
        along = shapes.get((p.get("rows") or {}).get("along", ""))
        return _draw_param(draw, op, name, p, env, settings, config, dim_value, axis_sizes=along)
    n = env.get(dims[0]) if isinstance(dims[0], str) else dims[0]
    cap = len(candidates) if unique or increasing else settings.max_rank
    if n is None:
        assume(cap >= 1)
        n = draw(_ints(1, min(cap, settings.max_rank)), label=f"len {name}")
        if isinstance(dims[0], str):
            env[dims[0]] = n
    assume(n <= cap and (n == 0 or candidates))
    if increasing:
        vals = sorted(_permutation(draw, candidates)[:n])
    elif unique:
        vals = _permutation(draw, candidates)[:n]
    else:
        vals = draw(_pick_list(tuple(candidates), n), label=name)
    return np.asarray(vals, dtype=dt.storage).reshape((n,))


def _leaves_room(op: OpDef, name: str, value: Any, later: Sequence[str], env: dict[str, Any]) -> bool:
    """Whether, with ``name`` at ``value``, the bounds the checks of each parameter drawn later put on it (those
    that name ``name``) still leave it some value: the earlier draw keeps room for the later ones."""
    env = {**env, name: value}
    for q in later:
        lows, highs = [], []
        for c in _param_checks(op, q):
            if name in c.names():
                lo_e, hi_e = c.bounds(q)
                lows += [v for v in (_eval_int(e, env) for e in lo_e) if v is not None]
                highs += [v for v in (_eval_int(e, env) for e in hi_e) if v is not None]
        if lows and highs and max(lows) > min(highs):
            return False
    return True


def _names_call(e: expr.Expr, fn: str, name: str) -> bool:
    """Whether a conjunct of ``e`` is ``fn(name)``."""
    return any(isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == fn and len(x.args) == 1
               and isinstance(x.args[0], ast.Name) and x.args[0].id == name for x in e.conjuncts())  # fmt: skip


def _shape_from(op: OpDef, source: str, inputs: list[Tensor | None], params: dict[str, Param],
                env: dict[str, Any]) -> tuple[int, ...] | None:  # fmt: skip
    partial = Case(op.name, list(inputs), params, [])
    try:
        value = expr.parse(source).evaluate({**env, **check.environment(op, partial)})
    except (expr.ExprError, expr.EvalError, TypeError, ValueError, IndexError):
        return None
    shape = tuple(int(x) for x in np.atleast_1d(value)) if np.ndim(value) else (int(value),)
    return shape if all(x > 0 for x in shape) else None


def _declared_scalar(op: OpDef, name: str) -> bool:
    decl = next((d for d in reversed(op.outputs) if _first_index(d["name"]) <= _first_index(name)), None)
    return bool(decl and ((decl.get("shape") or {}).get("scalar") or (decl.get("shape") or {}).get("rank") == 0))


def _holds(condition: expr.Expr, env: dict[str, Any]) -> bool:
    try:
        return bool(expr.holds(condition, env))
    except expr.EvalError:
        return False


def _settle_optional(op: OpDef, params: dict[str, Param], env: dict[str, Any],
                     waiting: frozenset[str] = frozenset()) -> tuple[dict[str, Param], dict]:  # fmt: skip
    """Drop the optional parameters the others rule out (``_valid_optional_params``; not for a constraint that
    names a parameter ``waiting`` to be drawn) and let the constraint environment see the spec's defaults in their
    place."""
    params = _valid_optional_params(op, params, waiting)
    env = {k: v for k, v in env.items() if k not in op.params or k in params}
    env.update({k: v for k, v in op.param_defaults().items() if k not in env})
    return params, env


def _valid_optional_params(op: OpDef, params: dict[str, Param], waiting: frozenset[str] = frozenset(),
                           ) -> dict[str, Param]:  # fmt: skip
    """Drop the optional parameters whose own constraints the other parameters make false."""
    probe = Case(op.name, [], params, [])
    env = check.environment(op, probe)
    drop = set()
    for c in op.constraints:
        p = op.params.get(c.owner)
        if c.check is None or p is None or p.get("mandatory") is not False or c.owner not in params:
            continue
        if waiting and c.check.names() & (waiting - set(params)):
            continue
        try:
            if not expr.holds(c.check, env):
                drop.add(c.owner)
        except expr.EvalError:
            continue
    return {k: v for k, v in params.items() if k not in drop}


def param_dtype(p: dict, config: Config) -> str:
    """A parameter typed 'backend specific' (ConstantOfShape's value, Pad's constant) follows the data."""
    if p["dtype"] != "backend_specific":
        return p["dtype"]
    primary = config.label.split("+")[0]
    return primary if primary and not dtypes.get(primary).quantized else "FLOAT_32"


def _bounds(p: dict, env: dict) -> tuple[int, int] | None:
    """A parameter's curated ``domain: [lo, hi]`` (expressions of constants and earlier params)."""
    if "domain" not in p:
        return None
    lo, hi = (int(np.floor(float(expr.parse(str(x)).evaluate(env)))) for x in p["domain"])
    return lo, max(lo, hi)


_FREE = object()  # no value forced on a parameter: it is drawn


def enumerated_slots(op: OpDef) -> list[dict[str, Any]]:
    """One slot per value of every scalar boolean and enum parameter, in spec order: ``{parameter: value}``, with
    the values of other such parameters its own checks need beside it (Resize's nearest_mode FLOOR needs
    interpolation_mode NEAREST). The first attempts of a typical cell force one slot each, in turn, twice over, and
    draw the rest of the case as usual.

    Why: hypothesis draws a member with no promise of ever drawing all of them, and every cell of an op follows
    the same choices under one seed, so at 20 cases a cell ElementWiseBinary drew 7 of its 11 typical
    operations in every cell and Resize never drew LINEAR or CUBIC: a bug in one of them was invisible
    (``python -m bench drawn`` lists what is never drawn). Forcing one slot at a time leaves the other
    parameters random, so a value the backend refuses beside one companion (ResizeBilinear's align_corners
    beside antialias) gets a second try beside another."""
    members: dict[str, list[Any]] = {}
    for name, p in op.params.items():
        sh = p.get("shape") or {}
        if not (sh.get("scalar") or not (sh.get("dims") or sh.get("rank"))) or "generate" in p:
            continue
        if p.get("values"):
            members[name] = sorted(p["values"].values())
        elif p.get("dtype") == "BOOL_8":
            members[name] = [False, True]
    return [{name: v, **_companions(op, name, v, members)} for name, values in members.items() for v in values]


def typical_slots(op: OpDef, config: Config) -> list[dict[str, Any]]:
    """``enumerated_slots`` a typical cell of ``config`` forces: not those the typical conditions rule out for the
    configuration's datatypes (ElementWiseBinary's comparisons on a FLOAT_32 output)."""
    slots = enumerated_slots(op)
    by_type = [c for c in (expr.parse(x) for x in op.generation.get("typical_when") or [])
               if c.tensor_refs() and _reads_only_datatypes(c)]  # fmt: skip
    if not by_type:
        return slots
    env = {**op.enum_names(), **_datatype_stand_ins(op, config)}
    return [slot for slot in slots if _fits([c for c in by_type if c.names() & set(slot)], {**env, **slot})]


class _Schedule:
    """Which slot of ``enumerated_slots`` a strategy's next draw forces: each slot until a case kept it (at most
    ``TRIES`` draws: a value refused beside every companion drawn is given up), the whole list twice over, then
    none. One per strategy, so one per cell, in the order hypothesis draws."""

    TRIES = 8

    def __init__(self, slots: list[dict[str, Any]], shows: Callable[[str, Case], bool] = lambda name, case: True,
                 ) -> None:  # fmt: skip
        self.slots, self.at, self.tries, self.shows = slots, 0, 0, shows

    def slot(self) -> dict[str, Any]:
        if self.at >= 2 * len(self.slots):
            return {}
        self.tries += 1
        return self.slots[self.at % len(self.slots)]

    def kept(self, case: Case) -> None:
        """A drawn case came out of the build: its slot is done if the case kept the forced value where the value
        shows (an optional parameter its other parameters rule out is left out; the spec's ``shows_when`` says
        when a value changes the result), else the slot is tried again."""
        if self.at >= 2 * len(self.slots):
            return
        name, value = next(iter(self.slots[self.at % len(self.slots)].items()))
        p = case.params.get(name)
        if (p is not None and p.value == value and self.shows(name, case)) or self.tries >= self.TRIES:
            self.at, self.tries = self.at + 1, 0

    def refused(self) -> None:
        if self.at < 2 * len(self.slots) and self.tries >= self.TRIES:
            self.at, self.tries = self.at + 1, 0


def _companions(op: OpDef, name: str, value: Any, members: dict[str, list[Any]]) -> dict[str, Any]:
    """Values of the other enumerated parameters under which ``name``'s own checks hold with ``name`` at ``value``
    (the first such combination, in member order); {} where its checks name none of them or hold anyway."""
    checks = [c.check for c in op.constraints if c.owner == name and c.check is not None]
    named = sorted({n for c in checks for n in c.names() if n in members and n != name})
    if not named:
        return {}
    base = {**op.enum_names(), name: value}
    defaults = op.param_defaults()
    # the defaults first: a companion that converters leave at its default is the likeliest to run
    orders = [sorted(members[n], key=lambda m, n=n: m != defaults.get(n)) for n in named]
    for combo in itertools.product(*orders):
        try:
            if all(expr.holds(c, {**base, **dict(zip(named, combo, strict=True))}) for c in checks):
                return dict(zip(named, combo, strict=True))
        except (expr.EvalError, TypeError, KeyError):
            return {}
    return {}


def _draw_param(draw: st.DrawFn, op: OpDef, name: str, p: dict, env: dict, settings: Settings,
                config: Config, dim_value: Callable[[str], int], prefer: Sequence[expr.Expr] = (),
                type_env: dict[str, Any] | None = None, axis_sizes: tuple[int, ...] | None = None,
                forced: Any = _FREE) -> Any:  # fmt: skip
    """A parameter drawn before the tensors (or one ``_draw_bounded`` cannot bound). Among curated choices or an
    enum's members, only those ``prefer`` (the typical tier's conditions) does not rule out, where some remain;
    ``type_env`` gives those conditions the tensors' datatypes (``_datatype_stand_ins``). ``axis_sizes``: the
    shape of the tensor whose axes a matrix's rows describe (``rows.along``), for its ``rows`` conditions.
    ``forced``: the value ``enumerated_slots`` schedules for a boolean or enum parameter, taken where ``prefer``
    allows it (still drawn, then set aside: the case keeps as many choices)."""
    env_prefer = {**env, **type_env} if type_env else env
    dt = dtypes.get(param_dtype(p, config))
    domains = op.dims
    sh = p.get("shape") or {}
    checks = _param_checks(op, name)
    positive = any((c.lower_bound(name) or 0) >= 1 for c in checks)
    if "generate" in p:
        options = _preferred(p["generate"], name, prefer, env_prefer)
        v = draw(_pick(options), label=name)
        return np.asarray(v, dtype=dt.storage) if isinstance(v, list) else v
    if sh.get("scalar") or not (sh.get("dims") or sh.get("rank")):
        if p.get("values"):
            options = _preferred(sorted(p["values"].values()), name, prefer, env_prefer)
            drawn = draw(_pick(options), label=name)
            if forced is not _FREE:  # the scheduled value, or a refused draw (the schedule tries it again)
                assume(forced in options)
                return forced
            return drawn
        if dt.kind == "bool":
            drawn = draw(_BOOL, label=name)
            if forced is not _FREE:
                assume(forced in _preferred((False, True), name, prefer, env_prefer))
                return forced
            return drawn
        if dt.kind in ("uint", "int"):
            if "domain" in p:
                return draw(_ints(*_bounds(p, env)), label=name)
            default = p.get("default")
            choices = _ints(1 if positive else 0, settings.max_rank)
            if isinstance(default, int) and not isinstance(default, bool):
                choices = _default_or(default, choices)
            return draw(choices, label=name)
        if dt.kind == "float":
            default = p.get("default")
            pool = [0.5, 1.0, 2.0, 0.1]
            if isinstance(default, int | float) and not isinstance(default, bool):
                pool.insert(0, float(default))
            return draw(_pick(pool), label=name)
        return None
    # vector / matrix parameters
    dims = sh.get("dims") or []
    if dims and all(isinstance(d, int) or d in env or d in domains for d in dims):
        shape = tuple(d if isinstance(d, int) else dim_value(d) for d in dims)  # Pad's [N, 2]
    elif dims and all(isinstance(d, str) and len(d) > 1 for d in dims):
        shape = (len(dims),)  # element names: "[height_stride, width_stride]"
    elif len(dims) == 1:  # "[N]": its length binds N (Tile's multiples and in[0]'s rank N)
        n = env.get(dims[0]) if isinstance(dims[0], str) else dims[0]
        if n is None:
            n = env[dims[0]] = draw(_ints(1, settings.max_rank), label=f"len {name}")
        shape = (n,)
    else:
        shape = (draw(_ints(1, settings.max_rank), label=f"len {name}"),)
    size = int(np.prod(shape))
    if dt.kind == "float":
        vals = draw(_pick_list((0.5, 1.0, 2.0), size), label=name)
        return np.asarray(vals, dtype=dt.storage).reshape(shape)
    if dt.kind == "bool":
        vals = draw(_bool_list(size), label=name)
        return np.asarray(vals, dtype=dt.storage).reshape(shape)
    if any(c.requires_unique(name) for c in checks) and len(shape) == 1:
        vals = _permutation(draw, range(max(size, settings.max_rank)))[:size]
    elif "domain" in p and len(shape) == 2 and (checks or axis_sizes is not None) and all(_rowwise(c) for c in checks):
        # a matrix whose checks hold row by row (StridedSlice's ranges: stride != 0, begin > end when it is
        # negative): each row drawn until its own checks hold, rather than the whole case refused
        lo, hi = _bounds(p, env)
        valid = _valid_rows(op, name, checks, lo, hi, shape[1], dt.storage)
        rows = []
        for r in range(shape[0]):
            if valid and axis_sizes is not None and r < len(axis_sizes):
                # rows that describe an axis (StridedSlice's slices of in[0]): those the curated conditions allow on
                # an axis of that size, drawn directly instead of refusing the case they would empty
                fitting = _rows_fitting(p["rows"], tuple(valid), axis_sizes[r], settings.tier == TYPICAL, op, env)
                assume(bool(fitting))
                rows.append(list(draw(_pick(fitting), label=f"{name}[{r}]")))
                continue
            if valid:
                rows.append(list(draw(_pick(valid), label=f"{name}[{r}]")))
                continue
            for _attempt in range(_ROW_ATTEMPTS):
                row = draw(_int_list(lo, hi, shape[1]), label=f"{name}[{r}]")
                if _fits(checks, {**env, name: np.asarray([row], dtype=dt.storage)}):
                    break
            rows.append(row)
        vals = [x for row in rows for x in row]
    elif "domain" in p:
        lo, hi = _bounds(p, env)
        vals = draw(_int_list(lo, hi, size), label=name)
    else:
        lo = 1 if positive else 0
        vals = draw(_int_list(lo, 2 if not positive else 3, size), label=name)
    return np.asarray(vals, dtype=dt.storage).reshape(shape)


# inputs a repeated declaration without a last index is drawn as, at most (Concat's in[0..m])
_REPEATED_AT_MOST = 3
_DATATYPE_FUNCTIONS = frozenset({"dtype", "is_float", "is_quantized", "is_integer", "is_bool"})


def _reads_only_datatypes(condition: expr.Expr) -> bool:
    """Whether every tensor the condition names is the argument of a datatype function (``is_quantized(in[0])``)."""
    inside = {id(call.args[0]) for call in ast.walk(condition.tree)
              if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
              and call.func.id in _DATATYPE_FUNCTIONS and len(call.args) == 1}  # fmt: skip
    refs = [n for n in ast.walk(condition.tree) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
            and n.value.id in ("_in", "_out")]  # fmt: skip
    return bool(refs) and all(id(n) in inside for n in refs)


def _datatype_stand_ins(op: OpDef, config: Config) -> dict[str, Any]:
    """``_in``/``_out`` for conditions that read only datatypes: each declared tensor with the configuration's type
    (a repeated one's at each of its indices) and no shape yet."""

    def stand_ins(decls: list[dict]) -> list[expr.TensorInfo]:
        typed: dict[int, str] = {}
        for d in decls:
            first, rep = _first_index(d["name"]), d.get("repeated") or {}
            last = rep["last"] if isinstance(rep.get("last"), int) else first + (_REPEATED_AT_MOST - 1 if rep else 0)
            typed.update(dict.fromkeys(range(first, last + 1), config.dtype_of(d["name"])))
        return [expr.TensorInfo((), typed[k]) if k in typed else expr.TensorInfo((), "", present=False)
                for k in range(max(typed, default=-1) + 1)]  # fmt: skip

    return {"_in": stand_ins(op.inputs), "_out": stand_ins(op.outputs)}


def _preferred(options: Sequence[Any], name: str, prefer: Sequence[expr.Expr], env: dict[str, Any]) -> Sequence[Any]:
    """The options under which no condition of ``prefer`` is false (all of them when none would be left)."""
    if not prefer:
        return options
    kept = [o for o in options if _fits(prefer, {**env, name: np.asarray(o) if isinstance(o, list) else o})]
    return kept or options


def _needed_params(op: OpDef) -> frozenset[str]:
    """Optional parameters whose default rules out every case: a derived dim reading it is not positive at the
    default whatever the dims it reads (NonMaxSuppression's max_boxes_selected defaults to 0, and batch * num_classes *
    max_boxes_selected sizes an output). The edge tier gives them always instead of leaving them out on a coin."""
    def find() -> frozenset[str]:
        defaults = op.param_defaults()
        out = set()
        for name, p in op.params.items():
            if p.get("mandatory") is not False or name not in defaults:
                continue
            for src in op.derived.values():
                formula = expr.parse(str(src))
                if name not in formula.names():
                    continue
                sizes = []
                for pick in (0, 1):  # every dim it reads at the low end of its range, then at the high end
                    env = {**op.enum_names(), **defaults}
                    env.update({d: (op.dims.get(d) or (1, 5))[pick] for d in formula.names() if d not in env})
                    sizes.append(_eval_dim(src, env))
                if all(v is not None and v <= 0 for v in sizes):
                    out.add(name)
        return frozenset(out)

    return op._once("generate.needed_params", find)


_ROW_ATTEMPTS = 8
_ROWS_CACHE: dict[tuple, list[tuple[int, ...]]] = {}


def _valid_rows(op: OpDef, name: str, checks: list[expr.Expr], lo: int, hi: int, k: int,
                storage: Any) -> list[tuple[int, ...]]:  # fmt: skip
    """Every row in ``[lo, hi]^k`` the parameter's element-wise checks allow, when those checks name
    nothing but the parameter and the space is small: all rows are checked at once as one matrix (the
    argument of each ``all(...)`` gives one truth value per row). Empty when that does not apply."""
    key = (op.name, name, lo, hi, k)
    if key in _ROWS_CACHE:
        return _ROWS_CACHE[key]
    out: list[tuple[int, ...]] = []
    if (hi - lo + 1) ** k <= 4096 and all(c.names() <= {name} | set(op.enum_names()) for c in checks):
        grid = np.array(list(itertools.product(range(lo, hi + 1), repeat=k)), dtype=storage)
        mask = np.ones(len(grid), dtype=bool)
        env = {**op.enum_names(), name: grid}
        try:
            for c in checks:
                for part in c.all_arguments() or []:
                    v = np.asarray(part.evaluate(env))
                    if v.shape != mask.shape:
                        raise expr.EvalError("not one truth value per row")
                    mask &= v.astype(bool)
            out = [tuple(int(x) for x in row) for row in grid[mask]]
        except (expr.EvalError, expr.ExprError, TypeError, ValueError, IndexError):
            out = []
    _ROWS_CACHE[key] = out
    return out


@functools.lru_cache(maxsize=512)
def _rows_fitting_cached(when: tuple[str, ...], valid: tuple[tuple[int, ...], ...], size: int,
                         names: tuple[tuple[str, Any], ...]) -> tuple:  # fmt: skip
    conditions, fixed = [expr.parse(c) for c in when], dict(names)

    def fits(row: tuple[int, ...]) -> bool:
        return all(_holds(c, {**fixed, "row": np.asarray(row), "dim": size}) for c in conditions)

    return tuple(row for row in valid if fits(row))


@functools.lru_cache(maxsize=256)
def _names_of(conditions: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*(expr.parse(c).names() for c in conditions))


def _rows_fitting(rows: dict[str, Any], valid: tuple[tuple[int, ...], ...], size: int, typical: bool, op: OpDef,
                  env: dict[str, Any]) -> tuple[tuple[int, ...], ...]:  # fmt: skip
    """The rows a matrix parameter's ``rows`` curation allows on an axis of ``size`` (``row``, ``dim`` in its
    conditions, with the enum members and the scalar parameters drawn before it, such as Pad's scheme): its
    ``when`` in both tiers, its ``typical_when`` too in the typical tier."""
    when = tuple(rows.get("when") or ()) + (tuple(rows.get("typical_when") or ()) if typical else ())
    used = _names_of(when)
    known = {**op.enum_names(), **{k: v for k, v in env.items() if np.ndim(v) == 0}}
    names = tuple(sorted((k, known[k].item() if hasattr(known[k], "item") else known[k]) for k in used & set(known)))
    return _rows_fitting_cached(when, valid, int(size), names)


def _rowwise(check_: expr.Expr) -> bool:
    """Whether every conjunct is an ``all(...)``: it then holds for a matrix when it holds for each row."""
    return all(isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == "all"
               for x in check_.conjuncts())  # fmt: skip


def _default_fits(op: OpDef, name: str, inputs: list[Tensor | None], params: dict[str, Param],
                  env: dict[str, Any], others: Sequence[expr.Expr] = ()) -> bool:  # fmt: skip
    """Whether leaving ``name`` out is valid on the tensors drawn: its default meets its checks (Buffer's
    stride defaults to 1, which its range [shape(in[0])[buffer_dim], buffer_size] allows only for size 1)."""
    full = {**check.environment(op, Case(op.name, inputs, params, [])), **env}
    default = op.param_defaults().get(name)
    if default is None:
        default = _formula_default(op, name, full)
    if default is None:
        return True
    full[name] = default
    return _fits([*_param_checks(op, name), *others], full)


def _formula_default(op: OpDef, name: str, env: dict[str, Any]) -> Any:
    """A default the spec writes as a formula (``default: {expr: N-1}``), on the tensors drawn; None where there
    is none or it cannot be worked out yet. The checks leave such a default unbound, so what it rules out for
    other parameters is only seen by the reference, which refuses the case."""
    default = op.params[name].get("default")
    if not (isinstance(default, dict) and "expr" in default):
        return None
    return _eval_int(expr.parse(str(default["expr"])), env)


def _fits(checks: list[expr.Expr], env: dict[str, Any]) -> bool:
    """No check is false here (one that cannot be decided yet counts as holding)."""
    for c in checks:
        try:
            if not expr.holds(c, env):
                return False
        except expr.EvalError:
            continue
    return True


def _rank_limits(op: OpDef) -> dict[str, tuple[int, int]]:
    """tensor -> the constant rank bounds its checks give (``rank(in[0]) > 2``: InstanceNorm's [3, inf))."""
    out = {}
    for decl in op.inputs:
        ref = f"in[{_first_index(decl['name'])}]"
        lows, highs = [], []
        for c in op.constraints:
            if c.check is not None and "rank" in c.check.source:
                lo_e, hi_e = c.check.bounds(f"rank({ref})")
                lows += [v for v in (_eval_int(e, {}) for e in lo_e) if v is not None]
                highs += [v for v in (_eval_int(e, {}) for e in hi_e) if v is not None]
        if lows or highs:
            out[ref] = (max(lows, default=0), min(highs, default=2**31))
    return out


def _last_dim_limits(op: OpDef) -> dict[str, tuple[list[expr.Expr], list[expr.Expr]]]:
    """tensor -> the bounds its checks put on its last dim (``0 < shape(in[1])[k - 1] <= n - batch_dims``, k its
    rank symbol), for tensors of a drawn rank: GatherNd's and ScatterNd's index depth."""
    out = {}
    for decl in op.inputs:
        sh = decl.get("shape") or {}
        if sh.get("dims") or sh.get("trailing") or sh.get("scalar") or decl.get("shape_from"):
            continue  # a named last dim is drawn where its own checks say (it may be shared)
        ref = f"in[{_first_index(decl['name'])}]"
        rank = sh.get("rank")
        names = [f"shape({ref})[-1]"] + ([f"shape({ref})[{rank} - 1]"] if isinstance(rank, str) else [])
        lows, highs = [], []
        for c in op.constraints:
            if c.check is not None and ref in c.check.tensor_refs():
                for name in names:
                    lo_e, hi_e = c.check.bounds(name)
                    lows += lo_e
                    highs += hi_e
        if lows or highs:
            out[ref] = (lows, highs)
    return out


def _fold_last(shape: tuple[int, ...], limits: tuple[list[expr.Expr], list[expr.Expr]], env: dict[str, Any],
               settings: Settings) -> tuple[int, ...]:  # fmt: skip
    """The shape with its last dim moved inside the bounds its checks give (parameters not drawn yet at their
    defaults), by wrapping the drawn size around the allowed range: one draw either way, spread as the draw
    was. Unchanged where the bounds cannot be worked out yet or allow nothing."""
    typical = settings.tier == TYPICAL
    lo, hi = settings.typical_dims if typical else (1, settings.max_dim)
    lows = [v for v in (_eval_int(e, env) for e in limits[0]) if v is not None]
    highs = [v for v in (_eval_int(e, env) for e in limits[1]) if v is not None]
    b_lo, b_hi = max([lo, *lows]), min([hi, *highs])
    if b_lo > b_hi:  # the tier's range misses the checks' (a depth of 1 with typical dims from 2): the checks win
        b_lo, b_hi = max([1, *lows]), min([hi, *highs])
    last = shape[-1]
    if b_lo > b_hi or b_lo <= last <= b_hi:
        return shape
    return shape[:-1] + (b_lo + (last - b_lo) % (b_hi - b_lo + 1),)


def _draw_shape(draw, decl, ref, env, shapes, same_shape, first_shape, rank_shapes, dim_value, settings,
                broadcast=(), rank_limit=None):  # fmt: skip
    if ref in same_shape and same_shape[ref] in shapes:
        return shapes[same_shape[ref]]
    sh = decl.get("shape") or {}
    dims = sh.get("dims")
    if dims:
        out = []
        for d in dims:
            if isinstance(d, str) and d.isidentifier():
                out.append(dim_value(d))
            else:
                for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", str(d)):
                    if name not in env and name not in ("in", "out"):
                        dim_value(name)
                v = _eval_dim(d, env)
                if v is None or v == 0:
                    return None
                out.append(v)
        return tuple(out)
    rank = sh.get("rank")
    if sh.get("scalar"):
        return ()
    sym = rank if isinstance(rank, str) and rank.isidentifier() else None
    if sym and sym in rank_shapes:  # the same rank: the same leading dims, its own named last dims (MatMul's k, n)
        shared, tail = rank_shapes[sym], sh.get("trailing") or []
        if not tail or len(tail) > len(shared):
            return shared
        return shared[: len(shared) - len(tail)] + tuple(dim_value(n) for n in tail)
    if sym and sym in env:
        r = int(env[sym])
    else:
        lo_r, hi_r = settings.typical_ranks if settings.tier == TYPICAL else (1, settings.max_rank)
        if rank_limit:  # the tensor's own rank checks narrow the range (never past them)
            lo2, hi2 = max(lo_r, rank_limit[0]), min(hi_r, rank_limit[1])
            if lo2 > hi2:  # the tier's range misses the checks' entirely: the nearest rank they allow
                lo2 = hi2 = rank_limit[0] if rank_limit[0] > hi_r else rank_limit[1]
            lo_r, hi_r = lo2, hi2
        r = draw(_ints(lo_r, hi_r), label=f"rank {ref}")
        if sym:
            env[sym] = r
    lead = broadcast[0] if ref in broadcast[1:] and broadcast[0] in shapes else None
    if lead is not None and settings.onto and r > len(shapes[lead]):
        r = len(shapes[lead])
        if sym:
            env[sym] = r
    like_first = first_shape is not None and not broadcast and draw(_BOOL, label=f"{ref} like in[0]")
    # as many draws whatever the rank (the first r of them used), and as many in either branch: the mutator
    # copies a rank, or the coin above, from one draw to another, and the choices after it then still line up
    width = max(r, settings.max_rank)
    if lead is not None or like_first:
        # broadcast-friendly: the trailing dims of the first input, some set to 1 (one way, so it also
        # holds where only the later input stretches: Prelu's slope); a dim is 1 where its pick is 0
        base = shapes[lead] if lead is not None else first_shape
        tail = list(base[-r:]) if r <= len(base) else [1] * (r - len(base)) + list(base)
        keep = draw(_int_list(0, 3, width), label=f"{ref} ones")
        shape = tuple(1 if k == 0 else t for t, k in zip(tail, keep, strict=False))
    else:
        lo, hi = settings.typical_dims if settings.tier == TYPICAL else (1, settings.max_dim)
        shape = tuple(draw(_int_list(lo, hi, width), label=f"{ref} dims")[:r])
    tail = sh.get("trailing") or []
    if tail:  # [.., channel]: the named last dims take their (shared, divisible...) values
        shape = shape[: max(0, len(shape) - len(tail))] + tuple(dim_value(n) for n in tail)
        if sym:
            env[sym] = len(shape)
    if sym:
        rank_shapes[sym] = shape
    return shape


def _value_curation(decl: dict, params: dict[str, Param], op: OpDef) -> dict[str, Any]:
    """The tensor's ``values`` curation, with the entry for the drawn member of an enum parameter merged in:
    ``by_operation`` for ``operation`` (ElementWiseUnary's LOG needs positive inputs, its ABS does not),
    ``by_param`` for any other (MaskedSoftmax's COMPRESSED mask holds whole sequence lengths)."""
    values = {k: v for k, v in (decl.get("values") or {}).items() if k not in ("by_param", "by_operation")}
    for name, table in _curation_tables(decl.get("values") or {}).items():
        if name in params and table:
            members = {v: k for k, v in (op.params[name].get("values") or {}).items()}
            values.update(table.get(members.get(int(params[name].value)), {}))
    return values


def _curation_tables(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """enum parameter -> {member: curation} of a tensor's ``values``: ``by_param``, and ``by_operation`` as the
    table of ``operation``."""
    tables = dict(values.get("by_param") or {})
    if "by_operation" in values:
        tables["operation"] = values["by_operation"]
    return tables


def _axis_of(decl: dict, config: Config) -> int | None:
    """The quantization axis of a tensor the configuration quantizes per axis (``per_axis(k)``)."""
    if decl["name"] not in config.per_axis:
        return None
    for q in decl.get("quantization") or []:
        m = re.fullmatch(r"per_axis\((\d+)\)", q)
        if m:
            return int(m.group(1))
    raise ValueError(f"{decl['name']} is per axis in a configuration but declares no per_axis(k) quantization")


def _encoding_source(decl: dict, inputs: list[Tensor | None], typical: bool) -> tuple[Tensor, Tensor] | None:
    """For a bias in the typical tier: the two quantized inputs whose scales multiply into its scale."""
    refs = decl.get("encoding_from")
    if not (typical and refs):
        return None
    ts = [inputs[_first_index(r)] if _first_index(r) < len(inputs) else None for r in refs]
    if any(t is None or t.encoding is None for t in ts):
        return None
    return ts[0], ts[1]


def is_weight(decl: dict) -> bool:
    """Whether a declared input is one a converter quantizes as a weight (filters, gamma, beta, a scale): a
    static input other than in[0] that is not a bias scaled from other tensors (``encoding_from``)."""
    if decl.get("role") in ("weights", "bias"):  # a dynamic operand converters quantize as a weight (MatMul's B),
        return decl["role"] == "weights"  # or a static input they quantize as a bias (a normalisation's beta)
    return (decl.get("static") in ("preferred", "always") and not decl["name"].startswith("in[0]")
            and not decl.get("encoding_from"))  # fmt: skip


def code_range(dtype: str, bits: int | None = None) -> tuple[int, int]:
    """The codes a tensor of ``dtype`` may hold: the datatype's, or with a bit-width encoding the ``bits``-wide
    range inside it (a signed 4-bit value in an 8-bit container: [-8, 7])."""
    d = dtypes.get(dtype)
    if not bits or bits >= d.bits:
        return d.qmin, d.qmax
    if d.kind == "sfixed":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _per_axis_encoding(rng: np.random.Generator, dtype: str, channels: int, axis: int,
                       bits: int | None = None) -> Encoding:  # fmt: skip
    """Symmetric per-channel scales (offset 0 for signed types), each channel its own range, as a
    converter calibrates weights channel by channel."""
    d = dtypes.get(dtype)
    qmin, qmax = code_range(dtype, bits)
    span = rng.uniform(0.25, 4.0, channels)
    if d.kind == "sfixed":
        scales = tuple(float(np.float32(x / qmax)) for x in span)
        return Encoding(scales, (0,) * channels, axis, bits)
    scales = tuple(float(np.float32(2 * x / (qmax - qmin))) for x in span)
    return Encoding(scales, (-((qmax + 1) // 2),) * channels, axis, bits)


def symmetric_encoding(rng: np.random.Generator, dtype: str, bits: int | None = None) -> Encoding:
    """A signed weight's per-tensor grid as converters calibrate it: symmetric about zero, offset 0."""
    _, qmax = code_range(dtype, bits)
    return Encoding((float(np.float32(rng.uniform(0.5, 4.0) / qmax)),), (0,), None, bits)


def _product_encoding(x: Tensor, w: Tensor, channels: int) -> Encoding:
    """A bias encoding as converters build it: scale = input scale x weight scale (per output
    channel when the weights are per axis), offset 0, so the bias adds straight into the accumulator."""
    s_in = x.encoding.scales[0]
    if w.encoding.per_axis and len(w.encoding.scales) == channels:
        return Encoding(tuple(float(np.float32(s_in * s)) for s in w.encoding.scales), (0,) * channels, 0)
    return Encoding((float(np.float32(s_in * w.encoding.scales[0])),), (0,))


def _special_codes(rng: np.random.Generator, d: dtypes.QnnDtype, enc: Encoding, shape: tuple[int, ...]) -> np.ndarray:
    """Codes heavy on the grid's ends and its zero point: saturation and zero handling."""
    codes = rng.integers(d.qmin, d.qmax + 1, shape)
    mask = rng.random(shape) < 0.5
    zero = int(np.clip(-enc.offsets[0], d.qmin, d.qmax))
    codes[mask] = rng.choice([d.qmin, d.qmin + 1, zero, d.qmax - 1, d.qmax], size=int(mask.sum()))
    return codes


def _tensor_with_data(rng, ref, dtype, shape, regime, values, shapes, env, typical=False, axis=None,
                      product=None, bits=None, weight=False) -> Tensor:  # fmt: skip
    d = dtypes.get(dtype)
    if "product" in values and len(shape) == 1:  # a shape for the op to take: whole numbers multiplying out
        n_in = 1 + max((_first_index(k) for k in shapes if k.startswith("in[")), default=-1)
        ins = [expr.TensorInfo(shapes[f"in[{i}]"], "") if f"in[{i}]" in shapes else
               expr.TensorInfo((), "", present=False) for i in range(n_in)]  # fmt: skip
        total = _eval_dim(values["product"], {**env, "_in": ins})
        return Tensor(ref, dtype, shape, _factorisation(rng, total or 1, shape[0], typical).astype(d.storage))
    if "sum" in values and shape:  # rows of whole numbers adding up (MaskedSoftmax's sequence lengths fill channel)
        total = _eval_dim(values["sum"], env)
        assume(total is not None and total >= shape[-1] >= 1)  # every part at least 1
        parts = np.stack([_composition(rng, total, shape[-1]) for _ in range(int(np.prod(shape[:-1])))])
        parts = parts.reshape(shape)
        if d.quantized:  # the grid of whole numbers: code k is k
            assume(total <= d.qmax)
            return Tensor(ref, dtype, shape, parts.astype(d.storage), Encoding((1.0,), (0,)))
        return Tensor(ref, dtype, shape, parts.astype(d.storage))
    if "range" in values:  # a hard requirement of the op (indices, box corners): both tiers
        t = _tensor_in_range(rng, ref, dtype, shape, values, env)
        if typical and values.get("corners") and shape and shape[-1] == 4:
            _ordered_corners(t)
        return t
    domain = values.get("domain")
    if domain is not None and (typical or rng.random() < 0.5):  # the edge tier also goes outside
        t = _tensor_in_range(rng, ref, dtype, shape, {"range": domain}, env)
    elif d.quantized:
        if product is not None and len(shape) == 1:
            enc = _product_encoding(*product, shape[0])
            real = rng.normal(0.0, 1.0, shape)
            scales = np.asarray(enc.scales, dtype=np.float64)
            data = np.clip(np.round(real / scales), d.qmin, d.qmax).astype(d.storage)
        elif axis is not None and axis < len(shape):
            enc = _per_axis_encoding(rng, dtype, shape[axis], axis, bits)
            qmin, qmax = code_range(dtype, bits)
            data = rng.integers(qmin, qmax + 1, shape).astype(d.storage)
        elif bits or (typical and weight and d.kind == "sfixed" and regime != "special"):
            # a signed weight (or a bias no product of scales gives) in the typical tier is symmetric (offset 0),
            # as converters quantize them; a bit-width encoding's values stay inside its narrower range
            enc = symmetric_encoding(rng, dtype, bits) if d.kind == "sfixed" else random_encoding(rng, dtype)
            if bits and d.kind != "sfixed":
                qmin, qmax = code_range(dtype, bits)
                enc = Encoding((float(np.float32(8.0 / (qmax - qmin))),), (-((qmax + 1) // 2),), None, bits)
            qmin, qmax = code_range(dtype, bits)
            data = rng.integers(qmin, qmax + 1, shape).astype(d.storage)
        else:
            enc = random_encoding(rng, dtype)
            special = regime == "special"
            codes = _special_codes(rng, d, enc, shape) if special else rng.integers(d.qmin, d.qmax + 1, shape)
            data = codes.astype(d.storage)
        t = Tensor(ref, dtype, shape, data, enc)
    elif d.kind == "float":
        t = Tensor(ref, dtype, shape, float_values(rng, shape, regime, dtype))
    elif d.kind == "bool":
        t = Tensor(ref, dtype, shape, rng.integers(0, 2, shape).astype(bool))
    else:
        # integer tensors are mostly indices: keep them inside the smallest dim of the first input
        first = shapes.get("in[0]", (4,))
        hi = max(1, min(first) if first else 1)
        size = int(np.prod(shape, dtype=np.int64))
        if values.get("unique") and (size <= hi or not typical):  # a check says unique(values(t)): distinct
            # indices; in the edge tier past that dim when there are more (an index out of range is an edge case)
            t = Tensor(ref, dtype, shape, rng.permutation(max(hi, size))[:size].reshape(shape).astype(d.storage))
        else:
            t = Tensor(ref, dtype, shape, rng.integers(0, hi, shape).astype(d.storage))
    if typical and values.get("nonzero"):
        _away_from_zero(t)
    return t


def _ordered_corners(t: Tensor) -> None:
    """Boxes whose first corner is the upper-left one and the second the bottom-right one, as a spec that names them
    so reads (RoiAlign 11394): each pair of coordinates sorted. Codes sort as their real values do (scale > 0)."""
    boxes = t.data.reshape(-1, 4)
    first, second = np.minimum(boxes[:, :2], boxes[:, 2:]), np.maximum(boxes[:, :2], boxes[:, 2:])
    t.data[...] = np.concatenate([first, second], axis=1).reshape(t.data.shape)


def _composition(rng: np.random.Generator, total: int, n: int) -> np.ndarray:
    """``n`` positive whole numbers adding up to ``total`` (``total >= n``), each split equally likely."""
    cuts = np.sort(rng.choice(np.arange(1, total), size=n - 1, replace=False)) if n > 1 else np.array([], int)
    return np.diff(np.concatenate([[0], cuts, [total]])).astype(np.int64)


def _factorisation(rng: np.random.Generator, total: int, n: int, typical: bool) -> np.ndarray:
    """``n`` positive whole numbers whose product is ``total``: its prime factors dealt out at random
    (in the typical tier, to empty places first, so a size-1 axis appears only when the primes run out)."""
    primes, x, p = [], total, 2
    while x > 1 and p * p <= x:
        while x % p == 0:
            primes.append(p)
            x //= p
        p += 1
    if x > 1:
        primes.append(x)
    out = np.ones(n, dtype=np.int64)
    order = rng.permutation(len(primes))
    empty = list(rng.permutation(n))
    for k in order:
        slot = empty.pop() if typical and empty else int(rng.integers(0, n))
        out[slot] *= primes[k]
    return out


def _away_from_zero(t: Tensor) -> None:
    """Divisors in the typical tier: no zero (x/0 is an edge case whose result the spec leaves open
    for integer and fixed-point types)."""
    d = dtypes.get(t.dtype)
    if d.quantized:
        zero = -t.encoding.offsets[0]
        step = 1 if zero < d.qmax else -1
        t.data[t.data == zero] = zero + step
    elif d.kind == "float":
        small = np.abs(t.data.astype(np.float64)) < 0.25
        t.data[small] = np.where(t.data[small] < 0, -0.25, 0.25).astype(t.data.dtype)
    elif d.kind in ("int", "uint"):
        t.data[t.data == 0] = 1


def _tensor_in_range(rng, ref, dtype, shape, gen: dict, env: dict) -> Tensor:
    """A curated ``values: {range: [lo, hi], integer: bool}`` (bounds may name dims and params):
    uniform reals, or whole numbers for integer types; quantized types get an encoding covering it
    and codes whose real values stay inside ``[lo, hi]`` (a domain's edge must not round outside it)."""
    d = dtypes.get(dtype)
    lo, hi = (float(np.asarray(expr.parse(str(x)).evaluate(env))) for x in gen["range"])
    if gen.get("integer") or d.kind in ("int", "uint"):
        real = rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, shape).astype(np.float64)
    else:
        real = rng.uniform(lo, hi, shape)
    if not d.quantized:
        return Tensor(ref, dtype, shape, real.astype(d.storage))
    enc = encoding_covering(np.array([lo, hi]), dtype)
    scale, offset = enc.scales[0], enc.offsets[0]
    q_lo = max(d.qmin, int(np.ceil(lo / scale - offset - 1e-9)))
    q_hi = min(d.qmax, int(np.floor(hi / scale - offset + 1e-9)))
    codes = np.clip(np.round(real / scale) - offset, q_lo, max(q_lo, q_hi))
    return Tensor(ref, dtype, shape, codes.astype(d.storage), enc)


def _infer(settings: Settings, op: OpDef, case: Case) -> tuple[bool, list[np.ndarray] | None]:
    """(valid, real outputs): a ValueError is the reference refusing the case on purpose (a relation
    the spec states only in prose, e.g. gamma's length = channels): not a valid case; any other error
    means the reference cannot compute it this way (None)."""
    if settings.infer is None:
        return True, None
    try:
        return True, settings.infer(op, case)
    except ValueError:
        return False, None
    except Exception:
        return True, None


def _outputs(op: OpDef, config: Config, case: Case, env, shapes, same_shape,
             settings) -> tuple[list[Tensor], list[np.ndarray] | None] | None:  # fmt: skip
    """The declared outputs and the reference's real-valued result (None without a reference)."""
    valid, real = _infer(settings, op, case)
    if not valid:
        return None
    if real is None and settings.infer is not None:
        provisional = _outputs(op, config, case, env, shapes, same_shape, replace(settings, infer=None))
        if provisional is not None:  # sizes the spec takes from the declared output: ask again with them
            probe = Case(case.op, case.inputs, case.params, [Tensor(t.name, t.dtype, t.shape) for t in provisional[0]],
                         config=case.config)  # fmt: skip
            valid, real = _infer(settings, op, probe)
            if not valid:
                return None
            if real is not None and [tuple(np.shape(r)) for r in real] != [t.shape for t in provisional[0]]:
                real = None  # the reference sized them otherwise: keep the spec's shapes, uncalibrated
    outs: list[Tensor] = []
    decls = op.outputs
    # without a reference: the curated number of outputs (generate.outputs_count), else one per declaration
    n = len(real) if real is not None else op.generation.get("outputs_count", [len(decls)])[0]
    for i in range(n):
        decl = next((d for d in reversed(decls) if _first_index(d["name"]) <= i), decls[-1] if decls else None)
        if decl is None:
            return None
        ref = f"out[{i}]"
        dtype = config.dtype_of(decl["name"])
        if real is not None:
            shape = declared_rows(op, i, tuple(np.shape(real[i])), case, env)
        elif ref in same_shape and same_shape[ref] in shapes:
            shape = shapes[same_shape[ref]]
        else:
            dims = (decl.get("shape") or {}).get("dims")
            shape = tuple(_eval_dim(d, env) for d in dims) if dims else None
            if shape is None or any(s is None for s in shape):
                return None
        if _elements(shape) > settings.max_elements or 0 in shape:
            return None  # too big for the simulator, or empty (a QNN dimension is never 0)
        enc = None
        if dtypes.get(dtype).quantized:
            enc = _output_encoding(case, real[i] if real is not None else None, dtype,
                                   settings.tier == TYPICAL and op.family == "data movement")  # fmt: skip
            fixed = op.fixed_encoding(i, dtype) if settings.tier == TYPICAL else None
            if fixed is not None:  # a bounded function's grid that converters fix and the backend requires
                enc = Encoding((fixed[0],), (fixed[1],))
            dist = op.tolerance.get("distribution")
            if dist:  # a random op's grid holds its declared range (there is no expected value to calibrate on)
                bounds = [float(case.params[k].value) if k in case.params else float(env.get(k, 0.0))
                          for k in (dist["low"], dist["high"])]  # fmt: skip
                enc = encoding_for_range(min(bounds), max(bounds), dtype)
        outs.append(Tensor(ref, dtype, shape, None, enc))
    return outs, real


# ---------------------------------------------------------------------------------------------
# Data-dependent output lengths and sequences of executions (kept apart from the drawing above)
# ---------------------------------------------------------------------------------------------
def declared_rows(op: OpDef, i: int, shape: tuple[int, ...], case: Case, env: dict[str, Any]) -> tuple[int, ...]:
    """The shape to declare for output ``i``: the reference's, except that an output whose valid length the
    backend reports (``valid_rows.capacity``) is declared at its maximum, as a converter sizes it, so a
    case may hold fewer valid rows than declared - none at all included."""
    rows = op.valid_rows(i + 1).get(i) or {}
    if "capacity" not in rows:
        return shape
    axis = int(rows.get("axis", 0))
    cap = _eval_dim(rows["capacity"], {**env, **check.environment(op, case)})
    if cap is None or axis >= len(shape) or cap < shape[axis]:
        return shape
    return shape[:axis] + (cap,) + shape[axis + 1 :]


def draw_steps(draw: st.DrawFn, op: OpDef, case: Case, settings: Settings) -> list[list[np.ndarray | None]]:
    """Further executions of the graph for an op that keeps state between them (``generate.executions``:
    [lo, hi], the number of executions in all). Each step gives every non-static input new data of the same
    shape, type and encoding, drawn inside the range execution 0's data spans (a bool, such as a reset
    input, either way), so each step stays in the tier and the domain the first was drawn for."""
    lo, hi = op.generation.get("executions") or (1, 1)
    runs = draw(_ints(lo, hi), label="executions")
    if runs <= 1:
        return []
    rng = np.random.default_rng(draw(_ints(0, 2**32 - 1), label="steps seed"))
    steps = [[None if t is None or t.static or t.data is None else _like(rng, t) for t in case.inputs]
             for _ in range(runs - 1)]  # fmt: skip
    if settings.infer is not None:  # every execution must be one the reference accepts (a ValueError refuses it)
        probe = replace(case, steps=steps)
        valid, _ = _infer(settings, op, probe)
        assume(valid)
    return steps


def _like(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    d = dtypes.get(t.dtype)
    data = np.asarray(t.data)
    if d.kind == "bool":
        return rng.integers(0, 2, data.shape).astype(bool)
    if d.kind == "float":
        finite = data[np.isfinite(data)].astype(np.float64)
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
        return rng.uniform(lo, hi, data.shape).astype(data.dtype)
    return rng.integers(int(data.min()), int(data.max()), data.shape, endpoint=True).astype(data.dtype)
