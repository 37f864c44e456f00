"""Text renderings of a matrix: markdown for people, CSV and JSON for other programs.

Markdown is one table per backend (rows = ops, columns = configs): 157 ops x ~6 configs stays
readable where a single config x backend table (~24 columns) would not. Output is deterministic
(no timestamps) so a rendering can be checked in and compared byte for byte.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from typing import Any

from tabulate import tabulate

from reports import stages
from reports.families import family_of
from reports.matrix import (
    ABBREVIATIONS,
    ERROR_METRICS,
    NEGATIVE,
    NEGATIVE_PRECEDENCE,
    STATUS_PRECEDENCE,
    TIMING_KEYS,
    BackendTotals,
    CaseDetail,
    Cell,
    Matrix,
    backend_sort_key,
    config_sort_key,
    format_number,
    op_sort_key,
)
from reports.record import CRASH, ERROR, FAIL, REJECTED, SKIP, TIMEOUT, VERDICTS, XFAIL, XPASS

NO_CASES = "-"
# Positive verdicts listed under "Cases to look at"; REJECTED/XFAIL/UNCHECKED/SKIP are summarised, not listed.
LOOK_AT = (CRASH, ERROR, FAIL, XPASS, TIMEOUT)
CASES_PER_CELL_MD = 3
MESSAGE_CHARS_MD = 120


def to_markdown(m: Matrix, title: str = "QNN op support matrix") -> str:
    """The whole report as GitHub markdown: totals, one table per backend, then the cases to look at."""
    backends = m.backends()
    out = [f"# {md(title)}", ""]
    if not backends:
        return "\n".join(out + ["No results records.", ""])
    n_cases = sum(c.total for c in m.all_cells())
    out += [
        f"{len(backends)} backend(s), {len(m.ops())} op(s), {n_cases} typical case(s). A cell shows the most severe "
        "verdict among its **typical** cases (the op as converters use it) and how many have it, of how many; "
        "news from the **edge** tier (corner cases) follows it after a `·` and never changes the cell's verdict; "
        "`-` means no cases ran.",
        "Severity: " + " > ".join(ABBREVIATIONS.get(s, s) for s in STATUS_PRECEDENCE) + ".",
        "",
        "## Totals",
        "",
        _totals_table(m),
        "",
        _verdicts_table(m),
        "",
    ]
    if m.negative:
        out += [
            "Negative cases (each breaks one constraint; the good outcome is a clean rejection):",
            "",
            _negative_totals_table(m),
            "",
        ]
    for backend in backends:
        out += _backend_section(m, backend)
    out += stages.to_markdown(m)  # validate / finalize / execute (reports/stages.py)
    out += _look_at_section(m)
    return "\n".join(out).rstrip("\n") + "\n"


def _totals_table(m: Matrix) -> str:
    headers = ["backend", "ops", "ops with a PASS", "ops fully passing"]
    headers += ["ops with REJ", "ops with ERR", "ops with CRASH"]
    rows = [
        [md(t.backend), len(t.ops), len(t.ops_with_pass), len(t.ops_fully_passing), len(t.ops_with_rejected),
         len(t.ops_with_error), len(t.ops_with_crash)]
        for t in m.totals().values()
    ]
    return _table(rows, headers)


def _verdicts_table(m: Matrix) -> str:
    headers = ["backend", "tier", *[ABBREVIATIONS.get(v, v) for v in STATUS_PRECEDENCE], "refused draws", "shrunk"]
    rows = []
    for t in m.totals().values():
        rows.append([md(t.backend), "typical", *[t.cases[v] for v in STATUS_PRECEDENCE], t.refusals, t.shrunk])
        if sum(t.edge_cases.values()):
            rows.append([md(t.backend), "edge", *[t.edge_cases[v] for v in STATUS_PRECEDENCE], "", ""])
    return _table(rows, ["cases: " + headers[0], *headers[1:]])


def _negative_totals_table(m: Matrix) -> str:
    headers = ["backend", "cases", *[c.lower() for c in NEGATIVE_PRECEDENCE]]
    headers[headers.index("rejected")] = "rejected cleanly"
    rows = []
    for t in m.totals().values():
        classes = t.negative_cases
        rows.append([md(t.backend), sum(classes.values()), *[classes[c] for c in NEGATIVE_PRECEDENCE]])
    return _table(rows, headers)


def _backend_section(m: Matrix, backend: str) -> list[str]:
    totals = m.totals()[backend]
    out = [f"## {md(backend)}", ""]
    if len(totals.builds) > 1:
        out += ["Builds (more than one in these results): " + "; ".join(f"`{md(b)}`" for b in totals.builds), ""]
    elif totals.builds:
        out += [f"Build: `{md(totals.builds[0])}`", ""]
    ops = m.ops(backend, kind="positive")
    if ops:
        configs = m.configs(backend, kind="positive")
        rows = []
        for op in ops:
            cells = [m.cell(op, config, backend) for config in configs]
            rows.append([md(op), md(family_of(op)), *[md(c.text()) if c else NO_CASES for c in cells]])
        out += [_table(rows, ["op", "family", *[md(c) for c in configs]]), ""]
    neg_ops = m.ops(backend, kind=NEGATIVE)
    if neg_ops:
        configs = m.configs(backend, kind=NEGATIVE)
        rows = []
        for op in neg_ops:
            cells = [m.cell(op, config, backend, NEGATIVE) for config in configs]
            rows.append([md(op), *[md(c.text()) if c else NO_CASES for c in cells]])
        out += [f"Negative cases on {md(backend)}:", "", _table(rows, ["op", *[md(c) for c in configs]]), ""]
    return out


def _look_at_section(m: Matrix) -> list[str]:
    rows = []
    for cell in _cells_in_display_order(m):
        for tier_cell in [cell] + ([cell.edge] if cell.edge is not None else []):
            wanted = [d for d in tier_cell.sorted_details() if _worth_listing(tier_cell, d)]
            for d in wanted[:CASES_PER_CELL_MD]:
                rows.append([
                    md(cell.backend), md(cell.op), md(cell.config), md(_tier_label(cell, d)),
                    md(_verdict_label(cell, d)), md(metrics_text(_shown_metrics(d.metrics))), md(_message_md(d)),
                    md(d.replay or d.case_path or ""),
                ])
            if len(wanted) > CASES_PER_CELL_MD:
                more = len(wanted) - CASES_PER_CELL_MD
                rows.append([md(cell.backend), md(cell.op), md(cell.config), md(tier_cell.tier), "", "",
                             f"(+{more} more in this cell)", ""])  # fmt: skip
        for d in cell.shrunk:
            rows.append([md(cell.backend), md(cell.op), md(cell.config), "smallest", md(d.verdict),
                         md(metrics_text(_shown_metrics(d.metrics))), md(_message_md(d)),
                         md(d.replay or d.case_path or "")])  # fmt: skip
    if not rows:
        return []
    headers = ["backend", "op", "config", "tier", "verdict", "metrics", "message", "replay"]
    return ["## Cases to look at", "", _table(rows, headers), ""]


def _tier_label(cell: Cell, d: CaseDetail) -> str:
    return "" if cell.kind == NEGATIVE else d.tier


def _shown_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metrics.items() if k != "budget"}


def _worth_listing(cell: Cell, d: CaseDetail) -> bool:
    """Positive: the verdicts in LOOK_AT. Negative: anything but a clean rejection, an XFAIL or a SKIP."""
    if cell.kind == NEGATIVE:
        return d.verdict not in (REJECTED, XFAIL, SKIP)
    return d.verdict in LOOK_AT


def _verdict_label(cell: Cell, d: CaseDetail) -> str:
    if cell.kind == NEGATIVE:
        return f"negative: {d.verdict}" + (f" (breaks {d.broken})" if d.broken else "")
    return d.verdict


def _cells_in_display_order(m: Matrix) -> list[Cell]:
    return sorted(
        m.all_cells(),
        key=lambda c: (backend_sort_key(c.backend), c.kind == NEGATIVE, op_sort_key(c.op), config_sort_key(c.config)),
    )


def metrics_text(metrics: dict[str, Any]) -> str:
    """Metrics as "max_ulp=3 mismatches=2" in a stable order (error metrics first, then the rest)."""
    keys = [k for k in ERROR_METRICS if k in metrics] + sorted(k for k in metrics if k not in ERROR_METRICS)
    parts = []
    for k in keys:
        v = metrics[k]
        if isinstance(v, float):
            v = format_number(v)
        elif not isinstance(v, str | int):
            v = json.dumps(v, sort_keys=True, default=str)
        parts.append(f"{k}={v}")
    return " ".join(parts)


def md(text: Any) -> str:
    """Text safe inside a markdown table cell: one line, pipes escaped, HTML tags shown not interpreted."""
    s = " ".join(str(text).split())
    return html.escape(s, quote=False).replace("|", "\\|")


def _message_md(d: CaseDetail) -> str:
    message = _first_line(d.message, MESSAGE_CHARS_MD)
    if d.expectation:
        message = f"{message} [expectations: {d.expectation}]".strip()
    return message


def _first_line(text: str, limit: int) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _table(rows: list[list[Any]], headers: list[str]) -> str:
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


CSV_FIELDS = (
    ["kind", "op", "family", "config", "backend", "status", "text", "total", "edge_status", "edge_text", "edge_total",
     "refused_draws", "shrunk"]
    + list(VERDICTS)
    + [f"negative_{c.lower().replace(' ', '_')}" for c in NEGATIVE_PRECEDENCE]
    + list(ERROR_METRICS)
    + [f"seconds_{k}" for k in TIMING_KEYS]
    + ["builds"]
)


def to_csv(m: Matrix) -> str:
    """One row per cell (positive and negative), every verdict count as its own column."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for cell in _cells_in_display_order(m):
        row: dict[str, Any] = {
            "kind": cell.kind, "op": cell.op, "family": cell.family, "config": cell.config, "backend": cell.backend,
            "status": cell.status, "text": cell.text(), "total": cell.total, "builds": "; ".join(cell.builds),
            "refused_draws": cell.refusals(), "shrunk": len(cell.shrunk),
        }
        if cell.edge is not None:
            row.update(edge_status=cell.edge.status, edge_text=cell.edge.core_text(), edge_total=cell.edge.total)
        row.update({v: cell.counts[v] for v in VERDICTS})
        if cell.kind == NEGATIVE:
            classes = cell.outcome_classes()
            row.update({f"negative_{c.lower().replace(' ', '_')}": classes[c] for c in NEGATIVE_PRECEDENCE})
        row.update({k: format_number(cell.worst[k]) for k in ERROR_METRICS if k in cell.worst})
        row.update({f"seconds_{k}": f"{cell.seconds[k]:.6g}" for k in TIMING_KEYS if k in cell.seconds})
        writer.writerow(row)
    return buf.getvalue()


def to_json(m: Matrix) -> str:
    """Cells (with their details), negative cells and per-backend totals; non-finite numbers become strings."""
    doc = {
        "format": "qnn-conformance-matrix",
        "version": 1,
        "status_precedence": list(STATUS_PRECEDENCE),
        "negative_precedence": list(NEGATIVE_PRECEDENCE),
        "backends": m.backends(),
        "totals": {b: totals_json(t) for b, t in m.totals().items()},
        "cells": [cell_json(c) for c in _cells_in_display_order(m) if c.kind != NEGATIVE],
        "negative_cells": [cell_json(c) for c in _cells_in_display_order(m) if c.kind == NEGATIVE],
    }
    return json.dumps(_finite(doc), indent=1, sort_keys=False) + "\n"


def totals_json(t: BackendTotals) -> dict[str, Any]:
    lists = {
        "ops": t.ops, "ops_with_pass": t.ops_with_pass, "ops_fully_passing": t.ops_fully_passing,
        "ops_with_rejected": t.ops_with_rejected, "ops_with_error": t.ops_with_error,
        "ops_with_crash": t.ops_with_crash,
    }
    return {
        **{k: len(v) for k, v in lists.items()},
        "op_lists": lists,
        "cases": {v: t.cases[v] for v in VERDICTS},
        "edge_cases": {v: t.edge_cases[v] for v in VERDICTS},
        "refused_draws": t.refusals,
        "shrunk": t.shrunk,
        "negative_cases": {c: t.negative_cases[c] for c in NEGATIVE_PRECEDENCE},
        "builds": t.builds,
    }


def cell_json(c: Cell) -> dict[str, Any]:
    d: dict[str, Any] = {
        "op": c.op, "family": c.family, "config": c.config, "backend": c.backend, "kind": c.kind,
        "status": c.status, "text": c.text(), "total": c.total,
        "counts": {v: c.counts[v] for v in VERDICTS if c.counts[v]},
        "worst": dict(c.worst), "worst_failing": dict(c.worst_failing), "seconds": dict(c.seconds), "builds": c.builds,
        "details": [vars(detail) for detail in c.sorted_details()],
        "draws": c.draws,
        "shrunk": [vars(detail) for detail in c.shrunk],
    }
    if c.edge is not None:
        d["edge"] = cell_json(c.edge)
    if c.kind == NEGATIVE:
        d["outcomes"] = {k: v for k, v in c.outcome_classes().items() if v}
    return d


def _finite(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return format_number(x)
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def to_summary(m: Matrix) -> str:
    """The terminal summary: per backend the op totals, the cases per verdict and the negative outcomes."""
    if not m.backends():
        return "no results records\n"
    totals = m.totals()
    op_rows = [[t.backend, len(t.ops), len(t.ops_with_pass), len(t.ops_fully_passing), len(t.ops_with_rejected),
                len(t.ops_with_error), len(t.ops_with_crash), "; ".join(t.builds)] for t in totals.values()]
    op_headers = ["backend", "ops", "with PASS", "fully passing", "with REJ", "with ERR", "with CRASH", "build"]
    case_rows = [[t.backend, sum(t.cases.values()), *[t.cases[v] for v in STATUS_PRECEDENCE]] for t in totals.values()]
    case_headers = ["backend", "cases", *[ABBREVIATIONS.get(v, v) for v in STATUS_PRECEDENCE]]
    out = [tabulate(op_rows, headers=op_headers, tablefmt="simple", disable_numparse=True), "",
           tabulate(case_rows, headers=case_headers, tablefmt="simple", disable_numparse=True)]
    if m.negative:
        neg_rows = [[t.backend, sum(t.negative_cases.values()), *[t.negative_cases[c] for c in NEGATIVE_PRECEDENCE]]
                    for t in totals.values()]
        neg_headers = ["negative cases", "cases", *[c.lower() for c in NEGATIVE_PRECEDENCE]]
        out += ["", tabulate(neg_rows, headers=neg_headers, tablefmt="simple", disable_numparse=True)]
    return "\n".join(out) + "\n"
