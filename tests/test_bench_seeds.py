"""The seeds check: typical failures no finding explains, at any of several seeds, and cells whose colour moves."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from bench import seeds  # noqa: E402


def _run(tmp_path: Path, backend: str, op: str) -> tuple[int, dict]:
    rc = seeds.main(["--backend", backend, "--seeds", "0,1", "--examples", "3", "--op", op, "--jobs", "1",
                     "--out", str(tmp_path)])  # fmt: skip
    return rc, json.loads((tmp_path / "seeds.json").read_text())


def test_seeds_are_read_as_ranges_and_lists_each_once():
    assert seeds.parse_seeds("0-2,1,7") == [0, 1, 2, 7]


def test_a_seed_that_is_not_a_number_is_a_usage_error():
    with pytest.raises(Exception, match="seeds are numbers"):
        seeds.parse_seeds("zero")


def test_a_cell_red_at_one_seed_and_green_at_another_is_reported_as_changing():
    red, green = seeds.SeedCell({"FAIL": 1, "PASS": 2}), seeds.SeedCell({"PASS": 3})
    summary = seeds.summarise({0: {("Add", "FLOAT_32"): green}, 1: {("Add", "FLOAT_32"): red}})
    assert summary["changing"] == [{"op": "Add", "config": "FLOAT_32", "colours": {"0": "green", "1": "red"}}]


def test_a_cell_refused_at_one_seed_does_not_count_as_changing():
    summary = seeds.summarise({0: {("Add", "INT_32"): seeds.SeedCell({"REJECTED": 3})},
                               1: {("Add", "INT_32"): seeds.SeedCell({"PASS": 3})}})  # fmt: skip
    assert summary["changing"] == [], summary


def test_the_reference_has_no_unexplained_typical_failure_at_two_seeds(tmp_path):
    rc, report = _run(tmp_path, "reference", "^(Relu|Softmax)$")
    assert (rc, report["unexplained"]) == (0, []), report["unexplained"]
    assert report["headline"].startswith("seeds 0-1: 0 unexplained"), report["headline"]


def test_a_planted_bug_is_an_unexplained_failure_with_its_seed_and_replay(tmp_path):
    rc, report = _run(tmp_path, "bench.mutants:reference.softmax_beta_ignored", "^Softmax$")
    assert rc == 1, report["headline"]
    assert {u["op"] for u in report["unexplained"]} == {"Softmax"}, report["unexplained"]
    assert {u["seed"] for u in report["unexplained"]} <= {0, 1} and all(u["replay"] for u in report["unexplained"])


def test_the_edge_tier_is_judged_at_its_own_count_of_cases(tmp_path):
    rc = seeds.main(["--backend", "reference", "--seeds", "0", "--tier", "edge", "--examples", "2", "--op", "^Relu$",
                     "--jobs", "1", "--out", str(tmp_path)])  # fmt: skip
    report = json.loads((tmp_path / "seeds.json").read_text())
    assert (rc, report["tier"]) == (0, "edge") and report["headline"].startswith("seeds 0: 0 unexplained edge")


def test_a_target_and_a_release_become_the_backends_variant():
    args = seeds.argparse.Namespace(backend="qnn-htp", target="v73", release="2.47")
    assert seeds.run_backend(args) == "qnn-htp@2.47+v73"
