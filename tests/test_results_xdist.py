"""Under pytest-xdist, the results file holds exactly one record per executed case."""

import json
import os
import subprocess
import sys

from tests.paths import REPO


def test_two_workers_write_one_record_per_case_and_merge(tmp_path):
    results = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-n", "2", "--backend", "reference",
           "--examples", "3", "--seed", "1", "--no-shrink", "--op", "^(Relu|Transpose|Softmax|ElementWiseAdd)$",
           "--results", str(results), "--case-dir", str(tmp_path / "cases")]  # fmt: skip
    # when this test itself runs under xdist, the inner run must not think it is a worker
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:]
    lines = [json.loads(x) for x in results.read_text().splitlines() if x.strip()]
    assert not list(tmp_path.glob("r.jsonl.*.part")), "worker part files were left behind"
    positives = [r for r in lines if r["kind"] == "positive"]
    # 4 ops x 5 configurations x 3 examples, every one recorded once
    assert len(positives) == 4 * 5 * 3, f"{len(positives)} positive records"
    keys = [(r["test_id"], r["seed"], json.dumps(r["dtypes"], sort_keys=True), r["metrics"].get("max_abs_err"))
            for r in positives]  # fmt: skip
    assert len(set(keys)) == len(keys), "a case was recorded twice"
