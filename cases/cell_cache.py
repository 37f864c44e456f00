"""Drawn cells kept on disk, so backends run one after another (the main job) draw each cell once.

Why: on a fixed seed every backend of a run draws exactly the same cases (that is what pairs them by
``case_id`` in ``reports agree``), and drawing is a large part of the harness's time per case. The
first backend to reach a cell stores its cases; the next ones read them back.

Never stale: the key hashes everything a draw depends on - the op's spec file, the configuration,
tier, seed, case count and element cap, the hypothesis version, and the source of every module that
takes part in generation (``cases``, ``opdefs``, ``reference``: shapes are inferred by the reference)
and the configuration presets specs name (``opdefs/presets``).
Change any of them and the key changes. Entries are the Case's own saved form (JSON) and raw array bytes: no
pickle, nothing in the cache is executed. A cell is one JSON file (``Case.to_json`` per case, and per case its
arrays' names, dtypes, shapes and offsets) and one ``.bin`` buffer, written to temporary names and renamed into
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
        return base.with_suffix(".json"), base.with_suffix(".bin")

    def get(self, op: str, key: str, may_be_empty: bool = False) -> Cell | None:
        """The stored cell, or None: never stored, or not a cell this key could have drawn. Why an entry that
        fails to read is deleted: it would fail the same way on every later run (a truncated buffer, a JSON
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
                    and isinstance(meta["satisfiable"], bool) and len(meta["arrays"]) == len(meta["cases"])):
                raise ValueError("not a stored cell")
            if meta["satisfiable"] and not meta["cases"] and not may_be_empty:
                raise ValueError("a satisfiable cell with no case")
            buffer = bytearray(arrays_path.read_bytes())  # writable: the arrays are the cases' own, as np.load's
            cases = [Case.from_saved(case_meta, {name: _array(buffer, *where) for name, *where in index})
                     for case_meta, index in zip(meta["cases"], meta["arrays"], strict=True)]  # fmt: skip
        except Exception:  # noqa: BLE001 - whatever is wrong with it, it goes and the cell is drawn again
            for path in (meta_path, arrays_path):
                try:
                    path.unlink(missing_ok=True)
                except OSError:  # a read-only cache: drawn again every time, still never wrong
                    pass
            return None
        return Cell(cases, int(meta["draws"]), int(meta["duplicates"]), bool(meta["satisfiable"]))

    def put(self, op: str, key: str, cell: Cell) -> None:
        """Every array of every case in one raw buffer, each named in the JSON with its dtype, shape and offset.
        Why not one npz: reading a cell back opened one zip member per array, a fifth of a cached backend's run."""
        meta_path, arrays_path = self._paths(op, key)
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        chunks: list[bytes] = []
        size = 0
        index: list[list[list[Any]]] = []
        for case in cell.cases:
            rows = []
            for name, a in case.arrays().items():
                a = np.ascontiguousarray(_to_savable(a))
                pad = -size % _ALIGN
                chunks += [b"\0" * pad, a.tobytes()]
                rows.append([name, a.dtype.str, list(a.shape), size + pad])
                size += pad + a.nbytes
            index.append(rows)
        meta: dict[str, Any] = {"cases": [c.to_json() for c in cell.cases], "arrays": index, "draws": cell.draws,
                                "duplicates": cell.duplicates, "satisfiable": cell.satisfiable}  # fmt: skip
        for path, data in ((arrays_path, b"".join(chunks)), (meta_path, json.dumps(meta).encode())):
            fd, tmp = tempfile.mkstemp(prefix=f".{key}-", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise


_ALIGN = 16
_KINDS = "biuf"  # what a case's arrays are (``Case.arrays`` after ``_to_savable``): never objects


def _array(buffer: bytearray, dtype: str, shape: list[int], offset: int) -> np.ndarray:
    """One stored array as a view of the cell's buffer; a dtype that is not plain numbers is damage."""
    dt = np.dtype(dtype)
    if dt.kind not in _KINDS or dt.hasobject:
        raise ValueError(f"not a stored array's dtype: {dtype}")
    count = int(np.prod(shape, dtype=np.int64))
    return np.frombuffer(buffer, dtype=dt, count=count, offset=int(offset)).reshape(shape)
