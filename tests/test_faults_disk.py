"""Writes that survive a full disk: a record is written whole or not at all, a run that cannot write stops
with one line and keeps every finished case, and a torn record anywhere in a results file costs that line
only (the reports skip it and name it, ``--resume`` runs its case again)."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys

import pytest

from reports import record
from tests.conformance_runs import child_env, pytest_cmd, run
from tests.fault_runs import PATIENCE, outcome
from tests.paths import REPO

RUN = ("--backend", "reference", "--op", "^(Relu|Softmax)$", "--examples", "3", "--seed", "5", "--no-shrink")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    path = tmp_path_factory.mktemp("whole") / "r.jsonl"
    proc = run(*RUN, "--results", str(path), timeout=PATIENCE)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return path


def test_a_record_the_disk_cannot_take_is_not_written_at_all(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    first = record.Record(op="Relu", config="FLOAT_32", backend="b", verdict="PASS", case_id="1")
    record.append(path, [first])
    before = path.read_bytes()
    real_write = os.write

    def half_then_full(fd: int, data) -> int:
        if len(data) > 20:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(record.os, "write", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        record.append(path, [record.Record(op="Relu", config="FLOAT_32", backend="b", verdict="FAIL", case_id="2",
                                           message="x" * 500)])  # fmt: skip
    monkeypatch.undo()
    assert path.read_bytes() == before, "half a record was left in the file"


def _limited(limit: int):
    def preexec() -> None:  # the child's files may not grow past ``limit`` bytes: writes past it fail (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def test_a_full_disk_stops_the_run_with_one_line_and_resume_finishes_it(uninterrupted, tmp_path):
    path = tmp_path / "r.jsonl"
    limit = uninterrupted.stat().st_size // 2
    proc = subprocess.run(pytest_cmd(*RUN, "--results", str(path)), cwd=REPO, capture_output=True, text=True,
                          timeout=PATIENCE, preexec_fn=_limited(limit),
                          env=child_env(QNN_CONFORMANCE_CACHE="off"))  # fmt: skip
    said = proc.stdout + proc.stderr
    stops = [ln for ln in said.splitlines() if "the run stops here" in ln]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED and stops, f"exit {proc.returncode}\n{said[-3000:]}"
    assert "File too large" in stops[0] and "--resume" in stops[0], stops[0]
    assert "Traceback" not in said and "INTERNALERROR" not in said, said[-3000:]
    warnings: list[str] = []
    kept = list(record.read([path], warn=warnings.append))
    assert kept and not warnings, f"the stopped run left bad lines: {warnings[:3]}"
    resumed = run(*RUN, "--results", str(path), "--resume", timeout=PATIENCE)
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    assert outcome(path) == outcome(uninterrupted)


def _torn_in_the_middle(good: list[str], at: int) -> list[str]:
    """What a full disk that later had space again leaves: record ``at`` cut short, the next glued to it."""
    return [*good[:at], good[at][: len(good[at]) // 2] + good[at + 1], *good[at + 2:]]


def test_resume_over_a_torn_record_in_mid_file_runs_its_cases_again(uninterrupted, tmp_path):
    path = tmp_path / "r.jsonl"
    good = uninterrupted.read_text().splitlines()
    path.write_text("\n".join(_torn_in_the_middle(good, len(good) // 3)) + "\n")
    proc = run(*RUN, "--results", str(path), "--resume", timeout=PATIENCE)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert outcome(path) == outcome(uninterrupted)


def test_the_reports_skip_a_torn_record_in_mid_file_and_name_its_line(uninterrupted, tmp_path):
    path = tmp_path / "r.jsonl"
    good = uninterrupted.read_text().splitlines()
    at = len(good) // 3
    path.write_text("\n".join(_torn_in_the_middle(good, at)) + "\n")
    for command in (["summary"], ["matrix", "--format", "json", "-o", str(tmp_path / "m.json")]):
        proc = subprocess.run([sys.executable, "-m", "reports", command[0], str(path), *command[1:]],
                              capture_output=True, text=True, cwd=REPO, env=child_env())  # fmt: skip
        assert proc.returncode == 0, f"{command[0]}: exit {proc.returncode}: {proc.stderr[-1000:]}"
        assert f"{path}:{at + 1}: torn line skipped" in proc.stderr, proc.stderr
