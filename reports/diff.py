"""What changed between two runs: regressions, fixes, new and vanished cells, verdict-count changes.

The typical use is one backend run twice with different library builds, so cells are keyed by op,
config, backend *name* and kind, never by build id; the builds of both sides are reported beside.
A cell's health is judged from its status (see ``reports.matrix``):

    good: positive PASS or XPASS (ran and matched); negative REJECTED (refused cleanly) or XPASS
    known: XFAIL (a known failure, listed in an expectations file)
    unsupported: positive REJECTED
    bad: positive FAIL, ERROR, CRASH, TIMEOUT; negative ACCEPTED, ERRORED, CRASHED
    unjudged: UNCHECKED, SKIP / NOT RUN (nothing that could be judged ran)

A regression is good -> known/unsupported/bad; a fix is the reverse. Every other status change
(FAIL -> CRASH, UNCHECKED -> PASS, PASS -> SKIP...) is listed as a change, never silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tabulate import tabulate

from reports.matrix import (
    ACCEPTED,
    CRASHED,
    ERRORED,
    NEGATIVE,
    NOT_RUN,
    REJECTED_CLEANLY,
    Cell,
    Matrix,
    backend_sort_key,
    build,
    config_sort_key,
    op_sort_key,
)
from reports.record import (
    CRASH,
    ERROR,
    FAIL,
    FP16_ACCURATE,
    PASS,
    REJECTED,
    SKIP,
    TIMEOUT,
    UNCHECKED,
    VERDICTS,
    XFAIL,
    XPASS,
    Record,
)
from reports.render_text import md

GOOD, KNOWN, UNSUPPORTED, BAD, UNJUDGED = "good", "known", "unsupported", "bad", "unjudged"
_POSITIVE_HEALTH = {
    PASS: GOOD, XPASS: GOOD, XFAIL: KNOWN, REJECTED: UNSUPPORTED,
    FAIL: BAD, ERROR: BAD, CRASH: BAD, TIMEOUT: BAD, UNCHECKED: UNJUDGED, SKIP: UNJUDGED, FP16_ACCURATE: KNOWN,
}
_NEGATIVE_HEALTH = {
    REJECTED_CLEANLY: GOOD, XPASS: GOOD, XFAIL: KNOWN,
    ACCEPTED: BAD, ERRORED: BAD, CRASHED: BAD, NOT_RUN: UNJUDGED,
}
_BROKEN = (KNOWN, UNSUPPORTED, BAD)

DiffKey = tuple[str, str, str, str]  # (op, config, backend, kind)


def health(cell: Cell) -> str:
    """good / known / unsupported / bad / unjudged: the axis regressions and fixes are judged on."""
    return (_NEGATIVE_HEALTH if cell.kind == NEGATIVE else _POSITIVE_HEALTH)[cell.status]


@dataclass
class CellChange:
    """One cell present in both runs whose status or verdict counts differ."""

    op: str
    config: str
    backend: str
    kind: str
    old_status: str
    new_status: str
    old_text: str
    new_text: str
    old_counts: dict[str, int]
    new_counts: dict[str, int]


@dataclass
class CellPresence:
    """A cell present in only one run."""

    op: str
    config: str
    backend: str
    kind: str
    status: str
    text: str
    counts: dict[str, int]


@dataclass
class RunDiff:
    regressions: list[CellChange] = field(default_factory=list)
    fixes: list[CellChange] = field(default_factory=list)
    status_changes: list[CellChange] = field(default_factory=list)  # status differs, neither regression nor fix
    count_changes: list[CellChange] = field(default_factory=list)  # same status, different verdict counts
    new_cells: list[CellPresence] = field(default_factory=list)
    vanished_cells: list[CellPresence] = field(default_factory=list)
    old_builds: dict[str, list[str]] = field(default_factory=dict)
    new_builds: dict[str, list[str]] = field(default_factory=dict)

    @property
    def has_regressions(self) -> bool:
        return bool(self.regressions)


def diff(old_records: Iterable[Record], new_records: Iterable[Record]) -> RunDiff:
    """Compare two runs (records of the old and the new run) cell by cell."""
    return diff_matrices(build(old_records), build(new_records))


def diff_matrices(old: Matrix, new: Matrix) -> RunDiff:
    old_cells, new_cells = _by_key(old), _by_key(new)
    result = RunDiff(
        old_builds={b: t.builds for b, t in old.totals().items()},
        new_builds={b: t.builds for b, t in new.totals().items()},
    )
    for key in sorted(old_cells.keys() | new_cells.keys(), key=_key_order):
        before, after = old_cells.get(key), new_cells.get(key)
        if before is None:
            result.new_cells.append(_presence(after))
        elif after is None:
            result.vanished_cells.append(_presence(before))
        else:
            change = _change(before, after)
            h_old, h_new = health(before), health(after)
            if h_old == GOOD and h_new in _BROKEN:
                result.regressions.append(change)
            elif h_old in _BROKEN and h_new == GOOD:
                result.fixes.append(change)
            elif before.status != after.status:
                result.status_changes.append(change)
            elif before.counts != after.counts:
                result.count_changes.append(change)
    return result


def _by_key(m: Matrix) -> dict[DiffKey, Cell]:
    return {(c.op, c.config, c.backend, c.kind): c for c in m.all_cells()}


def _key_order(key: DiffKey) -> tuple[Any, ...]:
    op, config, backend, kind = key
    return (backend_sort_key(backend), kind == NEGATIVE, op_sort_key(op), config_sort_key(config))


def _counts(cell: Cell) -> dict[str, int]:
    return {v: cell.counts[v] for v in VERDICTS if cell.counts[v]}


def _change(before: Cell, after: Cell) -> CellChange:
    return CellChange(
        before.op, before.config, before.backend, before.kind, before.status, after.status,
        before.text(), after.text(), _counts(before), _counts(after),
    )


def _presence(cell: Cell | None) -> CellPresence:
    assert cell is not None
    return CellPresence(cell.op, cell.config, cell.backend, cell.kind, cell.status, cell.text(), _counts(cell))


def to_markdown(d: RunDiff) -> str:
    """The diff for a person: builds of both sides, then one table per kind of change (empty ones omitted)."""
    out = ["# Run diff", ""]
    backends = sorted(d.old_builds.keys() | d.new_builds.keys(), key=backend_sort_key)
    if backends:
        rows = [[md(b), md("; ".join(d.old_builds.get(b, [])) or "-"), md("; ".join(d.new_builds.get(b, [])) or "-")]
                for b in backends]
        out += [_table(rows, ["backend", "old build", "new build"]), ""]
    out.append(
        f"{len(d.regressions)} regression(s), {len(d.fixes)} fix(es), {len(d.status_changes)} other status change(s), "
        f"{len(d.count_changes)} verdict-count change(s), {len(d.new_cells)} new cell(s), "
        f"{len(d.vanished_cells)} vanished cell(s)."
    )
    out.append("")
    for title, changes in (("Regressions", d.regressions), ("Fixes", d.fixes),
                           ("Other status changes", d.status_changes), ("Verdict-count changes", d.count_changes)):
        if changes:
            rows = [[md(c.backend), md(c.op), md(c.config), c.kind, md(c.old_text), md(c.new_text),
                     md(_counts_delta(c.old_counts, c.new_counts))] for c in changes]
            out += [f"## {title}", "", _table(rows, ["backend", "op", "config", "kind", "old", "new", "counts"]), ""]
    for title, cells in (("New cells", d.new_cells), ("Vanished cells", d.vanished_cells)):
        if cells:
            rows = [[md(c.backend), md(c.op), md(c.config), c.kind, md(c.text)] for c in cells]
            out += [f"## {title}", "", _table(rows, ["backend", "op", "config", "kind", "status"]), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def to_json(d: RunDiff) -> str:
    doc = {
        "format": "qnn-conformance-diff",
        "version": 1,
        "old_builds": d.old_builds,
        "new_builds": d.new_builds,
        "regressions": [vars(c) for c in d.regressions],
        "fixes": [vars(c) for c in d.fixes],
        "status_changes": [vars(c) for c in d.status_changes],
        "count_changes": [vars(c) for c in d.count_changes],
        "new_cells": [vars(c) for c in d.new_cells],
        "vanished_cells": [vars(c) for c in d.vanished_cells],
    }
    return json.dumps(doc, indent=1) + "\n"


def _counts_delta(old: dict[str, int], new: dict[str, int]) -> str:
    """"PASS 5→4, FAIL 0→1": only the verdicts whose count moved."""
    moved = [f"{v} {old.get(v, 0)}→{new.get(v, 0)}" for v in VERDICTS if old.get(v, 0) != new.get(v, 0)]
    return ", ".join(moved)


def _table(rows: list[list[Any]], headers: list[str]) -> str:
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


# ---- record by record: did a change of the suite's code change any result? -----------------------
# What describes the run rather than a case's result: two runs of the same cases differ here even when
# every verdict, message and number is the same (times, ids, where files went, the backend's build).
RUN_SPECIFIC = frozenset({"timings", "run_id", "backend_info", "case_path", "replay", "worker_age"})
_RUN_SPECIFIC_SUFFIX = "seconds"  # details.session_seconds, a round trip's seconds ...

RecordKey = tuple[str, str, str, str, str, str, str]


def _record_key(r: Record) -> RecordKey:
    return (r.backend, r.op, r.config, r.kind, r.tier, r.broken or "", r.case_id)


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()
                if k not in RUN_SPECIFIC and not str(k).endswith(_RUN_SPECIFIC_SUFFIX)}  # fmt: skip
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def _differing(a: Any, b: Any, path: str = "") -> list[str]:
    """Dotted paths of the fields where ``a`` and ``b`` differ (a list or scalar differs as a whole)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(a.keys() | b.keys(), key=str):
            out += _differing(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))
        return out
    same = a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)  # NaN == NaN here
    return [] if same else [path or "(record)"]


def record_differences(old: Iterable[Record], new: Iterable[Record]) -> list[str]:
    """One line per case (or cell record) whose record differs between two runs of the same cases,
    naming the differing fields with both values; run-specific fields (RUN_SPECIFIC, ``*seconds``)
    are left out. Empty when the runs agree on every result: the check that a refactor changed
    nothing a run reports."""

    def index(records: Iterable[Record]) -> dict[RecordKey, list[dict[str, Any]]]:
        out: dict[RecordKey, list[dict[str, Any]]] = {}
        for r in records:
            out.setdefault(_record_key(r), []).append(_comparable(json.loads(r.to_json())))
        return out

    a, b = index(old), index(new)
    lines: list[str] = []
    for key in sorted(a.keys() | b.keys()):
        backend, op, config, kind, tier, broken, case_id = key
        label = " ".join(x for x in (backend, op, config, kind, tier, broken, case_id) if x)
        left, right = a.get(key, []), b.get(key, [])
        if len(left) != len(right):
            lines.append(f"{label}: {len(left)} record(s) in the old run, {len(right)} in the new")
            continue
        for x, y in zip(left, right, strict=True):
            for f in _differing(x, y):
                old_v, new_v = _lookup(x, f), _lookup(y, f)
                lines.append(f"{label}: {f}: {_short(old_v)} -> {_short(new_v)}")
    return lines


def _lookup(d: Any, path: str) -> Any:
    for part in path.split("."):
        d = d.get(part) if isinstance(d, dict) else None
    return d


def _short(v: Any, limit: int = 100) -> str:
    text = json.dumps(v, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
