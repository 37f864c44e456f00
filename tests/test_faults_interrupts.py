"""Nothing lost, nothing hung, nothing mixed when a run is interrupted, killed or shares its results file:
Ctrl-C or an exception mid-cell, SIGTERM, SIGKILL of the controller (plain and xdist), SIGKILL of an
xdist worker, a second run on the same file. Each run stops at a known point (``tests/fault_backends``),
never at a moment raced for."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.conformance_runs import lines, run
from tests.fault_runs import PATIENCE, Started, alive, gone_within, outcome, wait_for_pid
from tests.simulator import NEEDS_SIMULATOR

OPS = "^(Relu|Softmax)$"
PAUSING = ("--backend", "tests.fault_backends:pausing", "--op", OPS, "--examples", "3", "--seed", "5", "--no-shrink")
XDIST = ["-n", "2"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> list[tuple]:
    path = tmp_path_factory.mktemp("whole") / "r.jsonl"
    proc = run(*PAUSING, "--results", str(path), timeout=PATIENCE)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return outcome(path)


def _missing(whole: list[tuple], got: list[tuple]) -> str:
    lost, extra = sorted(set(whole) - set(got)), sorted(set(got) - set(whole))
    return (f"{len(got)} records, {len(whole)} uninterrupted; lost {len(lost)} {lost[:2]}, "
            f"extra {len(extra)} {extra[:2]}")


@pytest.mark.parametrize("workers", [[], XDIST], ids=["plain", "xdist"])
def test_ctrl_c_mid_cell_ends_non_zero_and_resume_loses_no_case(uninterrupted, tmp_path, workers):
    path, cue = tmp_path / "r.jsonl", tmp_path / "paused"
    started = Started(tmp_path, *PAUSING, *workers, "--results", str(path), PAUSE_AT="2", PAUSE_FILE=str(cue))
    wait_for_pid(cue, started)
    started.signal(signal.SIGINT, group=True)  # a terminal's Ctrl-C reaches every process of the run
    rc, out = started.finish()
    resumed = run(*PAUSING, *workers, "--results", str(path), "--resume", timeout=PATIENCE)
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    assert outcome(path) == uninterrupted, _missing(uninterrupted, outcome(path))
    assert rc == pytest.ExitCode.INTERRUPTED, f"an interrupted run ended with exit {rc}:\n{out[-2000:]}"
    assert "still to run" in out and "--resume" in out, f"the run did not say what remains:\n{out[-2000:]}"


@pytest.mark.parametrize("simulator", [pytest.param("qnn-htp", marks=NEEDS_SIMULATOR)])
def test_ctrl_c_mid_cell_on_the_simulator_then_resume_loses_no_case(tmp_path, simulator):
    args = ("--backend", "tests.fault_backends:pausing_qnn_htp", "--op", "^Relu$", "--examples", "2", "--seed", "5",
            "--tier", "typical", "--no-shrink")  # fmt: skip
    whole, path, cue = tmp_path / "whole.jsonl", tmp_path / "r.jsonl", tmp_path / "paused"
    assert run(*args, "--results", str(whole), timeout=PATIENCE).returncode in (0, 1)
    started = Started(tmp_path, *args, "--results", str(path), PAUSE_AT="3", PAUSE_FILE=str(cue))
    wait_for_pid(cue, started)
    started.signal(signal.SIGINT, group=True)
    rc, out = started.finish()
    assert rc == pytest.ExitCode.INTERRUPTED, f"exit {rc}\n{out[-2000:]}"
    assert run(*args, "--results", str(path), "--resume", timeout=PATIENCE).returncode in (0, 1)

    def cases(p):  # which cases were recorded: a simulator's verdicts may differ from run to run under load
        return sorted({o[:6] for o in outcome(p) if o[0] == "positive"})

    assert cases(path) == cases(whole), _missing(cases(whole), cases(path))


def test_an_exception_mid_cell_leaves_the_cell_for_resume_to_finish(uninterrupted, tmp_path):
    path = tmp_path / "r.jsonl"
    args = ("--backend", "tests.fault_backends:raising", *PAUSING[2:], "--results", str(path))
    first = run(*args, timeout=PATIENCE, RAISE_AT="2", RAISE_FILE=str(tmp_path / "raised"))
    assert first.returncode == 1 and "fault injected" in first.stdout, first.stdout[-3000:]
    resumed = run(*args, "--resume", timeout=PATIENCE)
    assert resumed.returncode == 0, f"the failed cell still fails after --resume:\n{resumed.stdout[-3000:]}"
    assert outcome(path) == uninterrupted, _missing(uninterrupted, outcome(path))


def test_sigterm_tears_the_run_down_as_ctrl_c_does(tmp_path):
    cue = tmp_path / "hung"
    started = Started(tmp_path, "--backend", "tests.fault_backends:hanging_worker", "--op", "^Relu$", "--examples", "2",
                      "--no-shrink", "--results", str(tmp_path / "r.jsonl"), PAUSE_FILE=str(cue))  # fmt: skip
    worker = wait_for_pid(cue, started)
    try:
        started.signal(signal.SIGTERM)
        rc, out = started.finish(60)
        assert gone_within(worker, 10), f"the run's worker process {worker} outlived it"
    finally:
        started.kill_all()
    assert rc == pytest.ExitCode.INTERRUPTED, f"exit {rc}: no teardown\n{out[-2000:]}"
    assert "still to run" in out, out[-2000:]


def test_sigkill_of_the_controller_takes_its_worker_process_along(tmp_path):
    cue = tmp_path / "hung"
    started = Started(tmp_path, "--backend", "tests.fault_backends:hanging_worker", "--op", "^Relu$", "--examples", "2",
                      "--no-shrink", PAUSE_FILE=str(cue))  # fmt: skip
    worker = wait_for_pid(cue, started)
    try:
        started.signal(signal.SIGKILL)
        started.finish(30)
        assert gone_within(worker, 10), f"worker process {worker} hangs on, an orphan, after its run was killed"
    finally:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)  # the process this test's run started: the test cleans up after it
        started.kill_all()


def test_sigkill_of_the_xdist_controller_stops_its_workers_appending(tmp_path):
    path, cue = tmp_path / "r.jsonl", tmp_path / "paused"
    started = Started(tmp_path, *PAUSING, *XDIST, "--results", str(path), PAUSE_AT="2", PAUSE_FILE=str(cue))
    worker = wait_for_pid(cue, started)
    try:
        started.signal(signal.SIGKILL)
        started.finish(30)
        at_kill = path.read_bytes()
        assert gone_within(worker, 10), f"xdist worker {worker} outlived its controller and may go on writing"
        assert path.read_bytes() == at_kill, "records were appended after the controller died"
    finally:
        started.kill_all()


def test_an_xdist_worker_killed_mid_cell_leaves_a_crash_record_and_resume_completes_the_cell(uninterrupted, tmp_path):
    path, cue = tmp_path / "r.jsonl", tmp_path / "paused"
    started = Started(tmp_path, *PAUSING, *XDIST, "--results", str(path), PAUSE_AT="2", PAUSE_FILE=str(cue))
    os.kill(wait_for_pid(cue, started), signal.SIGKILL)  # the xdist worker running the paused cell
    rc, out = started.finish()
    assert rc == 1, f"exit {rc}\n{out[-2000:]}"
    matrix = tmp_path / "m.json"

    def crashed_cells() -> list[str]:
        shown = subprocess.run([sys.executable, "-m", "reports", "matrix", str(path), "--format", "json", "-o",
                                str(matrix)], capture_output=True, text=True)  # fmt: skip
        assert shown.returncode == 0, shown.stderr
        return [f"{c['op']} {c['config']}" for c in json.loads(matrix.read_text())["cells"]
                if '"CRASH"' in json.dumps(c)]  # its status, or its edge tier's counts

    assert len(crashed_cells()) == 1, f"the matrix does not show the cell the worker died in: {crashed_cells()}"
    resumed = run(*PAUSING, *XDIST, "--results", str(path), "--resume", timeout=PATIENCE)
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    assert outcome(path) == uninterrupted, _missing(uninterrupted, outcome(path))
    assert crashed_cells() == [], "the cell completed by --resume still shows the worker's death"


def test_a_second_run_on_the_same_results_file_stops_at_the_door(tmp_path):
    path, cue = tmp_path / "r.jsonl", tmp_path / "paused"
    first = Started(tmp_path, *PAUSING, "--results", str(path), PAUSE_AT="2", PAUSE_FILE=str(cue))
    try:
        wait_for_pid(cue, first)
        before = path.read_bytes()
        other = run(*[a if a != "5" else "6" for a in PAUSING], "--results", str(path), timeout=PATIENCE)
        resumed = run(*PAUSING, "--results", str(path), "--resume", timeout=PATIENCE)
        after = path.read_bytes()
    finally:
        first.kill_all()
    for proc in (other, resumed):
        said = lines(proc.stdout + proc.stderr)
        assert proc.returncode == 4 and len(said) == 1, f"exit {proc.returncode}:\n" + "\n".join(said[-20:])
        assert "is being written by run" in said[0], said[0]
    assert after == before, "the results file of the running run was changed by the refused ones"


@pytest.mark.parametrize("sig", [pytest.param(s, marks=NEEDS_SIMULATOR) for s in ("SIGKILL", "SIGTERM")])
def test_the_qnn_htp_worker_dies_with_its_run(tmp_path, sig):
    cue = tmp_path / "hung"
    started = Started(tmp_path, "--backend", "tests.fault_backends:hanging_qnn_htp", "--op", "^Relu$", "--examples",
                      "2", "--tier", "typical", "--no-shrink", PAUSE_FILE=str(cue))  # fmt: skip
    worker = wait_for_pid(cue, started)
    try:
        started.signal(getattr(signal, sig))
        started.finish(60)
        assert gone_within(worker, 15), f"the QNN worker {worker} outlived its run ({sig})"
    finally:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)
        started.kill_all()
