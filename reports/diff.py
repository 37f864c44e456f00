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
import re
from collections import Counter
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
    BAD as BAD_VERDICTS,
)
from reports.record import (
    CRASH,
    ERROR,
    FAIL,
    FP16_ACCURATE,
    PASS,
    POSITIVE,
    RAW_VERDICT_KEY,
    REJECTED,
    SKIP,
    TIMEOUT,
    UNCHECKED,
    VERDICTS,
    XFAIL,
    XPASS,
    Record,
    replay_command,
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
# ``log_tail``: the last lines a dying process wrote (thread addresses, this machine's paths, a window that starts
# wherever their lengths put it); the verdict and message of the crash are compared.
RUN_SPECIFIC = frozenset({"timings", "timing_ms", "pid", "run_id", "backend_info", "case_path", "replay", "worker_age",
                          "log_tail"})  # fmt: skip
# a QNN worker's process id in a timeout's message ("qnn-worker 13556 killed"): another number every run
_WORKER_PID = re.compile(r"qnn-worker \d+")
# the HTP's object ids in its log ("op id=0x401d00000056"): they count the graphs the worker process built before
_OBJECT_ID = re.compile(r"\b0x[0-9a-f]+\b")
_RUN_SPECIFIC_SUFFIX = "seconds"  # details.session_seconds, a round trip's seconds ...

RecordKey = tuple[str, str, str, str, str, str, str]


def _record_key(r: Record) -> RecordKey:
    return (r.backend, r.op, r.config, r.kind, r.tier, r.broken or "", r.case_id)


def _test_name(node_id: Any) -> Any:
    """A pytest node id without its file: the same test of a module that moved (``cases/test_conformance.py`` to
    ``conformance/test_conformance.py``) names the same cell."""
    return node_id.partition("::")[2] or node_id if isinstance(node_id, str) else node_id


def _backend_log(lines: Any) -> Any:
    if not isinstance(lines, list):
        return _comparable(lines)
    return [_OBJECT_ID.sub("0x<id>", line) if isinstance(line, str) else _comparable(line) for line in lines]


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _test_name(v) if k == "test_id" else _backend_log(v) if k == "log" else _comparable(v)
                for k, v in value.items()
                if k not in RUN_SPECIFIC and not str(k).endswith(_RUN_SPECIFIC_SUFFIX)}  # fmt: skip
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, str):
        return _WORKER_PID.sub("qnn-worker <pid>", value)
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


# ---- case by case, across backends: what a release or target changed ---------------------------
# Two runs of the same drawn cases on two variants of one backend (qnn-htp@2.47 and qnn-htp@2.51, or
# qnn-htp@default and qnn-htp@v73) carry different backend names, so the cell diff above would see only
# new and vanished cells. These pair the cases themselves (same case_id: the same tensors and
# parameters), judge each on the backend's own verdict (before any findings file), and summarise per
# op and datatype family, each group with one case and the commands that replay it on both sides.
_CASE_GOOD = {PASS}
_CASE_BROKEN = BAD_VERDICTS | {REJECTED}


@dataclass
class CaseGroup:
    """Regressions or fixes of one op and datatype family (f32, 8b, ...) and tier."""

    op: str
    family: str
    tier: str
    changes: Counter[str] = field(default_factory=Counter)  # "PASS→ERROR": cases
    case_id: str = ""
    case_path: str = ""
    replay_old: str = ""
    replay_new: str = ""

    @property
    def count(self) -> int:
        return sum(self.changes.values())


@dataclass
class VariantDiff:
    old: str
    new: str
    old_builds: list[str] = field(default_factory=list)
    new_builds: list[str] = field(default_factory=list)
    paired: int = 0
    same: int = 0
    only_old: int = 0
    only_new: int = 0
    regressions: list[CaseGroup] = field(default_factory=list)
    fixes: list[CaseGroup] = field(default_factory=list)
    other: Counter[str] = field(default_factory=Counter)  # verdict changes neither (FAIL→ERROR, UNCHECKED→PASS)

    def cases(self, groups: list[CaseGroup]) -> int:
        return sum(g.count for g in groups)


def _raw(r: Record) -> str:

    return str(r.extra.get(RAW_VERDICT_KEY) or r.verdict)


def _label(records: list[Record]) -> str:
    names = sorted({r.backend for r in records if r.kind not in ("cell", "shrunk")})
    return ", ".join(names) or "(empty)"


def _build_text(records: list[Record]) -> list[str]:
    out: set[str] = set()
    for r in records:
        info = r.backend_info or {}
        if info.get("build_id"):
            bits = [str(info.get("build_id"))]
            bits += [f"{k}={info[k]}" for k in ("wheel", "target") if info.get(k)]
            out.add(" ".join(bits))
    return sorted(out)


def diff_variants(old_records: Iterable[Record], new_records: Iterable[Record]) -> VariantDiff:
    """Pair the cases of two runs by case id and group what changed per op, datatype family and tier."""
    from reports.families import SHORT_DTYPE_FAMILY, dtype_family

    old, new = list(old_records), list(new_records)
    keep = (POSITIVE,)
    ia = {r.case_id: r for r in old if r.kind in keep and r.case_id}
    ib = {r.case_id: r for r in new if r.kind in keep and r.case_id}
    result = VariantDiff(_label(old), _label(new), _build_text(old), _build_text(new))
    result.only_old, result.only_new = len(ia.keys() - ib.keys()), len(ib.keys() - ia.keys())
    groups: dict[tuple[str, str, str, str], CaseGroup] = {}
    for cid in sorted(ia.keys() & ib.keys()):
        a, b = ia[cid], ib[cid]
        va, vb = _raw(a), _raw(b)
        result.paired += 1
        if va == vb:
            result.same += 1
            continue
        if va in _CASE_GOOD and vb in _CASE_BROKEN:
            kind = "regression"
        elif va in _CASE_BROKEN and vb in _CASE_GOOD:
            kind = "fix"
        else:
            result.other[f"{va}→{vb}"] += 1
            continue
        family = SHORT_DTYPE_FAMILY.get(dtype_family(a.config), dtype_family(a.config))
        key = (kind, a.op, family, a.tier or "typical")
        g = groups.setdefault(key, CaseGroup(a.op, family, a.tier or "typical"))
        g.changes[f"{va}→{vb}"] += 1
        if not g.case_id:  # the first case: saved by whichever side did not pass
            g.case_id = cid
            g.case_path = b.case_path or a.case_path or ""
            if g.case_path:
                g.replay_old = replay_command(g.case_path, a.backend)
                g.replay_new = replay_command(g.case_path, b.backend)
    order = sorted(groups.items(), key=lambda kv: (kv[0][3] != "typical", op_sort_key(kv[0][1]), kv[0][2]))
    result.regressions = [g for (kind, *_), g in order if kind == "regression"]
    result.fixes = [g for (kind, *_), g in order if kind == "fix"]
    return result


def variants_summary_line(d: VariantDiff) -> str:
    def typical(groups: list[CaseGroup]) -> int:
        return sum(g.count for g in groups if g.tier == "typical")

    return (f"{d.old} -> {d.new}: {d.paired} case(s) paired, {d.same} same verdict; "
            f"{d.cases(d.regressions)} regressed ({typical(d.regressions)} typical) in {len(d.regressions)} "
            f"op x family group(s), {d.cases(d.fixes)} fixed ({typical(d.fixes)} typical) in {len(d.fixes)}; "
            f"{sum(d.other.values())} other verdict change(s); only old {d.only_old}, "
            f"only new {d.only_new}")  # fmt: skip


def variants_to_markdown(d: VariantDiff) -> str:
    out = [f"# What changed: {d.old} -> {d.new}", "", variants_summary_line(d) + ".", ""]
    out += [_table([[md(d.old), md("; ".join(d.old_builds) or "-")], [md(d.new), md("; ".join(d.new_builds) or "-")]],
                   ["side", "build"]), ""]  # fmt: skip
    for title, groups in (("Regressions", d.regressions), ("Fixes", d.fixes)):
        if not groups:
            out += [f"## {title}", "", "None.", ""]
            continue
        rows = [[md(g.op), g.family, g.tier, str(g.count),
                 md(", ".join(f"{k} {v}" for k, v in g.changes.most_common())),
                 f"`{g.replay_old}`<br>`{g.replay_new}`" if g.replay_old else g.case_id] for g in groups]  # fmt: skip
        out += [f"## {title}", "", _table(rows, ["op", "family", "tier", "cases", "verdicts", "replay on both"]), ""]
    if d.other:
        rows = [[k, str(v)] for k, v in d.other.most_common()]
        out += ["## Other verdict changes", "", _table(rows, ["old→new", "cases"]), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def variants_to_json(d: VariantDiff) -> str:
    doc = {k: v for k, v in vars(d).items() if k not in ("regressions", "fixes", "other")}
    doc["format"] = "qnn-conformance-variant-diff"
    doc["regressions"] = [{**vars(g), "changes": dict(g.changes)} for g in d.regressions]
    doc["fixes"] = [{**vars(g), "changes": dict(g.changes)} for g in d.fixes]
    doc["other"] = dict(d.other)
    return json.dumps(doc, indent=1) + "\n"


def backends_differ(old_records: list[Record], new_records: list[Record]) -> bool:
    """Two runs of different backends (qnn-htp@2.47 vs qnn-htp@2.51): compared case by case, not cell by cell."""
    a = {r.backend for r in old_records if r.kind == POSITIVE}
    b = {r.backend for r in new_records if r.kind == POSITIVE}
    return bool(a) and bool(b) and not (a & b)


def sweep_to_markdown(records: Iterable[Record], base: str = "qnn-htp") -> str:
    """A sweep's runs (``python -m conformance --sweep``): every variant of ``base`` (a generation, a release) against
    ``base`` itself, case by case (``diff_variants``): the cells that differ, each with one case replayed on both."""
    by_backend: dict[str, list[Record]] = {}
    for r in records:
        by_backend.setdefault(r.backend, []).append(r)
    plain = by_backend.get(base, [])
    variants = sorted((b for b in by_backend if b.startswith(f"{base}@")), key=backend_sort_key)
    out = [f"# Sweep: {base} across generations and releases", ""]
    if not plain or not variants:
        why = f"Nothing to compare: the sweep needs {base} and at least one {base}@variant run."
        return "\n".join([*out, why]) + "\n"
    diffs = [diff_variants(plain, by_backend[v]) for v in variants]
    out += [f"- {variants_summary_line(d)}" for d in diffs] + [""]
    for d in diffs:
        if d.regressions or d.fixes or d.other:
            out += ["#" + line if line.startswith("#") else line for line in variants_to_markdown(d).splitlines()]
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
