"""Generated cases: every op that has a datatype configuration generates on both tiers, every case of
either tier satisfies every checkable constraint of its spec (uniqueness of axes included), typical
cases look like converter use, and the same hypothesis seed gives the same cases.

``pytest -m slow tests/test_cases_generation.py`` runs the 200-case version (skipped otherwise).
"""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hyp_seed
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

import opdefs
from cases import check, generate
from cases.case import Case
from cases.quant import real_value
from opdefs import dtypes, expr
from reference.expected import infer

SPECS = opdefs.load_all()
WITH_CONFIGS = sorted(name for name, op in SPECS.items() if generate.configs(op))
EVERY_CONFIG = [pytest.param(name, c.label, tier, id=f"{name}-{c.label}-{tier}") for name in WITH_CONFIGS
                for c in generate.configs(SPECS[name]) for tier in generate.TIERS]  # fmt: skip
# ops whose specs say why no case can be generated (generate.skip)
NOT_GENERATED = {name for name, op in SPECS.items() if generate.skip_reason(op)}
CASES_PER_CONFIG = 12
# a spread of generation features for the reproducibility test: derived dims, free output dims, value
# ranges, param shapes naming a rank, repeated inputs and outputs, quantized and integer tensors
REPRO_OPS = ["Col2Im", "CollectRpnProposals", "Conv2d", "CropAndResize", "ElementWiseAdd", "MultiClassNms", "Pad",
             "PoolAvg2d", "Resize", "StridedSlice", "Stft", "Transpose"]  # fmt: skip


def _draw(op_name: str, n: int, label: str | None = None, seed: int | None = None, tier: str = "edge") -> list[Case]:
    """Up to ``n`` generated cases for one configuration (the first by default) and tier, derandomized
    unless a seed is given; raises Unsatisfiable."""
    return _collect(_strategy(op_name, label, tier), n, seed)


def _draw_counted(op_name: str, n: int, label: str | None = None, seed: int | None = None,
                  tier: str = "edge") -> tuple[list[Case], int]:  # fmt: skip
    """``_draw``'s cases, and how many draws were refused on the way."""
    inner = _strategy(op_name, label, tier)
    tally = {"draws": 0}

    @st.composite
    def counted(draw):
        tally["draws"] += 1
        return draw(inner)

    got = _collect(counted(), n, seed)
    return got, tally["draws"] - len(got)


def _strategy(op_name: str, label: str | None, tier: str) -> st.SearchStrategy[Case]:
    op = SPECS[op_name]
    config = next(c for c in generate.configs(op) if label in (None, c.label))
    return generate.case_strategy(op, config, generate.Settings(infer=infer, tier=tier))


def _collect(strategy: st.SearchStrategy[Case], n: int, seed: int | None) -> list[Case]:
    got: list[Case] = []

    @settings(max_examples=n, derandomize=seed is None, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def collect(case):
        got.append(case)

    if seed is not None:
        collect = hyp_seed(seed)(collect)
    collect()
    return got


def _assert_valid(op_name: str, cases: list[Case]) -> None:
    op = SPECS[op_name]
    assert cases, f"{op_name}: no case generated"
    for case in cases:
        for r in check.evaluate(op, case):
            assert r.status != check.FALSE, f"{op_name}: constraint {r.constraint_id} violated by {case.describe()}"


def _known_unsatisfiable(op_name: str, tier: str) -> str | None:
    return (SPECS[op_name].generation.get("unsatisfiable") or {}).get(tier)


@pytest.mark.parametrize("op_name, label, tier", EVERY_CONFIG)
def test_generated_cases_satisfy_every_checkable_constraint(op_name, label, tier):
    if _known_unsatisfiable(op_name, tier):
        pytest.skip(_known_unsatisfiable(op_name, tier))
    _assert_valid(op_name, _draw(op_name, CASES_PER_CONFIG, label, tier=tier))


@pytest.mark.slow
@pytest.mark.parametrize("op_name, label, tier", EVERY_CONFIG)
def test_200_generated_cases_satisfy_every_checkable_constraint(op_name, label, tier, request):
    if "slow" not in (request.config.option.markexpr or ""):
        pytest.skip("200 cases per op, configuration and tier: run with -m slow")
    if _known_unsatisfiable(op_name, tier):
        pytest.skip(_known_unsatisfiable(op_name, tier))
    _assert_valid(op_name, _draw(op_name, 200, label, tier=tier))


@pytest.mark.parametrize("op_name", REPRO_OPS)
def test_the_same_seed_gives_the_same_cases(op_name):
    first, second = _draw(op_name, 10, seed=20240611), _draw(op_name, 10, seed=20240611)
    assert [c.to_json() for c in first] == [c.to_json() for c in second]
    for a, b in zip(first, second, strict=True):
        arrays_a, arrays_b = a.arrays(), b.arrays()
        assert arrays_a.keys() == arrays_b.keys()
        for key in arrays_a:
            assert np.array_equal(arrays_a[key], arrays_b[key], equal_nan=arrays_a[key].dtype.kind == "f"), (
                f"{op_name}: {key} differs between two runs of {a.describe()}"
            )


def test_the_same_seed_gives_the_same_cases_whatever_the_process_imported_before(tmp_path, monkeypatch):
    """Hypothesis would mix the literals of every local module imported so far into its draws: a module of
    40 numbers changed 5 of these 120 cases before cases/determinism.py turned that off."""
    cells = [(op, label, tier) for op, label in (("Conv2d", "FLOAT_32"), ("StridedSlice", "FLOAT_32"),
                                                 ("Concat", "FLOAT_32")) for tier in generate.TIERS]  # fmt: skip
    before = [c.case_id() for cell in cells for c in _draw(cell[0], 20, cell[1], seed=0, tier=cell[2])]
    (tmp_path / "many_literals.py").write_text(
        "SEEDS = [" + ", ".join(str(1000003 * k + 17) for k in range(1, 30)) + "]\n"
        "SIZES = [2, 3, 4, 5, 6, 7, 9, 11, 13, -1, -2, -3, 0, 1]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        importlib.import_module("many_literals")
        after = [c.case_id() for cell in cells for c in _draw(cell[0], 20, cell[1], seed=0, tier=cell[2])]
    finally:
        sys.modules.pop("many_literals", None)
    changed = sum(a != b for a, b in zip(before, after, strict=True))
    assert changed == 0, f"{changed} of {len(before)} cases changed after importing a module of literals"


def test_a_pick_keeps_the_types_of_its_values_whatever_was_picked_before():
    """(False,) == (0,) and (1.0,) == (1,), with equal hashes: a strategy cache keyed on the values alone
    handed one the other's strategy."""
    for first, second in (([0], [False]), ([1], [1.0]), ([(0, 1)], [(False, True)])):
        a, b = generate._pick(first), generate._pick(second)  # one value: hypothesis gives just(value)
        assert repr(b) == f"just({second[0]!r})", f"asked for {second!r} after {first!r}, got {b!r}"
        assert repr(a) == f"just({first[0]!r})", f"asked for {first!r}, got {a!r}"


def test_a_cells_cases_do_not_depend_on_the_cells_drawn_before():
    """The same seed draws the same cases whichever cells the process drew first (an xdist worker's share, a
    ``--op`` selection, ``--resume``): Conv2d's drew other cases after Concat's, through the cache above."""
    for cached in (generate._ints, generate._picks, generate._n_of, generate._permutation_picks, generate._default_or):
        cached.cache_clear()  # as a fresh process has them
    fresh = [c.case_id() for c in _draw("Conv2d", 20, "FLOAT_32", seed=0, tier="typical")]
    _draw("Concat", 20, "FLOAT_32", seed=0, tier="typical")
    after = [c.case_id() for c in _draw("Conv2d", 20, "FLOAT_32", seed=0, tier="typical")]
    changed = sum(a != b for a, b in zip(fresh, after, strict=True))
    assert changed == 0 and len(fresh) == len(after), f"{changed} of {len(fresh)} Conv2d cases changed after Concat's"


@pytest.mark.parametrize("tier", generate.TIERS)
def test_every_op_with_a_configuration_generates(tier):
    failing = []
    for name in WITH_CONFIGS:
        if _known_unsatisfiable(name, tier):
            continue
        try:
            _draw(name, 2, tier=tier)
        except Unsatisfiable as e:
            failing.append(f"{name}: {str(e)[:80]}")
    assert not failing, f"{len(failing)} op(s) generate no {tier} case and their spec does not say why: {failing}"


def test_typical_cases_look_like_converter_use():
    """Rank >= 2 where the spec leaves it free, no size-1 free dims but a batch of 1 (the leading dim of rank 3 or
    more), every parameter given, static weights, finite inputs: sampled on ops whose specs cover each point."""
    for case in _draw("ElementWiseAdd", 10, tier="typical"):
        assert all(len(t.shape) >= 2 for t in case.inputs), case.describe()
        assert all(np.all(np.isfinite(t.data)) for t in case.inputs if t.data.dtype.kind == "f"), case.describe()
    for case in _draw("Softmax", 10, tier="typical"):
        assert set(case.params) == set(SPECS["Softmax"].params), f"every parameter explicit: {case.describe()}"
        shape = case.inputs[0].shape
        assert min(shape[1:] if len(shape) >= 3 else shape) >= 2, case.describe()
    for case in _draw("Conv2d", 10, tier="typical"):
        weights, bias = case.inputs[1], case.inputs[2]
        assert weights.static and bias is not None and bias.static, f"static filters and bias: {case.describe()}"


def _padded(case: Case) -> bool:
    pads = case.params.get("pad_amount")
    return pads is not None and any(int(x) for x in np.asarray(pads.value).ravel())


def _filled_in(case: Case) -> list[float]:
    """The values a padding op writes that are not in[0]'s: Pad's constant (scheme CONSTANT), SpaceToBatch's zeros."""
    if case.op == "Pad":
        return [float(case.params["pad_constant_value"].value)] if int(case.params["scheme"].value) == 0 else []
    return [0.0]


@pytest.mark.parametrize("op_name", ["SpaceToBatch", "Pad"])
def test_typical_padding_keeps_the_input_grid(op_name):
    """A data movement op that pads: converters keep in[0]'s grid on out[0], so the typical tier does too when the
    values it pads with fit that grid (else a case's expectation depends on whether the op requantizes)."""
    fixed = [c.label for c in generate.configs(SPECS[op_name]) if c.label.endswith("FIXED_POINT_8")]
    cases = [c for label in fixed for c in _draw(op_name, 10, label, tier="typical") if _padded(c)]
    assert cases, f"{op_name}: no padded typical case drawn in {fixed}"
    for case in cases:
        enc, d = case.inputs[0].encoding, dtypes.get(case.config)
        lo, hi = enc.scales[0] * (d.qmin - 0.5 + enc.offsets[0]), enc.scales[0] * (d.qmax + 0.5 + enc.offsets[0])
        if all(lo <= v <= hi for v in _filled_in(case)):
            assert case.outputs[0].encoding == enc, f"out[0] regridded: {case.describe()}"


def test_edge_padding_may_give_out_a_grid_of_its_own():
    """The edge tier keeps the calibrated grid: a backend that ignores out[0]'s own encoding is judged there."""
    label = next(c.label for c in generate.configs(SPECS["SpaceToBatch"]) if c.label == "UFIXED_POINT_8")
    cases = [c for c in _draw("SpaceToBatch", 20, label, tier="edge") if _padded(c)]
    assert any(c.outputs[0].encoding != c.inputs[0].encoding for c in cases), \
        f"no padded edge SpaceToBatch case with a grid of its own among {len(cases)}"  # fmt: skip


def test_a_typical_condition_on_datatypes_steers_the_parameters():
    """ScatterNd's typical_when 'implies(is_quantized(in[0]), reduction == NONE)' reads in[0] only through its
    datatype, which the configuration fixes before anything is drawn: fixed-point cases draw NONE instead of
    refusing the other reductions, and float cases keep them all."""
    op = SPECS["ScatterNd"]
    none = op.params["reduction"]["values"]["NONE"]
    labels = [c.label for c in generate.configs(op)]
    fixed = next(x for x in labels if "FIXED_POINT" in x)
    cases, refused = _draw_counted("ScatterNd", 10, fixed, seed=0, tier="typical")
    assert {int(c.params["reduction"].value) for c in cases} == {none}, [c.describe() for c in cases]
    assert refused == 0, f"{refused} draws refused for {len(cases)} kept: the condition was not steered"
    floats = _draw("ScatterNd", 20, next(x for x in labels if x.startswith("FLOAT_32")), seed=0, tier="typical")
    assert {int(c.params["reduction"].value) for c in floats} - {none}, "float cases lost the other reductions"


def test_float_scatter_nd_keeps_mul_to_the_edge_tier():
    """ScatterNd's 'implies(is_float(in[0]), reduction != MUL)' (the decision at line 11764: a float MUL over duplicate
    indices depends on whether out[0] holds each partial product in its datatype): typical FLOAT_16 and FLOAT_32 cases
    draw NONE and ADD; the edge tier still multiplies."""
    op = SPECS["ScatterNd"]
    mul = op.params["reduction"]["values"]["MUL"]
    labels = [c.label for c in generate.configs(op)]
    for prefix in ("FLOAT_16", "FLOAT_32"):
        label = next(x for x in labels if x.startswith(prefix))
        drawn = {int(c.params["reduction"].value) for c in _draw("ScatterNd", 20, label, seed=0, tier="typical")}
        assert mul not in drawn and len(drawn) == 2, (label, drawn)
    edge = _draw("ScatterNd", 40, next(x for x in labels if x.startswith("FLOAT_16")), seed=0, tier="edge")
    assert mul in {int(c.params["reduction"].value) for c in edge if "reduction" in c.params}


def test_rows_that_describe_axes_are_drawn_among_those_their_conditions_allow():
    """StridedSlice's ranges (``rows.along: in[0]``): every row a non-empty slice of its axis, typical rows stepping
    forward from a begin >= 0 to an end <= the axis's size, and drawn so, not refused (the issue's 1 in 4 at most)."""
    rows = SPECS["StridedSlice"].params["ranges"]["rows"]
    label = generate.configs(SPECS["StridedSlice"])[0].label
    cases, refused = _draw_counted("StridedSlice", 20, label, seed=0, tier="typical")
    assert refused * 4 <= len(cases), f"{refused} draws refused for {len(cases)} kept"
    for case in cases:
        sizes = case.inputs[0].shape
        for r, row in enumerate(np.asarray(case.params["ranges"].value)):
            env = {"row": row, "dim": sizes[r]}
            for c in [*rows["when"], *rows["typical_when"]]:
                assert expr.holds(expr.parse(c), env), f"row {r} {row.tolist()} of axis {sizes[r]} breaks {c}"


def test_row_conditions_may_read_the_parameters_drawn_before():
    """Pad's pad_amount rows hold the mirror limits of the scheme drawn before them (REFLECT: at most dim - 1 a side,
    SYMMETRIC: at most dim), so a mirrored case is drawn inside them rather than refused."""
    op = SPECS["Pad"]
    schemes = op.params["scheme"]["values"]
    label = generate.configs(op)[0].label
    cases, refused = _draw_counted("Pad", 20, label, seed=0)  # the edge tier draws the larger pads
    assert refused * 10 <= len(cases), f"{refused} draws refused for {len(cases)} kept: drawn blind, then refused"
    mirror = (schemes["MIRROR_REFLECT"], schemes["MIRROR_SYMMETRIC"])
    mirrored = [c for c in cases if int(c.params["scheme"].value) in mirror]
    assert mirrored, "no mirrored case drawn"
    for case in mirrored:
        reflect = int(case.params["scheme"].value) == schemes["MIRROR_REFLECT"]
        for row, size in zip(np.asarray(case.params["pad_amount"].value), case.inputs[0].shape, strict=True):
            assert max(row) <= size - (1 if reflect else 0), f"pad {row.tolist()} on axis of {size}: {case.describe()}"


def test_a_curation_by_an_enum_member_applies_when_that_member_is_drawn():
    """MaskedSoftmax's in[1] ``values.by_param.mode.COMPRESSED: {sum: channel}``: under COMPRESSED each row holds
    positive whole sequence lengths filling channel; under UNCOMPRESSED the mask stays an additive real mask."""
    op = SPECS["MaskedSoftmax"]
    compressed = op.params["mode"]["values"]["COMPRESSED"]
    cases = [c for label in ("FLOAT_32", "UFIXED_POINT_8") for c in _draw("MaskedSoftmax", 20, label, tier="typical")]
    packed = [c for c in cases if int(c.params["mode"].value) == compressed]
    assert packed and len(packed) < len(cases), "both modes drawn"
    for case in packed:
        lengths = real_value(case.inputs[1])
        assert np.all(lengths >= 1) and np.all(lengths == np.round(lengths)), case.describe()
        assert np.all(lengths.sum(axis=-1) == case.inputs[0].shape[-1]), f"lengths do not fill channel: {lengths}"


def test_typical_values_stay_inside_the_ops_domain():
    for case in _draw("ElementWiseLog", 10, tier="typical"):
        assert np.all(case.inputs[0].data > 0), f"log of a non-positive value in a typical case: {case.describe()}"
    for case in _draw("ElementWiseDivide", 10, tier="typical"):
        assert np.all(case.inputs[1].data != 0), f"a zero divisor in a typical case: {case.describe()}"


def test_only_ops_whose_spec_says_why_have_no_configuration():
    without = {name for name in SPECS if name not in WITH_CONFIGS}
    assert without == NOT_GENERATED, f"ops without configurations changed: {sorted(without ^ NOT_GENERATED)}"
    for name in without:
        assert generate.skip_reason(SPECS[name]), f"{name}: no configuration and no generate.skip reason"


# ---- sequences of executions and data-dependent output lengths ------------------------------------------
STATEFUL = sorted(name for name, op in SPECS.items()
                  if op.generation.get("executions") and not generate.skip_reason(op))  # fmt: skip


@pytest.mark.parametrize("op_name", STATEFUL)
@pytest.mark.parametrize("tier", generate.TIERS)
def test_a_stateful_op_s_cases_run_as_many_executions_as_its_spec_says(op_name, tier):
    lo, hi = SPECS[op_name].generation["executions"]
    cases = _draw(op_name, CASES_PER_CONFIG, tier=tier)
    runs = sorted({c.executions for c in cases})
    assert runs and lo <= runs[0] and runs[-1] <= hi, f"{op_name}: executions {runs} outside [{lo}, {hi}]"
    if hi > 1:
        assert runs[-1] > 1, f"{op_name}: {len(cases)} cases and none is a sequence of executions"
    for c in cases:
        for k in range(1, c.executions):
            for t, s in zip(c.inputs, c.step_inputs(k), strict=True):
                if t is not None and t.static:
                    assert s.data is t.data, f"{op_name}: static {t.name} changed data at execution {k + 1}"


def test_a_step_less_op_draws_no_steps():
    assert all(not c.steps for c in _draw("ElementWiseAdd", 4)), "an op without generate.executions got steps"


def test_an_output_whose_backend_reports_its_size_is_declared_at_its_capacity():
    # DistributeFpnProposals: each FPN level holds 0..num_proposals RoIs and is declared with num_proposals rows
    op = SPECS["DistributeFpnProposals"]
    rows = op.valid_rows(5)
    assert rows and all(r["count"] == "current" for r in rows.values())
    for case in _draw("DistributeFpnProposals", 6, tier="typical"):
        n = case.inputs[0].shape[0]
        for i in rows:
            t = case.outputs[i]
            assert t.shape[0] == n, f"{t.name}: declared {t.shape}, capacity {n}"
