"""``--shard K/N``: N machines each run a deterministic slice of the cells, and the reports merge their
results files into the matrix one run would give."""

from __future__ import annotations

import pytest

from conformance.plugin import parse_shard, shard_of
from reports import matrix, record
from tests.conformance_runs import run

OPS = "^(Relu|Softmax|Transpose)$"


def test_every_cell_lands_in_exactly_one_shard_with_both_its_tiers():
    ids = [f"conformance/test_conformance.py::test_op[Op{i}-FLOAT_32-{t}]"
           for i in range(200) for t in ("typical", "edge")]
    for n in (1, 2, 3, 7):
        shards = [shard_of(i, n) for i in ids]
        assert all(1 <= s <= n for s in shards)
        for typical, edge in zip(shards[0::2], shards[1::2], strict=True):
            assert typical == edge, "a cell's tiers were split between machines"
    assert len({shard_of(i, 4) for i in ids}) == 4, "200 cells should reach every one of 4 shards"


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0"])
def test_a_malformed_shard_is_a_usage_error(text):
    with pytest.raises(pytest.UsageError, match="--shard"):
        parse_shard(text)


def test_two_shards_merge_into_the_matrix_of_one_run(tmp_path):
    common = ("--backend", "reference", "--op", OPS, "--examples", "2", "--seed", "3", "--no-shrink", "-k", "test_op")
    whole, a, b = tmp_path / "whole.jsonl", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, extra in ((whole, ()), (a, ("--shard", "1/2")), (b, ("--shard", "2/2"))):
        proc = run(*common, *extra, "--results", str(path), "--case-dir", str(tmp_path / "cases"))
        assert proc.returncode == 0, proc.stdout[-2000:]

    def cases(paths):
        return sorted((r.op, r.config, r.tier, r.case_id, r.verdict)
                      for r in record.read(paths) if r.kind == "positive")  # fmt: skip

    assert cases([a]) and cases([b]), "each shard should run some cells"
    assert not set(cases([a])) & set(cases([b])), "a case ran on both shards"
    assert cases([a, b]) == cases([whole]), "the shards together differ from the unsharded run"
    merged, one = matrix.build(record.read([a, b])), matrix.build(record.read([whole]))
    assert {k: c.text() for k, c in merged.cells.items()} == {k: c.text() for k, c in one.cells.items()}


def test_a_bad_shard_stops_the_run_at_the_door():
    proc = run("--backend", "reference", "--op", OPS, "--shard", "5/2")
    assert proc.returncode == 4 and "--shard" in (proc.stdout + proc.stderr), proc.stdout[-1000:]
