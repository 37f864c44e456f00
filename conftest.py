"""pytest options and the results recorder for the conformance run (``cases/test_conformance.py``).

``pytest --backend NAME [--op REGEX] [--examples N] [--seed S] [--results FILE] [--no-shrink]
[--expectations FILE] [--qnn-backend-lib PATH] [--qnn-precision fp16|fp32|auto]`` from the repo root.
Under pytest-xdist every worker writes its own part file; the controller merges them at the end,
so each case is one record, none lost, none duplicated.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

REPO = Path(__file__).resolve().parent

settings.register_profile("dev", max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("ci", max_examples=10, deadline=None, suppress_health_check=list(HealthCheck),
                          derandomize=True, database=None)  # fmt: skip
settings.register_profile("thorough", max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("conformance", "QNN op conformance run")
    g.addoption("--backend", default=None, help="adapter to run the conformance cases on (reference, qnn-htp, qnn)")
    g.addoption("--op", default=None, help="regex: only ops whose name matches")
    g.addoption("--examples", type=int, default=None,
                help="typical-tier cases per op x datatype configuration (every one runs and is recorded)")
    g.addoption("--edge-examples", type=int, default=None,
                help="edge-tier cases per op x datatype configuration (default: a quarter of --examples, at least 1)")
    g.addoption("--tier", choices=["typical", "edge", "both"], default="both", help="which tiers to run")
    g.addoption("--seed", type=int, default=None, help="hypothesis seed: the same seed gives the same cases")
    g.addoption("--results", default=None, help="JSONL file for one results record per case")
    g.addoption("--no-shrink", action="store_true",
                help="skip the shrinking step that saves the smallest failing case of a failing cell")
    g.addoption("--expectations", action="append", default=[], help="known-failures YAML (XFAIL/XPASS)")
    g.addoption("--qnn-backend-lib", default=None, help="QNN backend library (default: the wheel's libQnnHtp.so)")
    g.addoption("--qnn-precision", default="auto", help="HTP graph precision: auto, float16 or float32")
    g.addoption("--case-dir", default=None, help="where non-PASS cases are saved for replay")
    g.addoption("--max-elements", type=int, default=None, help="cap on elements per generated tensor")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: a generated conformance case run on --backend")
    for opt in ("--examples", "--edge-examples"):
        value = config.getoption(opt)
        if value is not None and value < 1:
            raise pytest.UsageError(f"{opt} must be at least 1 (got {value})")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    results = config.getoption("--results")
    if results:
        results = Path(results).resolve()
        part = results.with_name(results.name + f".{worker}.part") if worker else results
        if not worker:
            results.parent.mkdir(parents=True, exist_ok=True)
            results.write_text("")
        config._conformance_results = part  # type: ignore[attr-defined]
    else:
        config._conformance_results = None  # type: ignore[attr-defined]
    run_id = os.environ.get("CONFORMANCE_RUN_ID") or uuid.uuid4().hex[:12]
    os.environ["CONFORMANCE_RUN_ID"] = run_id
    config._conformance_run_id = run_id  # type: ignore[attr-defined]
    case_dir = config.getoption("--case-dir") or (str(results.parent / "cases") if results else "runs/cases")
    config._conformance_case_dir = Path(case_dir)  # type: ignore[attr-defined]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``pytest --backend X`` with no paths runs the conformance cases only, not the suite's own tests."""
    pattern = config.getoption("--op")
    if pattern:  # deselect, not skip: a run over 3 ops should not print 1000 skips
        import re

        rx = re.compile(pattern)
        drop = [i for i in items if "test_conformance" in i.nodeid and "[" in i.nodeid
                and not rx.search(i.nodeid.split("[", 1)[1].split("-", 1)[0])]  # fmt: skip
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = [i for i in items if i not in set(drop)]
    explicit_paths = config.args_source == pytest.Config.ArgsSource.ARGS
    if not config.getoption("--backend") or explicit_paths:
        return
    keep = [i for i in items if "test_conformance" in i.nodeid]
    if keep:
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """On the controller (or a plain run): merge xdist part files into the results file."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    results = session.config._conformance_results  # type: ignore[attr-defined]
    if not results:
        return
    parts = sorted(results.parent.glob(results.name + ".gw*.part"))
    if parts:
        with open(results, "a", encoding="utf-8") as out:
            for p in parts:
                out.write(p.read_text(encoding="utf-8"))
                p.unlink()


@pytest.fixture(scope="session")
def conformance_options(pytestconfig: pytest.Config) -> dict:
    return {
        "backend": pytestconfig.getoption("--backend"),
        "op": pytestconfig.getoption("--op"),
        "examples": pytestconfig.getoption("--examples"),
        "seed": pytestconfig.getoption("--seed"),
        "no_shrink": pytestconfig.getoption("--no-shrink"),
        "edge_examples": pytestconfig.getoption("--edge-examples"),
        "tier": pytestconfig.getoption("--tier"),
        "expectations": pytestconfig.getoption("--expectations"),
        "qnn_backend_lib": pytestconfig.getoption("--qnn-backend-lib"),
        "qnn_precision": pytestconfig.getoption("--qnn-precision"),
        "results": pytestconfig._conformance_results,  # type: ignore[attr-defined]
        "run_id": pytestconfig._conformance_run_id,  # type: ignore[attr-defined]
        "case_dir": pytestconfig._conformance_case_dir,  # type: ignore[attr-defined]
        "max_elements": pytestconfig.getoption("--max-elements"),
        "started": time.time(),
    }


def examples_for(options: dict, tier: str) -> int:
    """Cases per cell and tier: ``--examples`` typical ones (the profile's max_examples by default) and
    ``--edge-examples`` edge ones (a quarter of that, at least 1)."""
    typical = options.get("examples") or settings.default.max_examples
    if tier == "typical":
        return typical
    return options.get("edge_examples") or max(1, -(-typical // 4))


def hypothesis_settings(options: dict, tier: str = "typical") -> settings:
    """Generation only: every drawn case runs and is recorded, so hypothesis' stop-at-first-failure,
    its replay of the failing example and its shrinking never decide what a cell counts."""
    return settings(settings.default, max_examples=examples_for(options, tier), phases=[Phase.generate],
                    database=None)  # fmt: skip
