"""The conformance run: every op x datatype configuration x tier on ``--backend``, plus negative cases.

``test_op[Conv2d-UFIXED_POINT_8-typical]`` draws the cell's N cases (``--examples``; the edge tier
``--edge-examples``) and runs every one through ``suite.execute``: one results record per distinct
case (``case_id``), whatever the earlier ones gave, so a cell is a rate, never "the first failure".
Draws the generator had to throw away are counted in a per-cell record (kind "cell"). When the cell
has failures, a separate shrinking step (off with ``--no-shrink``) saves the smallest failing case
for replay, recorded as kind "shrunk" and not counted. ``test_rejects[Softmax-axis_value]`` builds a
case that breaks exactly that constraint; the backend should refuse it at validation. Without
``--backend`` this module is skipped (the suite's own tests run instead).
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, Phase, find, given
from hypothesis import seed as hyp_seed
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

import adapters
import opdefs
import reference
import suite
from cases import generate, negative
from conftest import examples_for, hypothesis_settings
from reference.expected import expected
from reports.expectations import Expectations
from reports.record import CELL, SHRUNK, Record, append

BAD = {"FAIL", "ERROR", "CRASH", "TIMEOUT", "XPASS"}
NOT_JUDGED = {"REJECTED", "SKIP", "UNCHECKED"}
SPECS = opdefs.load_all()
SHRINK_SECONDS = 60.0  # a shrinking step stops improving after this long: a bound on a slow backend's cost


def _infer(op, case):
    return expected(case, with_out_shapes=False) if reference.has(op.name) else None


def _positive_params() -> list:
    out = []
    for name, op in sorted(SPECS.items()):
        cfgs = generate.configs(op)
        for cfg in cfgs:
            for tier in generate.TIERS:
                out.append(pytest.param(name, cfg.label, tier, id=f"{name}-{cfg.label}-{tier}"))
        if not cfgs:  # reported as not generated (skipped with the spec's reason), never as failing
            out.append(pytest.param(name, None, None, id=f"{name}-not-generated"))
    return out


def _negative_params() -> list:
    out = []
    for name, op in sorted(SPECS.items()):
        for c in op.constraints:
            if negative.negatable(c):
                out.append(pytest.param(name, c.id, id=f"{name}-{c.id}"))
    return out


@pytest.fixture(scope="session")
def backend(conformance_options):
    name = conformance_options["backend"]
    if not name:
        pytest.skip("conformance cases run only with --backend NAME")
    options = {"library": conformance_options["qnn_backend_lib"], "precision": conformance_options["qnn_precision"]}
    adapter = adapters.get(name, {k: v for k, v in options.items() if v is not None})
    ok, why = adapter.available()
    if not ok:
        pytest.skip(f"backend {name} unavailable: {why}")
    yield name, adapter
    adapter.close()


@pytest.fixture(scope="session")
def expectations(conformance_options) -> Expectations:
    paths = conformance_options["expectations"]
    return Expectations.load_all(paths) if paths else Expectations()


@pytest.fixture(scope="session")
def record(conformance_options, expectations):
    path = conformance_options["results"]

    def write(rec):
        rec = expectations.apply_record(rec)
        if path is not None:
            append(path, [rec])
        return rec

    return write


def _selected(conformance_options, op_name: str) -> None:
    import re

    pattern = conformance_options["op"]
    if pattern and not re.search(pattern, op_name):
        pytest.skip(f"--op {pattern!r} does not select {op_name}")


def _drive(body, strategy, options: dict, unsatisfiable: str, generate_only: bool = False) -> None:
    """Run ``body`` over drawn cases under the run's seed (generation only: no replay, no shrinking);
    a strategy that can build no valid case skips the test with ``unsatisfiable``."""
    s = hypothesis_settings(options)
    if generate_only:
        s = hyp_settings(s, max_examples=max(20, s.max_examples))
    runner = hyp_settings(s, suppress_health_check=list(HealthCheck), deadline=None)(given(strategy)(body))
    if options["seed"] is not None:
        runner = hyp_seed(options["seed"])(runner)
    try:
        runner()
    except Unsatisfiable:
        pytest.skip(unsatisfiable)


def _replay_options(options: dict) -> str:
    opts = []
    if options.get("qnn_backend_lib"):
        opts.append(f"--qnn-backend-lib {options['qnn_backend_lib']}")
    if options.get("qnn_precision") not in (None, "auto"):
        opts.append(f"--qnn-precision {options['qnn_precision']}")
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
def test_op(op_name, config_label, tier, backend, conformance_options, record, request):
    _selected(conformance_options, op_name)
    name, adapter = backend
    op = SPECS[op_name]
    if config_label is None:
        why = generate.skip_reason(op) or "no datatype configuration"
        # a record, so the matrix (which reads results files only) still gives the spec's op its row and reason
        record(Record(op=op_name, config="", backend=name, verdict="", kind=CELL, test_id=request.node.nodeid,
                      run_id=conformance_options["run_id"], extra={"not_generated": why, "family": suite.family(op)}))
        pytest.skip(f"{op_name} is not generated: {why}")
    if conformance_options.get("tier", "both") not in ("both", tier):
        pytest.skip(f"--tier {conformance_options['tier']}")
    config = next(c for c in generate.configs(op) if c.label == config_label)
    settings = generate.Settings(infer=_infer, max_elements=conformance_options["max_elements"] or 4096, tier=tier)
    inner = generate.case_strategy(op, config, settings)
    tally = {"draws": 0, "duplicates": 0}

    @st.composite
    def counted(draw):
        tally["draws"] += 1  # every attempt; the ones that end in a refusal never reach the body
        return draw(inner)

    strategy = counted()
    seen: dict[str, Record] = {}
    last = {"t": time.perf_counter()}
    replay_options = _replay_options(conformance_options)

    def execute(case):
        return suite.execute(case, adapter, name, conformance_options["case_dir"], conformance_options["run_id"],
                             time.perf_counter() - last["t"], request.node.nodeid, replay_options)  # fmt: skip

    def run(case):
        cid = case.case_id()
        if cid in seen:  # another draw built the same case: it counts once
            tally["duplicates"] += 1
            return
        seen[cid] = record(execute(case))
        last["t"] = time.perf_counter()

    n = examples_for(conformance_options, tier)
    known = ((op.raw.get("generate") or {}).get("unsatisfiable") or {}).get(tier)
    unsatisfiable = f"the generator could not build a valid {tier} {op_name} case for {config_label} from the spec" + (
        f": {known}" if known else "")  # fmt: skip
    try:
        _drive(run, strategy, {**conformance_options, "examples": n, "edge_examples": n}, unsatisfiable)
    finally:
        refusals = tally["draws"] - len(seen) - tally["duplicates"]
        record(Record(op=op_name, config=config_label, backend=name, verdict="", kind=CELL, tier=tier,
                      test_id=request.node.nodeid, run_id=conformance_options["run_id"],
                      extra={"requested": n, "cases": len(seen), "duplicates": tally["duplicates"],
                             "refusals": max(0, refusals)}))  # fmt: skip
    recs = list(seen.values())
    bad = [r for r in recs if r.verdict in BAD]
    if bad and not conformance_options["no_shrink"]:
        target = bad[0].verdict
        smallest = _shrink(inner, target, execute, conformance_options)
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


@pytest.mark.conformance
@pytest.mark.parametrize("op_name, constraint_id", _negative_params())
def test_rejects(op_name, constraint_id, backend, conformance_options, record, request):
    _selected(conformance_options, op_name)
    name, adapter = backend
    op = SPECS[op_name]
    target = next(c for c in op.constraints if c.id == constraint_id)
    configs = generate.configs(op)
    if not configs:
        pytest.skip(f"{op_name} is not generated: {generate.skip_reason(op) or 'no datatype configuration'}")
    strategy = generate.case_strategy(op, configs[0], generate.Settings(infer=_infer))
    done: list = []

    def attempt(case):
        if done:
            return
        bad = negative.break_one(op, case, target)
        if bad is not None:
            done.append(record(suite.execute(bad, adapter, name, conformance_options["case_dir"],
                                             conformance_options["run_id"], 0.0, request.node.nodeid)))  # fmt: skip

    _drive(attempt, strategy, conformance_options, "the generator could not build a valid base case", True)
    if not done:
        pytest.skip(f"no mutation breaks {constraint_id} alone")
    rec = done[0]
    assert rec.verdict in ("REJECTED", "XFAIL", "SKIP"), f"{rec.verdict}: {rec.message} (replay: {rec.case_path})"
