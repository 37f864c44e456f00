"""Under pytest-xdist, the results file holds exactly one record per executed case."""

import json
import os
import subprocess
import sys

import opdefs
from cases import generate
from tests.paths import REPO

OPS = ("Relu", "Transpose", "Softmax", "ElementWiseAdd")


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
    cells = [r for r in lines if r["kind"] == "cell"]
    # one bookkeeping record per op x configuration x tier, and its count of cases is what was recorded
    tiers = {op: len(generate.TIERS) + bool(opdefs.load(op).model_layers) for op in OPS}  # the model tier: its layers
    expected_cells = sum(len(generate.configs(opdefs.load(op))) * tiers[op] for op in OPS)
    assert len(cells) == expected_cells, f"{len(cells)} cell records for {expected_cells} cells"
    assert sum(c["cases"] for c in cells) == len(positives), "cell bookkeeping disagrees with the case records"
    assert all(c["cases"] == c["requested"] for c in cells if c["tier"] == "typical"), "a typical cell ran short"
    keys = [(r["test_id"], r["case_id"]) for r in positives]
    assert len(set(keys)) == len(keys), "a case was recorded twice in one cell"
