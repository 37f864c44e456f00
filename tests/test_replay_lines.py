"""Every recorded replay line works when pasted: it carries what the run used (--specs, op packages, target,
timeout), and `python -m conformance replay` takes all of it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO
from tests.test_add_an_op import SPEC


def _run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "QNN_CONFORMANCE_"))}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_replay_line_of_a_run_with_specs_works_when_pasted(tmp_path):
    specs = tmp_path / "my-specs"
    specs.mkdir()
    (specs / "MyScale.yaml").write_text(SPEC, encoding="utf-8")  # no reference: no case passes, every one is saved
    results = tmp_path / "r.jsonl"
    run = _run("-m", "pytest", "--backend", "reference", "--op", "^MyScale$", "--specs", str(specs),
               "--examples", "1", "--tier", "typical", "--seed", "1", "--results", str(results), "-q",
               "-p", "no:cacheprovider")  # fmt: skip
    assert run.returncode in (0, 1), run.stdout[-2000:] + run.stderr[-2000:]
    lines = [json.loads(x) for x in results.read_text().splitlines()]
    recorded = next((r for r in lines if r.get("replay")), None)
    assert recorded, f"no replay line recorded: {[r.get('verdict') for r in lines]}"
    assert f"--specs {specs.resolve()}" in recorded["replay"], recorded["replay"]
    words = shlex.split(recorded["replay"])
    assert words[:4] == ["python", "-m", "conformance", "replay"], words
    pasted = _run(*words[1:])
    assert f"verdict: {recorded['verdict']}" in pasted.stdout, pasted.stdout + pasted.stderr


def test_op_without_backend_is_a_usage_error():
    got = _run("-m", "pytest", "--op", "^Relu$", "tests/test_replay_lines.py", "-q", "-p", "no:cacheprovider")
    assert got.returncode == 4 and "give --backend NAME" in got.stdout + got.stderr, got.stdout + got.stderr
