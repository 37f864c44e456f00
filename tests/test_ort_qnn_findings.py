"""findings/ort-qnn.yaml: the EP route's findings carry the evidence qnn-htp's do, and each repro shows its
finding when run alone.

A finding on this route is only worth filing upstream if the ONNX model beside it, run with onnxruntime and
the QNN EP outside the suite, still shows the symptom the finding names: a session or run that fails with
its message, outputs outside the budget, or a process that dies. Those checks need the onnxruntime-qnn
wheel and skip without it; the evidence checks do not.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.onnx import lower
from cases.case import Case
from reports import findings
from reports.expectations import CLASSES, Entry
from tests.paths import SEED

REPO = Path(__file__).resolve().parents[1]
FILE = REPO / "findings" / "ort-qnn.yaml"
REPROS = REPO / "findings" / "cases" / "ort-qnn"
RUNNER = REPROS / "repro.py"
ENTRIES = findings.load([FILE]).entries
IDS = [e.id for e in ENTRIES]


def repro(entry: Entry) -> Path:
    return REPROS / f"{entry.id}.onnx"


def test_every_finding_has_its_evidence() -> None:
    problems = findings.problems(findings.load([FILE]))
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_a_finding_has_a_class_and_names_more_than_its_cell(entry: Entry) -> None:
    assert entry.klass in CLASSES, f"{entry.id}: class {entry.klass!r}"
    narrowing = [name for name in ("stage", "message", "params") if getattr(entry, name) is not None]
    assert narrowing, f"{entry.id}: selects by op, config and tier alone; name the stage, message or params"


@pytest.mark.skipif(not SEED.is_file(), reason=f"the MasterOpDef seed is not at {SEED}")
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_a_finding_quotes_the_masteropdef_at_the_lines_it_names(entry: Entry) -> None:
    """Compared as every finding's quote is (reports.findings.quote_problem: markdown's escapes and emphasis
    dropped), so a finding that is ``same_as`` a qnn-htp one passes with that one's quote."""
    assert entry.spec is not None, f"{entry.id}: no spec: {{lines, quote}}"
    lines = ["", *SEED.read_text(encoding="utf-8").splitlines()]
    assert findings.quote_problem(entry, lines) is None, f"{entry.id}: {findings.quote_problem(entry, lines)}"


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_a_findings_repro_is_the_model_its_case_lowers_to(entry: Entry) -> None:
    model = repro(entry)
    assert model.is_file() and model.with_suffix(".npz").is_file(), f"{entry.id}: no {model.name} and its .npz"
    case = Case.load(REPO / entry.info["case"])
    again = f"python -m conformance onnx {entry.info['case']} {model.with_suffix('').relative_to(REPO)}"
    assert lower(case).model == model.read_bytes(), f"{entry.id}: {model.name} is not what its case lowers to ({again})"


def _needs_the_ep() -> str:
    try:
        import onnxruntime_qnn  # noqa: F401
    except ImportError as e:
        return f"onnxruntime-qnn is not importable: {e}"
    return ""


@pytest.mark.qnn
@pytest.mark.skipif(bool(_needs_the_ep()), reason=_needs_the_ep() or "the QNN EP is here")
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_a_findings_repro_shows_its_symptom_run_alone(entry: Entry) -> None:
    done = subprocess.run([sys.executable, str(RUNNER), str(repro(entry)), "--json"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    if "CRASH" in entry.verdicts:
        assert done.returncode < 0, f"{entry.id}: the repro did not die (exit {done.returncode}): {done.stdout[-300:]}"
        return
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{entry.id}: no result from the runner (exit {done.returncode}): {done.stderr[-500:]}"
    result = json.loads(lines[-1])
    assert result["reproduces"], f"{entry.id}: does not reproduce alone: {result['why']}"
    if "FAIL" in entry.verdicts:
        assert result["step"] == "ok", f"{entry.id}: expected wrong numbers, got a failing {result['step']}"
        return
    want = {"finalize": "session", "execute": "run"}[entry.stage[0].text]
    assert result["step"] == want, f"{entry.id}: failed at {result['step']}, the finding says {entry.stage[0].text}"
    pattern = entry.message[0].text
    assert re.search(pattern[3:], result["error"]) if pattern.startswith("re:") else pattern == result["error"], \
        f"{entry.id}: {result['error'][:300]!r} does not match {pattern!r}"
