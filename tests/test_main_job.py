"""The main job (``python -m conformance``): bad options stop it before any case runs, progress is counted
from the run's own files, the console shows progress and one line per problem (no tracebacks), and
the exit status says whether every requested backend ran."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance import main_job, progress

REPO = Path(main_job.__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--examples", "0"], "--examples 0: must be a whole number of at least 1"),
        (["--edge-examples", "-1"], "--edge-examples -1: must be a whole number of at least 1"),
        (["--op", "Soft(max"], "not a valid regular expression"),
        (["--op", "^NoSuchOp$"], "matches none of the"),
        (["--backends", "bogus"], "unknown backend 'bogus'; choose from"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_4_before_anything_runs(argv, says, tmp_path: Path, capsys) -> None:
    out, runs = tmp_path / "out", tmp_path / "runs"
    rc = main_job.main([*argv, "--out", str(out), "--runs", str(runs)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == main_job.EXIT_USAGE, f"exit {rc}"
    assert len(err) == 1 and says in err[0], f"stderr: {err}"
    assert not runs.exists(), "nothing may run or be written before the options are known to be good"


def test_an_unknown_backend_lists_the_valid_choices(tmp_path: Path, capsys) -> None:
    import adapters

    main_job.main(["--backends", "bogus", "--runs", str(tmp_path)])
    err = capsys.readouterr().err
    assert all(name in err for name in adapters.names()), f"choices missing from: {err}"


def write_lines(path: Path, records: list[dict]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)


def test_progress_reads_the_results_file_only_not_a_leftover_worker_part_file(tmp_path: Path) -> None:
    run = progress.BackendRun("qnn-htp", tmp_path, examples=2, edge_examples=None)
    write_lines(tmp_path / "qnn-htp.jsonl.gw0.part", [{"kind": "positive", "verdict": "FAIL"}])  # an old suite's
    write_lines(run.results, [{"kind": "positive", "verdict": "PASS"}, {"kind": "negative", "verdict": "REJECTED"},
                              {"kind": "cell", "verdict": ""}])  # fmt: skip
    run.poll()
    assert (run.cases, run.tally, run.negative_ok) == (2, {"PASS": 1}, 1)


def test_progress_waits_for_a_line_still_being_written(tmp_path: Path) -> None:
    run = progress.BackendRun("reference", tmp_path, examples=2, edge_examples=None)
    path = tmp_path / "reference.jsonl"
    path.write_text('{"kind": "positive", "verdict": "PASS"}\n{"kind": "posi')
    run.poll()
    assert run.cases == 1
    with open(path, "a") as fh:
        fh.write('tive", "verdict": "PASS"}\n')
    run.poll()
    assert run.cases == 2, "the completed line is counted on the next poll"


def test_planned_cases_come_from_the_collected_tests_and_the_examples(tmp_path: Path) -> None:
    run = progress.BackendRun("reference", tmp_path, examples=8, edge_examples=None)
    ids = ["m.py::test_op[A-FLOAT_32-typical]", "m.py::test_op[A-FLOAT_32-edge]", "m.py::test_rejects[A-x]",
           "m.py::test_op[B-not-generated]"]  # fmt: skip
    write_lines(run.events, [{"collected": ids}])
    run.poll()
    assert (run.total_tests, run.planned_cases) == (4, 8 + 2 + 1), "edge examples default to a quarter, at least 1"


TEST_MODULE = '''
import pytest

def test_passes():
    pass

def test_fails():
    assert 1 == 2, "one is not two"

def test_skips():
    pytest.skip("not here")
'''


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_the_pytest_plugin_reports_collection_starts_and_outcomes(workers: list[str], tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(textwrap.dedent(TEST_MODULE))
    events = tmp_path / "events.jsonl"
    code = ("import sys; from conformance import progress; "
            "raise SystemExit(progress.pytest_with_events(sys.argv[1], sys.argv[2:]))")
    subprocess.run([sys.executable, "-c", code, str(events), "-q", "-p", "no:cacheprovider", *workers,
                    str(tmp_path / "test_sample.py")], cwd=REPO, capture_output=True, timeout=120,
                   env=main_job._child_env())  # fmt: skip
    lines = [json.loads(x) for x in events.read_text().splitlines()]
    collected = [e["collected"] for e in lines if "collected" in e]
    done = {e["done"].rsplit("::", 1)[1]: e for e in lines if "done" in e}
    assert len(collected) == 1 and len(collected[0]) == 3, f"one collection of 3 tests: {collected}"
    assert {k: v["outcome"] for k, v in done.items()} == {"test_passes": "passed", "test_fails": "failed",
                                                           "test_skips": "skipped"}  # fmt: skip
    assert "one is not two" in done["test_fails"]["summary"] or "assert" in done["test_fails"]["summary"]
    assert not done["test_fails"]["summary"].startswith("[gw"), "xdist's worker header is not the summary"


def test_exit_status_is_1_when_a_requested_backend_did_not_run_to_the_end(tmp_path: Path, monkeypatch) -> None:
    def broken_runs(args, backends, runs, console):
        run = progress.BackendRun(backends[0], runs, 1, None)
        run.rc = 3  # pytest internal error
        return [run]

    monkeypatch.setattr(main_job, "_run_backends", broken_runs)
    rc = main_job.main(["--backends", "reference", "--op", "^ElementWiseAdd$", "--out", str(tmp_path / "o"),
                     "--runs", str(tmp_path / "r")])  # fmt: skip
    assert rc == main_job.EXIT_NOT_ALL_RAN


def test_the_main_job_shows_progress_and_problems_not_tracebacks(tmp_path: Path) -> None:
    out, runs = tmp_path / "out", tmp_path / "runs"
    cmd = [sys.executable, "-m", "conformance", "--backends", "reference", "--examples", "1", "--workers", "0",
           "--op", "^(ElementWiseAdd|If)$", "--out", str(out), "--runs", str(runs)]  # fmt: skip
    result = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    console = result.stdout + result.stderr
    assert result.returncode == main_job.EXIT_OK, f"exit {result.returncode}:\n{console[-2000:]}"
    assert "Traceback" not in console and "=====" not in console, f"pytest output leaked:\n{console[-2000:]}"
    log = (runs / "reference.log").read_text()
    assert "passed" in log, "the full pytest output goes to the backend's log"
    wide = [line for line in result.stdout.splitlines() if len(line) > main_job.SUMMARY_WIDTH]
    assert not wide, f"summary lines past {main_job.SUMMARY_WIDTH} columns: {wide}"
    md = (out / "matrix.md").read_text()
    assert "|If " in md and "- If: " in md, "the not-generated op has its row and reason in the matrix"
    assert (out / "chart.png").read_bytes()[:4] == b"\x89PNG" and (out / "matrix.html").exists()


# ---- releases and targets as columns -------------------------------------------------------------
def test_qnn_sdks_and_targets_make_one_qnn_htp_column_per_release_and_target() -> None:
    got = main_job._with_variants(["qnn-htp", "reference"], "2.47,ort-qnn==2.7.0", "default,v73")
    assert got == ["qnn-htp@2.47+default", "qnn-htp@2.47+v73", "qnn-htp@2.51+default", "qnn-htp@2.51+v73",
                   "reference"]  # fmt: skip


def test_targets_alone_vary_the_installed_release() -> None:
    assert main_job._with_variants(["reference"], None, "v75") == ["reference", "qnn-htp@v75"]


@pytest.mark.parametrize(("argv", "says"), [
    (["--qnn-sdks", "2.45"], "--qnn-sdks 2.45: no known onnxruntime-qnn release carries QNN 2.45"),
    (["--targets", "v99"], "--targets: unknown target 'v99'"),
])  # fmt: skip
def test_an_unknown_release_or_target_is_one_line_and_exit_4(argv, says, tmp_path: Path, capsys) -> None:
    rc = main_job.main([*argv, "--backends", "reference", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == main_job.EXIT_USAGE and len(err) == 1 and says in err[0], (rc, err)


@pytest.mark.slow
@pytest.mark.qnn
def test_targets_run_the_same_cases_on_each_and_the_job_writes_what_changed(tmp_path: Path) -> None:
    from tests.simulator import MISSING

    if MISSING:
        pytest.skip(f"QNN HTP simulator not available: {MISSING}")
    out, runs = tmp_path / "out", tmp_path / "runs"
    cmd = [sys.executable, "-m", "conformance", "--backends", "qnn-htp", "--targets", "default,v73", "--examples", "2",
           "--op", "^Gelu$", "--out", str(out), "--runs", str(runs), "-q"]  # fmt: skip
    result = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == main_job.EXIT_OK, (result.stdout + result.stderr)[-2000:]
    records = {name: [json.loads(x) for x in (runs / f"qnn-htp@{name}.jsonl").read_text().splitlines()]
               for name in ("default", "v73")}  # fmt: skip
    cases = {name: {r["case_id"] for r in recs if r.get("kind") == "positive"} for name, recs in records.items()}
    assert cases["default"] and cases["default"] == cases["v73"], "both targets ran the same drawn cases"
    assert {r["backend_info"]["soc"] for r in records["v73"] if r.get("kind") == "positive"} == {43}
    matrix = json.loads((out / "matrix.json").read_text())
    assert {"qnn-htp@default", "qnn-htp@v73"} <= set(json.dumps(matrix).split('"')), "a column group per target"
    diff = (out / "diff-default-v73.md").read_text()
    gelu = [line for line in diff.splitlines() if "Gelu" in line or "ERROR→" in line]
    # FLOAT_32 Gelu has no kernel at finalize on the default target and runs on v73 (where its float32 is relaxed
    # to fp16 accuracy, so a case may then PASS or FAIL): the diff says what the ERRORs became
    assert any("ERROR→" in line for line in gelu), f"the default target's finalize ERRORs are not in:\n{diff}"


def test_the_backends_runs_use_one_blas_thread_unless_the_user_chose(monkeypatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert main_job._child_env().get("OPENBLAS_NUM_THREADS") == "1", "idle OpenBLAS threads spin beside the workers"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    assert main_job._child_env()["OPENBLAS_NUM_THREADS"] == "4", "the user's own setting was overridden"


def test_a_conformance_run_gives_its_xdist_workers_one_blas_thread_unless_the_user_chose(monkeypatch) -> None:
    import os

    from conformance import plugin

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    plugin._one_blas_thread()
    assert os.environ.get("OPENBLAS_NUM_THREADS") == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    plugin._one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3", "the user's own setting was overridden"


def _options(monkeypatch, argv: list[str]):
    import types

    import adapters

    monkeypatch.setattr(adapters, "get", lambda name, *a, **k: types.SimpleNamespace(available=lambda: (True, "")))
    args, _plan = main_job._main_options(argv)
    return args


def test_the_sweep_runs_the_deployed_tiers_typical_and_model_unless_told(monkeypatch, tmp_path: Path) -> None:
    args = _options(monkeypatch, ["--sweep"])
    command = main_job._pytest_command(args, "qnn-htp@v73", progress.BackendRun("qnn-htp@v73", tmp_path, 1, None),
                                       tmp_path)  # fmt: skip
    assert "--tier=deployed" in command, command
    assert _options(monkeypatch, ["--sweep", "--tier", "all"]).tier == "all", "the user's --tier was overridden"


def test_the_main_job_runs_every_tier_unless_told(monkeypatch, tmp_path: Path) -> None:
    args = _options(monkeypatch, [])
    command = main_job._pytest_command(args, "qnn-htp", progress.BackendRun("qnn-htp", tmp_path, 1, None), tmp_path)
    assert not any(c.startswith("--tier") for c in command), command
    args = _options(monkeypatch, ["--tier", "typical"])
    command = main_job._pytest_command(args, "qnn-htp", progress.BackendRun("qnn-htp", tmp_path, 1, None), tmp_path)
    assert "--tier=typical" in command, command
