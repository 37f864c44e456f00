"""The strategy: one configuration and tier of an op, drawn as cases."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from cases import check
from cases.case import MODEL, TYPICAL, Case, Param, Tensor
from cases.generate import sizes
from cases.generate.configurations import Config, Settings, configs
from cases.generate.draws import _BOOL, _elements, _ints, _pick
from cases.generate.evaluate import _declared_scalar, _eval_dim, _fits, _holds
from cases.generate.model_rows import ModelRow, model_row, rows_for_cell
from cases.generate.outputs import _outputs, draw_steps
from cases.generate.params import (
    _default_fits,
    _draw_bounded,
    _draw_param,
    _formula_default,
    _settle_optional,
    param_dtype,
)
from cases.generate.plan import CellPlan, plan_cell
from cases.generate.shapes import (
    _draw_shape,
    _fold_last,
    _least_count,
    _one_of_options,
    _shape_from,
    _sizes_that_fit,
    _tied_to,
)
from cases.generate.slots import (
    _FREE,
    _REPEATED_AT_MOST,
    _Schedule,
    typical_slots,
)
from cases.generate.values import (
    EDGE_REGIMES,
    TYPICAL_REGIMES,
    TensorDraw,
    _axis_of,
    _encoding_source,
    _share_encoding,
    _tensor_with_data,
    _value_curation,
    is_weight,
)
from opdefs import OpDef, expr


def cell_strategies(op: OpDef, config: Config, settings: Settings,
                    n: int) -> list[tuple[st.SearchStrategy[Case], int, int]]:  # fmt: skip
    """A cell's ``n`` cases as (strategy, how many, seed offset) parts: a typical cell's split by batch 1 and deployed
    size (``sizes.parts``) where the op has a batch or a dim to grow, sharing one schedule of enumerated values, so
    that the values go round across the parts as in one strategy; any other cell one strategy. Each part is drawn
    under the run's seed plus its offset: parts that draw alike (an op with no batch dim) would draw the same cases."""
    if settings.tier == MODEL:  # one strategy a row, each drawing one case of the layer (``model_rows``)
        labels = [c.label for c in configs(op)]
        at = labels.index(config.label) if config.label in labels else 0
        return [(case_strategy(op, config, replace(settings, tier=TYPICAL, stratify=False, model_row=row)), 1, k)
                for k, row in enumerate(rows_for_cell(op, at, n))]  # fmt: skip
    if settings.tier != TYPICAL or not settings.stratify or settings.batch_one is not None:
        return [(case_strategy(op, config, settings), n, 0)]
    plan = plan_cell(op, config, settings)
    schedule = _schedule(op, config, plan)
    split = sizes.parts(n, batched=sizes.has_batch(op) and not _batch_pinned(plan), grows=bool(plan.growable))
    return [(case_strategy(op, config, replace(settings, batch_one=one, deployed=big), schedule), count, k)
            for k, (one, big, count) in enumerate(split)]  # fmt: skip


def _typical_regimes(op: OpDef) -> tuple[str, ...]:
    """The typical tier's value regimes: real activations, unless the spec says the op exists for other values
    (``generate.typical_values``: IsNan and IsInf are about NaN and infinities, which typical cases never held: a
    target where IsNan FLOAT_32 said true for infinities showed it in one edge case in ten)."""
    return tuple(op.generation.get("typical_values") or TYPICAL_REGIMES)


def _batch_pinned(plan: CellPlan) -> bool:
    """A batch dim the cell's checks hold at 1 (DetectionOutput's and NonMaxSuppression's typical 'batch == 1'): no
    part of the cell is drawn at batch 2 or more, where every draw would be refused (459 draws a configuration)."""
    return any(not _fits([c], {name: 2}) for name in sizes.BATCH_NAMES for c in plan.dim_checks.get(name, ()))


def _schedule(op: OpDef, config: Config, plan: CellPlan) -> _Schedule:
    slots = typical_slots(op, config) if plan.typical and plan.settings.stratify else []
    shows = {name: expr.parse(src) for name, src in (op.generation.get("shows_when") or {}).items()}
    return _Schedule(slots, lambda name, case: name not in shows or _holds(shows[name], {
        **op.param_defaults(), **check.environment(op, case)}))  # fmt: skip


def case_strategy(op: OpDef, config: Config, settings: Settings = Settings(),
                  schedule: _Schedule | None = None) -> st.SearchStrategy[Case]:  # fmt: skip
    """Cases of one configuration and tier.

    ``typical`` is the op as converters and real models use it: the spec's rank and layout (rank 2..4
    where the spec leaves it free), free dims in a moderate range (no size-1 axes), every parameter
    given explicitly, optional inputs only where converters emit them (the weights and biases a spec
    marks ``static: preferred``, passed as STATIC tensors), values inside the op's mathematical domain
    (``values.domain``/``nonzero``) and a finite expected result. ``edge`` is everything else the spec
    allows: rank 1 and size-1 dims, omitted defaults, optional inputs present or absent, dynamic
    weights, values outside the domain and IEEE specials."""
    plan = plan_cell(op, config, settings)
    schedule = schedule if schedule is not None else _schedule(op, config, plan)

    def build(draw: st.DrawFn) -> Case:
        forced = schedule.slot()
        try:
            case = CaseDrawing(plan, draw, forced).case()
        except BaseException:  # a refused draw (hypothesis' assume) or an overrun: the slot is tried again
            schedule.refused()
            raise
        schedule.kept(case)
        return case

    return _drawn_by(build)


class CaseDrawing:
    """One case of a cell being drawn: the draw function, what is drawn so far (``env``: dims and parameters by name,
    the parameters, the inputs and their shapes) and the slot ``forced`` on it (``enumerated_slots``). The draws
    happen in ``case``, in one order: the data seed, the value regime, the parameters, the inputs (with the dims and
    deferred parameters they need), the deferred parameters left, the outputs, the steps."""

    def __init__(self, plan: CellPlan, draw: st.DrawFn, forced: dict[str, Any]) -> None:
        self.plan, self.draw, self.forced = plan, draw, forced
        self.env: dict[str, Any] = dict(plan.op.enum_names())
        if plan.presence is not None:
            self.env["__presence__"] = plan.presence
        self.caps: dict[str, int] = {}  # dim -> a smaller upper end the drawing has found it needs
        self.params: dict[str, Param] = {}
        self.inputs: list[Tensor | None] = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.first_shape: tuple[int, ...] | None = None
        self.rank_shapes: dict[str, tuple[int, ...]] = {}
        self.makers: dict[str, Callable[[tuple[int, ...]], Tensor]] = {}
        self.settled: set[str] = set()  # deferred parameters drawn (or left out) already
        # deployed sizes (``sizes``): set by ``case`` from its draws; batch 1, the dim grown and its size pick
        self.batch_one = False
        self.grown: tuple[str, ...] = ()  # the dims a case drawn at a deployed size grows
        self.grow_picks: dict[str, int] = {}  # each one's pick of its sizes
        self.cap = plan.settings.max_elements
        # the model tier's layer: its shapes, parameters and dims stand as the row gives them
        row = plan.settings.model_row
        self.row: ModelRow | None = model_row(plan.op, row) if row is not None else None
        if self.row is not None:
            self.cap = max(self.cap, plan.settings.model_elements)

    def dim_value(self, name: str) -> int:
        plan, env, draw, settings, typical = self.plan, self.env, self.draw, self.plan.settings, self.plan.typical
        domains, derived = plan.op.dims, plan.op.derived
        if name in env:
            return env[name]
        if self.row is not None and name in self.row.dims:
            env[name] = self.row.dims[name]
            return env[name]
        if name in derived:  # a formula an input's shape needs (Col2Im's L): its own dims first
            for other in sorted(expr.parse(derived[name]).names() & set(domains)):
                self.dim_value(other)
            v = _eval_dim(derived[name], env)
            assume(v is not None and v > 0)
        elif (other := _tied_to(draw, name, plan.tied, env)) is not None:
            v = other  # 'implies(mode == COMPRESSED, width == channel)' with the condition met: the same size
        elif name in plan.members:  # 'q in (1, num_classes)': one of the options, the dims they name drawn first
            v = _one_of_options(draw, name, plan.members[name], env, self.dim_value, plan.symbols)
        elif (deployed := self._deployed(name)) is not None:
            v = deployed
        else:
            lo, hi = domains.get(name, settings.typical_dims if typical else [1, settings.max_dim])
            if typical and name in sizes.BATCH_NAMES and lo <= 1 < hi:
                lo = 2  # batch 1 is the batch coin's (``_deployed``): the other half of the cases have a batch
            elif typical and hi > 2:  # no size-1 axes in typical cases, except in tiny curated ranges
                lo = max(lo, settings.typical_dims[0])
            if name in self.caps and lo <= self.caps[name] < hi:
                hi = self.caps[name]
            if self.grown and lo <= (fits := self._room(name) or hi) < hi:  # a deployed case's other dims grew
                hi = fits
            step = next((d for a, b in plan.divisible if a == name and (d := _eval_dim(b, env)) is not None and d > 0),
                        1)  # fmt: skip
            k_lo, k_hi = -(-lo // step), hi // step
            if k_lo > k_hi and (name not in domains or name in plan.growable):  # a divisor past the range (a
                # depthwise channel_out by a grown channel_in; DepthToSpace's depth by a
                k_hi = k_lo  # 3 x 3 block): its least multiple, not a refusal; a curated range is kept to
            # a parameter left out (not one still to be drawn) stands at its default for these checks
            fit_env = {**{k: v for k, v in plan.defaults.items() if k not in plan.deferred and k not in env}, **env}
            sized_by, dim_checks = plan.sized_by.get(name, ()), plan.dim_checks.get(name, ())
            fitting = _sizes_that_fit(name, [step * k for k in range(k_lo, k_hi + 1)], sized_by, fit_env, dim_checks)
            if fitting == [] and name not in domains:  # none in the free range (ExtractPatches' dilated window
                # wider than the typical dims): the least size past it that fits, as for a multiple above
                past = [step * k for k in range(max(k_lo, k_hi + 1), max(k_lo, k_hi + 1) + 16)]
                fitting = _sizes_that_fit(name, past, sized_by, fit_env, dim_checks)
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

    def _deployed(self, name: str) -> int | None:
        """A typical case's batch 1 (a dim the spec names a batch, where its range allows 1), or the deployed size
        of the dim its ``VECTOR`` regime grows, where that size is a multiple the op's divisibility checks want
        and fits its formulas and checks; None: the dim is drawn as any other."""
        plan, env = self.plan, self.env
        if not plan.typical:
            return None
        batch_one = name in sizes.BATCH_NAMES and self.batch_one and plan.op.dims.get(name, (1, 2))[0] <= 1
        if not batch_one and name not in self.grown:
            return None
        steps = [d for a, b in plan.divisible if a == name and (d := _eval_dim(b, env)) is not None and d > 1]
        if batch_one:  # not where a check wants the batch a multiple of more than 1 (BatchToSpace's block: 396 draws
            return None if steps else 1  # refused)
        innermost = name in plan.innermost
        earlier = [n for n in self.grown if n != name and n in plan.innermost and n in env]  # drawn before it
        v = sizes.grown_size(innermost, self.grow_picks[name], later=innermost and bool(earlier))
        for step in steps:
            if v % step:
                v += step - v % step
        if v > (self._room(name) or v) or v > self.caps.get(name, v):  # past the element cap with the other dims of
            return None  # its inputs, or past a cap the case set (unique indices within a dim): drawn as any other
        fit_env = {**{k: x for k, x in plan.defaults.items() if k not in plan.deferred and k not in env}, **env}
        fits = _sizes_that_fit(name, [v, v + 1], plan.sized_by.get(name, ()), fit_env, plan.dim_checks.get(name, ()))
        return v if fits is None or v in fits else None

    def _room(self, name: str) -> int | None:
        """``sizes.room`` for a dim of a case drawn at a deployed size: the dims still to come at their least, a grown
        channel at the size it will grow to, so that a spatial dim drawn first leaves the channel its room."""
        plan = self.plan
        least: dict[str, int] = {}
        for names in plan.input_dims:
            for other in names:
                if other in self.env or other in least:
                    continue
                if other in self.grown and other in plan.innermost:
                    least[other] = sizes.grown_size(True, self.grow_picks[other])
                elif other in sizes.BATCH_NAMES and self.batch_one:
                    least[other] = 1
                else:
                    least[other] = max(1, plan.op.dims.get(other, plan.settings.typical_dims)[0])
        return sizes.room(name, plan.input_dims, self.env, least, self.cap)

    def _row_value(self, name: str, p: Any) -> Any:
        """A model row's value of parameter ``name`` in the parameter's own storage type."""
        from opdefs import dtypes

        value = self.row.params[name]
        storage = dtypes.get(param_dtype(p, self.plan.config)).storage
        if isinstance(value, np.ndarray):
            return value.astype(storage)
        return bool(value) if p.dtype == "BOOL_8" else value

    def draw_deferred(self, name: str) -> None:
        """A parameter that waited for the tensors, drawn inside the bounds their checks give (``_draw_bounded``)."""
        plan, op = self.plan, self.plan.op
        self.settled.add(name)
        p = op.param_specs[name]
        if p.dtype == "STRING":
            assume(False)
        # the checks of the tensors drawn that name it too (GatherNd's 'shape(in[1])[k - 1] <= n - batch_dims',
        # Lrn's 'implies(region == WITHIN_CHANNEL, N == 4)'): its value is chosen where they hold
        # (not those naming a parameter still to be drawn: its default only holds its place in the env)
        pending = {n for n in plan.deferred if n not in self.settled}
        so_far = Case(op.name, self.inputs, self.params, [])
        # nor the checks of an optional parameter given already: where this value rules it out, it is left out
        # afterwards (``_settle_optional``), so Resize's nearest_mode does not keep interpolation_mode NEAREST
        settles = {n for n, q in op.param_specs.items() if q.optional and n in self.params}
        others = [c.check for c in plan.before_outputs if c.owner != name and name in c.check.names()
                  and not (c.check.names() & pending) and not check._owner_absent(op, so_far, c.owner)
                  and c.owner not in settles]  # fmt: skip
        others += [c for c in [*plan.steer, *plan.by_type, *plan.on_inputs]
                   if name in c.names() and not (c.names() & pending)]  # fmt: skip
        if p.optional and not plan.typical and not self.draw(_BOOL, label=f"give {name}"):
            if _default_fits(op, name, self.inputs, self.params, self.env, others):
                # left out: the default stands in, and it is valid here. A formula default (ChannelShuffle's
                # axis = N - 1) is worked out for the parameters drawn after it, which the checks cannot do
                resolved = _formula_default(op, name, {**check.environment(op, so_far), **self.env})
                if resolved is not None:
                    self.env[name] = resolved
                return
        value = _draw_bounded(self, name, p, others, sorted(pending - {name}), self.forced.get(name, _FREE))
        if self.row is not None and name in self.row.params:
            value = self._row_value(name, p)
        if value is not None:
            self.params[name] = Param(name, param_dtype(p, plan.config), value)
            self.env[name] = value

    def case(self) -> Case:
        plan, op, config, settings, typical, draw = (self.plan, self.plan.op, self.plan.config, self.plan.settings,
                                                     self.plan.typical, self.draw)  # fmt: skip
        seed = draw(_ints(0, 2**32 - 1), label="data seed")
        rng = np.random.default_rng(seed)
        regime = draw(_pick(_typical_regimes(op) if typical else EDGE_REGIMES), label="value regime")
        # deployed sizes (``sizes``), in the typical tier: fixed by the strategy where the cell split its cases into
        # parts (``sizes.parts``), else on a coin each. The dims to grow and their size are drawn only for a case that
        # grows them: a draw no case reads makes examples that differ only there, one case
        if typical and self.row is None:
            self.batch_one = settings.batch_one if settings.batch_one is not None else draw(_BOOL, label="batch one")
            deployed = settings.deployed if settings.deployed is not None else draw(_ints(0, 2), label="deployed") == 2
            if deployed and plan.growable:  # every growable dim at a deployed size, each its own pick
                self.grown = plan.growable
                self.grow_picks = {name: draw(_ints(0, 59), label="grown size") for name in plan.growable}
                self.cap = max(settings.max_elements, settings.large_elements)

        # ---- parameters first: shapes often depend on them (group, block_size, axis) ----------
        for name, p in op.param_specs.items():
            if p.dtype == "STRING":
                assume(False)
            optional = p.optional
            if name in plan.deferred:
                continue
            give = not optional or typical or name in plan.needed or draw(_BOOL, label=f"give {name}")
            sh = p.shape
            if not give and (sh.get("dims") or sh.get("rank")):
                continue  # typical cases give every parameter explicitly, as converters do
            # a scalar is drawn even when its coin leaves it out (and then dropped): as many choices either way, so
            # the mutator's copy of one coin onto another does not leave the case a choice short
            value = _draw_param(self, name, p, [c for c in [*plan.steer, *plan.by_type] if name in c.names()],
                                plan.type_env, forced=self.forced.get(name, _FREE))  # fmt: skip
            if self.row is not None and name in self.row.params:
                value = self._row_value(name, p)
            if not give:
                continue
            if value is None:
                continue
            self.params[name] = Param(name, param_dtype(p, config), value)
            self.env[name] = value
        # an optional parameter its own constraints rule out given the others is left out (Resize's nearest_mode
        # only with NEAREST; typical cases give every other one explicitly, edge cases those their coin gave); one
        # whose constraints name a parameter still to be drawn waits for it (Resize's cubic_coeff for
        # interpolation_mode, drawn after the tensors)
        self.params, self.env = _settle_optional(op, self.params, self.env, waiting=frozenset(plan.deferred))

        # ---- inputs --------------------------------------------------------------------------
        inputs, shapes = self.inputs, self.shapes
        stop_optional = False
        total_lo, total_hi = op.generation.get("inputs_count", (0, 2**31))
        for k_decl, decl in enumerate(op.input_specs):
            name = decl.name
            idx = decl.first_index
            rep = decl.repeated
            count = 1
            if rep:
                last = rep.get("last")
                hi = min((int(last) - idx + 1) if isinstance(last, int) else _REPEATED_AT_MOST, total_hi - idx)
                lo = 0 if decl.mandatory is False else 1
                if k_decl < len(op.inputs) - 1:  # inputs are positional: a range others follow is given in full
                    lo = hi
                else:  # the last one makes up the curated number of inputs (generate.inputs_count)
                    lo = max(lo, total_lo - idx)
                lo = _least_count(op, idx, lo, max(lo, hi))  # 'num_inputs() - 1 >= 1' (Concat, Pack): not 1
                count = draw(_ints(lo, max(lo, hi)), label=f"count {name}")
                if self.row is not None:  # the layer's own number of inputs (a Concat of two)
                    count = sum(1 for ref in self.row.shapes if ref.startswith("in[") and int(ref[3:-1]) >= idx)
            if decl.optional:
                # typical: present exactly where converters emit the input (weights and biases); a model layer: where
                # its row gives the input's shape
                give = (decl.given_static or name in plan.shapers) if typical else \
                    (name in plan.shapers or draw(_BOOL, label=f"give {name}"))  # fmt: skip
                if self.row is not None:
                    give = f"in[{idx}]" in self.row.shapes or name in plan.shapers
                if stop_optional or not give:
                    stop_optional = True
                    continue
            dtype = config.dtype_of(name)
            static = decl.static == "always" or (decl.static == "preferred" and (
                typical or draw(_BOOL, label=f"static {name}")))  # fmt: skip
            values = _value_curation(decl, self.params, op)
            if f"values(in[{idx}])" in plan.unique_values:
                values["unique"] = True
            for bound in values.get("range") or ():  # a dim the value range names (a batch index's 'batches - 1', the
                for dname in sorted(expr.parse(str(bound)).names() & plan.symbols):  # batches of a later input): now
                    if dname not in self.env:
                        self.dim_value(dname)
            dims_named = decl.dims
            if typical and values.get("unique") and "in[0]" in shapes and len(dims_named) == 1 \
                    and isinstance(dims_named[0], str) and shapes["in[0]"]:  # fmt: skip
                # unique indices stay inside in[0]'s smallest dim in typical cases: no more of them than that
                self.caps[dims_named[0]] = min(shapes["in[0]"])
            for k in range(count):
                ref = f"in[{idx + k}]"
                if decl.shape_from:  # the spec's formula for the whole shape, from earlier tensors
                    # a parameter it reads that waits for the tensors (LayerNorm's axes) is drawn now, on those before
                    for name in plan.deferred:
                        if name not in self.settled and name in expr.parse(str(decl.shape_from)).names():
                            self.draw_deferred(name)
                    shape = _shape_from(op, decl.shape_from, inputs, self.params, self.env)
                else:
                    shape = _draw_shape(self, decl, ref, plan.rank_limits.get(ref))
                    if shape and ref in plan.last_limits and ref not in plan.same_shape:  # 'shape(in[1])[-1] <= n'
                        shape = _fold_last(shape, plan.last_limits[ref], {**plan.defaults, **self.env}, settings)
                assume(shape is not None)
                assume(_elements(shape) <= self.cap)
                shapes[ref] = shape
                self.first_shape = self.first_shape or shape
                while len(inputs) < idx + k:
                    inputs.append(None)

                def make(shape, ref=ref, dtype=dtype, values=values, decl=decl, static=static) -> Tensor:
                    what = TensorDraw(ref, dtype, values, regime, typical, _axis_of(decl, config),
                                      _encoding_source(decl, inputs, typical), config.bits_of(decl.name),
                                      is_weight(decl) or decl.role == "bias")  # fmt: skip
                    t = _tensor_with_data(rng, what, shape, shapes, self.env)
                    t.static = static
                    return t

                self.makers[ref] = make
                inputs.append(make(shape))
        # ---- parameters no tensor depends on (an axis, a permutation): drawn inside the bounds their
        # checks set from the tensors now drawn, instead of blind and then refused -------------------
        if plan.deferred:
            for name in plan.deferred:
                if name not in self.settled:
                    self.draw_deferred(name)
            self.params, self.env = _settle_optional(op, self.params, self.env)
        params, env = self.params, self.env
        if typical and op.family == "data movement":
            _share_encoding(inputs)
        # ---- curated dims no input bound: sizes the spec takes from an output tensor (Resize's
        # new_height) or an output's capacity (a detection op's max boxes) -----------------------
        for dname in op.dims:
            self.dim_value(dname)
        # ---- derived dims (curated formulas, e.g. a convolution's height_out) --------------------
        base_case = Case(op.name, inputs, params, [])
        env_now = {**check.environment(op, base_case), **env}
        for dname, src in op.derived.items():
            v = _eval_dim(src, env_now)
            assume(v is not None and v > 0)
            env[dname] = env_now[dname] = v
        # ---- outputs -------------------------------------------------------------------------
        case = Case(op.name, inputs, params, [], config=config.label, seed=seed, strategy=f"generate:{regime}",
                    tier=settings.tier)  # fmt: skip
        # the checks that do not name the outputs, before the reference is asked for them (cheaper)
        assume(not check.violations(op, case, plan.before_outputs))
        made = _outputs(op, config, case, env, shapes, plan.same_shape,
                        settings if self.cap == settings.max_elements else replace(settings, max_elements=self.cap))
        assume(made is not None)
        case.outputs, real = made
        shapers = plan.shapers
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
            assume(all(len(t.shape) <= max(settings.max_rank, *plan.explicit_ranks) for t in case.outputs))
            assume(all(t.shape or _declared_scalar(op, t.name) for t in case.outputs))
            if plan.typical_when:
                env_case = {**env, **check.environment(op, case)}
                assume(all(_holds(c, env_case) for c in plan.typical_when))
        bad = check.violations(op, case, None if drop_later else plan.after_outputs)
        assume(not bad)
        case.steps = draw_steps(draw, op, case, settings)
        if self.row is not None:
            case.tier = MODEL
            case.decisions = [*case.decisions, f"model tier: {self.row.label}"]
        return case


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
