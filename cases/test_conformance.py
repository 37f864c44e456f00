"""The conformance run: every op x datatype configuration on ``--backend``, plus negative cases.

``test_op[Conv2d-UFIXED_POINT_8]`` draws cases with hypothesis (shrinking on unless --no-shrink) and
runs each through ``suite.execute``: one results record per executed case. ``test_rejects[
Softmax-axis_value]`` builds a case that breaks exactly that constraint; the backend should refuse
it at validation. Without ``--backend`` this module is skipped (the suite's own tests run instead).
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given
from hypothesis import seed as hyp_seed
from hypothesis import settings as hyp_settings
from hypothesis.errors import Unsatisfiable

import adapters
import opdefs
import reference
import suite
from cases import generate, negative
from conftest import hypothesis_settings
from reference.expected import expected
from reports.expectations import Expectations
from reports.record import append

BAD = {"FAIL", "ERROR", "CRASH", "TIMEOUT", "XPASS"}
SPECS = opdefs.load_all()


def _infer(op, case):
    return expected(case, with_out_shapes=False) if reference.has(op.name) else None


def _positive_params() -> list:
    out = []
    for name, op in sorted(SPECS.items()):
        cfgs = generate.configs(op)
        for cfg in cfgs:
            out.append(pytest.param(name, cfg.label, id=f"{name}-{cfg.label}"))
        if not cfgs:  # reported as not generated (skipped with the spec's reason), never as failing
            out.append(pytest.param(name, None, id=f"{name}-not-generated"))
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
    """Run ``body`` over drawn cases under the run's hypothesis settings and seed; a strategy that can
    build no valid case skips the test with ``unsatisfiable`` (no case ran: neither pass nor fail)."""
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


@pytest.mark.conformance
@pytest.mark.parametrize("op_name, config_label", _positive_params())
def test_op(op_name, config_label, backend, conformance_options, record, request):
    _selected(conformance_options, op_name)
    name, adapter = backend
    op = SPECS[op_name]
    if config_label is None:
        pytest.skip(f"{op_name} is not generated: {generate.skip_reason(op) or 'no datatype configuration'}")
    config = next(c for c in generate.configs(op) if c.label == config_label)
    settings = generate.Settings(infer=_infer, max_elements=conformance_options["max_elements"] or 4096)
    strategy = generate.case_strategy(op, config, settings)
    verdicts: list[str] = []
    last = {"t": time.perf_counter()}

    def run(case):
        gen_seconds = time.perf_counter() - last["t"]
        rec = record(suite.execute(case, adapter, name, conformance_options["case_dir"], conformance_options["run_id"],
                                   gen_seconds, request.node.nodeid))  # fmt: skip
        verdicts.append(rec.verdict)
        last["t"] = time.perf_counter()
        assert rec.verdict not in BAD, f"{rec.verdict}: {case.describe()}: {rec.message} (replay: {rec.case_path})"

    _drive(run, strategy, conformance_options,
           f"the generator could not build a valid {op_name} case for {config_label} from the spec")  # fmt: skip
    if verdicts and all(v in ("REJECTED", "SKIP") for v in verdicts):
        pytest.skip(f"{name}: {verdicts[0]} for every case ({len(verdicts)})")


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
