"""Text renderings of a matrix: markdown for people, CSV and JSON for other programs.

Markdown is one grid: rows are ops grouped by family, columns are backends split into six datatype
families, so 157 ops on four backends stay one readable table under 200 columns. Output is
deterministic (no timestamps) so a rendering can be checked in and compared byte for byte.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import textwrap
from typing import Any

from tabulate import tabulate

from reports import readings, refusals, stages
from reports.families import DTYPE_FAMILIES, SHORT_DTYPE_FAMILY
from reports.grid import EDGE_MARK, PARTIAL_MARK, TROUBLE_MARK, Grid, grid
from reports.matrix import (
    ABBREVIATIONS,
    ERROR_METRICS,
    HUGE_ULP,
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
    readable_message,
)
from reports.record import CRASH, ERROR, FAIL, NEGATIVE_PASSES, PASS, REJECTED, TIMEOUT, VERDICTS, XFAIL, XPASS

NO_CASES = "-"
# Positive verdicts listed under "Cases to look at"; REJECTED/XFAIL/UNCHECKED/SKIP are summarised, not listed.
LOOK_AT = (CRASH, ERROR, FAIL, XPASS, TIMEOUT)
CASES_PER_CELL_MD = 3
MESSAGE_CHARS_MD = 120


def to_markdown(m: Matrix, title: str = "QNN op support matrix") -> str:
    """The report as GitHub markdown: one op x (backend x datatype family) grid, build details below it,
    then the cases to look at. The grid stays under ``MD_WIDTH`` columns for up to four backends."""
    backends = m.backends()
    out = [f"# {md(title)}", ""]
    if not backends:
        return "\n".join(out + ["No results records.", ""])
    g = grid(m)
    n_cases = sum(c.total for c in m.all_cells())
    not_generated = sorted({op for op, _ in m.not_generated}, key=m.op_key)
    out += [
        f"{len(backends)} backend(s), {len(g.rows)} op(s)"
        + (f" ({len(not_generated)} not generated)" if not_generated else "")
        + f", {n_cases} typical case(s).",
        "",
        "A cell is one backend and datatype family (" + ", ".join(
            f"`{SHORT_DTYPE_FAMILY[f]}` {f}" for f in DTYPE_FAMILIES) + "): the per cent of its **typical** cases "
        f"that pass (100 only when all do). `{PARTIAL_MARK}` the other cases were refused (partly supported); "
        f"`{TROUBLE_MARK}` the backend also errored, crashed or timed out; `{EDGE_MARK}` the **edge** "
        "tier (corner cases) found something; `^` a generation or release of a sweep differs from its base there "
        "(a group headed `qnn-htp = @v69 @v73` agrees with `qnn-htp` on every cell); `REJ` every case was "
        "refused (unsupported; the reasons are listed "
        "below the grid); `FORM` every case was refused as drawn but the backend runs them in a converter-standard "
        "form (named below the grid); `UNC` nothing could be "
        "checked; `-` no typical case ran; `n/g` the op is not generated (reason below the grid). The HTML page "
        "colours each cell and lists its cases.",
        "",
        "## Ops passing per backend and datatype family",
        "",
        _passing_table(g),
        "",
        "## Matrix",
        "",
        _grid_markdown(g),
        "",
    ]  # fmt: skip
    if not_generated:
        out += ["Not generated (no case can be built from the spec; never counted as failing):", ""]
        for op in not_generated:
            reasons = sorted({why for (o, _), why in m.not_generated.items() if o == op})
            out.append(f"- {md(op)}: {md('; '.join(reasons))}")
        out.append("")
    out += _routes_section(m)
    out += _refusals_section(m)
    out += _totals_section(m)
    out += stages.to_markdown(m)  # validate / finalize / execute (reports/stages.py)
    out += readings.to_markdown(m)  # open readings of the spec: which one each backend follows
    out += _build_section(m)
    out += _look_at_section(m)
    return "\n".join(out).rstrip("\n") + "\n"


def _routes_section(m: Matrix) -> list[str]:
    """Each op and configuration where qnn-htp and ort-qnn disagree on typical cases, with the mechanism of
    findings/routes.yaml or the finding that explains it (``reports.routes``): why the two cells differ."""
    if not m.routes:
        return []
    out = ["## Why qnn-htp and ort-qnn differ", "",
           "Both routes end in the same libQnnHtp.so: qnn-htp hands it one QNN op, ort-qnn the graph the QNN "
           "execution provider builds from the ONNX model. Per op and configuration, the typical cases whose verdicts "
           "or outputs differ and what explains them (`python -m reports agree` lists them case by case).", "",
           "| op | config | qnn-htp | ort-qnn | why they differ |", "|---|---|---|---|---|"]  # fmt: skip
    for (op, config), note in sorted(m.routes.items(), key=lambda kv: (m.op_key(kv[0][0]), config_sort_key(kv[0][1]))):
        cells = [m.cells.get((op, config, b)) for b in ("qnn-htp", "ort-qnn")]
        texts = [c.text() if c is not None else "" for c in cells]
        out.append(f"| {md(op)} | `{md(config)}` | {md(texts[0])} | {md(texts[1])} | {md(note.text())} |")
    return out + [""]


def _grid_markdown(g: Grid) -> str:
    """An aligned pipe table without cell padding (the padding is what would push it past 200 columns).
    Markdown has one header row, so the backends head their groups and the first row names the families."""
    headers = ["op"]
    families_row = [""]
    for backend in g.backends():
        fams = g.families_of(backend)
        headers += [md(g.label(backend))] + [""] * (len(fams) - 1)
        families_row += [SHORT_DTYPE_FAMILY[f] for f in fams]
    rows = [families_row]
    family = None
    for row in g.rows:
        if row.family != family:
            family = row.family
            rows.append([f"**{md(family)}**"] + [""] * (len(headers) - 1))
        line = [md(row.op)]
        for backend, fam in g.columns:
            if backend in row.not_generated:
                line.append("n/g")
                continue
            cell = row.cells.get((backend, fam))
            line.append(cell.text(percent_sign=False) if cell else "")
        rows.append(line)
    return compact_table(headers, rows)


def compact_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(3, len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "|" + "|".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + "|"

    return "\n".join([line(headers), "|" + "|".join("-" * w for w in widths) + "|", *map(line, rows)])


def _passing_table(g: Grid) -> str:
    """The summary chart as numbers: per backend and datatype family, ops whose typical cases all pass,
    of the ops with cases there."""
    counts = g.passing_ops()
    fams = [f for f in DTYPE_FAMILIES if any(f == c for _, c in g.columns)]
    rows = []
    for backend in g.backends():
        row = [md(backend)]
        for fam in fams:
            c = counts.get((backend, fam))
            row.append(f"{c[PASS]}/{sum(c.values())}" if c else "")
        rows.append(row)
    return _table(rows, ["ops passing / with cases", *fams])


REASON_CELLS_MD = 8  # cells named per reason in the markdown table; the JSON lists them all
REASON_CHARS_MD = 140


def _refusals_section(m: Matrix) -> list[str]:
    """What REJ means, per backend: the configurations the backend runs only in a converter-standard form (and
    which form), then every refusal reason with the typical cases and cells it holds."""
    out: list[str] = []
    for backend in m.backends():
        cells = [c for c in _cells_in_display_order(m) if c.backend == backend and c.kind != NEGATIVE]
        formed = [c for c in cells if c.standard_form()]
        reasons = refusals.table(cells)
        if not formed and not reasons:
            continue
        out += [f"### {md(backend)}", ""]
        if formed:
            out += ["Refused as drawn, supported in a converter-standard form (what a converter must emit):", ""]
            out += [f"- {md(c.op)} `{md(c.config)}`: supported as **{md(c.standard_form())}** (probe: "
                    f"{md(_probe_tally(c))})" for c in formed] + [""]  # fmt: skip
        if reasons:
            out += ["Refusal reasons (typical cases), from the backend's log: reason, cases, the cells they are in", ""]
            for why, n, holders in reasons:
                named = ", ".join(f"{md(c.op)} `{md(c.config)}`" for c in holders[:REASON_CELLS_MD])
                more = f" (+{len(holders) - REASON_CELLS_MD} more)" if len(holders) > REASON_CELLS_MD else ""
                out.append(f"- **REJ: {md(_first_line(why, REASON_CHARS_MD))}** — {n} case(s) in {len(holders)} "
                           f"cell(s): {named}{more}")
            out.append("")
    return ["## Refusals: reasons and standard forms", "", *out] if out else []


def _probe_tally(c: Cell) -> str:
    return "; ".join(f"{form}: " + ", ".join(f"{ABBREVIATIONS.get(v, v)} {n}" for v, n in sorted(counts.items()))
                     for form, counts in c.probes.items())  # fmt: skip


def _totals_section(m: Matrix) -> list[str]:
    out = ["## Totals", "", _totals_table(m), "", _verdicts_table(m), ""]
    if m.negative:
        out += ["Negative cases (each breaks one constraint; the good outcome is a clean rejection):", "",
                _negative_totals_table(m), ""]  # fmt: skip
    return out


def _build_section(m: Matrix) -> list[str]:
    out = ["## Build details", ""]
    for backend, t in m.totals().items():
        builds = t.builds or ["(no build information recorded)"]
        out += [f"- {md(backend)}:"] + [f"  - `{md(b)}`" for b in builds]
    runs = sorted({d.run_id for c in m.all_cells() for d in c.details if d.run_id})
    if runs:
        out.append(f"- runs with cases listed below: {', '.join(runs)}")
    return out + [""]


def _totals_table(m: Matrix) -> str:
    headers = ["backend", "ops", "ops with a PASS", "ops fully passing", "ops known (PASS or XFAIL)"]
    headers += ["ops with REJ", "ops with ERR", "ops with CRASH"]
    rows = [
        [md(t.backend), len(t.ops), len(t.ops_with_pass), len(t.ops_fully_passing), len(t.ops_known),
         len(t.ops_with_rejected),
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
        if sum(t.model_cases.values()):
            rows.append([md(t.backend), "model", *[t.model_cases[v] for v in STATUS_PRECEDENCE], "", ""])
    return _table(rows, ["cases: " + headers[0], *headers[1:]])


def _negative_totals_table(m: Matrix) -> str:
    headers = ["backend", "cases", *[c.lower() for c in NEGATIVE_PRECEDENCE]]
    headers[headers.index("rejected")] = "rejected cleanly"
    rows = []
    for t in m.totals().values():
        classes = t.negative_cases
        rows.append([md(t.backend), sum(classes.values()), *[classes[c] for c in NEGATIVE_PRECEDENCE]])
    return _table(rows, headers)


def _look_at_section(m: Matrix) -> list[str]:
    """Each backend's cases to look at, grouped by op and configuration, at most ``CASES_PER_CELL_MD`` per
    cell and tier: what was expected and produced (the message), the tolerance, the error and the replay."""
    out: list[str] = []
    for cell in _cells_in_display_order(m):
        items: list[str] = []
        for tier_cell in [cell] + ([cell.edge] if cell.edge is not None else []):
            wanted = [d for d in tier_cell.sorted_details() if _worth_listing(tier_cell, d)]
            items += [_case_item(cell, d, _tier_label(cell, d)) for d in wanted[:CASES_PER_CELL_MD]]
            if len(wanted) > CASES_PER_CELL_MD:
                items.append(f"  - (+{len(wanted) - CASES_PER_CELL_MD} more {tier_cell.tier} case(s) in this cell)")
        items += [_case_item(cell, d, "smallest failing (shrunk, not counted)") for d in cell.shrunk]
        if items:
            kind = " negative" if cell.kind == NEGATIVE else ""
            out += [f"- **{md(cell.backend)}** {md(cell.op)} `{md(cell.config)}`{kind}: {md(cell.display_text())}",
                    *items]
    return ["## Cases to look at", "", *out, ""] if out else []


def _case_item(cell: Cell, d: CaseDetail, tier: str) -> str:
    parts = [f"{_verdict_label(cell, d)}" + (f" ({tier})" if tier else "")]
    message = _message_md(d)
    if message:
        parts.append(message)
    tolerance = d.metrics.get("tolerance")
    if isinstance(tolerance, str) and tolerance:
        parts.append(f"tolerance {tolerance}")
    measured = measured_text(d.metrics)
    if measured:
        parts.append(f"measured {measured}")
    replay = d.replay or d.case_path or ""
    return "  - " + md(" — ".join(parts)) + (f" — `{md(replay)}`" if replay else "")


def measured_text(metrics: dict[str, Any]) -> str:
    """The errors a case measured, in a reader's words: "254 steps, abs 0.996, 5 mismatched"."""
    parts = []
    if "max_steps" in metrics:
        parts.append(f"{format_number(float(metrics['max_steps']))} steps")
    ulp = metrics.get("max_ulp")
    if isinstance(ulp, int | float) and (math.isnan(ulp) or ulp < HUGE_ULP):
        parts.append(f"{format_number(float(ulp))} ulp")
    for key, label in (("max_abs_err", "abs"), ("max_rel_err", "rel")):
        if isinstance(metrics.get(key), int | float):
            parts.append(f"{label} {format_number(float(metrics[key]))}")
    if metrics.get("mismatches"):
        parts.append(f"{metrics['mismatches']} mismatched")
    if metrics.get("not_checkable"):
        parts.append(f"{metrics['not_checkable']} not checkable")
    return ", ".join(parts)


def _tier_label(cell: Cell, d: CaseDetail) -> str:
    return "" if cell.kind == NEGATIVE else d.tier


def _worth_listing(cell: Cell, d: CaseDetail) -> bool:
    """Positive: the verdicts in LOOK_AT. Negative: anything but a clean rejection, an XFAIL or a SKIP."""
    if cell.kind == NEGATIVE:
        return d.verdict not in NEGATIVE_PASSES
    return d.verdict in LOOK_AT


def _verdict_label(cell: Cell, d: CaseDetail) -> str:
    if cell.kind == NEGATIVE:
        return f"negative: {d.verdict}" + (f" (breaks {d.broken})" if d.broken else "")
    return d.verdict


def _cells_in_display_order(m: Matrix) -> list[Cell]:
    return sorted(
        m.all_cells(),
        key=lambda c: (backend_sort_key(c.backend), c.kind == NEGATIVE, m.op_key(c.op), config_sort_key(c.config)),
    )


def md(text: Any) -> str:
    """Text safe inside a markdown table cell: one line, pipes escaped, HTML tags shown not interpreted."""
    s = " ".join(str(text).split())
    return html.escape(s, quote=False).replace("|", "\\|")


def _message_md(d: CaseDetail) -> str:
    message = _first_line(readable_message(d.message), MESSAGE_CHARS_MD)
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
        "grid": grid_json(grid(m)),
        "not_generated": [{"op": op, "backend": b, "reason": why} for (op, b), why in sorted(m.not_generated.items())],
        "cells": [cell_json(c) for c in _cells_in_display_order(m) if c.kind != NEGATIVE],
        "negative_cells": [cell_json(c) for c in _cells_in_display_order(m) if c.kind == NEGATIVE],
        "refusal_reasons": {b: [{"reason": why, "cases": n, "cells": [{"op": c.op, "config": c.config} for c in held]}
                                for why, n, held in refusals.table([c for c in m.cells.values() if c.backend == b])]
                            for b in m.backends()},
    }
    # one line, not indented: json's C encoder runs only without indent (the indented form took 5 s of a main job's
    # reports, for a file of tens of MB that programs read)
    return json.dumps(_finite(doc), sort_keys=False) + "\n"


def grid_json(g: Grid) -> dict[str, Any]:
    """The readable grid for other programs: columns, and per op its family cells (status, rate, marks)."""
    rows = []
    for row in g.rows:
        cells = [{"backend": b, "dtype_family": f, "status": c.status, "text": c.text(), "passed": c.passed,
                  "total": c.total, "configs": [x.config for x in c.cells], "edge_news": c.edge_news(),
                  "refusal_reasons": dict(c.reasons.most_common()), "standard_forms": c.forms(),
                  **({"differs_from": c.differs} if c.differs else {})}
                 for (b, f), c in row.cells.items()]  # fmt: skip
        rows.append({"op": row.op, "family": row.family, "cells": cells, "not_generated": row.not_generated})
    return {"columns": [{"backend": b, "dtype_family": f} for b, f in g.columns], "rows": rows,
            "collapsed": g.collapsed}  # base -> the sweep's variants that agree with it on every cell


def totals_json(t: BackendTotals) -> dict[str, Any]:
    lists = {
        "ops": t.ops, "ops_with_pass": t.ops_with_pass, "ops_fully_passing": t.ops_fully_passing,
        "ops_known": t.ops_known,
        "ops_with_rejected": t.ops_with_rejected, "ops_with_error": t.ops_with_error,
        "ops_with_crash": t.ops_with_crash,
    }
    return {
        **{k: len(v) for k, v in lists.items()},
        "op_lists": lists,
        "cases": {v: t.cases[v] for v in VERDICTS},
        "edge_cases": {v: t.edge_cases[v] for v in VERDICTS},
        "model_cases": {v: t.model_cases[v] for v in VERDICTS},
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
    if c.reasons:
        d["refusal_reasons"] = dict(c.reasons.most_common())
        d["refusal_text"] = c.display_text()
    if c.probes:
        d["probes"] = {form: dict(counts) for form, counts in c.probes.items()}
        d["standard_form"] = c.standard_form()
        d["probe_details"] = [vars(detail) for detail in c.probe_details]
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


SUMMARY_WIDTH = 100


def aligned(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain terminal table, two spaces between columns and no more (tabulate pads headers wider)."""
    cells = [[str(h) for h in headers]] + [[str(x) for x in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def to_summary(m: Matrix, builds: bool = True) -> str:
    """The terminal summary in at most ``SUMMARY_WIDTH`` columns: per backend the ops whose typical cases
    all pass (of the ops run; an XFAIL is never a pass: those ops are "known"), the typical cases per verdict,
    the edge cases that were not PASS and the negative cases refused cleanly; the builds below the table (they
    are long: library paths), wrapped."""
    if not m.backends():
        return "no results records\n"
    totals = m.totals()
    shown = (PASS, XFAIL, FAIL, ERROR, CRASH, REJECTED)
    headers = ["backend", "ops ok", "known", "cases", *[ABBREVIATIONS.get(v, v) for v in shown], "other",
               "edge !ok", "neg rej"]  # fmt: skip
    rows = []
    for t in totals.values():
        edge_total = sum(t.edge_cases.values())
        neg_total = sum(t.negative_cases.values())
        other = sum(n for v, n in t.cases.items() if v not in shown)
        rows.append([t.backend, f"{len(t.ops_fully_passing)}/{len(t.ops)}", len(t.ops_known), sum(t.cases.values()),
                     *[t.cases[v] for v in shown], other, f"{edge_total - t.edge_cases[PASS]}/{edge_total}",
                     f"{t.negative_cases['REJECTED']}/{neg_total}"])  # fmt: skip
    out = [aligned(headers, rows)]
    if builds:
        lines = [f"{t.backend}: {b}" for t in totals.values() for b in t.builds]
        if lines:
            out += ["", "builds:"]
            for line in lines:
                out += textwrap.wrap(line, SUMMARY_WIDTH, initial_indent="  ", subsequent_indent="      ",
                                     break_long_words=True, break_on_hyphens=False)  # fmt: skip
    return "\n".join(out) + "\n"
