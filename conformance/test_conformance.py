"""The conformance run: every op x datatype configuration x tier on ``--backend``, plus negative cases.

``test_op[Conv2d-UFIXED_POINT_8-typical]`` draws the cell's N cases (``--examples``; the edge tier
``--edge-examples``) and runs every one through ``conformance.execute``: one results record per distinct
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

The cell's steps are ``conformance.cell.CellRunner``'s; this module only turns its outcome into pytest's.

Drawing a cell has a time budget (``opdefs.budget``): a spec whose constraints keep the generator busy
past it costs that cell, which runs the cases drawn so far and says so, never the run.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

import opdefs
from cases import generate, negative
from cases.case import MODEL
from cases.cell_cache import Cell, CellCache
from conformance import options as option_table
from conformance.cell import CellRunner, first_made
from conformance.execute import RunContext, execute
from conformance.plugin import append_records, runs_tier, take_adapter
from reference.expected import infer
from reports.expectations import Expectations
from reports.record import CELL, NEGATIVE_PASSES, Record

SPECS, SPEC_ERRORS = opdefs.load_each()


_CONFIGS: dict[str, list] = {}


def _configs(op) -> list:
    """The op's configurations; a spec the generator cannot read errors its own op, not the collection. Worked out
    once per op (SPECS is read once per process): every test of the op asks again, a millisecond each."""
    if op.name not in _CONFIGS:
        _CONFIGS[op.name] = _configs_of(op)
    return _CONFIGS[op.name]


def _configs_of(op) -> list:
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
            if op.model_layers:  # the layers of public models the spec lists (``cases.generate.model_rows``)
                out.append(pytest.param(name, cfg.label, MODEL, id=f"{name}-{cfg.label}-{MODEL}"))
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
    pattern = conformance_options["op"]
    if pattern and not re.search(pattern, op_name):
        pytest.skip(f"--op {pattern!r} does not select {op_name}")


def _context(backend, options: dict, request, known: Expectations | None = None) -> RunContext:
    name, adapter = backend
    return RunContext(adapter, name, case_dir=options["case_dir"], run_id=options["run_id"],
                      test_id=request.node.nodeid, replay_options=option_table.replay_line(options, dict(os.environ)),
                      known=known, batch=options.get("batch"))  # fmt: skip


@pytest.mark.conformance
@pytest.mark.parametrize("op_name, config_label, tier", _positive_params())
def test_op(op_name, config_label, tier, backend, conformance_options, record, expectations, request):
    _selected(conformance_options, op_name)
    if config_label == "spec-error":
        pytest.fail(f"{op_name}: the spec does not load: {SPEC_ERRORS[op_name]}", pytrace=False)
    op = SPECS[op_name]
    if config_label is None:
        why = generate.skip_reason(op) or "no datatype configuration"
        # a record, so the matrix (which reads results files only) still gives the spec's op its row and reason
        record(Record(op=op_name, config="", backend=backend[0], verdict="", kind=CELL, test_id=request.node.nodeid,
                      run_id=conformance_options["run_id"], extra={"not_generated": why, "family": op.family}))
        pytest.skip(f"{op_name} is not generated: {why}")
    if not runs_tier(conformance_options, tier):
        pytest.skip(f"--tier {conformance_options['tier']}")
    config = next(c for c in _configs(op) if c.label == config_label)
    known = expectations if expectations.entries else None  # a failing case is checked against their models
    outcome = CellRunner(op, config, tier, conformance_options, _context(backend, conformance_options, request, known),
                         record).run()  # fmt: skip
    if outcome.fail:
        pytest.fail(outcome.fail, pytrace=False)
    if outcome.skip:
        pytest.skip(outcome.skip)
    if outcome.xfail:
        pytest.xfail(outcome.xfail)


def _negative_case(op, config, target, options: dict) -> tuple[bool, Any]:
    """The case that breaks ``target`` alone (None if no mutation of a drawn case does) and whether base cases
    could be drawn at all; read from the run's case cache when another backend found it already, as cells are
    (``--case-cache``): the same seed finds the same case, and only the first backend pays for the search."""
    cache = CellCache(options["case_cache"]) if options.get("case_cache") else None
    key = cache.key(op.path, f"negative:{target.id}", "negative", options["seed"], options["examples"], 0) \
        if cache is not None else ""
    got = cache.get(op.name, key, may_be_empty=True) if cache is not None else None
    if got is not None:
        return got.satisfiable, (got.cases or [None])[0]
    strategy = generate.case_strategy(op, config, generate.Settings(infer=infer))
    satisfiable, bad = first_made(lambda case: negative.break_one(op, case, target), strategy, options)
    if cache is not None:
        try:
            cache.put(op.name, key, Cell([bad] if bad is not None else [], 0, 0, satisfiable))
        except OSError:  # a cache that cannot be written costs the next backend a search, not this test
            pass
    return satisfiable, bad


@pytest.mark.conformance
@pytest.mark.parametrize("op_name, constraint_id", _negative_params())
def test_rejects(op_name, constraint_id, backend, backend_ops, conformance_options, record, request):
    _selected(conformance_options, op_name)
    name = backend[0]
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
    ctx = _context(backend, conformance_options, request)
    satisfiable, bad = _negative_case(op, configs[0], target, conformance_options)
    if bad is None:
        pytest.skip(f"no mutation breaks {constraint_id} alone" if satisfiable
                    else "the generator could not build a valid base case")
    rec = record(execute(bad, ctx))
    assert rec.verdict in NEGATIVE_PASSES, f"{rec.verdict}: {rec.message} (replay: {rec.case_path})"
