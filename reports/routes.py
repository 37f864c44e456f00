"""Why a matrix cell differs between the two routes to libQnnHtp.so, per op and configuration.

A reader who sees qnn-htp green and ort-qnn red (or the reverse) on the same op and configuration needs the
reason beside the cell, not in another report: is it the EP's graph (a mechanism of findings/routes.yaml), a
finding of either backend, or not yet explained? This module folds ``reports.agree``'s case-by-case comparison
into one note per (op, config), which the markdown and HTML matrices show and link.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from reports import agree
from reports.record import TYPICAL, Record

ROUTE_A, ROUTE_B = "qnn-htp", "ort-qnn"


@dataclass
class RouteNote:
    """The typical disagreements of one op and configuration between the two routes."""

    op: str
    config: str
    mechanisms: Counter[str] = field(default_factory=Counter)  # mechanism -> typical cases it explains
    findings: Counter[str] = field(default_factory=Counter)  # finding id -> typical cases
    unexplained: int = 0

    @property
    def cases(self) -> int:
        return sum(self.mechanisms.values()) + self.unexplained

    @property
    def anchor(self) -> str:
        """An id for the note in the HTML page (op and config names hold no spaces; '+' and '/' are fine)."""
        return f"route-{self.op}-{self.config}".replace("/", "_").replace("+", "_")

    def text(self) -> str:
        """"3 cases: ep-runs-fixed-point-as-float (3; finding ep-conv-8bit-qdq-bias-wrong)"; unexplained last."""
        parts = [f"{m} ({n})" for m, n in sorted(self.mechanisms.items(), key=lambda kv: (-kv[1], kv[0]))]
        if self.findings:
            parts.append("finding " + ", ".join(sorted(self.findings)))
        if self.unexplained:
            parts.append(f"{self.unexplained} unexplained")
        return f"{self.cases} typical case(s) differ: " + "; ".join(parts)


def notes(records: Iterable[Record], explanations: str | Path | None = None) -> dict[tuple[str, str], RouteNote]:
    """One note per (op, config) with typical disagreements between qnn-htp and ort-qnn records; {} unless both
    routes are present. ``explanations``: the routes file (default findings/routes.yaml where it exists)."""
    by_backend: dict[str, list[Record]] = {ROUTE_A: [], ROUTE_B: []}
    for r in records:
        if r.backend in by_backend:
            by_backend[r.backend].append(r)
    if not by_backend[ROUTE_A] or not by_backend[ROUTE_B]:
        return {}
    path = Path(explanations) if explanations else agree.DEFAULT_EXPLANATIONS
    entries = agree.load_explanations(path) if path.is_file() else []
    result = agree.compare(by_backend[ROUTE_A], by_backend[ROUTE_B], entries)
    out: dict[tuple[str, str], RouteNote] = {}
    for d in result.disagreements:
        if d.tier != TYPICAL:
            continue
        note = out.setdefault((d.op, d.config), RouteNote(d.op, d.config))
        if d.why:
            note.mechanisms[d.mechanism] += 1
            if d.finding:
                note.findings[d.finding] += 1
        else:
            note.unexplained += 1
    return out
