"""Two views people ask for beside the grid: every exact datatype configuration (the grid merges u8 with s8 into
"8b"), and what fails on one backend, with the reasons, the way a bug triage reads it.

Both come from the same ``Matrix`` cells the grid shows, so they cannot disagree with it.
"""

from __future__ import annotations

from collections import Counter

from reports.grid import BACKEND_TROUBLE
from reports.matrix import Cell, Matrix, config_sort_key, op_sort_key, readable_message
from reports.record import FAIL, TIMEOUT, XPASS
from reports.render_text import md

RED = (FAIL, XPASS, TIMEOUT, *BACKEND_TROUBLE)


def _ordered(m: Matrix, backend: str | None = None) -> list[Cell]:
    cells = [c for c in m.cells.values() if backend is None or c.backend == backend]
    return sorted(cells, key=lambda c: (op_sort_key(c.op), config_sort_key(c.config), c.backend))


def by_config(m: Matrix) -> str:
    """Markdown: one row per op and exact configuration, one column per backend (typical tier, edge news beside)."""
    backends = m.backends()
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for c in _ordered(m):
        rows.setdefault((c.op, c.config), {})[c.backend] = c.text()
    out = ["| op | configuration | " + " | ".join(md(b) for b in backends) + " |",
           "|---|---|" + "---|" * len(backends)]  # fmt: skip
    for (op, config), texts in rows.items():
        out.append(f"| {md(op)} | `{md(config)}` | " + " | ".join(md(texts.get(b, "")) for b in backends) + " |")
    return "\n".join(out) + "\n"


def failing(m: Matrix, backend: str) -> str:
    """Markdown: the cells of ``backend`` with a red typical verdict (and those red only at the edge, after them),
    each with its counts, its first failing case's message and the command that replays it."""
    typical, edge = [], []
    for c in _ordered(m, backend):
        if any(c.counts[v] for v in RED):
            typical.append(c)
        elif c.edge is not None and any(c.edge.counts[v] for v in RED):
            edge.append(c)
    out = [f"# Failing on {backend}", "",
           f"{len(typical)} typical cell(s) red, {len(edge)} more red at the edge only.", ""]  # fmt: skip
    for title, cells, tier in (("Typical", typical, None), ("Edge only", edge, "edge")):
        if not cells:
            continue
        out += [f"## {title}", ""]
        for c in cells:
            shown = c if tier is None else c.edge
            counts = Counter({v: shown.counts[v] for v in RED if shown.counts[v]})
            first = next((d for d in shown.sorted_details() if d.verdict in RED), None)
            out.append(f"- **{md(c.op)}** `{md(c.config)}`: " + ", ".join(f"{v} {n}/{shown.total}"
                                                                       for v, n in counts.items()))  # fmt: skip
            if first is not None:
                out.append(f"  - {md(readable_message(first.message)[:300])}")
                near = [str(x) for x in (first.near or [])]
                if near:
                    out.append(f"  - near finding(s) {', '.join(near)}: about this cell, not this symptom")
                if first.replay:
                    out.append(f"  - replay: `{first.replay}`")
        out.append("")
    return "\n".join(out)
