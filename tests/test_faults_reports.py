"""Reports that defend themselves: a record of the wrong shape or a line nested 100k deep is skipped and named
by its line (never a traceback, never the whole file refused), and a case one run recorded twice with
different verdicts is an error the reports name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports import record
from reports.__main__ import main as reports_main

COMMANDS = {
    "summary": lambda path, out: ["summary", str(path)],
    "matrix": lambda path, out: ["matrix", str(path), "--format", "html", "-o", str(out / "m.html")],
    "diff": lambda path, out: ["diff", str(path), str(path)],
}


def _results(path: Path, *extra: str) -> int:
    """A small results file of one run: a header, three cases and their cell record, then ``extra`` lines.
    Returns the line number of the first extra line."""
    header = record.RunHeader("run1", "b", {"seed": 1}, "now", [])
    recs = [record.Record(op="Relu", config="FLOAT_32", backend="b", verdict="PASS", run_id="run1", case_id=f"c{k}",
                          tier="typical", metrics={"max_abs_err": 0.0}) for k in range(3)]  # fmt: skip
    cell = record.Record(op="Relu", config="FLOAT_32", backend="b", verdict="", kind="cell", tier="typical",
                         run_id="run1", extra={"requested": 3, "cases": 3, "duplicates": 0, "refusals": 0})  # fmt: skip
    lines = [header.to_json(), *(r.to_json() for r in recs), cell.to_json()]
    path.write_text("\n".join([*lines, *extra]) + "\n")
    return len(lines) + 1


def _wrong(**fields) -> str:
    d = json.loads(record.Record(op="Relu", config="FLOAT_32", backend="b", verdict="FAIL", run_id="run1",
                                 case_id="odd", tier="typical").to_json())  # fmt: skip
    d.update(fields)
    return json.dumps(d)


BAD_LINES = {
    "metrics oops": _wrong(metrics="oops"),
    "timings a list": _wrong(timings=[1, 2]),
    "seed text": _wrong(seed="five"),
    "cell counts text": json.dumps({"kind": "cell", "op": "Relu", "config": "FLOAT_32", "backend": "b", "verdict": "",
                                    "tier": "typical", "run_id": "run1", "cases": "many"}),  # fmt: skip
    "100k deep": "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("bad", sorted(BAD_LINES))
def test_a_line_that_is_no_record_is_skipped_and_named(tmp_path, capsys, command, bad):
    path = tmp_path / "r.jsonl"
    line = _results(path, BAD_LINES[bad])
    status = reports_main(COMMANDS[command](path, tmp_path))
    err = capsys.readouterr().err
    assert status == 0, f"exit {status}: {err[-1000:]}"
    assert f"{path}:{line}:" in err and "Traceback" not in err, err[-1000:]


def test_a_case_recorded_twice_with_different_verdicts_is_an_error_naming_both_lines(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    line = _results(path)
    twice = json.loads(path.read_text().splitlines()[1])
    twice.update(verdict="TIMEOUT")
    with open(path, "a") as fh:
        fh.write(json.dumps(twice) + "\n")
    status = reports_main(["summary", str(path)])
    err = capsys.readouterr().err
    assert status == 2, f"exit {status}: a conflict went unnoticed\n{err}"
    assert f"{path}:{line}: conflict: case c0" in err and f"PASS at {path}:2" in err, err


def test_a_case_recorded_twice_with_the_same_verdict_counts_once(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    _results(path)
    with open(path, "a") as fh:
        fh.write(path.read_text().splitlines()[1] + "\n")
    assert len(list(record.read([path], warn=lambda m: None))) == 4, "a repeated record counted twice"


def test_a_file_with_no_record_at_all_is_still_an_error(tmp_path, capsys):
    path = tmp_path / "notes.txt"
    path.write_text("these are\nnot records\n")
    assert reports_main(["summary", str(path)]) == 2
    assert "not a results file" in capsys.readouterr().err
