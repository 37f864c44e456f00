"""Nothing lost, nothing mixed: a killed run keeps every finished case, a rerun never merges stale records,
``--resume`` finishes a killed run with the same results as an uninterrupted one, and a worker process
killed mid-case costs that case (CRASH) and nothing else."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from reports import record
from reports.__main__ import main as reports_main
from tests.conformance_runs import child_env, pytest_cmd, run
from tests.paths import REPO

OPS = "^(Relu|Softmax|ElementWiseAdd)$"
RUN = ("--backend", "reference", "--op", OPS, "--examples", "4", "--seed", "5", "--no-shrink")


def outcome(path: Path) -> list[tuple]:
    """What a run concluded, case by case and cell by cell (timings and run ids aside), sorted."""
    return sorted((r.kind, r.op, r.config, r.tier, r.broken or "", r.case_id, r.verdict,
                   r.extra.get("cases", -1)) for r in record.read([path]))  # fmt: skip


def headers(path: Path) -> list[record.RunHeader]:
    out: list[record.RunHeader] = []
    list(record.read_with_headers([path], out))
    return out


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("whole") / "r.jsonl"
    proc = run(*RUN, "--results", str(path))
    assert proc.returncode == 0, proc.stdout[-3000:]
    return path


def _kill_when(path: Path, at_least: int, *args: str) -> None:
    """Start a run in its own process group, SIGKILL its controller once ``path`` holds ``at_least``
    lines, then wait until every process of the group is gone (xdist workers finish their test)."""
    proc = subprocess.Popen(pytest_cmd(*args), cwd=REPO, env=child_env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and len(path.read_bytes().splitlines()) >= at_least:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed: kill earlier or run more cases"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        raise AssertionError("processes of the killed run were still alive after 300 s")
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_killed_run_keeps_every_finished_case_and_resume_completes_it(uninterrupted, tmp_path, workers):
    whole = outcome(uninterrupted)
    path = tmp_path / "r.jsonl"
    _kill_when(path, len(whole) // 3, *RUN, *workers, "--results", str(path))

    before = outcome(path)
    assert 0 < len(before) < len(whole), f"{len(before)} of {len(whole)} records at the kill: not mid-way"
    assert not set(before) - set(whole), f"records no uninterrupted run has: {sorted(set(before) - set(whole))[:3]}"
    assert len(set(before)) == len(before), "a case was recorded twice before the kill"
    assert not list(tmp_path.glob("*.part")), "records are left in part files the reports do not read"
    positives = sum(1 for r in record.read([path]) if r.kind == record.POSITIVE)
    matrix = tmp_path / "m.json"
    shown = subprocess.run([sys.executable, "-m", "reports", "matrix", str(path), "--format", "json",
                            "-o", str(matrix)], capture_output=True, text=True)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    totals = json.loads(matrix.read_text())["totals"]["reference"]
    counted = sum(totals["cases"].values()) + sum(totals["edge_cases"].values()) + sum(totals["model_cases"].values())
    assert counted == positives, f"the matrix counts {counted} cases, the file holds {positives} finished ones"

    resumed = run(*RUN, *workers, "--results", str(path), "--resume")
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    after = outcome(path)
    missing, extra = sorted(set(whole) - set(after))[:2], sorted(set(after) - set(whole))[:2]
    assert after == whole, f"resumed: {len(after)}, uninterrupted: {len(whole)}; missing {missing}, extra {extra}"
    runs = headers(path)
    assert [h.resumed for h in runs] == [False, True] and len({h.run_id for h in runs}) == 1, runs
    print(f"\n[{'-'.join(workers) or 'plain'}] records: uninterrupted {len(whole)}, at the kill {len(before)}, "
          f"after --resume {len(after)}")


def test_resume_after_a_torn_last_line_runs_that_case_again(uninterrupted, tmp_path):
    path = tmp_path / "r.jsonl"
    written = uninterrupted.read_text().splitlines()
    half = len(written) // 2
    path.write_text("\n".join(written[:half]) + "\n" + written[half][:50])  # killed while writing a record
    proc = run(*RUN, "--results", str(path), "--resume")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert outcome(path) == outcome(uninterrupted)


def test_a_rerun_starts_a_new_file_and_never_merges_leftover_worker_files(uninterrupted, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(uninterrupted.read_text().replace('"seed": 5', '"seed": 6'))
    stale = tmp_path / "r.jsonl.gw0.part"
    stale.write_text(uninterrupted.read_text())  # what an older version of the suite left behind
    proc = run(*RUN, "--results", str(path))
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert outcome(path) == outcome(uninterrupted), "the rerun's file holds records of an older run"
    assert len(headers(path)) == 1, "the rerun's file holds an older run's header"
    assert stale.read_text() == uninterrupted.read_text(), "a leftover part file was touched"


def test_resume_refuses_a_file_from_another_configuration(uninterrupted, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(uninterrupted.read_text())
    proc = run(*[a if a != "4" else "3" for a in RUN], "--results", str(path), "--resume")
    assert proc.returncode == 4, proc.stdout[-2000:]
    assert "examples: 4 vs 3" in proc.stderr, proc.stderr
    assert path.read_text() == uninterrupted.read_text(), "a refused resume changed the results file"


def test_the_header_names_run_and_configuration(uninterrupted):
    (h,) = headers(uninterrupted)
    c = h.configuration
    assert (h.backend, c["backend"], c["seed"], c["examples"], c["edge_examples"], c["tier"]) == \
        ("reference", "reference", 5, 4, 1, "all"), c
    assert c["build"], "the header does not say which build ran"
    assert all(r.run_id == h.run_id for r in record.read([uninterrupted])), "records of another run in the file"


# ---- reading and merging -----------------------------------------------------------------------------
def test_a_torn_last_line_is_reported_and_skipped(uninterrupted, tmp_path, capsys):
    path = tmp_path / "torn.jsonl"
    text = uninterrupted.read_text()
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    path.write_text(text.rstrip("\n")[: -len(last) // 2])  # the last record cut in the middle
    n_lines = len(path.read_text().splitlines())
    out = tmp_path / "m.json"
    assert reports_main(["matrix", str(path), "--format", "json", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{path}:{n_lines}: torn last line skipped" in err, err
    assert json.loads(out.read_text())["cells"], "no matrix from the good lines"


def test_a_malformed_line_before_the_last_is_skipped_and_named_by_its_line(uninterrupted, tmp_path):
    path = tmp_path / "bad.jsonl"
    good = uninterrupted.read_text().splitlines()
    path.write_text("\n".join([good[0], good[1][:40], *good[2:]]) + "\n")
    warnings: list[str] = []
    kept = list(record.read([path], warn=warnings.append))
    assert len(kept) == len(good) - 2, f"{len(kept)} records kept of {len(good) - 2} whole ones"
    assert [w.split(": ")[0] for w in warnings] == [f"{path}:2"], warnings


def test_reports_refuse_to_merge_one_backends_runs_of_different_configurations(uninterrupted, tmp_path, capsys):
    other = tmp_path / "other.jsonl"
    lines = uninterrupted.read_text().splitlines()
    header = json.loads(lines[0])
    header["configuration"]["seed"], header["run_id"] = 99, "another-run"
    other.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert reports_main(["summary", str(uninterrupted), str(other)]) == 2
    err = capsys.readouterr().err
    assert "seed: 5 vs 99" in err and str(other) in err and "--merge-configurations" in err, err
    assert reports_main(["summary", str(uninterrupted), str(other), "--merge-configurations"]) == 0


def test_runs_of_one_configuration_merge(uninterrupted, tmp_path):
    copy = tmp_path / "copy.jsonl"
    copy.write_text(uninterrupted.read_text())
    assert reports_main(["summary", str(uninterrupted), str(copy)]) == 0


def _append_many(path: str, writer: int, n: int) -> None:
    rec = record.Record(op="Relu", config="FLOAT_32", backend="b", verdict="PASS", case_id=f"{writer}",
                        message="x" * 6000)  # fmt: skip
    for i in range(n):
        rec.seed = i
        record.append(path, [rec])


def test_concurrent_writers_leave_only_whole_lines(tmp_path):
    import multiprocessing

    path = tmp_path / "r.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(path), w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    recs = list(record.read([path]))
    assert Counter(r.case_id for r in recs) == {str(w): 150 for w in range(4)}


# ---- a worker killed mid-case ------------------------------------------------------------------------
@pytest.mark.qnn
@pytest.mark.parametrize("factory", ["killing_qnn_htp", "killing_ort_qnn"])
def test_a_worker_killed_mid_case_is_one_crash_and_the_run_goes_on(tmp_path, factory):
    inner = {"killing_qnn_htp": "qnn-htp", "killing_ort_qnn": "ort-qnn"}[factory]
    import adapters

    probe = adapters.get(inner, {})
    ok, why = probe.available()
    probe.close()
    if not ok:
        pytest.skip(f"{inner} not available here: {why}")
    path = tmp_path / "r.jsonl"
    proc = run("--backend", f"tests.fake_backends:{factory}", "--op", "^Relu$", "--examples", "3", "--tier",
               "typical", "--no-shrink", "--seed", "1", "--results", str(path), KILL_AT_CASE="2")  # fmt: skip
    recs = [r for r in record.read([path]) if r.kind == record.POSITIVE]
    cells = [r for r in record.read([path]) if r.kind == record.CELL]
    crashes = [r for r in recs if r.verdict == "CRASH"]
    assert len(crashes) == 1, f"{len(crashes)} CRASH records: {Counter(r.verdict for r in recs)}\n{proc.stdout[-2000:]}"
    assert "SIGKILL" in crashes[0].message and crashes[0].case_id, crashes[0].message
    assert len(recs) == sum(c.extra["cases"] for c in cells) == 3 * len(cells), "the run stopped after the crash"
    assert Counter(r.verdict for r in recs)["PASS"] == len(recs) - 1, Counter(r.verdict for r in recs)
    assert proc.returncode == 1 and proc.stdout.count("FAILED") == 1, proc.stdout[-2000:]
