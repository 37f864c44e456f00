"""``qnn-conformance``: each subcommand reaches the module that does the job; ``python -m conformance`` is the
same main job."""

from __future__ import annotations

import subprocess
import sys

import opdefs
from cases import generate
from conformance import cli
from tests.paths import REPO

DATA = REPO / "tests" / "data" / "reports" / "results.jsonl"


def test_configs_lists_every_configuration_of_the_op(capsys):
    assert cli.main(["configs", "Softmax"]) == 0
    out = capsys.readouterr().out
    labels = [c.label for c in generate.configs(opdefs.load("Softmax"))]
    assert f"{len(labels)} configuration(s)" in out and all(label in out for label in labels), out


def test_report_is_python_m_reports(capsys):
    assert cli.main(["report", "summary", str(DATA)]) == 0
    assert "ops ok" in capsys.readouterr().out  # the summary table's header


def test_opdefs_is_python_m_opdefs(tmp_path, capsys):
    assert cli.main(["opdefs", "new", "MyOp", "--dir", str(tmp_path)]) == 0
    assert (tmp_path / "MyOp.yaml").exists()


def test_an_unknown_command_is_one_line_and_exit_4(capsys):
    assert cli.main(["frobnicate"]) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and all(c in err for c in cli.COMMANDS), err


def test_an_unknown_benchmark_is_refused_with_the_choices(capsys):
    assert cli.main(["bench", "nope"]) == 4
    err = capsys.readouterr().err
    assert all(name in err for name in ("speed", "mutants", "drawn", "qnn-worker")), err


def test_run_is_the_main_job_as_python_m_conformance_is():
    for cmd in ([sys.executable, "-m", "conformance.cli", "run", "--help"],
                [sys.executable, "-m", "conformance", "--help"]):
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "--backends" in proc.stdout, (cmd, proc.stdout[-1000:], proc.stderr[-1000:])
