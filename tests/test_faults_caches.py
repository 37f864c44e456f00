"""Caches that defend themselves: a drawn-cell cache entry that is corrupt, empty or of the wrong shape is
discarded and drawn again (never a failing or an empty passing cell, on every later run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cases.cell_cache import Cell, CellCache
from reports import record
from tests.conformance_runs import run
from tests.fault_runs import PATIENCE
from tests.test_cell_cache import _case


def _stored(tmp_path: Path) -> tuple[CellCache, Path, Path]:
    cache = CellCache(tmp_path)
    cache.put("Transpose", "k", Cell([_case(0), _case(1)], 2, 0, True))
    return cache, next(tmp_path.rglob("*.json")), next(tmp_path.rglob("*.bin"))


def _cut_short(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _meta(**changes):
    def change(path: Path) -> None:
        meta = json.loads(path.read_text())
        meta.update(changes)
        path.write_text(json.dumps(meta))

    return change


CORRUPTIONS = {
    "buffer cut short": ("buffer", _cut_short),
    "buffer empty": ("buffer", lambda p: p.write_bytes(b"")),
    "json empty": ("json", lambda p: p.write_text("")),
    "no cases": ("json", _meta(cases=[])),
    "draws text": ("json", _meta(draws="many")),
    "cases not a list": ("json", _meta(cases={"0": "x"})),
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_a_corrupt_cache_entry_is_a_miss_and_is_removed(tmp_path, corruption):
    cache, meta, arrays = _stored(tmp_path)
    which, corrupt = CORRUPTIONS[corruption]
    corrupt(meta if which == "json" else arrays)
    assert cache.get("Transpose", "k") is None, f"{corruption}: the entry was taken for a cell"
    assert not meta.exists() and not arrays.exists(), f"{corruption}: the entry stays to fail the next run too"


def test_a_run_over_a_corrupt_cache_entry_draws_the_cell_again_and_passes(tmp_path):
    args = ("--backend", "reference", "--op", "^Relu$", "--examples", "2", "--seed", "5", "--tier", "typical",
            "--no-shrink", "-k", "FLOAT_32", f"--case-cache={tmp_path / 'cache'}")  # fmt: skip
    first = run(*args, "--results", str(tmp_path / "a.jsonl"), timeout=PATIENCE)
    assert first.returncode == 0, first.stdout[-2000:]
    (arrays,) = (tmp_path / "cache").rglob("*.bin")
    _cut_short(arrays)
    second = run(*args, "--results", str(tmp_path / "b.jsonl"), timeout=PATIENCE)
    assert second.returncode == 0, f"a corrupt cache entry failed the cell:\n{second.stdout[-2000:]}"
    cases = [r for r in record.read([tmp_path / "b.jsonl"]) if r.kind == record.POSITIVE]
    assert len(cases) == 2 and all(r.verdict == "PASS" for r in cases), [r.verdict for r in cases]
    assert len(list((tmp_path / "cache").rglob("*.bin"))) == 1, "the redrawn cell was not stored again"
