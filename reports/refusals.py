"""Refusals by reason: what a REJ cell means, read from the records.

Why: "REJ" is the verdict a converter or execution provider acts on ("do not offload this"), and it used to
read "error 3110" whatever the backend had said. A record written since refusals carry a reason has it in
``details.refusal.reason`` (the adapter read the backend's log with the case at hand, ``adapters.refusal``);
for an older results file the reason is read here from the log lines the record kept, or from the message
of a backend that gives its reason there. The matrix groups each cell's refusals by it, and this module
writes the table of reasons (reason -> the cells it holds), and ``python -m reports refusals``: the typical tier's
reasons with their counts, cells and class (``refusal_classes``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from adapters import refusal
from reports import refusal_classes
from reports.record import POSITIVE, RAW_VERDICT_KEY, REJECTED, TYPICAL, Record


def reason(r: Record) -> str:
    """The reason a refused case was refused, in a few words (see ``adapters.refusal.explain``)."""
    details = r.extra.get("details") or {}
    known = details.get("refusal") if isinstance(details, dict) else None
    if isinstance(known, dict) and known.get("reason"):
        return str(known["reason"])
    log = details.get("log") if isinstance(details, dict) else None
    if log:
        return str(refusal.explain(log, r.message)["reason"])
    message = " ".join((r.message or "").split())
    if message and "error 3110" not in message:
        return message[:160]
    return str(refusal.explain([], r.message)["reason"])


def supported_sets(r: Record) -> list[dict[str, str]]:
    """The datatype sets the backend listed as supported when it refused this case (HTP validation logs)."""
    details = r.extra.get("details") or {}
    known = details.get("refusal") if isinstance(details, dict) else None
    if isinstance(known, dict) and known.get("supported"):
        return [dict(s) for s in known["supported"]]
    log = details.get("log") if isinstance(details, dict) else None
    return list(refusal.explain(log, r.message).get("supported") or []) if log else []


def table(cells: list[Any]) -> list[tuple[str, int, list[Any]]]:
    """(reason, refused typical cases, the cells holding them) for cells of one backend, most cases first."""
    cases: Counter[str] = Counter()
    holders: dict[str, list[Any]] = {}
    for c in cells:
        for why, n in c.reasons.items():
            cases[why] += n
            holders.setdefault(why, []).append(c)
    return [(why, n, holders[why]) for why, n in sorted(cases.items(), key=lambda kv: (-kv[1], kv[0]))]


# ---- python -m reports refusals: the typical tier's refusals by reason and class ------------------------------------
@dataclass
class ReasonRow:
    """One distinct reason of one backend: its class, how many typical cases it refused and in which cells."""

    backend: str
    reason: str
    decision: refusal_classes.Decision
    cases: int = 0
    cells: set[tuple[str, str]] = field(default_factory=set)  # (op, config)


def _refused(r: Record) -> bool:
    """A typical-tier case the backend refused (also when an expectation has relabelled the verdict since)."""
    return (r.kind == POSITIVE and (r.tier or TYPICAL) == TYPICAL
            and REJECTED in (r.verdict, r.extra.get(RAW_VERDICT_KEY)))  # fmt: skip


def by_reason(records: Iterable[Record], table: list[refusal_classes.Entry] | None = None) -> list[ReasonRow]:
    """Every distinct (backend, reason) of the typical tier's REJECTED records, most cases first."""
    rows: dict[tuple[str, str], ReasonRow] = {}
    for r in records:
        if not _refused(r):
            continue
        why = reason(r)
        row = rows.get((r.backend, why))
        if row is None:
            row = rows[(r.backend, why)] = ReasonRow(r.backend, why, refusal_classes.classify(why, r.op, table))
        row.cases += 1
        row.cells.add((r.op, r.config))
    return sorted(rows.values(), key=lambda w: (w.backend, -w.cases, w.reason))


def class_totals(rows: list[ReasonRow]) -> dict[str, dict[str, dict[str, int]]]:
    """backend -> class -> {"reasons", "cases", "cells"} (a cell refused for two reasons of one class counts once)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for w in rows:
        t = out.setdefault(w.backend, {}).setdefault(w.decision.klass, {"reasons": 0, "cases": 0, "cells": set()})
        t["reasons"] += 1
        t["cases"] += w.cases
        t["cells"] |= w.cells
    return {b: {k: {**v, "cells": len(v["cells"])} for k, v in sorted(classes.items(), key=lambda kv: _order(kv[0]))}
            for b, classes in out.items()}  # fmt: skip


def _order(klass: str) -> int:
    return refusal_classes.CLASSES.index(klass) if klass in refusal_classes.CLASSES else len(refusal_classes.CLASSES)


def _cells_text(cells: set[tuple[str, str]]) -> str:
    ops: dict[str, list[str]] = {}
    for op, config in sorted(cells):
        ops.setdefault(op, []).append(config)
    return "; ".join(f"{op}: {', '.join(configs)}" for op, configs in ops.items())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(rows: list[ReasonRow]) -> str:
    """Per backend: the classes with their counts, then each class's reasons with their cases, cells and basis."""
    if not rows:
        return "# Refusals of the typical tier\n\nNo typical-tier case was refused.\n"
    out = ["# Refusals of the typical tier", ""]
    totals = class_totals(rows)
    for backend, classes in totals.items():
        mine = [w for w in rows if w.backend == backend]
        out += [f"## {backend}", "",
                f"{sum(w.cases for w in mine)} refused typical cases, {len(mine)} distinct reasons.", "",
                "| class | reasons | cases | cells |", "|---|---|---|---|"]  # fmt: skip
        out += [f"| {k} | {v['reasons']} | {v['cases']} | {v['cells']} |" for k, v in classes.items()]
        for klass in classes:
            out += ["", f"### {klass}", "", "| reason | cases | cells | decided by |", "|---|---|---|---|"]
            for w in (w for w in mine if w.decision.klass == klass):
                fixed = f" Fixed: {w.decision.fixed}" if w.decision.fixed else ""
                basis = f"{w.decision.by}: {w.decision.basis}{fixed}"
                out.append(f"| {_cell(w.reason)} | {w.cases} | {len(w.cells)}: {_cell(_cells_text(w.cells))} | "
                           f"{_cell(basis)} |")  # fmt: skip
        out.append("")
    return "\n".join(out) + "\n"


def to_json(rows: list[ReasonRow]) -> str:
    doc = {"format": "qnn-conformance-refusals", "tier": TYPICAL, "classes": class_totals(rows),
           "reasons": [{"backend": w.backend, "reason": w.reason, **refusal_classes.decision_json(w.decision),
                        "cases": w.cases, "cells": [{"op": op, "config": c} for op, c in sorted(w.cells)]}
                       for w in rows]}  # fmt: skip
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"
