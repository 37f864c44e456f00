"""Refusals by reason: what a REJ cell means, read from the records.

Why: "REJ" is the verdict a converter or execution provider acts on ("do not offload this"), and it used to
read "error 3110" whatever the backend had said. A record written since refusals carry a reason has it in
``details.refusal.reason`` (the adapter read the backend's log with the case at hand, ``adapters.refusal``);
for an older results file the reason is read here from the log lines the record kept, or from the message
of a backend that gives its reason there. The matrix groups each cell's refusals by it, and this module
writes the table of reasons (reason -> the cells it holds).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from adapters import refusal
from reports.record import Record


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
