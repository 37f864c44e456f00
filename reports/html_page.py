"""The matrix as one self-contained HTML page: opens from disk, no network, no external assets.

Every piece of text that came from a results record goes through ``html.escape``: messages are
written by backends and may contain anything. Case details are rendered server-side into hidden
blocks (not built by JavaScript from JSON), so escaping happens in exactly one place, here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from reports.families import families, family_of
from reports.matrix import (
    ERROR_METRICS,
    NEGATIVE,
    NEGATIVE_PRECEDENCE,
    POSITIVE,
    STATUS_PRECEDENCE,
    CaseDetail,
    Cell,
    Matrix,
    format_number,
    negative_class,
)
from reports.render_text import metrics_text

DETAILS_PER_CELL = 50
NO_CASES = "-"

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1em 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; white-space: nowrap; }
thead th { background: #f0f0f0; position: sticky; top: 0; }
td[data-detail] { cursor: pointer; }
td[data-detail]:hover, td[data-detail]:focus { outline: 2px solid #333; }
td.dim { opacity: 0.2; }
.p-PASS { background: #c8e6c9; } .p-XFAIL { background: #e6f2d5; } .p-FAIL { background: #ef9a9a; }
.p-ERROR { background: #ffcc80; } .p-CRASH { background: #b71c1c; color: #fff; }
.p-TIMEOUT { background: #ce93d8; } .p-REJECTED { background: #e0e0e0; } .p-XPASS { background: #fff59d; }
.p-UNCHECKED { background: #bbdefb; } .p-SKIP { background: #f5f5f5; color: #777; }
.n-REJECTED { background: #c8e6c9; } .n-ACCEPTED { background: #ef9a9a; } .n-ERRORED { background: #ffcc80; }
.n-CRASHED { background: #b71c1c; color: #fff; } .n-XFAIL { background: #e6f2d5; } .n-XPASS { background: #fff59d; }
.n-NOT_RUN { background: #f5f5f5; color: #777; }
.none { color: #aaa; }
form fieldset { display: inline-block; vertical-align: top; margin: 0 1em 0.5em 0; }
form label { display: inline-block; margin-right: 0.6em; }
#panel { position: fixed; right: 0; top: 0; bottom: 0; width: 45%; overflow: auto; background: #fff;
  border-left: 2px solid #888; padding: 0.5em 1em; box-shadow: -4px 0 8px rgba(0,0,0,0.15); }
#panel pre { white-space: pre-wrap; margin: 0; }
#panel td { white-space: normal; vertical-align: top; }
.legend span { display: inline-block; padding: 0 6px; margin: 2px; border: 1px solid #ccc; }
"""

_JS = """
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var panel = document.getElementById("panel");
  var panelBody = document.getElementById("panel-body");
  function checked(name) {
    var set = {};
    form.querySelectorAll("input[name='" + name + "']").forEach(function (box) {
      if (box.checked) { set[box.value] = true; }
    });
    return set;
  }
  function applyFilters() {
    var fam = checked("family"), back = checked("backend"), verd = checked("verdict");
    document.querySelectorAll("[data-backend]").forEach(function (el) {
      el.hidden = !back[el.getAttribute("data-backend")];
    });
    document.querySelectorAll("table.matrix tbody tr").forEach(function (tr) {
      var any = false;
      tr.querySelectorAll("td[data-verdicts]").forEach(function (td) {
        var on = td.getAttribute("data-verdicts").split(" ").some(function (v) { return verd[v]; });
        td.classList.toggle("dim", !on);
        any = any || on;
      });
      tr.hidden = !fam[tr.getAttribute("data-family")] || !any;
    });
  }
  function setAll(name, value) {
    form.querySelectorAll("input[name='" + name + "']").forEach(function (box) { box.checked = value; });
    applyFilters();
  }
  function showDetail(id) {
    var source = document.getElementById(id);
    if (!source) { return; }
    panelBody.replaceChildren(source.cloneNode(true));
    panelBody.firstChild.hidden = false;
    panelBody.firstChild.removeAttribute("id");
    panel.hidden = false;
  }
  form.addEventListener("change", applyFilters);
  form.querySelectorAll("button[data-all]").forEach(function (button) {
    button.addEventListener("click", function () {
      setAll(button.getAttribute("data-all"), button.getAttribute("data-value") === "on");
    });
  });
  document.addEventListener("click", function (ev) {
    var td = ev.target.closest("td[data-detail]");
    if (td) { showDetail(td.getAttribute("data-detail")); }
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") { panel.hidden = true; return; }
    var td = ev.target.closest && ev.target.closest("td[data-detail]");
    if (td && ev.key === "Enter") { showDetail(td.getAttribute("data-detail")); }
  });
  document.getElementById("panel-close").addEventListener("click", function () { panel.hidden = true; });
  applyFilters();
})();
"""


def e(text: object) -> str:
    """Escape for HTML text and attribute values (quotes included)."""
    return html.escape(str(text), quote=True)


def token(word: str) -> str:
    """A verdict or outcome name as a CSS-class/attribute token ("NOT RUN" -> "NOT_RUN")."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", word)


def to_html(m: Matrix, title: str = "QNN op support matrix") -> str:
    """The full page. Cells are colour-coded by status; click (or Enter) on a cell opens its cases."""
    page = _Page(m)
    return page.render(title)


class _Page:
    """Holds the running detail-block numbering while the page is assembled."""

    def __init__(self, m: Matrix) -> None:
        self.m = m
        self.details: list[str] = []

    def render(self, title: str) -> str:
        m = self.m
        backends = m.backends()
        body: list[str] = [f"<h1>{e(title)}</h1>"]
        n_cases = sum(c.total for c in m.all_cells())
        body.append(
            f"<p>{len(backends)} backend(s), {len(m.ops())} op(s), {n_cases} case(s). A cell shows the most severe "
            "verdict among its cases and how many cases have it (of how many). Click a cell for its cases.</p>"
        )
        body.append(self._legend())
        body.append(self._filters(backends))
        body.append(self._totals(backends))
        for backend in backends:
            body.append(self._backend_section(backend))
        body.append('<div id="details" hidden="hidden">' + "".join(self.details) + "</div>")
        body.append(
            '<aside id="panel" hidden="hidden"><button type="button" id="panel-close">close (Esc)</button>'
            '<div id="panel-body"></div></aside>'
        )
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body)
            + f"\n<script>{_JS}</script>\n</body>\n</html>\n"
        )

    def _legend(self) -> str:
        positive = "".join(f'<span class="p-{token(s)}">{e(s)}</span>' for s in STATUS_PRECEDENCE)
        negative = "".join(f'<span class="n-{token(s)}">{e(s)}</span>' for s in NEGATIVE_PRECEDENCE)
        return (
            f'<p class="legend">Severity, most severe first: {positive}<br>'
            f"Negative cases (the good outcome is a clean rejection): {negative}</p>"
        )

    def _filters(self, backends: list[str]) -> str:
        present_families = {family_of(op) for op in self.m.ops()}
        fams = [f for f in families() if f in present_families]
        verdicts: list[str] = []
        for cell in self.m.all_cells():
            verdicts += [t for t in _cell_tokens(cell) if t not in verdicts]
        order = [token(s) for s in STATUS_PRECEDENCE]
        verdicts.sort(key=order.index)
        return (
            '<form id="filters">'
            + _fieldset("Op family", "family", fams)
            + _fieldset("Backend", "backend", backends)
            + _fieldset("Verdict", "verdict", verdicts)
            + "</form>"
        )

    def _totals(self, backends: list[str]) -> str:
        totals = self.m.totals()
        head = ["backend", "build", "ops", "ops with a PASS", "ops fully passing", "ops with REJECTED",
                "ops with ERROR", "ops with CRASH", *STATUS_PRECEDENCE, "negative: rejected cleanly",
                "negative: accepted", "negative: crashed"]
        rows = []
        for b in backends:
            t = totals[b]
            numbers = [len(t.ops), len(t.ops_with_pass), len(t.ops_fully_passing), len(t.ops_with_rejected),
                       len(t.ops_with_error), len(t.ops_with_crash), *[t.cases[v] for v in STATUS_PRECEDENCE],
                       t.negative_cases["REJECTED"], t.negative_cases["ACCEPTED"], t.negative_cases["CRASHED"]]
            rows.append(
                f'<tr data-backend="{e(b)}"><th scope="row">{e(b)}</th><td>{"<br>".join(e(x) for x in t.builds)}</td>'
                + "".join(f"<td>{n}</td>" for n in numbers)
                + "</tr>"
            )
        return (
            '<h2>Totals</h2>\n<table class="totals"><thead><tr>'
            + "".join(f"<th>{e(h)}</th>" for h in head)
            + "</tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
        )

    def _backend_section(self, backend: str) -> str:
        m = self.m
        parts = [f'<section class="backend" data-backend="{e(backend)}">', f"<h2>{e(backend)}</h2>"]
        builds = m.totals()[backend].builds
        if builds:
            parts.append("<p>Build: " + "; ".join(f"<code>{e(b)}</code>" for b in builds) + "</p>")
        for kind, heading in ((POSITIVE, ""), (NEGATIVE, f"Negative cases on {backend}")):
            ops = m.ops(backend, kind=kind)
            if not ops:
                continue
            configs = m.configs(backend, kind=kind)
            if heading:
                parts.append(f"<h3>{e(heading)}</h3>")
            parts.append(
                f'<table class="matrix {kind}"><thead><tr><th>op</th><th>family</th>'
                + "".join(f"<th>{e(c)}</th>" for c in configs)
                + "</tr></thead><tbody>"
            )
            for op in ops:
                cells = [m.cell(op, config, backend, kind) for config in configs]
                parts.append(
                    f'<tr data-family="{e(family_of(op))}"><th scope="row">{e(op)}</th><td>{e(family_of(op))}</td>'
                    + "".join(self._cell(c) for c in cells)
                    + "</tr>"
                )
            parts.append("</tbody></table>")
        parts.append("</section>")
        return "\n".join(parts)

    def _cell(self, cell: Cell | None) -> str:
        if cell is None:
            return f'<td class="none">{NO_CASES}</td>'
        prefix = "n" if cell.kind == NEGATIVE else "p"
        detail_id = f"d{len(self.details)}"
        self.details.append(_detail_block(detail_id, cell))
        title = ", ".join(f"{v} {n}" for v, n in sorted(cell.counts.items()) if n)
        return (
            f'<td class="{prefix}-{token(cell.status)}" data-verdicts="{e(" ".join(_cell_tokens(cell)))}" '
            f'data-detail="{detail_id}" tabindex="0" title="{e(title)}">{e(cell.text())}</td>'
        )


def _cell_tokens(cell: Cell) -> list[str]:
    """What the verdict filter matches a cell on: the verdicts of its cases, for negative cells too
    (filtering on CRASH should find every crash; the colour already tells a negative cell's class)."""
    return [token(v) for v in STATUS_PRECEDENCE if cell.counts[v]]


def _fieldset(legend: str, name: str, values: Iterable[str]) -> str:
    boxes = "".join(
        f'<label><input type="checkbox" name="{e(name)}" value="{e(v)}" checked="checked"> {e(v)}</label>'
        for v in values
    )
    buttons = (
        f'<button type="button" data-all="{e(name)}" data-value="on">all</button>'
        f'<button type="button" data-all="{e(name)}" data-value="off">none</button>'
    )
    return f"<fieldset><legend>{e(legend)}</legend>{boxes}{buttons}</fieldset>"


def _detail_block(detail_id: str, cell: Cell) -> str:
    counts = ", ".join(f"{v}: {n}" for v, n in sorted(cell.counts.items()) if n)
    worst = " ".join(f"{k}={format_number(cell.worst[k])}" for k in ERROR_METRICS if k in cell.worst)
    parts = [
        f'<div class="detail" id="{detail_id}" hidden="hidden">',
        f"<h3>{e(cell.op)} &middot; {e(cell.config)} &middot; {e(cell.backend)} &middot; {e(cell.kind)}</h3>",
        f"<p>Status: <b>{e(cell.status)}</b> &middot; shown as {e(cell.text())} &middot; cases: {e(counts)}</p>",
    ]
    if worst:
        parts.append(f"<p>Worst: {e(worst)}</p>")
    if cell.builds:
        parts.append("<p>Build: " + "; ".join(f"<code>{e(b)}</code>" for b in cell.builds) + "</p>")
    if cell.draws:
        parts.append("<p>Draws: " + "; ".join(
            f"{e(t)}: {d.get('cases', 0)} of {d.get('requested', 0)} requested, {d.get('refusals', 0)} refused by the "
            f"generator" for t, d in sorted(cell.draws.items())) + "</p>")  # fmt: skip
    parts += _detail_table(cell, "typical cases" if cell.kind != NEGATIVE else "cases")
    if cell.edge is not None:
        edge_counts = ", ".join(f"{v}: {n}" for v, n in sorted(cell.edge.counts.items()) if n)
        parts.append(f"<h4>Edge tier (corner cases; never the cell's verdict): {e(edge_counts)}</h4>")
        parts += _detail_table(cell.edge, "edge cases")
    if cell.shrunk:
        parts.append("<h4>Smallest failing case (shrunk; not counted)</h4>")
        rows = "".join(_detail_row(d, cell.kind) for d in cell.shrunk)
        parts.append("<table><thead><tr><th>verdict</th><th>case</th><th>message</th><th>metrics</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>")  # fmt: skip
    parts.append("</div>")
    return "".join(parts)


def _detail_table(cell: Cell, what: str) -> list[str]:
    details = cell.sorted_details()
    if not details:
        return [f"<p>Every one of the {e(what)} had the good outcome.</p>"]
    parts = ["<table><thead><tr><th>verdict</th><th>case</th><th>message</th><th>metrics</th></tr></thead><tbody>"]
    parts += [_detail_row(d, cell.kind) for d in details[:DETAILS_PER_CELL]]
    parts.append("</tbody></table>")
    if len(details) > DETAILS_PER_CELL:
        parts.append(f"<p>{len(details) - DETAILS_PER_CELL} more case(s) not shown.</p>")
    return parts


def _detail_row(d: CaseDetail, kind: str) -> str:
    case_lines = [d.test_id]
    if d.case_id:
        case_lines.append(f"case id: {d.case_id} ({d.tier})")
    if d.case_path:
        case_lines += [f"case: {d.case_path}", f"replay: {d.replay}"]
    if d.seed is not None:
        case_lines.append(f"seed: {d.seed}")
    if d.broken:
        case_lines.append(f"breaks: {d.broken}")
    if d.run_id:
        case_lines.append(f"run: {d.run_id}")
    if d.dtypes:
        case_lines.append("dtypes: " + ", ".join(f"{k}={v}" for k, v in sorted(d.dtypes.items())))
    css = f"n-{token(negative_class(d.verdict))}" if kind == NEGATIVE else f"p-{token(d.verdict)}"
    message = d.message + (f"\n[expectations: {d.expectation}]" if d.expectation else "")
    return (
        f'<tr><td class="{css}">{e(d.verdict)}</td>'
        f"<td><pre>{e(chr(10).join(case_lines))}</pre></td>"
        f"<td><pre>{e(message)}</pre></td>"
        f"<td><pre>{e(metrics_text({k: v for k, v in d.metrics.items() if k != 'budget'}))}</pre></td></tr>"
    )
