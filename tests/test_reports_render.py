"""Renderings of the matrix: the checked-in markdown, a well-formed escaped HTML page, CSV and JSON.

To regenerate the expected markdown after an intended change (and review the diff before committing):
    python -m reports matrix tests/data/reports/results.jsonl --format md -o tests/data/reports/results.md
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reports import html_page, matrix, record, render_text
from reports.record import Record

DATA = Path(__file__).parent / "data" / "reports"
RESULTS = DATA / "results.jsonl"
EXPECTED_MD = DATA / "results.md"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@pytest.fixture(scope="module")
def fixture_matrix() -> matrix.Matrix:
    return matrix.build(record.read([RESULTS]))


@pytest.fixture(scope="module")
def page(fixture_matrix: matrix.Matrix) -> str:
    return html_page.to_html(fixture_matrix)


class PageParser(HTMLParser):
    """Checks that every non-void element is closed in order, and collects what the tests look at."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, tuple[int, int]]] = []
        self.problems: list[str] = []
        self.ids: set[str] = set()
        self.detail_refs: list[str] = []
        self.row_ops: list[str] = []
        self.text: list[str] = []
        self.script_tags = 0
        self._in_row_header = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script":
            self.script_tags += 1
        if a.get("id"):
            if a["id"] in self.ids:
                self.problems.append(f"line {self.getpos()[0]}: duplicate id {a['id']!r}")
            self.ids.add(a["id"] or "")
        if a.get("data-detail"):
            self.detail_refs.append(a["data-detail"] or "")
        in_matrix = any(t == "table" for t, _ in self.stack)
        self._in_row_header = tag == "th" and a.get("scope") == "row" and in_matrix
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack:
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> with nothing open")
        elif self.stack[-1][0] != tag:
            open_tag, (line, _) = self.stack[-1]
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> closes <{open_tag}> opened on line {line}")
        else:
            self.stack.pop()
        self._in_row_header = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_row_header:
            self.row_ops.append(data)


def parse(page: str) -> PageParser:
    p = PageParser()
    p.feed(page)
    p.close()
    return p


def test_markdown_equals_the_checked_in_rendering(fixture_matrix: matrix.Matrix) -> None:
    got = render_text.to_markdown(fixture_matrix)
    want = EXPECTED_MD.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "expected", "rendered"))
    assert got == want, f"markdown differs from {EXPECTED_MD.name}:\n{diff}"


def test_markdown_is_one_grid_with_htp_first_and_reference_last(fixture_matrix: matrix.Matrix) -> None:
    md = render_text.to_markdown(fixture_matrix)
    header = next(line for line in md.splitlines() if line.startswith("|op"))
    assert header.index("qnn-htp") < header.index("reference"), f"backend order in the grid header: {header}"
    assert "\n## reference\n" not in md and "\n## qnn-htp\n" not in md, "no per-backend tables any more"


def test_markdown_grid_has_a_row_per_op_and_names_the_not_generated_reason(fixture_matrix: matrix.Matrix) -> None:
    md = render_text.to_markdown(fixture_matrix)
    rows = {line.split("|")[1].strip() for line in md.splitlines() if line.startswith("|")}
    missing = [op for op in fixture_matrix.ops() if op not in rows]
    assert not missing, f"ops without a grid row: {missing}"
    assert "- If: needs subgraphs" in md, "the not-generated op's reason is listed under the grid"


def test_markdown_escapes_pipes_and_tags_from_messages(fixture_matrix: matrix.Matrix) -> None:
    md = render_text.to_markdown(fixture_matrix)
    assert "more than 1 step \\| first at" in md, "a | in a message must not split the table cell"
    assert "<b>14</b>" not in md, "HTML in a message must be shown, not interpreted"


def test_html_is_well_formed(page: str) -> None:
    p = parse(page)
    assert not p.problems, "tags do not balance:\n" + "\n".join(p.problems[:10])
    assert not p.stack, f"unclosed elements at the end: {[t for t, _ in p.stack]}"


def test_html_has_one_row_per_op(page: str, fixture_matrix: matrix.Matrix) -> None:
    rows = parse(page).row_ops
    assert sorted(rows) == sorted(fixture_matrix.ops()), f"rows {rows} != ops {fixture_matrix.ops()}"


def test_html_shows_why_an_op_is_not_generated(page: str) -> None:
    assert "not generated: needs subgraphs" in "".join(parse(page).text)


def test_html_keeps_build_details_in_a_collapsible_header(page: str) -> None:
    start = page.index('<details class="builds">')
    block = page[start: page.index("</details>", start)]
    assert "build_id=v2.31.0.250130" in block, "the backend build belongs in the collapsible header"


def test_html_every_clickable_cell_has_its_detail_block(page: str) -> None:
    p = parse(page)
    missing = [ref for ref in p.detail_refs if ref not in p.ids]
    assert p.detail_refs, "no cell links to a detail view"
    assert not missing, f"cells point to detail blocks that do not exist: {missing}"


def test_html_detail_shows_the_failing_case(page: str) -> None:
    text = "".join(parse(page).text)
    assert "runs/run-a/cases/ElementWiseAdd-UFIXED_POINT_8-8" in text
    assert "seed 1008" in text
    assert "3 steps" in text, "the error measured is shown in words"


def test_html_replay_command_names_the_backend(page: str) -> None:
    text = "".join(parse(page).text)
    replay = "python -m conformance replay runs/run-a/cases/ElementWiseAdd-UFIXED_POINT_8-8 --backend qnn-htp"
    assert replay in text, "pasting a replay line must re-run the case on the backend that failed it"


def test_html_escapes_text_from_records(page: str) -> None:
    assert "<b>14</b>" not in page, "a backend message was written into the page unescaped"
    assert "want <b>14</b>" in "".join(parse(page).text), "the escaped message must read as the original text"


def test_html_cannot_be_broken_out_of_by_a_record() -> None:
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    m = matrix.build([Record(op=evil, config=evil, backend=evil, verdict="FAIL", message=evil, case_path=evil,
                             metrics={"max_ulp": 2}, backend_info={"build_id": evil})])
    page = html_page.to_html(m)
    p = parse(page)
    assert p.script_tags == 1, f"only the page's own script may exist, found {p.script_tags}"
    assert "onerror" not in page.replace("&lt;img src=x onerror", ""), "a record's markup became live"
    assert page.count("<img") == 1 and '<img class="chart"' in page, "the only image is the summary chart"
    assert not p.problems, p.problems[:5]


def test_html_uses_no_external_assets(page: str) -> None:
    for marker in ("href=\"http", "<link", "@import", "url("):
        assert marker not in page, f"the page must be self-contained, found {marker!r}"
    sources = re.findall(r'src="([^"]{0,30})', page)
    assert all(src.startswith("data:") for src in sources), f"images must be inline: {sources}"


def test_html_filters_cover_families_backends_and_verdicts(page: str) -> None:
    assert 'value="ACCEPTED"' not in page, "the verdict filter offers verdicts, not negative outcome classes"
    for name, value in (("family", "elementwise"), ("family", "convolution"), ("backend", "qnn-htp"),
                        ("dfam", "8-bit"), ("status", "CRASH"), ("status", "XPASS"), ("status", "NOT_GENERATED")):
        assert f'name="{name}" value="{value}"' in page, f"no {name} filter for {value}"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_html_script_is_valid_javascript(page: str, tmp_path: Path) -> None:
    script = page[page.index("<script>") + len("<script>"): page.index("</script>")]
    js = tmp_path / "page.js"
    js.write_text(script, encoding="utf-8")
    result = subprocess.run(["node", "--check", str(js)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_csv_has_one_row_per_cell_with_every_verdict_count(fixture_matrix: matrix.Matrix) -> None:
    rows = list(csv.DictReader(io.StringIO(render_text.to_csv(fixture_matrix))))
    assert len(rows) == len(fixture_matrix.cells) + len(fixture_matrix.negative)
    row = next(r for r in rows if (r["kind"], r["op"], r["config"], r["backend"])
               == ("positive", "ElementWiseAdd", "UFIXED_POINT_8", "qnn-htp"))
    counts = {v: row[v] for v in ("PASS", "FAIL", "XFAIL", "CRASH")}
    assert counts == {"PASS": "1", "FAIL": "1", "XFAIL": "1", "CRASH": "0"}, counts
    assert row["status"] == "FAIL" and row["max_steps"] == "3"


def test_json_holds_cells_and_totals(fixture_matrix: matrix.Matrix) -> None:
    doc = json.loads(render_text.to_json(fixture_matrix))
    assert doc["backends"] == ["qnn-htp", "reference"]
    assert doc["totals"]["qnn-htp"]["ops_with_crash"] == 1
    assert doc["totals"]["qnn-htp"]["op_lists"]["ops_with_crash"] == ["Conv2d"]
    assert len(doc["cells"]) == 12 and len(doc["negative_cells"]) == 4
    crash = next(c for c in doc["cells"] if c["backend"] == "qnn-htp" and c["op"] == "Conv2d"
                 and c["config"] == "UFIXED_POINT_8")
    assert crash["status"] == "CRASH" and [d["verdict"] for d in crash["details"]] == ["CRASH", "TIMEOUT"]


def test_json_is_standard_even_with_nan_errors() -> None:
    m = matrix.build([Record(op="A", config="FLOAT_32", backend="b", verdict="FAIL",
                             metrics={"max_abs_err": float("nan")})])
    text = render_text.to_json(m)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


def test_renderers_accept_an_empty_results_file() -> None:
    m = matrix.build([])
    assert "No results records" in render_text.to_markdown(m)
    assert not parse(html_page.to_html(m)).problems
    assert json.loads(render_text.to_json(m))["cells"] == []
