"""The conformance run: every op x datatype configuration x tier on ``--backend``, plus negative cases.

``test_op[Conv2d-UFIXED_POINT_8-typical]`` draws the cell's N cases (``--examples``; the edge tier
``--edge-examples``) and runs every one through ``suite.execute``: one results record per distinct
case (``case_id``), whatever the earlier ones gave, so a cell is a rate, never "the first failure".
Draws the generator had to throw away are counted in a per-cell record (kind "cell"). When the cell
has failures, a separate shrinking step (off with ``--no-shrink``) saves the smallest failing case
for replay, recorded as kind "shrunk" and not counted. ``test_rejects[Softmax-axis_value]`` builds a
case that breaks exactly that constraint; the backend should refuse it at validation. Without
``--backend`` this module is skipped (the suite's own tests run instead).

How pytest reports a cell: failed when any case is FAIL/ERROR/CRASH/TIMEOUT/XPASS; skipped, with the
reason, when no case could be judged (UNCHECKED: no reference, REJECTED, SKIP), so a cell nobody
checked never reads as passed in pytest or ``--junitxml``; passed otherwise. A spec that does not load
is one failed ``test_op[MyOp-spec-error]`` naming file:line: field, and every other op still runs.

With ``--resume`` the cases already in the results file are not run again: the same seed draws the
same cases (same ``case_id``), the recorded verdict stands in for each, and a finished cell is read
back whole. A cell is finished when its cell record is written, and that is written only once every
one of its cases is recorded: a cell interrupted (Ctrl-C, SIGTERM) or broken by an exception has no
cell record, so ``--resume`` runs the cases it lacks.

Drawing a cell has a time budget (``opdefs.budget``): a spec whose constraints keep the generator busy
past it costs that cell, which runs the cases drawn so far and says so, never the run.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, Phase, find, given
from hypothesis import seed as hyp_seed
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

import opdefs
import suite
from adapters import refusal
from cases import forms, generate, negative
from cases.case import Case
from cases.cell_cache import Cell, CellCache
from cases.plugin import append_records, examples_for, hypothesis_settings, take_adapter
from opdefs import budget
from reference.expected import infer
from reports import refusals
from reports.expectations import Expectations
from reports.record import (
    BAD,
    CELL,
    NEGATIVE_PASSES,
    PROBE,
    REJECTED,
    SHRUNK,
    SKIP,
    UNCHECKED,
    XPASS,
    Record,
)

FAILS_THE_TEST = BAD | {XPASS}  # a known failure that passed: its expectation is stale
NOT_JUDGED = {REJECTED, SKIP, UNCHECKED}
SPECS, SPEC_ERRORS = opdefs.load_each()
SHRINK_SECONDS = 60.0  # a shrinking step stops improving after this long: a bound on a slow backend's cost


def _configs(op) -> list:
    """The op's configurations; a spec the generator cannot read errors its own op, not the collection."""
    try:
        return generate.configs(op)
    except Exception as e:  # noqa: BLE001 - reported by that op's test, with the spec's path
        SPEC_ERRORS[op.name] = opdefs.SpecError([opdefs.Problem(str(op.path), 1, "(generate)",
                                                                f"{type(e).__name__}: {e}")])  # fmt: skip
        return []


def _positive_params() -> list:
    out = []
    for name in sorted(SPEC_ERRORS):
        out.append(pytest.param(name, "spec-error", None, id=f"{name}-spec-error"))
    for name, op in sorted(SPECS.items()):
        cfgs = _configs(op)
        if name in SPEC_ERRORS:
            out.append(pytest.param(name, "spec-error", None, id=f"{name}-spec-error"))
            continue
        for cfg in cfgs:
            for tier in generate.TIERS:
                out.append(pytest.param(name, cfg.label, tier, id=f"{name}-{cfg.label}-{tier}"))
        if not cfgs:  # reported as not generated (skipped with the spec's reason), never as failing
            out.append(pytest.param(name, None, None, id=f"{name}-not-generated"))
    return out


def _negative_params() -> list:
    out = []
    for name, op in sorted(SPECS.items()):
        if name in SPEC_ERRORS:
            continue
        for c in op.constraints:
            if negative.negatable(c):
                out.append(pytest.param(name, c.id, id=f"{name}-{c.id}"))
    return out


@pytest.fixture(scope="session")
def backend(conformance_options, pytestconfig, record_testsuite_property):
    name = conformance_options["backend"]
    if not name:
        pytest.skip("conformance cases run only with --backend NAME")
    try:
        adapter = take_adapter(pytestconfig)
    except pytest.UsageError as e:  # an xdist worker finds the backend gone that the controller had
        pytest.skip(str(e))
    # a JUnit report says which backend, build, seed and target its test cases ran on
    info = adapter.info() if hasattr(adapter, "info") else {}
    build = info.get("build_id") or ", ".join(f"{k}={v}" for k, v in sorted(info.items()))
    for key, value in (("backend", name), ("build", build),
                       ("seed", conformance_options["seed"]), ("soc", info.get("soc", "default")),
                       ("run_id", conformance_options["run_id"])):  # fmt: skip
        record_testsuite_property(key, str(value))
    yield name, adapter
    adapter.close()


@pytest.fixture(scope="session")
def backend_ops(backend) -> set[str] | None:
    """The op names the backend lists, where it can say (None where it cannot)."""
    try:
        ops = (backend[1].capabilities() or {}).get("ops")
    except Exception:  # noqa: BLE001 - a backend that cannot list its ops is not a failed case
        return None
    return set(ops) if ops else None


@pytest.fixture(scope="session")
def expectations(conformance_options) -> Expectations:
    paths = conformance_options["expectations"]
    return Expectations.load_all(paths) if paths else Expectations()


@pytest.fixture(scope="session")
def record(conformance_options, expectations, request):
    path = conformance_options["results"]

    def write(rec):
        rec = expectations.apply_record(rec)
        if path is not None:  # a full disk or a lost run lock fails this test and stops the run
            append_records(conformance_options, [rec], request.session)
        return rec

    return write


def _selected(conformance_options, op_name: str) -> None:
    import re

    pattern = conformance_options["op"]
    if pattern and not re.search(pattern, op_name):
        pytest.skip(f"--op {pattern!r} does not select {op_name}")


def _drive(body, strategy, options: dict, unsatisfiable: str | None, generate_only: bool = False) -> bool:
    """Run ``body`` over drawn cases under the run's seed (generation only: no replay, no shrinking).
    When hypothesis gives up for want of valid cases: skip the test with ``unsatisfiable``, or return
    False when that is None (the caller still has drawn cases to run)."""
    s = hypothesis_settings(options)
    if generate_only:
        s = hyp_settings(s, max_examples=max(20, s.max_examples))
    runner = hyp_settings(s, suppress_health_check=list(HealthCheck), deadline=None)(given(strategy)(body))
    runner = hyp_seed(options["seed"])(runner)  # always set (the plugin draws one when not given): resumable
    try:
        runner()
    except Unsatisfiable:
        if unsatisfiable is None:
            return False
        pytest.skip(unsatisfiable)
    return True


def _replay_options(options: dict) -> str:
    opts = []
    if options.get("qnn_backend_lib"):
        opts.append(f"--qnn-backend-lib {options['qnn_backend_lib']}")
    if options.get("qnn_precision") not in (None, "auto"):
        opts.append(f"--qnn-precision {options['qnn_precision']}")
    for pkg in (options.get("adapter_options") or {}).get("op_packages", []):
        opts.append(f"--qnn-op-package {':'.join(x for x in (pkg['path'], pkg['interface'], pkg['target']) if x)}")
    for flag, env in (("--qnn-soc", "QNN_HTP_SOC"), ("--qnn-arch", "QNN_HTP_ARCH")):  # set by --qnn-soc/--qnn-arch
        if os.environ.get(env, "").strip():
            opts.append(f"{flag} {os.environ[env].strip()}")
    from cases.plugin import SPECS_ENV

    for d in os.environ.get(SPECS_ENV, "").split(os.pathsep):  # the run's --specs: the case's op may live there
        if d:
            opts.append(f"--specs {d}")
    if (options.get("adapter_options") or {}).get("timeout") is not None:
        opts.append(f"--case-timeout {options['adapter_options']['timeout']}")
    return " ".join(opts)


def _shrink(strategy, verdict: str, run_case, options: dict):
    """The smallest case of this cell with ``verdict``, found by hypothesis' shrinker within a time
    budget (each attempt runs the backend), or None."""
    deadline = time.monotonic() + SHRINK_SECONDS

    def still_fails(case) -> bool:
        if time.monotonic() > deadline:
            return False
        return run_case(case).verdict == verdict

    s = hyp_settings(max_examples=max(20, examples_for(options, "typical")), phases=[Phase.generate, Phase.shrink],
                     database=None, deadline=None, suppress_health_check=list(HealthCheck))  # fmt: skip
    try:
        return find(strategy, still_fails, settings=s, random=None)
    except (NoSuchExample, Unsatisfiable):
        return None


@pytest.mark.conformance
@pytest.mark.parametrize("op_name, config_label, tier", _positive_params())
def test_op(op_name, config_label, tier, backend, conformance_options, record, expectations, request):
    _selected(conformance_options, op_name)
    name, adapter = backend
    if config_label == "spec-error":
        pytest.fail(f"{op_name}: the spec does not load: {SPEC_ERRORS[op_name]}", pytrace=False)
    op = SPECS[op_name]
    if config_label is None:
        why = generate.skip_reason(op) or "no datatype configuration"
        # a record, so the matrix (which reads results files only) still gives the spec's op its row and reason
        record(Record(op=op_name, config="", backend=name, verdict="", kind=CELL, test_id=request.node.nodeid,
                      run_id=conformance_options["run_id"], extra={"not_generated": why, "family": op.family}))
        pytest.skip(f"{op_name} is not generated: {why}")
    if conformance_options.get("tier", "both") not in ("both", tier):
        pytest.skip(f"--tier {conformance_options['tier']}")
    config = next(c for c in _configs(op) if c.label == config_label)
    settings = generate.Settings(infer=infer, max_elements=conformance_options["max_elements"] or 4096, tier=tier)
    inner = generate.case_strategy(op, config, settings)
    tally = {"draws": 0, "duplicates": 0}

    limit = budget.seconds("generation")
    deadline = {"t": float("inf")}  # set when drawing starts

    @st.composite
    def counted(draw):
        # checked before every draw as well as by the budget's timer, so that hypothesis' replay of the draw
        # that ran out of time stops the same way
        if budget.expired(deadline["t"]):
            raise budget.OutOfTime(f"drawing the cell took more than {limit:g} s")
        tally["draws"] += 1  # every attempt; the ones that end in a refusal never reach the body
        return draw(inner)

    strategy = counted()
    seen: dict[str, Record] = {}
    replay_options = _replay_options(conformance_options)
    n = examples_for(conformance_options, tier)

    findings = expectations if expectations.entries else None  # a failing case is checked against their models

    def execute(case):
        return suite.execute(case, adapter, name, conformance_options["case_dir"], conformance_options["run_id"],
                             0.0, request.node.nodeid, replay_options, known=findings)  # fmt: skip

    prior = conformance_options["prior"]
    cell = (op_name, config_label, tier)
    stopped: dict[str, str] = {}  # why drawing stopped short, when it did

    def draw() -> tuple[Cell, list[float]]:
        """The cell's distinct cases in draw order, and the seconds each took to draw."""
        drawn: dict[str, Case] = {}
        seconds: list[float] = []
        last = {"t": time.perf_counter()}

        def collect(case):
            cid = case.case_id()
            if cid in drawn:  # another draw built the same case: it counts once
                tally["duplicates"] += 1
                return
            drawn[cid] = case
            seconds.append(time.perf_counter() - last["t"])
            last["t"] = time.perf_counter()

        deadline["t"] = time.monotonic() + limit
        try:
            with budget.time_budget(limit, f"drawing {op_name} {config_label} {tier}"):
                satisfiable = _drive(collect, strategy, {**conformance_options, "examples": n, "edge_examples": n},
                                     None)  # fmt: skip
        except (budget.OutOfTime, BaseExceptionGroup) as e:
            if isinstance(e, BaseExceptionGroup) and e.subgroup(budget.OutOfTime) is None:
                raise
            stopped["generation_stopped"] = f"drawing took more than its budget of {limit:g} s"
            satisfiable = True
        return Cell(list(drawn.values()), tally["draws"], tally["duplicates"], satisfiable), seconds

    def drawn_cell() -> tuple[Cell, list[float]]:
        """From the run's case cache when another backend drew this cell already (``--case-cache``)."""
        cache = CellCache(conformance_options["case_cache"]) if conformance_options.get("case_cache") else None
        if cache is None:
            return draw()
        key = cache.key(op.path, config_label, tier, conformance_options["seed"], n, settings.max_elements)
        t0 = time.perf_counter()
        got = cache.get(op_name, key)
        if got is not None:
            return got, [(time.perf_counter() - t0) / max(1, len(got.cases))] * len(got.cases)
        got, seconds = draw()
        if not stopped:  # a draw cut short by its budget is not what this key draws
            try:
                cache.put(op_name, key, got)
            except OSError:  # a cache that cannot be written costs the next backend a draw, not this cell
                pass
        return got, seconds

    def run_all(pending: dict[str, tuple[Case, float]]) -> None:
        """The cell's cases (id -> case, seconds to draw) on the backend together (batched where the adapter
        can), each recorded as it is judged."""
        cases = [c for c, _ in pending.values()]
        recs = suite.execute_many(cases, adapter, name, conformance_options["case_dir"], conformance_options["run_id"],
                                  [g for _, g in pending.values()], request.node.nodeid, replay_options,
                                  conformance_options.get("batch"), known=findings)  # fmt: skip
        for cid, rec in zip(pending, recs, strict=True):
            seen[cid] = record(rec)

    def cell_record(cases: int, duplicates: int, refusals: int, **extra) -> None:
        """The cell's bookkeeping: cases asked for, drawn, drawn twice, refused by the generator."""
        record(Record(op=op_name, config=config_label, backend=name, verdict="", kind=CELL, tier=tier,
                      test_id=request.node.nodeid, run_id=conformance_options["run_id"],
                      extra={"requested": n, "cases": cases, "duplicates": duplicates, "refusals": refusals,
                             **extra}))  # fmt: skip

    cannot = (op.generation.get("unsatisfiable") or {}).get(tier)  # not ``known``: run_all's closure reads that
    if cannot:  # the spec says why this tier cannot be built yet: no draw is wasted on it
        cell_record(0, 0, 0, unsatisfiable=cannot)
        pytest.skip(f"{op_name} {tier}: {cannot}")
    unsatisfiable = f"the generator could not build a valid {tier} {op_name} case for {config_label} from the spec"
    got: Cell | None = None
    if cell in prior.cells:  # --resume: this cell finished before the kill; read it back
        seen.update({cid: r for (*key, cid), r in prior.cases.items() if tuple(key) == cell})
    else:
        got, seconds = drawn_cell()
        pending: dict[str, tuple[Case, float]] = {}
        for case, took in zip(got.cases, seconds, strict=True):
            cid = case.case_id()
            done = prior.cases.get((*cell, cid))
            if done is not None:  # --resume: recorded cases stand
                seen[cid] = done
            else:
                pending[cid] = (case, took)
        run_all(pending)
        # every case is recorded: only now is the cell finished (an interrupt or an exception above leaves no
        # cell record, and --resume runs what this cell lacks)
        cell_record(len(got.cases), got.duplicates, max(0, got.draws - len(got.cases) - got.duplicates), **stopped)
        if not got.satisfiable:
            pytest.skip(unsatisfiable)
        if stopped and not got.cases:
            pytest.fail(f"{tier}: {stopped['generation_stopped']}, before any case was drawn", pytrace=False)
    recs = list(seen.values())
    if got is not None and _needs_probe(tier, recs):
        _probe(op, got.cases, adapter, name, conformance_options, request, replay_options, record)
    bad = [r for r in recs if r.verdict in FAILS_THE_TEST]
    if bad and not conformance_options["no_shrink"] and cell not in prior.shrunk:
        target = bad[0].verdict
        # the cell's own strategy forces a schedule of parameter values on its first draws: shrinking needs draws
        # that replay to the same case, so it gets one without it
        plain = generate.case_strategy(op, config, replace(settings, stratify=False))
        smallest = _shrink(plain, target, execute, conformance_options)
        if smallest is not None:
            shrunk = execute(smallest)
            shrunk.kind = SHRUNK
            record(shrunk)
    if bad:
        first = bad[0]
        counts = ", ".join(f"{v} {sum(r.verdict == v for r in recs)}/{len(recs)}"
                           for v in sorted({r.verdict for r in bad}))  # fmt: skip
        pytest.fail(f"{tier}: {counts}; first: {first.message[:300]} (replay: {first.replay or first.case_path})",
                    pytrace=False)  # fmt: skip
    if recs and all(r.verdict in NOT_JUDGED for r in recs):
        verdicts = sorted({r.verdict for r in recs})
        pytest.skip(f"{name}: {'/'.join(verdicts)} for every {tier} case ({len(recs)}): {recs[0].message[:200]}")
    if not recs:  # a cell that ran no case is never a pass
        pytest.skip(f"{tier}: no case of this cell was drawn")
    xfailed = [r for r in recs if r.verdict == "XFAIL"]
    if xfailed:  # "known", never passed: pytest's own outcome says so too
        pytest.xfail(f"{tier}: XFAIL {len(xfailed)}/{len(recs)}: {xfailed[0].expectation or ''}"[:300])


def _needs_probe(tier: str, recs: list[Record]) -> bool:
    """A typical cell whose every case the backend refused, for a reason a standard form might meet (not an op
    the backend does not have). A cell read back whole by --resume is not probed again."""
    if tier != generate.TYPICAL or not recs:
        return False
    if any(r.verdict != "REJECTED" for r in recs):
        return False
    return any(refusals.reason(r) != refusal.NOT_REGISTERED for r in recs)


def _probe(op, cases: list[Case], adapter, name: str, options: dict, request, replay_options: str, record) -> None:
    """The refused cell's cases again in each converter-standard form (``cases.forms``), one change at a time
    and all together, recorded as kind "probe" (never in the cell's rates): the matrix then names the form the
    backend runs, or keeps REJ with the reasons."""
    todo: list[tuple[str, str, Case]] = []
    for case in cases:
        todo += [(form, case.case_id(), variant) for form, variant in forms.variants(op, case, infer)]
    if not todo:
        return
    recs = suite.execute_many([v for _, _, v in todo], adapter, name, options["case_dir"], options["run_id"], None,
                              request.node.nodeid, replay_options, options.get("batch"))  # fmt: skip
    for (form, of, _), rec in zip(todo, recs, strict=True):
        rec.kind = PROBE
        rec.extra["probe"] = {"form": form, "of": of}
        record(rec)


@pytest.mark.conformance
@pytest.mark.parametrize("op_name, constraint_id", _negative_params())
def test_rejects(op_name, constraint_id, backend, backend_ops, conformance_options, record, request):
    _selected(conformance_options, op_name)
    name, adapter = backend
    op = SPECS[op_name]
    target = next(c for c in op.constraints if c.id == constraint_id)
    configs = _configs(op)
    if not configs:
        pytest.skip(f"{op_name} is not generated: {generate.skip_reason(op) or 'no datatype configuration'}")
    if backend_ops is not None and op_name not in backend_ops:
        # a backend refuses every case of an op it does not have: that says nothing about this constraint
        pytest.skip(f"{name} does not list {op_name} among its ops: a rejection would not test {constraint_id}")
    done_before = conformance_options["prior"].negatives.get((op_name, constraint_id))
    if done_before is not None:  # --resume
        assert done_before.verdict in NEGATIVE_PASSES, \
            f"{done_before.verdict}: {done_before.message} (replay: {done_before.case_path})"
        return
    strategy = generate.case_strategy(op, configs[0], generate.Settings(infer=infer))
    done: list = []

    def attempt(case):
        if done:
            return
        bad = negative.break_one(op, case, target)
        if bad is not None:
            done.append(record(suite.execute(bad, adapter, name, conformance_options["case_dir"],
                                             conformance_options["run_id"], 0.0, request.node.nodeid,
                                             _replay_options(conformance_options))))  # fmt: skip

    _drive(attempt, strategy, conformance_options, "the generator could not build a valid base case", True)
    if not done:
        pytest.skip(f"no mutation breaks {constraint_id} alone")
    rec = done[0]
    assert rec.verdict in NEGATIVE_PASSES, f"{rec.verdict}: {rec.message} (replay: {rec.case_path})"
