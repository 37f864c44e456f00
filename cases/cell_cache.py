"""Drawn cells kept on disk, so backends run one after another (the main job) draw each cell once.

Why: on a fixed seed every backend of a run draws exactly the same cases (that is what pairs them by
``case_id`` in ``reports agree``), and drawing is a large part of the harness's time per case. The
first backend to reach a cell stores its cases; the next ones read them back.

Never stale: the key hashes everything a draw depends on - the op's spec file, the configuration,
tier, seed, case count and element cap, the hypothesis version, and the source of every module that
takes part in generation (``cases``, ``opdefs``, ``reference``: shapes are inferred by the reference)
and the configuration presets specs name (``opdefs/presets``).
Change any of them and the key changes. Entries are the Case's own saved form (JSON + npz): no
pickle, nothing in the cache is executed. A cell is one JSON file (``Case.to_json`` per case) and
one npz (every case's arrays under ``<k>/<name>``), written to temporary names and renamed into
place, the JSON last, so a killed run leaves no half cell behind.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cases.case import Case, _to_savable

_ROOT = Path(__file__).resolve().parents[1]
_SOURCES = ("cases", "opdefs", "reference")


@functools.cache
def _code_fingerprint() -> str:
    import hypothesis

    h = hashlib.sha256(f"hypothesis {hypothesis.__version__}".encode())
    for package in _SOURCES:
        for path in sorted((_ROOT / package).rglob("*.py")):
            h.update(str(path.relative_to(_ROOT)).encode())
            h.update(path.read_bytes())
    for path in sorted((_ROOT / "opdefs" / "presets").glob("*.yaml")):  # configurations specs name (generate)
        h.update(str(path.relative_to(_ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


@dataclass
class Cell:
    """A drawn cell: its distinct cases in draw order and the draw's bookkeeping."""

    cases: list[Case]
    draws: int
    duplicates: int
    satisfiable: bool


class CellCache:
    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    def key(self, spec_path: Path | None, config: str, tier: str, seed: int, n: int, max_elements: int) -> str:
        spec = hashlib.sha256(spec_path.read_bytes()).hexdigest() if spec_path is not None else "no-spec"
        text = json.dumps([_code_fingerprint(), spec, config, tier, seed, n, max_elements])
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def _paths(self, op: str, key: str) -> tuple[Path, Path]:
        base = self.root / op / key
        return base.with_suffix(".json"), base.with_suffix(".npz")

    def get(self, op: str, key: str, may_be_empty: bool = False) -> Cell | None:
        """The stored cell, or None: never stored, or not a cell this key could have drawn. Why an entry that
        fails to read is deleted: it would fail the same way on every later run (a truncated npz, a JSON
        edited by hand, ``"cases": []``), so it is drawn again and stored afresh instead. ``may_be_empty``: a
        satisfiable entry with no case is a result (a negative test whose mutations never break its constraint
        alone), not damage."""
        meta_path, arrays_path = self._paths(op, key)
        if not meta_path.is_file():
            return None
        try:
            meta = json.loads(meta_path.read_text())
            counts = [meta["draws"], meta["duplicates"]]
            if not (isinstance(meta["cases"], list) and all(isinstance(n, int) and n >= 0 for n in counts)
                    and isinstance(meta["satisfiable"], bool)):  # fmt: skip
                raise ValueError("not a stored cell")
            if meta["satisfiable"] and not meta["cases"] and not may_be_empty:
                raise ValueError("a satisfiable cell with no case")
            with np.load(arrays_path, allow_pickle=False) as z:
                stored = {name: z[name] for name in z.files}
            cases = []
            for k, case_meta in enumerate(meta["cases"]):
                prefix = f"{k}/"
                arrays = {name[len(prefix):]: a for name, a in stored.items() if name.startswith(prefix)}
                cases.append(Case.from_saved(case_meta, arrays))
        except Exception:  # noqa: BLE001 - whatever is wrong with it, it goes and the cell is drawn again
            for path in (meta_path, arrays_path):
                try:
                    path.unlink(missing_ok=True)
                except OSError:  # a read-only cache: drawn again every time, still never wrong
                    pass
            return None
        return Cell(cases, int(meta["draws"]), int(meta["duplicates"]), bool(meta["satisfiable"]))

    def put(self, op: str, key: str, cell: Cell) -> None:
        meta_path, arrays_path = self._paths(op, key)
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {f"{k}/{name}": _to_savable(a)
                  for k, case in enumerate(cell.cases) for name, a in case.arrays().items()}  # fmt: skip
        meta: dict[str, Any] = {"cases": [c.to_json() for c in cell.cases], "draws": cell.draws,
                                "duplicates": cell.duplicates, "satisfiable": cell.satisfiable}  # fmt: skip
        for path, write in ((arrays_path, lambda f: np.savez(f, **arrays)),
                            (meta_path, lambda f: f.write(json.dumps(meta).encode()))):  # fmt: skip
            fd, tmp = tempfile.mkstemp(prefix=f".{key}-", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    write(f)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
