"""The drawn-cell cache: what the next backend reads back is what it would have drawn itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case, Encoding, Param, Tensor  # noqa: E402
from cases.cell_cache import Cell, CellCache  # noqa: E402
from tests import conformance_runs  # noqa: E402


def _case(k: int) -> Case:
    x = np.arange(6, dtype=np.uint8).reshape(2, 3) + k
    return Case("Transpose", [Tensor("in[0]", "UFIXED_POINT_8", (2, 3), x, Encoding((0.5,), (-3,)))],
                {"perm": Param("perm", "UINT_32", np.array([1, 0], np.uint32)), "alpha": Param("a", "FLOAT_32", 0.1)},
                [Tensor("out[0]", "UFIXED_POINT_8", (3, 2), encoding=Encoding((0.5,), (-3,)))],
                config="UFIXED_POINT_8", seed=k, tier="typical")  # fmt: skip


def test_a_stored_cell_reads_back_with_the_same_cases_in_the_same_order(tmp_path):
    cache = CellCache(tmp_path)
    cell = Cell([_case(k) for k in range(3)], draws=5, duplicates=1, satisfiable=True)
    cache.put("Transpose", "k", cell)
    got = cache.get("Transpose", "k")
    assert got is not None
    assert [c.case_id() for c in got.cases] == [c.case_id() for c in cell.cases]
    assert [c.to_json() for c in got.cases] == [c.to_json() for c in cell.cases]
    assert (got.draws, got.duplicates, got.satisfiable) == (5, 1, True)


def test_a_cell_never_stored_is_a_miss(tmp_path):
    assert CellCache(tmp_path).get("Transpose", "nothing") is None


def test_an_index_naming_an_object_dtype_is_a_miss_never_an_object_array(tmp_path):
    cache = CellCache(tmp_path)
    cache.put("Transpose", "k", Cell([_case(0)], 1, 0, True))
    meta = next(tmp_path.rglob("*.json"))
    doc = json.loads(meta.read_text())
    doc["arrays"][0][0][1] = "|O"
    meta.write_text(json.dumps(doc))
    assert cache.get("Transpose", "k") is None


def test_read_back_arrays_are_writable_as_drawn_ones_are(tmp_path):
    cache = CellCache(tmp_path)
    cache.put("Transpose", "k", Cell([_case(0), _case(1)], 2, 0, True))
    got = cache.get("Transpose", "k")
    assert got is not None
    x = got.cases[1].inputs[0].data
    assert x.flags.writeable, "a case read back must behave as a drawn one: its arrays are its own"
    np.testing.assert_array_equal(x, _case(1).inputs[0].data)


def test_a_satisfiable_entry_with_no_case_is_a_result_only_where_the_caller_says_so(tmp_path):
    cache = CellCache(tmp_path)
    cache.put("Transpose", "negative", Cell([], 0, 0, True))
    assert cache.get("Transpose", "negative", may_be_empty=True) is not None
    assert cache.get("Transpose", "negative") is None, "an empty drawn cell is damage, and is deleted"


def test_the_key_changes_with_the_spec_text_seed_count_and_tier(tmp_path):
    spec = tmp_path / "Op.yaml"
    spec.write_text("name: Op\n")
    cache = CellCache(tmp_path)
    base = cache.key(spec, "FLOAT_32", "typical", 0, 20, 4096)
    variants = [cache.key(spec, "FLOAT_32", "typical", 1, 20, 4096), cache.key(spec, "FLOAT_32", "edge", 0, 20, 4096),
                cache.key(spec, "FLOAT_32", "typical", 0, 5, 4096), cache.key(spec, "FLOAT_16", "typical", 0, 20, 4096)]
    spec.write_text("name: Op\nsummary: edited\n")
    variants.append(cache.key(spec, "FLOAT_32", "typical", 0, 20, 4096))
    assert base not in variants and len(set(variants)) == len(variants)


def _records(path: Path) -> dict:
    out = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r.get("kind") in ("positive", "cell"):
            out[(r["kind"], r["op"], r["config"], r.get("tier"), r.get("case_id"))] = (
                r["verdict"], r.get("metrics"), r["message"], (r.get("extra") or {}).get("refusals"))
    return out


def test_a_run_reading_the_cache_records_what_a_run_drawing_itself_records(tmp_path):
    runs = []
    for k in range(2):  # the first run fills the cache, the second reads it
        results = tmp_path / f"r{k}.jsonl"
        proc = conformance_runs.run("--backend", "reference", "--op", "^Transpose$", "--examples", "4", "--seed", "5",
                                    "--no-shrink", f"--results={results}", f"--case-cache={tmp_path / 'cache'}")
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        runs.append(_records(results))
    fresh = tmp_path / "fresh.jsonl"
    proc = conformance_runs.run("--backend", "reference", "--op", "^Transpose$", "--examples", "4", "--seed", "5",
                                "--no-shrink", f"--results={fresh}")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert any(k[0] == "positive" for k in runs[0]), "the run recorded no case"
    assert runs[0] == runs[1] == _records(fresh)
