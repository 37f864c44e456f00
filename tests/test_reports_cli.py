"""``python -m reports``: commands, output files, and one clear line for a bad input file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reports.__main__ import main

DATA = Path(__file__).parent / "data" / "reports"
RESULTS = DATA / "results.jsonl"
REPO = Path(__file__).resolve().parents[1]


def test_matrix_markdown_to_a_file_equals_the_checked_in_rendering(tmp_path: Path) -> None:
    out = tmp_path / "m.md"
    assert main(["matrix", str(RESULTS), "--format", "md", "-o", str(out)]) == 0
    assert out.read_text() == (DATA / "results.md").read_text()


@pytest.mark.parametrize("fmt", ["html", "csv", "json"])
def test_matrix_writes_every_format(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"m.{fmt}"
    assert main(["matrix", str(RESULTS), "--format", fmt, "-o", str(out)]) == 0
    assert "ElementWiseAdd" in out.read_text()


def test_matrix_applies_expectations_and_warns_about_unused_entries(tmp_path: Path, capsys) -> None:
    out = tmp_path / "m.json"
    code = main(["matrix", str(RESULTS), "--format", "json", "-o", str(out),
                 "--expectations", str(DATA / "expectations.yaml")])
    assert code == 0
    doc = json.loads(out.read_text())
    cell = next(c for c in doc["cells"] if c["op"] == "ElementWiseAdd" and c["config"] == "UFIXED_POINT_8"
                and c["backend"] == "qnn-htp")
    assert cell["counts"] == {"XFAIL": 2, "XPASS": 1}, "FAIL and XFAIL are expected failures, the PASS is an XPASS"
    assert "Softmax" in capsys.readouterr().err, "the stale Softmax entry should be warned about"


def test_a_malformed_results_line_is_skipped_with_one_line_naming_file_and_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    good = RESULTS.read_text().splitlines()
    bad.write_text(good[0] + "\n{not json\n" + good[1] + "\n")  # not the last line: a full disk, an edit
    assert main(["summary", str(bad)]) == 0, "one bad line cost the whole file"
    out = capsys.readouterr()
    err = out.err.strip()
    assert f"{bad}:2:" in err and len(err.splitlines()) == 1, f"one line naming {bad}:2 expected, got: {err}"
    assert "reference" in out.out, "no summary from the good lines"


def test_a_record_with_an_unknown_verdict_names_file_and_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"op": "A", "config": "FLOAT_32", "backend": "b", "verdict": "MAYBE"}\n')
    assert main(["matrix", str(bad)]) == 2
    assert f"{bad}:1:" in capsys.readouterr().err


def test_a_missing_results_file_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["summary", str(tmp_path / "absent.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert "absent.jsonl" in err and len(err.splitlines()) == 1


def test_summary_prints_the_totals_per_backend(capsys) -> None:
    assert main(["summary", str(RESULTS)]) == 0
    out = capsys.readouterr().out
    assert "qnn-htp" in out and "reference" in out and "ops ok" in out


def test_diff_can_fail_the_job_on_regressions(capsys) -> None:
    old, new = str(DATA / "diff_old.jsonl"), str(DATA / "diff_new.jsonl")
    assert main(["diff", old, new]) == 0
    assert main(["diff", old, new, "--fail-on-regression"]) == 1
    assert main(["diff", old, old, "--fail-on-regression"]) == 0
    assert "## Regressions" in capsys.readouterr().out


def test_catalogues_command_reads_specs_and_seeds(capsys) -> None:
    assert main(["catalogues", str(RESULTS), "--specs", str(DATA / "opdefs"), "--seeds", str(DATA / "seeds")]) == 0
    assert "| Hexagon NN" in capsys.readouterr().out


def test_the_module_runs_as_a_program() -> None:
    result = subprocess.run([sys.executable, "-m", "reports", "summary", str(RESULTS)], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "qnn-htp" in result.stdout
