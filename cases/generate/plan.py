"""The plan of a cell: what every case of one op, datatype configuration and tier is drawn from, worked out once."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from cases.case import TYPICAL
from cases.generate import sizes
from cases.generate.configurations import Config, Settings
from cases.generate.evaluate import _ratio, _same_shape_targets
from cases.generate.params import _deferred_params, _needed_params
from cases.generate.shapes import _last_dim_limits, _rank_limits, _typical_presence
from cases.generate.slots import _datatype_stand_ins, _reads_only_datatypes
from opdefs import OpDef, expr


@dataclass(frozen=True, eq=False)
class CellPlan:
    """The spec read for drawing one cell's cases (``plan_cell``); no draw goes into it."""

    op: OpDef
    config: Config
    settings: Settings  # the tier's, with the spec's typical_dims, typical_ranks and broadcast_onto
    typical: bool
    broadcast: list[str]  # the inputs that broadcast, the first one leading
    shapers: set[str]  # inputs drawn to shape the case, then left out
    typical_when: list[expr.Expr]  # the typical tier's conditions (none in the edge tier)
    explicit_ranks: set[int]  # the ranks the spec's dims lists give
    same_shape: dict[str, str]  # tensor -> tensor it has the shape of
    deferred: list[str]  # parameters drawn after the tensors (``_deferred_params``)
    divisible: list[tuple[str, str]]  # (dim, divisor) pairs
    rank_limits: dict[str, tuple[int, int]]
    last_limits: dict[str, tuple[list[expr.Expr], list[expr.Expr]]]
    unique_values: set[str]  # 'values(in[k])' a check wants unique
    symbols: frozenset[str]
    sized_by: dict[str, list[expr.Expr]]  # dim -> the derived dims' formulas that read it
    defaults: dict[str, Any]
    dim_checks: dict[str, list[expr.Expr]]  # dim -> checks its size is drawn to meet
    steer: list[expr.Expr]  # typical conditions on dims and parameters alone
    by_type: list[expr.Expr]  # typical conditions that read tensors only through their datatypes
    on_inputs: list[expr.Expr]  # typical conditions on parameters and the inputs (not the outputs)
    type_env: dict[str, Any]  # the configuration's datatypes, for ``by_type``
    members: dict[str, list[expr.Expr]]  # dim -> the few values a check allows
    tied: list[tuple[expr.Expr | None, str, str]]  # (condition, dim, dim) a check makes equal
    before_outputs: list[Any]  # constraints that do not name the outputs
    after_outputs: list[Any]  # what the last check still has to look at once the outputs exist
    presence: list[expr.TensorInfo] | None  # which inputs a typical case gives, known before any is drawn
    needed: frozenset[str]  # optional parameters always given (``_needed_params``)
    growable: tuple[str, ...] = ()  # dims a typical case drawn at a deployed size may grow (``sizes.growable``)
    innermost: frozenset[str] = frozenset()  # dims that are the last of some input (``sizes.last_dims``)
    input_dims: tuple[tuple[str, ...], ...] = ()  # each input's named dims (``sizes.room``)


def plan_cell(op: OpDef, config: Config, settings: Settings) -> CellPlan:
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
    explicit_ranks = {len(d.dims) for d in op.input_specs + op.output_specs}
    same_shape = _same_shape_targets(op)
    derived = op.derived
    deferred = _deferred_params(op)
    divisible = [pair for c in op.constraints if c.check is not None for pair in c.check.divisibility()]
    # a dim that is 'a / b' (a derived one, or one a shape lists: Conv2d's filter has channel_in/group) makes b divide a
    ratio_dims = [*derived.values(), *(d for t in op.input_specs for d in t.dims if isinstance(d, str) and "/" in d)]
    divisible += [pair for src in ratio_dims if (pair := _ratio(src))]
    rank_limits = _rank_limits(op)
    last_limits = _last_dim_limits(op)
    unique_values = {f"values(in[{d.first_index}])" for d in op.input_specs for c in op.constraints
                     if c.check is not None and c.check.requires_unique(f"values(in[{d.first_index}])")}
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
    # and those on a parameter and the inputs drawn before it (LayerNorm's 'axes[0] == rank(in[0]) - 1'): the parameter
    # is drawn among the values that meet them
    on_inputs = [c for c in typical_when if c.tensor_refs() and c not in by_type
                 and all(ref.startswith("in[") for ref in c.tensor_refs()) and "out" not in c.names()]  # fmt: skip
    type_env = _datatype_stand_ins(op, config) if by_type else {}
    members = {name: options for c in op.constraints if c.check is not None
               for name, options in c.check.memberships() if name in symbols}  # fmt: skip
    # a dim the check makes equal to another dim, or to an integer parameter drawn before the shapes (Stft's
    # 'window_size == frame_length': drawn apart, they met in 1 draw of 5, and 900 draws were refused for 240 cases)
    scalars = {n for n, p in op.param_specs.items() if "INT" in p.dtype and not p.shape.get("dims")}
    tied = [(cond, a, b) for c in op.constraints if c.check is not None for cond, a, b in c.check.dim_equalities()
            if a != b and (a in symbols or b in symbols) and {a, b} <= symbols | scalars]  # fmt: skip
    before_outputs = [c for c in op.constraints if c.check is not None and "out" not in c.check.names()
                      and "num_outputs" not in c.check.source]  # fmt: skip
    # what the last check still has to look at once the outputs exist: the rest held on the same inputs and
    # params (a check owned by an output counted as met while it had none)
    after_outputs = [c for c in op.constraints if c.check is not None
                     and (c not in before_outputs or c.owner.startswith("out"))]  # fmt: skip
    return CellPlan(
        op=op, config=config, settings=settings, typical=typical, broadcast=broadcast, shapers=shapers,
        typical_when=typical_when, explicit_ranks=explicit_ranks, same_shape=same_shape, deferred=deferred,
        divisible=divisible, rank_limits=rank_limits, last_limits=last_limits, unique_values=unique_values,
        symbols=symbols, sized_by=sized_by, defaults=defaults, dim_checks=dim_checks, steer=steer, by_type=by_type,
        on_inputs=on_inputs,
        type_env=type_env, members=members, tied=tied, before_outputs=before_outputs, after_outputs=after_outputs,
        presence=_typical_presence(op, shapers) if typical else None, needed=_needed_params(op),
        growable=sizes.growable(op) if typical else (), innermost=sizes.last_dims(op),
        input_dims=sizes.input_dims(op),
    )  # fmt: skip
