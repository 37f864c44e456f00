"""Lint refuses every broken spec with file:line: field: message, no traceback, nothing executed."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import opdefs
from opdefs import spec
from tests.paths import DATA, REPO

BROKEN = sorted((DATA / "broken_specs").glob("*.yaml"))
PWNED = Path("/tmp/qnn-conformance-pwned")


def _expectation(path: Path) -> tuple[int, str]:
    m = re.search(r"^# expect: line (\d+): (.*)$", path.read_text(), flags=re.M)
    assert m, f"{path.name} lacks its '# expect: line N: text' comment"
    return int(m.group(1)), m.group(2).strip()


def test_the_broken_corpus_is_there():
    assert len(BROKEN) >= 10


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_spec_is_rejected_at_the_right_line_with_a_clear_message(path):
    line, text = _expectation(path)
    problems = spec.lint([path])
    assert problems, f"{path.name} passed lint"
    where = [(p.line, p.message, p.field) for p in problems]
    assert any(p.line == line and (text in p.message or text in f"{p.field}: {p.message}") for p in problems), (
        f"{path.name}: expected line {line} with {text!r}, got {where}"
    )


def test_lint_command_prints_file_line_field_and_exits_nonzero_without_traceback():
    PWNED.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "opdefs", "lint", *map(str, BROKEN)], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    for path in BROKEN:
        assert re.search(rf"^{re.escape(str(path))}:\d+: \S+: ", proc.stdout, flags=re.M), f"no line for {path.name}"
    assert not PWNED.exists(), "an expression from a spec was executed"


def test_lint_passes_on_the_checked_in_specs():
    proc = subprocess.run([sys.executable, "-m", "opdefs", "lint"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-2000:]
    n_specs = len(list((REPO / "opdefs").glob("*.yaml")))
    assert f"{n_specs} spec(s) checked, 0 with problems" in proc.stderr


def test_coverage_reports_at_least_85_percent_checkable():
    proc = subprocess.run([sys.executable, "-m", "opdefs", "coverage"], capture_output=True, text=True, cwd=REPO)
    m = re.search(r"constraints: (\d+)\s+checkable: (\d+)", proc.stdout)
    assert m, proc.stdout
    total, checkable = map(int, m.groups())
    in_specs = sum(len(op.constraints) for op in opdefs.load_all().values())
    assert total == in_specs and checkable / total >= 0.85, proc.stdout
