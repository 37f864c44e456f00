"""The matrix as one self-contained HTML page: opens from disk, no network, no external assets.

One grid: rows are ops grouped by family, columns are backends (HTP first, reference last) split
into datatype families. A cell is coloured by its typical tier and reads as its pass rate; clicking
it (or Enter) opens its cases: what was expected and produced, the tolerance, the error measured
and the replay command. Build details sit in a collapsible header; the summary chart is inlined.

Every piece of text that came from a results record goes through ``html.escape``: messages are
written by backends and may contain anything. Case details are rendered server-side into hidden
blocks (not built by JavaScript from JSON), so escaping happens in exactly one place, here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

from reports.families import DTYPE_FAMILIES, SHORT_DTYPE_FAMILY, family_sort_key
from reports.grid import (
    EDGE_MARK,
    GRID_STATUSES,
    PARTIAL_MARK,
    STATUS_COLOURS,
    STATUS_WORDS,
    TROUBLE_MARK,
    FamilyCell,
    Grid,
    GridRow,
    grid,
)
from reports.matrix import NEGATIVE, CaseDetail, Cell, Matrix, config_sort_key, negative_class, readable_message
from reports.render_text import measured_text
from reports.routes import ROUTE_A, ROUTE_B

ROUTE_BACKENDS = (ROUTE_A, ROUTE_B)  # the two routes to libQnnHtp.so whose cells link to why they differ

CASES_PER_CELL = 20  # per configuration and tier; the rest are counted, and the results file has them all
NOT_GENERATED = "NOT_GENERATED"
EDGE_TOKEN = "EDGE"

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0.5em 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0.3em 0; } h2 { font-size: 1.15em; margin: 1em 0 0.3em; }
details.builds { margin: 0.3em 0; } details.builds summary { cursor: pointer; font-weight: 600; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ddd; padding: 1px 5px; text-align: left; white-space: nowrap; }
table.grid { font-size: 13px; }
table.grid thead th { background: #f4f4f4; position: sticky; z-index: 2; text-align: center; }
table.grid thead tr.backends th { top: 0; height: 1.5em; }
table.grid thead tr.dfams th { top: 1.6em; font-weight: normal; }
table.grid th.op { position: sticky; left: 0; background: #fff; z-index: 1; cursor: pointer; text-align: left; }
table.grid thead th.op { z-index: 3; background: #f4f4f4; cursor: default; }
table.grid tr.group th { background: #e8eaf6; text-align: left; position: sticky; left: 0; }
table.grid td.cell { text-align: center; min-width: 3.2em; cursor: pointer; }
table.grid td.cell:hover, table.grid td.cell:focus, th.op:focus { outline: 2px solid #333; }
table.grid td.gap { background: #fafafa; }
table.grid td.notgen { color: #555; font-style: italic; background: repeating-linear-gradient(45deg, #f7f7f7,
  #f7f7f7 6px, #efefef 6px, #efefef 12px); white-space: normal; }
table.grid .bstart { border-left: 3px solid #888; }
.mark { font-weight: 700; }
#filters fieldset { display: inline-block; vertical-align: top; margin: 0 0.6em 0.4em 0; padding: 2px 6px; }
#filters label { display: inline-block; margin-right: 0.5em; }
#filters button { font-size: 11px; }
.legend span { display: inline-block; padding: 0 6px; margin: 1px; border: 1px solid #ccc; font-size: 12px; }
img.chart { max-width: 560px; width: 100%; border: 1px solid #eee; }
div.top { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
div.top > div:last-child { flex: 1 1 480px; }
#panel { position: fixed; right: 0; top: 0; bottom: 0; width: 48%; overflow: auto; background: #fff; z-index: 5;
  border-left: 2px solid #888; padding: 0.5em 1em; box-shadow: -4px 0 8px rgba(0,0,0,0.15); }
#panel table { margin: 0.3em 0 0.8em; }
#panel td { white-space: normal; vertical-align: top; }
#panel pre, #panel code { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
#panel table.cases { width: 100%; table-layout: fixed; }
#panel table.cases th:nth-child(1) { width: 6.5em; } #panel table.cases th:nth-child(2) { width: 34%; }
#panel table.cases th:nth-child(3), #panel table.cases th:nth-child(4) { width: 12%; }
#panel h3 { margin: 0.2em 0; } #panel h4 { margin: 0.8em 0 0.2em; }
table.totals td { text-align: right; } table.totals th { text-align: left; }
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
    var fam = checked("family"), back = checked("backend"), dfam = checked("dfam"), stat = checked("status");
    var text = document.getElementById("op-search").value.trim().toLowerCase();
    var columnOn = function (el) {
      return !!back[el.getAttribute("data-backend")] && !!dfam[el.getAttribute("data-dfam")];
    };
    document.querySelectorAll("table.grid [data-dfam]").forEach(function (el) { el.hidden = !columnOn(el); });
    document.querySelectorAll("table.grid [data-span-backend]").forEach(function (el) {
      var b = el.getAttribute("data-span-backend");
      var n = document.querySelectorAll("table.grid thead tr.dfams th[data-backend='" + b + "']:not([hidden])").length;
      el.hidden = n === 0;
      if (n > 0) { el.colSpan = n; }
    });
    var shown = 0;
    document.querySelectorAll("table.grid tbody tr.op").forEach(function (tr) {
      var any = false;
      tr.querySelectorAll("td[data-status]").forEach(function (td) {
        if (td.hidden) { return; }
        if (td.getAttribute("data-status").split(" ").some(function (s) { return stat[s]; })) { any = true; }
      });
      var name = tr.getAttribute("data-op").toLowerCase();
      tr.hidden = !fam[tr.getAttribute("data-family")] || !any || (text !== "" && name.indexOf(text) < 0);
      if (!tr.hidden) { shown += 1; }
    });
    document.querySelectorAll("table.grid tbody tr.group").forEach(function (tr) {
      var f = tr.getAttribute("data-family");
      tr.hidden = !document.querySelector("table.grid tbody tr.op[data-family='" + f + "']:not([hidden])");
    });
    document.getElementById("shown").textContent = shown;
  }
  function setAll(name, value) {
    form.querySelectorAll("input[name='" + name + "']").forEach(function (box) { box.checked = value; });
    applyFilters();
  }
  function showDetail(id) {
    var source = document.getElementById(id);
    if (!source) { return; }
    var copy = source.cloneNode(true);
    copy.hidden = false;
    copy.removeAttribute("id");
    panelBody.replaceChildren(copy);
    panel.hidden = false;
    panel.scrollTop = 0;
  }
  form.addEventListener("change", applyFilters);
  document.getElementById("op-search").addEventListener("input", applyFilters);
  form.querySelectorAll("button[data-all]").forEach(function (button) {
    button.addEventListener("click", function () {
      setAll(button.getAttribute("data-all"), button.getAttribute("data-value") === "on");
    });
  });
  document.addEventListener("click", function (ev) {
    var target = ev.target.closest("[data-detail]");
    if (target) { showDetail(target.getAttribute("data-detail")); }
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") { panel.hidden = true; return; }
    var target = ev.target.closest && ev.target.closest("[data-detail]");
    if (target && ev.key === "Enter") { showDetail(target.getAttribute("data-detail")); }
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
    return _Page(m).render(title)


def _chart_img(g: Grid) -> str:
    try:
        from reports import chart

        uri = chart.data_uri(g)
    except ImportError as exc:  # the page stays complete without it; the reason is on the page
        return f"<p>(summary chart not drawn: {e(exc)}; install matplotlib)</p>"
    alt = "Ops per backend and datatype family: passing, partly supported, failing, refused"
    return f'<img class="chart" alt="{e(alt)}" src="{uri}">'


class _Page:
    """Holds the running detail-block numbering while the page is assembled."""

    def __init__(self, m: Matrix) -> None:
        self.m = m
        self.g = grid(m)
        self.details: list[str] = []

    def _detail(self, block: str) -> str:
        detail_id = f"d{len(self.details)}"
        self.details.append(block.replace("{ID}", detail_id, 1))
        return detail_id

    def render(self, title: str) -> str:
        m, g = self.m, self.g
        n_cases = sum(c.total for c in m.all_cells())
        n_not_generated = len({op for op, _ in m.not_generated})
        body: list[str] = [f"<h1>{e(title)}</h1>"]
        body.append(
            f"<p>{len(g.backends())} backend(s), {len(g.rows)} op(s)"
            + (f" ({n_not_generated} not generated)" if n_not_generated else "")
            + f", {n_cases} typical case(s). A cell is one backend and datatype family: the share of its "
            "<b>typical</b> cases that pass, coloured by the most severe verdict among them. "
            f"<span class='mark'>{PARTIAL_MARK}</span> the other configurations were refused, "
            f"<span class='mark'>{TROUBLE_MARK}</span> errors, crashes or timeouts, "
            f"<span class='mark'>{EDGE_MARK}</span> the edge tier (corner cases) found something. "
            "<b>REJ</b> every case refused (the cell lists the backend's reasons); <b>FORM</b> refused as drawn, "
            "but the backend runs it in the converter-standard form the cell names. "
            "Click a cell for its cases, an op name for all of the op's results.</p>"
        )
        if not g.backends():
            body.append("<p>No results records.</p>")
        body.append(self._builds())
        body.append('<div class="top"><div>' + _chart_img(g) + "</div><div>" + self._legend() + self._filters()
                    + "</div></div>")  # fmt: skip
        body.append(self._grid())
        body.append(self._routes())
        body.append(self._totals())
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

    def _builds(self) -> str:
        totals = self.m.totals()
        runs: dict[str, set[str]] = {}
        for c in self.m.all_cells():
            for d in c.details:
                if d.run_id:
                    runs.setdefault(c.backend, set()).add(d.run_id)
        rows = "".join(
            f"<tr><th>{e(b)}</th><td>{'<br>'.join(f'<code>{e(x)}</code>' for x in totals[b].builds) or '-'}</td>"
            f"<td>{e(', '.join(sorted(runs.get(b, ()))))}</td></tr>"
            for b in self.g.backends()
            if b in totals
        )
        return (
            '<details class="builds"><summary>Build details</summary>'
            "<table><thead><tr><th>backend</th><th>build</th><th>runs with cases to look at</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></details>"
        )

    def _legend(self) -> str:
        spans = "".join(
            f'<span style="background:{STATUS_COLOURS[s]}" title="{e(STATUS_WORDS[s])}">{e(s)}</span>'
            for s in GRID_STATUSES
        )
        return f'<p class="legend">Colours, most severe first: {spans}</p>'

    def _filters(self) -> str:
        g = self.g
        fams = sorted({row.family for row in g.rows}, key=family_sort_key)
        dfams = [f for f in DTYPE_FAMILIES if any(f == c for _, c in g.columns)]
        statuses: list[str] = []
        for row in g.rows:
            for cell in row.cells.values():
                statuses += [t for t in _cell_tokens(cell) if t not in statuses]
            if row.not_generated and NOT_GENERATED not in statuses:
                statuses.append(NOT_GENERATED)
        order = [token(s) for s in GRID_STATUSES] + [EDGE_TOKEN, NOT_GENERATED]
        statuses.sort(key=order.index)
        search = ('<fieldset><legend>Op name</legend><input type="search" id="op-search" placeholder="contains..."> '
                  '<span id="shown"></span> shown</fieldset>')  # fmt: skip
        return (
            '<form id="filters">'
            + search
            + _fieldset("Op family", "family", fams)
            + _fieldset("Backend", "backend", g.backends())
            + _fieldset("Datatype family", "dfam", dfams)
            + _fieldset("Show ops with", "status", statuses)
            + "</form>"
        )

    def _grid(self) -> str:
        g = self.g
        head1 = ['<th class="op" rowspan="2">op</th>']
        head2 = []
        for backend in g.backends():
            fams = g.families_of(backend)
            head1.append(f'<th colspan="{len(fams)}" data-span-backend="{e(backend)}" class="bstart">'
                         f"{e(g.label(backend))}</th>")
            for i, fam in enumerate(fams):
                css = ' class="bstart"' if i == 0 else ""
                head2.append(f'<th{css} data-backend="{e(backend)}" data-dfam="{e(fam)}" title="{e(fam)}">'
                             f"{e(SHORT_DTYPE_FAMILY[fam])}</th>")  # fmt: skip
        rows = []
        family = None
        width = 1 + len(g.columns)
        for row in g.rows:
            if row.family != family:
                family = row.family
                rows.append(f'<tr class="group" data-family="{e(family)}"><th colspan="{width}">{e(family)}</th></tr>')
            rows.append(self._row(row))
        return (
            '<table class="grid"><thead>'
            f'<tr class="backends">{"".join(head1)}</tr><tr class="dfams">{"".join(head2)}</tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def _row(self, row: GridRow) -> str:
        g = self.g
        op_detail = self._detail(self._op_block(row))
        parts = [f'<tr class="op" data-op="{e(row.op)}" data-family="{e(row.family)}">'
                 f'<th class="op" scope="row" data-detail="{op_detail}" tabindex="0">{e(row.op)}</th>']  # fmt: skip
        for backend in g.backends():
            fams = g.families_of(backend)
            if backend in row.not_generated:
                parts.append(
                    f'<td class="notgen bstart" colspan="{len(fams)}" data-span-backend="{e(backend)}" '
                    f'data-status="{NOT_GENERATED}">not generated: {e(row.not_generated[backend])}</td>'
                )
                continue
            for i, fam in enumerate(fams):
                cell = row.cells.get((backend, fam))
                start = " bstart" if i == 0 else ""
                attrs = f'data-backend="{e(backend)}" data-dfam="{e(fam)}"'
                if cell is None:
                    parts.append(f'<td class="gap{start}" {attrs} data-status="" title="no configuration"></td>')
                    continue
                detail = self._detail(self._cell_block(cell))
                title = cell.status + ": " + cell.summary()
                differ = sum(n.cases for n in (self._route_note(c) for c in cell.cells) if n is not None)
                if differ:
                    title += f" · {differ} typical case(s) differ between qnn-htp and ort-qnn (see the cell)"
                parts.append(
                    f'<td class="cell{start}" {attrs} style="background:{STATUS_COLOURS[cell.status]}" '
                    f'data-status="{e(" ".join(_cell_tokens(cell)))}" data-detail="{detail}" tabindex="0" '
                    f'title="{e(title)}">{e(cell.text())}</td>'
                )
        parts.append("</tr>")
        return "".join(parts)

    def _cell_block(self, fc: FamilyCell) -> str:
        parts = [
            '<div class="detail" id="{ID}" hidden="hidden">',
            f"<h3>{e(fc.op)} &middot; {e(fc.backend)} &middot; {e(fc.dtype_family)}</h3>",
            f"<p><b>{e(fc.status)}</b> ({e(STATUS_WORDS[fc.status])}): {e(fc.summary())}</p>",
        ]
        rank = {v: i for i, v in enumerate(GRID_STATUSES)}
        for cell in sorted(fc.cells, key=lambda c: rank.get(c.status, len(rank))):  # the news first
            parts += _config_section(cell, self._route_note(cell))
        parts.append("</div>")
        return "".join(parts)

    def _op_block(self, row: GridRow) -> str:
        m = self.m
        parts = ['<div class="detail" id="{ID}" hidden="hidden">', f"<h3>{e(row.op)}</h3>",
                 f"<p>Family: {e(row.family)}</p>"]  # fmt: skip
        for backend in self.g.backends():
            parts.append(f"<h4>{e(backend)}</h4>")
            if backend in row.not_generated:
                parts.append(f"<p>Not generated: {e(row.not_generated[backend])}</p>")
                continue
            cells = [c for (b, _), fc in sorted(row.cells.items()) if b == backend for c in fc.cells]
            items = "".join(f"<li><code>{e(c.config)}</code>: {e(c.display_text())}</li>" for c in cells)
            parts.append(f"<ul>{items}</ul>" if items else "<p>No typical cases.</p>")
            negatives = [c for key, c in sorted(m.negative.items()) if key[0] == row.op and key[2] == backend]
            if negatives:
                parts.append("<p>Negative cases (each breaks one constraint; the good outcome is a clean "
                             "rejection):</p>")  # fmt: skip
                for c in negatives:
                    parts.append(f"<p><code>{e(c.config)}</code>: {e(c.text())}</p>")
                    parts += _cases_table(c, "negative cases")
        parts.append("</div>")
        return "".join(parts)

    def _route_note(self, cell: Cell) -> Any:
        """The note on why this qnn-htp or ort-qnn cell differs from the other route, if it does."""
        return self.m.routes.get((cell.op, cell.config)) if cell.backend in ROUTE_BACKENDS else None

    def _routes(self) -> str:
        """The table every route note of a cell links to: per op and configuration, both routes' cells and the
        mechanism (findings/routes.yaml) or finding that explains their typical disagreements."""
        notes = self.m.routes
        if not notes:
            return ""
        rows = []
        for (op, config), note in sorted(notes.items(), key=lambda kv: (self.m.op_key(kv[0][0]),
                                                                       config_sort_key(kv[0][1]))):  # fmt: skip
            cells = [self.m.cells.get((op, config, b)) for b in ROUTE_BACKENDS]
            texts = "".join(f"<td>{e(c.text()) if c is not None else ''}</td>" for c in cells)
            rows.append(f'<tr id="{e(note.anchor)}"><th>{e(op)}</th><td><code>{e(config)}</code></td>{texts}'
                        f"<td>{e(note.text())}</td></tr>")  # fmt: skip
        return ('<h2 id="routes">Why qnn-htp and ort-qnn differ</h2><p>Both routes end in the same libQnnHtp.so: '
                "qnn-htp hands it one QNN op, ort-qnn the graph the QNN execution provider builds from the ONNX model. "
                "Per op and configuration, the typical cases whose verdicts or outputs differ and the mechanism "
                "(findings/routes.yaml) or finding that explains them.</p>"
                '<table class="totals"><thead><tr><th>op</th><th>config</th><th>qnn-htp</th><th>ort-qnn</th>'
                f"<th>why they differ</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")  # fmt: skip

    def _totals(self) -> str:
        totals = self.m.totals()
        head = ["backend", "ops", "ops fully passing", "ops known", "typical cases", "PASS", "XFAIL (known)", "FAIL",
                "ERROR", "CRASH", "REJECTED", "UNCHECKED", "edge cases", "edge not PASS", "negative: rejected cleanly",
                "negative: accepted"]  # fmt: skip
        rows = []
        for b in self.g.backends():
            t = totals.get(b)
            if t is None:
                continue
            edge_total = sum(t.edge_cases.values())
            numbers = [len(t.ops), len(t.ops_fully_passing), len(t.ops_known), sum(t.cases.values()), t.cases["PASS"],
                       t.cases["XFAIL"], t.cases["FAIL"],
                       t.cases["ERROR"], t.cases["CRASH"], t.cases["REJECTED"], t.cases["UNCHECKED"], edge_total,
                       edge_total - t.edge_cases["PASS"], t.negative_cases["REJECTED"],
                       t.negative_cases["ACCEPTED"]]  # fmt: skip
            rows.append(f"<tr><th>{e(b)}</th>" + "".join(f"<td>{n}</td>" for n in numbers) + "</tr>")
        return (
            '<h2>Totals</h2><table class="totals"><thead><tr>'
            + "".join(f"<th>{e(h)}</th>" for h in head)
            + "</tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
        )


def _cell_tokens(cell: FamilyCell) -> list[str]:
    """What the status filter matches a grid cell on: its colour, the verdicts of its typical cases
    (filtering on CRASH finds every crash, even one hidden under a FAIL colour) and edge news."""
    tokens = [token(cell.status)]
    tokens += [token(v) for v in GRID_STATUSES if cell.counts[v] and token(v) not in tokens]
    if cell.edge_news():
        tokens.append(EDGE_TOKEN)
    return tokens


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


def _config_section(cell: Cell, route: Any = None) -> list[str]:
    """``route``: the note on why the other route differs on this op and configuration (``reports.routes``)."""
    parts = [f"<h4><code>{e(cell.config)}</code>: {e(cell.display_text())}</h4>"]
    if route is not None:
        other = [b for b in ROUTE_BACKENDS if b != cell.backend][0]
        link = f'<a href="#{e(route.anchor)}">{e(route.text())}</a>'
        parts.append(f'<p class="route">Differs from {e(other)}: {link}</p>')
    counts = ", ".join(f"{v} {n}" for v, n in sorted(cell.counts.items()) if n)
    line = f"typical: {counts or 'no case'}"
    if cell.edge is not None:
        edge = ", ".join(f"{v} {n}" for v, n in sorted(cell.edge.counts.items()) if n)
        line += f" &middot; edge (corner cases, never the cell's colour): {e(edge)}"
    parts.append(f"<p>{e(line) if cell.edge is None else line}</p>")
    if cell.draws:
        parts.append("<p>Draws: " + "; ".join(
            f"{e(t)}: {d.get('cases', 0)} of {d.get('requested', 0)} requested, {d.get('refusals', 0)} refused by the "
            f"generator" for t, d in sorted(cell.draws.items())) + "</p>")  # fmt: skip
    parts += _cases_table(cell, "typical cases")
    parts += _probes_table(cell)
    if cell.edge is not None:
        parts += _cases_table(cell.edge, "edge cases")
    if cell.shrunk:
        parts.append("<p>Smallest failing case (shrunk; not counted):</p>")
        parts += _rows_table(cell.shrunk, cell.kind)
    return parts


def _cases_table(cell: Cell, what: str) -> list[str]:
    details = cell.sorted_details()
    if not details:
        return [f"<p>All {cell.total} {e(what)} had the good outcome.</p>"] if cell.total else []
    refused = [d for d in details if d.verdict == "REJECTED"] if cell.kind != NEGATIVE else []
    out = _refusals_by_reason(refused, what, all_refused=len(refused) == len(details))
    if len(refused) == len(details):  # refusals repeat a few reasons: said once each, not a table of like rows
        return out
    details = [d for d in details if d.verdict != "REJECTED"] if refused else details
    out.append(f"<p>{e(what.capitalize())} to look at ({len(details)} of {cell.total}):</p>")
    out += _rows_table(details[:CASES_PER_CELL], cell.kind)
    if len(details) > CASES_PER_CELL:
        out.append(f"<p>{len(details) - CASES_PER_CELL} more case(s) in the results file.</p>")
    return out


def _refusals_by_reason(refused: list[CaseDetail], what: str, all_refused: bool) -> list[str]:
    """Refused cases grouped by the backend's reason: each reason once, with how many cases and one replay."""
    if not refused:
        return []
    groups: dict[str, list[CaseDetail]] = {}
    for d in refused:
        groups.setdefault(d.reason or readable_message(d.message), []).append(d)
    head = f"All {len(refused)} {what}" if all_refused else f"{len(refused)} {what}"
    items = "".join(f"<li><b>REJ: {e(why)}</b> ({len(ds)} case{'s' if len(ds) != 1 else ''}); replay one: "
                    f"<code>{e(ds[0].replay or ds[0].case_path or '')}</code></li>"
                    for why, ds in sorted(groups.items(), key=lambda kv: -len(kv[1])))  # fmt: skip
    return [f"<p>{e(head)} refused at validation, by the backend's reason:</p><ul>{items}</ul>"]


def _probes_table(cell: Cell) -> list[str]:
    """The probe: the cell's refused cases again in converter-standard forms, one change at a time (never part
    of the cell's rates), and which form the backend runs."""
    if not cell.probes:
        return []
    form = cell.standard_form()
    lead = (f"Supported as <b>{e(form)}</b>: what a converter must emit for this configuration." if form else
            "No converter-standard form was accepted: the configuration is refused as such.")  # fmt: skip
    rows = []
    for name, counts in cell.probes.items():
        first = next((d for d in cell.probe_details if d.form == name), None)
        tally = ", ".join(f"{v} {n}" for v, n in sorted(counts.items()) if n)
        why = first.reason if first is not None else ""
        replay = (first.replay or first.case_path or "") if first is not None else ""
        rows.append(f"<tr><td>{e(name)}</td><td>{e(tally)}</td><td>{e(why)}</td><td><code>{e(replay)}</code></td></tr>")
    return [f"<p>Probe (the same cases in converter-standard forms, one change at a time; not counted): {lead}</p>",
            '<table class="cases"><thead><tr><th>form</th><th>verdicts</th><th>refused because</th><th>replay one'
            "</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"]  # fmt: skip


def _rows_table(details: list[CaseDetail], kind: str) -> list[str]:
    head = "<tr><th>verdict</th><th>expected / got</th><th>tolerance</th><th>error measured</th><th>replay</th></tr>"
    return ['<table class="cases"><thead>' + head + "</thead><tbody>" + "".join(_detail_row(d, kind) for d in details)
            + "</tbody></table>"]  # fmt: skip


def _detail_row(d: CaseDetail, kind: str) -> str:
    css_status = negative_class(d.verdict) if kind == NEGATIVE else d.verdict
    colour = STATUS_COLOURS.get(d.verdict if kind != NEGATIVE else _negative_colour(css_status), "#fff")
    verdict = d.verdict + (f" ({d.tier})" if d.tier else "") + (f"; breaks {d.broken}" if d.broken else "")
    message = readable_message(d.message) + (f"\n[expectations: {d.expectation}]" if d.expectation else "")
    tolerance = d.metrics.get("tolerance") if isinstance(d.metrics.get("tolerance"), str) else ""
    budget = d.metrics.get("budget")
    source = budget.get("source") if isinstance(budget, dict) else None
    case = [f"case {d.case_id}" if d.case_id else "", f"seed {d.seed}" if d.seed is not None else "", d.test_id]
    return (
        f'<tr><td style="background:{colour}">{e(verdict)}</td>'
        f'<td class="msg"><pre>{e(message)}</pre></td>'
        f"<td>{e(tolerance)}" + (f"<br><small>{e(source)}</small>" if source else "") + "</td>"
        f"<td>{e(measured_text(d.metrics))}</td>"
        f'<td class="replay"><code>{e(d.replay or d.case_path or "(not saved)")}</code><br><small>'
        + e(" · ".join(x for x in case if x))
        + "</small></td></tr>"
    )


def _negative_colour(outcome: str) -> str:
    """Negative outcomes in the positive palette: a clean rejection is the good outcome (green)."""
    return {"REJECTED": "PASS", "ACCEPTED": "FAIL", "ERRORED": "ERROR", "CRASHED": "CRASH", "NOT RUN": "SKIP"}.get(
        outcome, outcome
    )

