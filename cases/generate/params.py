"""Parameters: which wait for the tensors, how each is drawn inside the bounds its checks give."""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from hypothesis import assume

from cases import check
from cases.case import Case, Param, Tensor
from cases.generate.configurations import Config, _first_index
from cases.generate.draws import _BOOL, _bool_list, _default_or, _int_list, _ints, _permutation, _pick, _pick_list
from cases.generate.evaluate import _curation_tables, _eval_dim, _eval_int, _fits, _holds, _names_call, _param_checks
from cases.generate.slots import _FREE
from opdefs import OpDef, ParamSpec, dtypes, expr

if TYPE_CHECKING:
    from cases.generate.strategy import CaseDrawing
from cases.case import TYPICAL


def _deferred_params(op: OpDef) -> list[str]:
    """Parameters no tensor shape, value range, dim formula or other parameter names, in declaration
    order: they can wait until the tensors exist, so a check such as ``axis <= rank(in[0]) - 1`` bounds
    the draw instead of refusing it afterwards. A parameter some tensor depends on is drawn first."""
    used: set[str] = set(op.derived) | set(op.dims)
    words = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

    def note(x: Any) -> None:
        used.update(words.findall(str(x)))

    for d in op.input_specs + op.output_specs:
        for key in ("shape", "values", "repeated", "encoding_from"):  # a shape_from draws what it reads when reached
            if key in d.raw:
                note(d.raw[key] if key != "shape" else {k: v for k, v in d.shape.items() if k != "text"})
        used.update(_curation_tables(d.values))  # the enum a tensor's values depend on: first
    for src in op.derived.values():
        note(src)
    for name, p in op.param_specs.items():
        for key in ("domain", "generate"):
            if key in p.raw:
                note(p.raw[key])
        dims = p.dims
        used.update(x for d in dims if isinstance(d, str) for x in words.findall(d) if x != name)
    for c in op.constraints:
        if c.check is not None:  # 'channel % group == 0': the dim is drawn as a multiple, so group comes first
            used.update(n for a, b in c.check.divisibility() if a not in op.params
                        for n in words.findall(b) if n in op.params)  # fmt: skip
    for c in op.constraints:  # a condition tying two dims (MaskedSoftmax's mode) is known before the dims
        if c.check is not None:
            for cond, _a, _b in c.check.dim_equalities():
                used.update(cond.names() & set(op.params) if cond is not None else ())
    ranks = {str(d.shape.get("rank")) for d in op.input_specs + op.output_specs}
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


def _draw_bounded(d: CaseDrawing, name: str, p: ParamSpec, others: Sequence[expr.Expr] = (), later: Sequence[str] = (),
                  forced: Any = None) -> Any:  # fmt: skip
    """An integer parameter drawn inside the bounds its checks give once the tensors exist: scalars in
    ``[lo, hi]``; vectors unique where a check says ``unique`` (a permutation when the length is the
    range's), increasing where one says ``increasing``; where a check says the values index dims of a
    given size (``values(shape(in[0]))[axes] == 1``), among those dims, pinning some to that size when
    the tensor has none. A scalar (an enum's member too) is taken among the values for which ``others``, the
    checks of other owners that name it, hold as well, and that leaves the parameters drawn ``later`` a range
    (Buffer's buffer_size no smaller than the least stride, Split's axis not a size-1 dim when split_index must lie
    in [1, shape(in[0])[axis] - 1]). Anything else goes the ordinary way (``_draw_param``). ``forced``: the value
    ``enumerated_slots`` schedules for a boolean or an enum, taken where those checks allow it."""
    draw, op, env, settings, config = d.draw, d.plan.op, d.env, d.plan.settings, d.plan.config
    inputs, params, shapes, makers, same_shape = d.inputs, d.params, d.shapes, d.makers, d.plan.same_shape
    forced = _FREE if forced is None else forced
    dt = dtypes.get(param_dtype(p, config))
    checks = _param_checks(op, name)
    sh = p.shape
    scalar = bool(sh.get("scalar") or not (sh.get("dims") or sh.get("rank")))
    if p.members and scalar and p.curated is None:
        full = {**check.environment(op, Case(op.name, inputs, params, [])), **env}
        members = [v for v in sorted(p.members.values()) if _fits([*checks, *others], {**full, name: v})]
        if members:
            drawn = draw(_pick(members), label=name)
            if forced is not _FREE:
                assume(forced in members)
                return forced
            return drawn
    if dt.kind not in ("int", "uint") or p.curated is not None or p.members:
        if dt.kind == "bool" and scalar and forced is not _FREE and p.curated is None:
            full = {**check.environment(op, Case(op.name, inputs, params, [])), **env}
            _draw_param(d, name, p)
            assume(_fits([*checks, *others], {**full, name: forced}))
            return forced
        # a float or a curated value: among those its checks and the others' allow (ReluMinMax's max_value above the
        # min_value drawn before it), where the ordinary draw took any and was refused after
        return _draw_param(d, name, p, [*checks, *others])
    full = {**check.environment(op, Case(op.name, inputs, params, [])), **env}
    lows, highs = [], []
    for c in checks:
        lo_e, hi_e = c.bounds(name)
        lows += [v for v in (_eval_int(e, full) for e in lo_e) if v is not None]
        highs += [v for v in (_eval_int(e, full) for e in hi_e) if v is not None]
    if not highs and p.domain is None and not (scalar and checks):
        return _draw_param(d, name, p)
    positive = any((c.lower_bound(name) or 0) >= 1 for c in checks)
    lo = max(lows) if lows else (1 if positive else 0)
    hi = min(highs) if highs else settings.max_rank
    if not highs and scalar:  # 'buffer_size % shape(in[0])[buffer_dim] == 0': room for a few multiples
        divisor = next((d for c in checks for a, b in c.divisibility()
                        if a == name and (d := _eval_dim(b, full)) is not None and d > 0), None)  # fmt: skip
        hi = max(hi, (divisor or 0) * settings.max_rank)
    if p.domain is not None:
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
        default = p.default
        plain_default = isinstance(default, int) and not isinstance(default, bool) and p.domain is None
        if plain_default and default not in candidates:
            candidates.append(default)
        # only the values its own checks allow on these tensors (StridedSlice's new_axes_mask)
        candidates = [v for v in candidates if _fits([*checks, *others], {**full, name: v})
                      and _leaves_room(op, name, v, later, full)]  # fmt: skip
        assume(bool(candidates))
        # from either end on a coin: hypothesis favours the first of a list, and the last (an axis at the end, the
        # trailing position ExpandDims inserts at) was drawn in a tenth of the cases
        if len(candidates) > 2 and draw(_BOOL, label=f"{name} from the top"):
            candidates = candidates[::-1]
        choice = _pick(candidates)
        if isinstance(default, int) and not isinstance(default, bool) and default in candidates:
            choice = _default_or(default, choice)
        return draw(choice, label=name)
    dims = sh.get("dims") or []
    # a typical condition steered here (Moments' 'unique(axes)', only in generate.typical_when) counts as a check
    unique = any(c.requires_unique(name) for c in [*checks, *others])
    increasing = any(_names_call(c, "increasing", name) for c in [*checks, *others])
    if len(dims) != 1:
        along = shapes.get(p.rows.get("along", ""))
        return _draw_param(d, name, p, axis_sizes=along)
    n = env.get(dims[0]) if isinstance(dims[0], str) else dims[0]
    cap = len(candidates) if unique or increasing else settings.max_rank
    steered = [c for c in others if name in c.names()]
    if steered and (unique or increasing) and 0 < len(candidates) <= _ENUMERABLE:
        # a condition of another owner or the typical tier's on the whole vector (LayerNorm's 'len(axes) == 1 and
        # axes[0] == rank(in[0]) - 1'): the few vectors it allows are listed and one drawn, where drawing any and
        # refusing after cost 1246 draws a main job
        full = {**check.environment(op, Case(op.name, inputs, params, [])), **env}
        fitting = [v for v in _vectors(candidates, n, min(cap, settings.max_rank), increasing)
                   if _fits([*checks, *others], {**full, name: np.asarray(v, dtype=dt.storage)})]  # fmt: skip
        assume(bool(fitting))
        vals = list(draw(_pick(fitting), label=name))
        if isinstance(dims[0], str) and n is None:
            env[dims[0]] = len(vals)
        return np.asarray(vals, dtype=dt.storage).reshape((len(vals),))
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


_ENUMERABLE = 6  # candidate values up to which every unique vector of them is listed (at most 1956 for 6)


def _vectors(candidates: Sequence[int], n: int | None, most: int, increasing: bool) -> list[tuple[int, ...]]:
    """Every vector of distinct candidates of length ``n`` (1 to ``most`` when None), increasing where asked, shortest
    first."""
    from itertools import combinations, permutations

    lengths = [n] if n is not None else range(1, most + 1)
    out: list[tuple[int, ...]] = []
    for k in lengths:
        out += list(combinations(candidates, k) if increasing else permutations(candidates, k))
    return out


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
        p = op.param_specs.get(c.owner)
        if c.check is None or p is None or not p.optional or c.owner not in params:
            continue
        if waiting and c.check.names() & (waiting - set(params)):
            continue
        try:
            if not expr.holds(c.check, env):
                drop.add(c.owner)
        except expr.EvalError:
            continue
    return {k: v for k, v in params.items() if k not in drop}


def param_dtype(p: ParamSpec, config: Config) -> str:
    """A parameter typed 'backend specific' (ConstantOfShape's value, Pad's constant) follows the data."""
    if p.dtype != "backend_specific":
        return p.dtype
    primary = config.label.split("+")[0]
    return primary if primary and not dtypes.get(primary).quantized else "FLOAT_32"


def _bounds(p: ParamSpec, env: dict) -> tuple[int, int] | None:
    """A parameter's curated ``domain: [lo, hi]`` (expressions of constants and earlier params)."""
    if p.domain is None:
        return None
    lo, hi = (int(np.floor(float(expr.parse(str(x)).evaluate(env)))) for x in p.domain)
    return lo, max(lo, hi)


def _draw_param(d: CaseDrawing, name: str, p: ParamSpec, prefer: Sequence[expr.Expr] = (),
                type_env: dict[str, Any] | None = None, axis_sizes: tuple[int, ...] | None = None,
                forced: Any = _FREE) -> Any:  # fmt: skip
    """A parameter drawn before the tensors (or one ``_draw_bounded`` cannot bound). Among curated choices or an
    enum's members, only those ``prefer`` (the typical tier's conditions) does not rule out, where some remain;
    ``type_env`` gives those conditions the tensors' datatypes (``_datatype_stand_ins``). ``axis_sizes``: the
    shape of the tensor whose axes a matrix's rows describe (``rows.along``), for its ``rows`` conditions.
    ``forced``: the value ``enumerated_slots`` schedules for a boolean or enum parameter, taken where ``prefer``
    allows it (still drawn, then set aside: the case keeps as many choices)."""
    draw, op, env, settings, config, dim_value = d.draw, d.plan.op, d.env, d.plan.settings, d.plan.config, d.dim_value
    env_prefer = {**env, **type_env} if type_env else env
    dt = dtypes.get(param_dtype(p, config))
    domains = op.dims
    sh = p.shape
    checks = _param_checks(op, name)
    positive = any((c.lower_bound(name) or 0) >= 1 for c in checks)
    if p.curated is not None:
        options = _preferred(p.curated, name, prefer, env_prefer)
        v = draw(_pick(options), label=name)
        return np.asarray(v, dtype=dt.storage) if isinstance(v, list) else v
    if sh.get("scalar") or not (sh.get("dims") or sh.get("rank")):
        if p.members:
            options = _preferred(sorted(p.members.values()), name, prefer, env_prefer)
            drawn = draw(_pick(options), label=name)
            if forced is not _FREE:  # the scheduled value, or a refused draw (the schedule tries it again)
                assume(forced in options)
                return forced
            return drawn
        if dt.kind == "bool":
            options = _preferred((False, True), name, prefer, env_prefer)
            # a value the typical tier's conditions fix (FullyConnected's keep_dims false) is taken, not refused after
            drawn = draw(_BOOL, label=name) if len(options) > 1 else options[0]
            if forced is not _FREE:
                assume(forced in options)
                return forced
            return drawn
        if dt.kind in ("uint", "int"):
            if p.domain is not None:
                return draw(_ints(*_bounds(p, env)), label=name)
            default = p.default
            choices = _ints(1 if positive else 0, settings.max_rank)
            if isinstance(default, int) and not isinstance(default, bool):
                choices = _default_or(default, choices)
            return draw(choices, label=name)
        if dt.kind == "float":
            default = p.default
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
    elif (p.domain is not None and len(shape) == 2 and (checks or axis_sizes is not None)
          and all(_rowwise(c) for c in checks)):
        # a matrix whose checks hold row by row (StridedSlice's ranges: stride != 0, begin > end when it is
        # negative): each row drawn until its own checks hold, rather than the whole case refused
        lo, hi = _bounds(p, env)
        valid = _valid_rows(op, name, checks, lo, hi, shape[1], dt.storage)
        rows = []
        for r in range(shape[0]):
            if valid and axis_sizes is not None and r < len(axis_sizes):
                # rows that describe an axis (StridedSlice's slices of in[0]): those the curated conditions allow on
                # an axis of that size, drawn directly instead of refusing the case they would empty
                fitting = _rows_fitting(p.rows, tuple(valid), axis_sizes[r], settings.tier == TYPICAL, op, env)
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
    elif p.domain is not None:
        lo, hi = _bounds(p, env)
        vals = draw(_int_list(lo, hi, size), label=name)
    else:
        lo = 1 if positive else 0
        vals = draw(_int_list(lo, 2 if not positive else 3, size), label=name)
    return np.asarray(vals, dtype=dt.storage).reshape(shape)


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
        for name, p in op.param_specs.items():
            if not p.optional or name not in defaults:
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
    default = op.param_specs[name].default
    if not (isinstance(default, dict) and "expr" in default):
        return None
    return _eval_int(expr.parse(str(default["expr"])), env)
