"""How cases are drawn so that they need not be refused: the shape of hypothesis' choice sequence (its mutator
copies a span onto another of the same label, so a span's length must follow from its label), and values steered
into the bounds the spec's checks give instead of drawn blind and thrown away.

Which ops and parameters each test looks at comes from the specs, not from a list kept here."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from types import SimpleNamespace

import hypothesis
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.control import BuildContext
from hypothesis.internal.conjecture.data import ConjectureData

import opdefs
from cases import check, generate
from cases.case import Case
from opdefs import TensorSpec
from reference.expected import infer

SPECS = opdefs.load_all()
GENERATE_MODULES = [m for n, m in sorted(sys.modules.items()) if n.startswith("cases.generate.")]


def _patch_everywhere(monkeypatch, name: str, replacement) -> None:
    """Replace ``name`` in every module of cases/generate/ that uses it: each imported its own binding."""
    for module in [generate, *GENERATE_MODULES]:
        if hasattr(module, name):
            monkeypatch.setattr(module, name, replacement)


def _run(data: ConjectureData, strategy_or_fn) -> object:
    with BuildContext(data, wrapped_test=lambda: None):
        if callable(strategy_or_fn) and not hasattr(strategy_or_fn, "do_draw"):
            return strategy_or_fn(lambda s, label=None: data.draw(s))
        return data.draw(strategy_or_fn)


def _choices(strategy_or_fn, seed: int = 0) -> tuple[object, int]:
    """(the value drawn, how many choices drawing it took)."""
    data = ConjectureData(random=random.Random(seed))
    value = _run(data, strategy_or_fn)
    return value, len(data.choices)


def test_fixed_length_draws_of_another_length_carry_another_label():
    for make in (lambda n: generate._int_list(1, 5, n), lambda n: generate._bool_list(n),
                 lambda n: generate._pick_list((0.5, 1.0), n)):  # fmt: skip
        labels = {make(n).label for n in range(1, 6)}
        assert len(labels) == 5, "two lengths of one kind of sequence share a label: the mutator would mix them"


def test_a_fixed_length_draw_takes_one_choice_per_element():
    for n in range(6):
        value, used = _choices(generate._int_list(1, 5, n))
        assert len(value) == n and used == n, f"{n} elements took {used} choices"


def test_a_default_or_value_draw_takes_as_many_choices_either_way():
    strategy = generate._default_or(0, generate._ints(1, 4))
    counts = {}
    for seed in range(40):
        value, used = _choices(strategy, seed)
        counts.setdefault(value == 0, set()).add(used)
    assert set(counts) == {True, False}, "the default and the other values should both be drawn"
    assert counts[True] == counts[False], f"choices with the default {counts[True]}, without {counts[False]}"


def test_a_permutation_holds_every_value_once_and_its_choice_count_follows_its_length():
    values = list("abcde")
    for seed in range(20):
        got, used = _choices(lambda draw: generate._permutation(draw, values), seed)
        assert sorted(got) == values, f"{got} is no permutation of {values}"
        assert used == len(values) - 1, f"a permutation of {len(values)} took {used} choices"


def test_a_permutation_of_all_first_picks_is_the_given_order():
    values = [3, 1, 2, 0]
    data = ConjectureData.for_choices([0] * (len(values) - 1))
    assert _run(data, lambda draw: generate._permutation(draw, values)) == values


def _drawing(draw, env: dict, s) -> SimpleNamespace:
    """What ``_draw_shape`` reads of a ``CaseDrawing``: a first input with no shape yet, every named dim 1."""
    plan = SimpleNamespace(same_shape={}, settings=s, broadcast=(), typical=s.tier == generate.TYPICAL)
    return SimpleNamespace(draw=draw, env=env, shapes={}, first_shape=None, rank_shapes={}, dim_value=lambda d: 1,
                           plan=plan, batch_one=False, grown=(), grow_picks={}, row=None)  # fmt: skip


@pytest.mark.parametrize("tier", generate.TIERS)
def test_a_free_rank_shape_takes_as_many_choices_whatever_its_rank(tier):
    s = generate.Settings(tier=tier)
    decl = TensorSpec({"name": "in[0]", "shape": {"rank": "n"}})
    used_by_rank = {}
    for r in range(1, s.max_rank + 1):
        env = {"n": r}
        shape, used = _choices(lambda draw, env=env: generate._draw_shape(_drawing(draw, env, s), decl, "in[0]"))
        assert len(shape) == r, f"rank {r} gave {shape}"
        used_by_rank[r] = used
    assert len(set(used_by_rank.values())) == 1, f"choices per rank: {used_by_rank}"


def test_the_first_dims_of_the_widest_draw_make_the_shape():
    s = generate.Settings(tier=generate.EDGE)
    decl = TensorSpec({"name": "in[0]", "shape": {"rank": "n"}})
    data = ConjectureData.for_choices([1, 2, 3, 4])
    shape = _run(data, lambda draw: generate._draw_shape(_drawing(draw, {"n": 2}, s), decl, "in[0]"))
    assert shape == (1, 2), f"rank 2 out of the dims 1, 2, 3, 4 gave {shape}"


LAST_LIMITED = sorted((name, ref) for name, op in SPECS.items() if generate.configs(op)
                      for ref in generate._last_dim_limits(op))  # fmt: skip


def test_some_spec_bounds_the_last_dim_of_a_drawn_rank():
    assert LAST_LIMITED, "no spec bounds a free-rank tensor's last dim: the tests below check nothing"


@pytest.mark.parametrize("op_name, ref", LAST_LIMITED)
@pytest.mark.parametrize("tier", generate.TIERS)
def test_a_last_dim_its_checks_bound_is_folded_inside_the_bounds(op_name, ref, tier):
    op = SPECS[op_name]
    s = generate.Settings(tier=tier)
    limits = generate._last_dim_limits(op)[ref]
    env = {**op.param_defaults(), **{n: 3 for n in op.symbols()}}
    lows = [generate._eval_int(e, env) for e in limits[0]]
    highs = [generate._eval_int(e, env) for e in limits[1]]
    for last in range(1, 9):
        got = generate._fold_last((4, last), limits, env, s)[-1]
        assert all(got >= v for v in lows if v is not None) and all(got <= v for v in highs if v is not None), \
            f"{op_name} {ref}: last dim {last} became {got}, outside {lows} .. {highs}"  # fmt: skip


def _generated_ops_where(holds: Callable[[opdefs.OpDef], bool]) -> list[str]:
    """The ops with a datatype configuration whose spec ``holds``, sorted: what a parametrized test below runs on."""
    return sorted(name for name, op in SPECS.items() if generate.configs(op) and holds(op))


def _other_owner_checks(op: opdefs.OpDef) -> list[tuple[str, str]]:
    """(deferred parameter, constraint id) for checks owned by something else that name one deferred parameter."""
    deferred = generate._deferred_params(op)
    out = []
    for c in op.constraints:
        if c.check is None or "out" in c.check.names():
            continue
        named = c.check.names() & set(deferred)
        if len(named) == 1 and c.owner not in named:
            out.append((next(iter(named)), c.id))
    return out


STEERED = _generated_ops_where(_other_owner_checks)


def test_some_spec_names_a_deferred_parameter_in_another_owner_s_check():
    assert STEERED, "no spec has such a check: the test below checks nothing"


@pytest.mark.parametrize("op_name", STEERED)
def test_a_deferred_parameter_is_drawn_where_other_owners_checks_on_it_hold(op_name, monkeypatch):
    """No draw is thrown away because a check owned by a tensor failed on a deferred parameter's value."""
    op = SPECS[op_name]
    watched = {cid for _, cid in _other_owner_checks(op)}
    failed: list[str] = []
    real = check.violations

    def recording(op_, case, constraints=None):
        bad = real(op_, case, constraints)
        failed.extend(bad)
        return bad

    monkeypatch.setattr(check, "violations", recording)
    for tier in generate.TIERS:
        _collect(op, tier)
    assert not watched & set(failed), f"{op_name}: draws refused on {sorted(watched & set(failed))}"


ROOM = sorted((name, p, q) for name, op in SPECS.items() if generate.configs(op)
              for p in generate._deferred_params(op) for q in generate._deferred_params(op)
              if p != q and any(p in c.names() and (c.bounds(q)[0] and c.bounds(q)[1])
                                for c in generate._param_checks(op, q)))  # fmt: skip


def test_some_spec_bounds_a_deferred_parameter_by_another_on_both_sides():
    assert ROOM, "no spec has such bounds: the test below checks nothing"


@pytest.mark.parametrize("op_name, earlier, later", ROOM)
def test_an_earlier_parameter_leaves_the_later_one_a_range(op_name, earlier, later):
    """Buffer's stride must lie in [shape(in[0])[buffer_dim], buffer_size]: no buffer_size below that dim."""
    op = SPECS[op_name]
    checks = [c for c in generate._param_checks(op, later) if earlier in c.names()]
    env_base = {**op.param_defaults(), **{n: 2 for n in op.symbols()}}
    case = Case(op.name, [check.Tensor("in[0]", "FLOAT_32", (2, 2, 2))] * len(op.inputs), {}, [])
    env_base = {**check.environment(op, case), **env_base}
    for v in range(0, 6):
        room = generate._leaves_room(op, earlier, v, [later], env_base)
        env = {**env_base, earlier: v}
        lows = [generate._eval_int(e, env) for c in checks for e in c.bounds(later)[0]]
        highs = [generate._eval_int(e, env) for c in checks for e in c.bounds(later)[1]]
        lows, highs = [x for x in lows if x is not None], [x for x in highs if x is not None]
        expected = not (lows and highs and max(lows) > min(highs))
        assert room == expected, f"{op_name}: {earlier} = {v} leaves {later} {lows} .. {highs}, said {room}"


def _collect(op: opdefs.OpDef, tier: str, n: int = 15, configs: int = 2) -> list[Case]:
    got: list[Case] = []
    if (op.generation.get("unsatisfiable") or {}).get(tier):
        return got
    for config in generate.configs(op)[:configs]:
        strategy = generate.case_strategy(op, config, generate.Settings(infer=infer, tier=tier))

        @settings(max_examples=n, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(strategy)
        def run(case: Case) -> None:
            got.append(case)

        run()
    return got


def _steerable(op: opdefs.OpDef) -> list[str]:
    """The typical conditions naming neither tensors nor a tensor's properties: dims and parameters alone."""
    out = []
    for src in op.generation.get("typical_when") or []:
        e = opdefs.expr.parse(src)
        if not e.tensor_refs() and not ({"in", "out"} & e.names()):
            out.append(src)
    return out


def _assert_typical_draws_not_refused_on(op_name: str, conditions, monkeypatch) -> None:
    """Every typical draw of ``op_name`` meets the typical conditions ``conditions(op)`` picks: none is refused on
    them after drawing (the generator steers them while drawing)."""
    op = SPECS[op_name]
    watched = set(conditions(op))
    refused: list[str] = []
    real = generate._holds

    def recording(condition, env):
        held = real(condition, env)
        if not held and condition.source in watched:
            refused.append(condition.source)
        return held

    _patch_everywhere(monkeypatch, "_holds", recording)
    assert _collect(op, generate.TYPICAL), f"{op_name}: no typical case"
    assert not refused, f"{op_name}: {len(refused)} typical draws refused on {sorted(set(refused))}"


TYPICAL_STEERED = _generated_ops_where(_steerable)


def test_some_spec_has_a_typical_condition_on_dims_and_parameters_alone():
    assert TYPICAL_STEERED, "no spec has one: the test below checks nothing"


@pytest.mark.parametrize("op_name", TYPICAL_STEERED)
def test_a_typical_condition_on_dims_and_parameters_is_met_while_drawing_not_refused_after(op_name, monkeypatch):
    _assert_typical_draws_not_refused_on(op_name, _steerable, monkeypatch)


def _on_vector_and_inputs(op: opdefs.OpDef) -> list[str]:
    """The typical conditions on a unique-valued vector parameter and the inputs alone (LayerNorm's last axis)."""
    vectors = {p.name for p in op.param_specs.values() if len(p.shape.get("dims") or []) == 1}
    unique = {n for n in vectors for c in op.constraints if c.check is not None and c.check.requires_unique(n)}
    out = []
    for src in op.generation.get("typical_when") or []:
        e = opdefs.expr.parse(src)
        refs = e.tensor_refs()
        if refs and all(r.startswith("in[") for r in refs) and "out" not in e.names() and e.names() & unique:
            out.append(src)
    return out


TYPICAL_ON_VECTORS = _generated_ops_where(_on_vector_and_inputs)


def test_some_spec_has_a_typical_condition_on_a_vector_parameter_and_the_inputs():
    assert TYPICAL_ON_VECTORS, "no spec has one: the test below checks nothing"


@pytest.mark.parametrize("op_name", TYPICAL_ON_VECTORS)
def test_a_typical_condition_on_a_vector_parameter_and_the_inputs_is_met_while_drawing(op_name, monkeypatch):
    _assert_typical_draws_not_refused_on(op_name, _on_vector_and_inputs, monkeypatch)


def test_a_typical_cell_whose_conditions_hold_batch_at_1_is_not_split_by_batch():
    op = SPECS["DetectionOutput"]
    settings = generate.Settings(infer=infer, tier=generate.TYPICAL)
    parts = generate.cell_strategies(op, generate.configs(op)[0], settings, 20)
    # DetectionOutput has no dim to grow: split by batch alone, it would be two parts, the batch > 1 one refusing every
    # draw; held at batch 1, it is one
    assert [count for _, count, _ in parts] == [20], f"parts of {[c for _, c, _ in parts]} cases"


NEEDED = sorted((name, p) for name, op in SPECS.items() if generate.configs(op) for p in generate._needed_params(op))


def test_some_spec_has_an_optional_parameter_whose_default_rules_out_every_case():
    assert NEEDED, "no spec has one: the test below checks nothing"


@pytest.mark.parametrize("op_name, param", NEEDED)
def test_an_optional_parameter_whose_default_rules_out_every_case_is_always_given(op_name, param):
    cases = _collect(SPECS[op_name], generate.EDGE)
    assert cases, f"{op_name}: no edge case"
    missing = sum(param not in c.params for c in cases)
    assert not missing, f"{op_name}: {missing} of {len(cases)} edge cases leave {param} out"


def test_roi_align_boxes_have_ordered_corners_in_the_edge_tier_too():
    """RoiAlign's in[1] names the upper-left and bottom-right corners (line 11394): a reversed box is no box the spec
    describes, so neither tier draws one (RoiAlign.yaml decisions)."""
    from cases.quant import real_value

    cases = _collect(SPECS["RoiAlign"], generate.EDGE)
    assert cases, "RoiAlign: no edge case"
    for c in cases:
        boxes = real_value(c.inputs[1]).reshape(-1, 4)
        assert (boxes[:, :2] <= boxes[:, 2:]).all(), f"{c.config}: {boxes.tolist()}"


def test_unique_integer_values_stay_distinct_in_the_edge_tier_when_there_are_more_than_the_smallest_dim():
    rng = np.random.default_rng(0)
    first = (2, 3)
    for size in range(1, 8):
        what = generate.TensorDraw("in[1]", "INT_32", {"unique": True}, "ordinary")
        t = generate._tensor_with_data(rng, what, (size,), {"in[0]": first}, {})
        assert len(set(t.data.tolist())) == size, f"{size} values from a tensor of shape {first}: {t.data.tolist()}"


def _refusing_lines(op_name: str, monkeypatch, assumed: str) -> list[str]:
    """The source line of every ``assume`` in cases/generate/ that refused a draw of ``op_name``'s cells and
    whose line holds ``assumed``."""
    import inspect

    refused: list[str] = []
    real = hypothesis.assume

    def recording(condition):
        if not condition:
            refused.append(inspect.getframeinfo(inspect.currentframe().f_back).code_context[0].strip())
        return real(condition)

    _patch_everywhere(monkeypatch, "assume", recording)
    for tier in generate.TIERS:
        _collect(SPECS[op_name], tier)
    return [line for line in refused if assumed in line]


def _free_divided(op: opdefs.OpDef) -> bool:
    """Whether a check makes a free dim (no curated range) a multiple of something."""
    return any(a in op.symbols() and a not in op.dims for c in op.constraints if c.check is not None
               for a, _b in c.check.divisibility())  # fmt: skip


FREE_DIVIDED = _generated_ops_where(_free_divided)


def test_some_spec_makes_a_free_dim_a_multiple():
    assert FREE_DIVIDED, "no spec does: the test below checks nothing"


@pytest.mark.parametrize("op_name", FREE_DIVIDED)
def test_a_free_dim_whose_divisor_outgrows_its_range_takes_the_least_multiple_not_a_refusal(op_name, monkeypatch):
    outgrown = _refusing_lines(op_name, monkeypatch, "k_lo <= k_hi")
    assert not outgrown, f"{op_name}: {len(outgrown)} draws refused for a multiple past the dim's range"


def _formula_defaulted(op: opdefs.OpDef) -> list[tuple[str, str]]:
    """(parameter with a formula default, a parameter whose checks name it)."""
    out = []
    for name, p in op.params.items():
        if isinstance(p.get("default"), dict) and "expr" in p["default"]:
            out += [(name, q) for q in op.params if q != name
                    and any(name in c.names() for c in generate._param_checks(op, q))]  # fmt: skip
    return out


FORMULA_DEFAULTED = sorted((name, a, b) for name, op in SPECS.items() if generate.configs(op)
                           for a, b in _formula_defaulted(op))  # fmt: skip


def test_some_spec_names_a_formula_default_in_another_parameter_s_check():
    assert FORMULA_DEFAULTED, "no spec does: the test below checks nothing"


@pytest.mark.parametrize("op_name, defaulted, other", FORMULA_DEFAULTED)
def test_a_left_out_formula_default_is_met_by_the_parameters_drawn_with_it(op_name, defaulted, other, monkeypatch):
    """ChannelShuffle's axis defaults to N - 1: left out, num_groups still divides that dim - in every case built,
    kept or not (the checks leave such a default unbound; the reference alone would refuse the case)."""
    op = SPECS[op_name]
    built: list[Case] = []
    real = check.violations

    def recording(op_, case, constraints=None):
        built.append(case)
        return real(op_, case, constraints)

    monkeypatch.setattr(check, "violations", recording)
    _collect(op, generate.EDGE, n=25)
    cases = [c for c in built if defaulted not in c.params and other in c.params]
    assert cases, f"{op_name}: no edge case leaves {defaulted} out and gives {other}"
    for case in cases:
        env = check.environment(op, case)
        env[defaulted] = generate._formula_default(op, defaulted, env)
        assert generate._fits(generate._param_checks(op, other), env), \
            f"{op_name}: {other} = {case.params[other].value} breaks its checks with {defaulted} at {env[defaulted]}"


def _free_sized(op: opdefs.OpDef) -> bool:
    """Whether a derived dim's formula reads free dims (no curated range) and no typical condition names them."""
    steered = {n for src in op.generation.get("typical_when") or [] for n in opdefs.expr.parse(src).names()}
    for src in op.derived.values():
        read = opdefs.expr.parse(str(src)).names() & op.symbols()
        if read and not (read & set(op.dims)) and not (read & steered) and not (read & set(op.derived)):
            return True
    return False


FREE_SIZED = _generated_ops_where(_free_sized)


def test_some_spec_sizes_a_derived_dim_from_free_dims():
    assert FREE_SIZED, "no spec does: the test below checks nothing"


@pytest.mark.parametrize("op_name", FREE_SIZED)
def test_a_free_dim_no_size_of_whose_range_fits_takes_the_least_size_past_it_that_does(op_name, monkeypatch):
    """ExtractPatches' dilated window can be wider than any typical dim: the input grows to hold it."""
    unfit = _refusing_lines(op_name, monkeypatch, "bool(fitting)")
    assert not unfit, f"{op_name}: {len(unfit)} draws refused for a dim no size of whose range fits"


def _ranged_by_later_dim(op: opdefs.OpDef) -> list[tuple[str, str]]:
    """(input, dim) where an input's value range names a dim no earlier input's shape declares."""
    out, seen = [], set()
    for decl in op.inputs:
        for bound in (decl.get("values") or {}).get("range") or ():
            for d in sorted(opdefs.expr.parse(str(bound)).names() & op.symbols()):
                if d not in seen:
                    out.append((decl["name"], d))
        seen |= {d for d in (decl.get("shape") or {}).get("dims") or [] if isinstance(d, str)}
    return out


RANGED_LATER = sorted((name, ref, d) for name, op in SPECS.items() if generate.configs(op)
                      for ref, d in _ranged_by_later_dim(op))  # fmt: skip


def test_some_spec_bounds_an_input_s_values_by_a_later_input_s_dim():
    assert RANGED_LATER, "no spec does: the test below checks nothing"


@pytest.mark.parametrize("op_name, ref, dim", RANGED_LATER)
@pytest.mark.parametrize("tier", generate.TIERS)
def test_a_dim_a_value_range_names_is_drawn_before_the_values(op_name, ref, dim, tier):
    """AxisAlignedBboxTransform's batch indices lie in [0, batches - 1], batches the rows of the later in[3]."""
    op = SPECS[op_name]
    decl = next(d for d in op.inputs if d["name"] == ref)
    cases = _collect(op, tier)
    assert cases, f"{op_name}: no {tier} case"
    for case in cases:
        env = check.environment(op, case)
        lo, hi = (float(np.asarray(opdefs.expr.parse(str(b)).evaluate(env))) for b in decl["values"]["range"])
        t = case.inputs[generate._first_index(ref)]
        data = t.data.astype(np.float64)
        if t.encoding is not None:
            data = t.encoding.scales[0] * (data + t.encoding.offsets[0])
        assert lo <= data.min() and data.max() <= hi, f"{op_name} {ref}: {data.tolist()} outside [{lo}, {hi}]"


def _scalar(p: dict) -> bool:
    sh = p.get("shape") or {}
    return not (sh.get("dims") or sh.get("rank"))


def _optional_scalars_first(op: opdefs.OpDef) -> bool:
    """Whether the parameters drawn before the tensors are all scalars, one of them optional."""
    first = {n: p for n, p in op.params.items() if n not in generate._deferred_params(op) and p["dtype"] != "STRING"}
    return bool(first) and all(_scalar(p) for p in first.values()) and any(
        p.get("mandatory") is False and n not in generate._needed_params(op) for n, p in first.items())


OPTIONAL_SCALARS = sorted(name for name, op in SPECS.items() if generate.configs(op) and _optional_scalars_first(op)
                          and not (op.generation.get("unsatisfiable") or {}).get(generate.EDGE))[:12]  # fmt: skip


def test_some_spec_draws_an_optional_scalar_parameter_before_the_tensors():
    assert OPTIONAL_SCALARS, "no spec does: the test below checks nothing"


@pytest.mark.parametrize("op_name", OPTIONAL_SCALARS)
def test_an_optional_scalar_parameter_is_drawn_whether_its_coin_gives_it_or_not(op_name, monkeypatch):
    """Given or left out, the same choices: each parameter drawn before the tensors is drawn once per case built."""
    op = SPECS[op_name]
    drawn: list[str] = []
    real = generate._draw_param

    def recording(drawing, name, *args, **kwargs):
        drawn.append(name)
        return real(drawing, name, *args, **kwargs)

    _patch_everywhere(monkeypatch, "_draw_param", recording)
    cases = _collect(op, generate.EDGE, configs=1)
    first = [n for n, p in op.params.items() if n not in generate._deferred_params(op)]
    counts = {n: drawn.count(n) for n in first}
    assert len(set(counts.values())) == 1, f"{op_name}: draws per parameter {counts}"
    left_out = sum(n not in c.params for c in cases for n in first)
    assert left_out, f"{op_name}: no kept case leaves an optional parameter out: the test saw no coin say so"


def _unique_index_inputs(op: opdefs.OpDef) -> list[str]:
    """Integer inputs of one named dim whose checks say their values are unique."""
    out = []
    for decl in op.inputs[1:]:
        ref = f"in[{generate._first_index(decl['name'])}]"
        dims = (decl.get("shape") or {}).get("dims") or []
        if len(dims) == 1 and isinstance(dims[0], str) and any(
                c.check is not None and c.check.requires_unique(f"values({ref})") for c in op.constraints):  # fmt: skip
            out.append(ref)
    return out


UNIQUE_INDICES = sorted((name, ref) for name, op in SPECS.items() if generate.configs(op)
                        for ref in _unique_index_inputs(op))  # fmt: skip


def test_some_spec_asks_for_unique_index_values():
    assert UNIQUE_INDICES, "no spec does: the test below checks nothing"


@pytest.mark.parametrize("op_name, ref", UNIQUE_INDICES)
def test_typical_unique_indices_are_no_more_than_in0_s_smallest_dim_and_stay_inside_it(op_name, ref):
    """BatchPermutation's typical indices are a permutation prefix of the batch: never an index past it."""
    idx = generate._first_index(ref)
    cases = [c for c in _collect(SPECS[op_name], generate.TYPICAL) if c.inputs[idx].encoding is None]
    assert cases, f"{op_name}: no typical case with raw integer {ref}"
    for case in cases:
        values, hi = case.inputs[idx].data.tolist(), min(case.inputs[0].shape)
        assert len(set(values)) == len(values) and all(0 <= v < hi for v in values), \
            f"{op_name} {ref}: {values} with in[0] of shape {case.inputs[0].shape}"


SPECIAL_TYPICAL = _generated_ops_where(lambda op: "special" in (op.generation.get("typical_values") or ()))


def test_some_spec_says_its_op_exists_for_special_values():
    assert SPECIAL_TYPICAL, "no spec has generate.typical_values with special: the test below checks nothing"


@pytest.mark.parametrize("op_name", SPECIAL_TYPICAL)
def test_an_op_that_exists_for_special_values_meets_nan_and_infinities_in_typical_cases(op_name):
    cases = _collect(SPECS[op_name], generate.TYPICAL, n=20, configs=1)
    data = [np.asarray(t.data, dtype=np.float64) for c in cases for t in c.inputs
            if t is not None and t.data is not None]  # fmt: skip
    assert any(np.isnan(d).any() for d in data) and any(np.isinf(d).any() for d in data), (
        f"{op_name}: no NaN or no infinity in {len(cases)} typical cases")
