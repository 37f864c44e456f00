"""The HTML matrix in a real headless browser (Debian's chromium, driven by playwright): the grid
renders, the filters hide what they should, a cell opens its cases.

``.ci/run`` installs chromium where it is missing, so CI runs these; they skip, saying why, only when
no chromium executable is on the machine. Set ``REPORTS_SCREENSHOTS=DIR`` to keep the screenshots
(the page as loaded, and with a cell's cases open) for a person to look at.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from reports import grid as family_grid
from reports import html_page, matrix, record

RESULTS = Path(__file__).parent / "data" / "reports" / "results.jsonl"
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on this machine (.ci/run installs Debian's: apt-get install chromium)"
)


@pytest.fixture(scope="module")
def fixture_matrix() -> matrix.Matrix:
    return matrix.build(record.read([RESULTS]))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install .[dev])")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser, fixture_matrix: matrix.Matrix, tmp_path: Path):
    path = tmp_path / "matrix.html"
    path.write_text(html_page.to_html(fixture_matrix), encoding="utf-8")
    p = browser.new_page(viewport={"width": 1600, "height": 1000})
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.goto(path.as_uri())
    yield p
    p.close()
    assert not errors, f"the page's script raised: {errors}"


def screenshot(page, name: str) -> None:
    target = os.environ.get("REPORTS_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(target) / f"{name}.png"), full_page=False)


def visible_ops(page) -> list[str]:
    return page.locator("table.grid tbody tr.op:visible th.op").all_inner_texts()


def test_the_grid_renders_a_visible_row_per_op(page, fixture_matrix: matrix.Matrix) -> None:
    screenshot(page, "matrix-loaded")
    assert sorted(visible_ops(page)) == sorted(fixture_matrix.ops())
    box = page.locator("table.grid").bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 100, f"the grid has no size: {box}"


def test_the_grid_header_puts_qnn_htp_first_and_the_reference_last(page) -> None:
    backends = page.locator("table.grid thead tr.backends th[data-span-backend]").all_inner_texts()
    assert backends[0] == "qnn-htp" and backends[-1] == "reference", backends


def test_the_summary_chart_is_drawn(page) -> None:
    width = page.locator("img.chart").evaluate("img => img.naturalWidth")
    assert width > 100, "the inline chart did not decode"


def test_unticking_a_backend_hides_its_columns(page) -> None:
    before = page.locator("table.grid td[data-backend='reference']:visible").count()
    page.locator("#filters input[name='backend'][value='reference']").uncheck()
    after = page.locator("table.grid td[data-backend='reference']:visible").count()
    header = page.locator("table.grid thead th[data-span-backend='reference']").is_visible()
    assert before > 0 and after == 0 and not header, f"reference cells visible: {before} -> {after}, header {header}"


def test_the_status_filter_keeps_only_ops_with_that_status(page, fixture_matrix: matrix.Matrix) -> None:
    page.locator("#filters button[data-all='status'][data-value='off']").click()
    page.locator("#filters input[name='status'][value='CRASH']").check()
    g = family_grid.grid(fixture_matrix)
    want = sorted(row.op for row in g.rows if any(c.counts["CRASH"] for c in row.cells.values()))
    assert sorted(visible_ops(page)) == want


def test_the_op_search_box_narrows_the_rows(page) -> None:
    page.locator("#op-search").fill("conv")
    assert visible_ops(page) == ["Conv2d"]


def test_a_datatype_family_filter_hides_that_column_on_every_backend(page) -> None:
    page.locator("#filters input[name='dfam'][value='8-bit']").uncheck()
    assert page.locator("table.grid [data-dfam='8-bit']:visible").count() == 0
    assert page.locator("table.grid [data-dfam='float32']:visible").count() > 0


def test_clicking_a_cell_opens_its_cases_with_tolerance_error_and_a_replay_naming_the_backend(page) -> None:
    row = page.locator("table.grid tr.op[data-op='ElementWiseAdd']")
    row.locator("td[data-backend='qnn-htp'][data-dfam='8-bit']").click()
    panel = page.locator("#panel")
    assert panel.is_visible(), "the cases panel did not open"
    screenshot(page, "matrix-cell-open")
    text = panel.inner_text()
    assert "ElementWiseAdd · qnn-htp · 8-bit" in text
    assert "python -m conformance replay runs/run-a/cases/ElementWiseAdd-UFIXED_POINT_8-8 --backend qnn-htp" in text
    assert "3 steps" in text, "the error measured is shown"


def test_escape_closes_the_cases_panel(page) -> None:
    page.locator("table.grid td.cell").first.click()
    page.keyboard.press("Escape")
    assert not page.locator("#panel").is_visible()


def test_a_not_generated_op_spans_its_backend_with_the_reason(page) -> None:
    cell = page.locator("table.grid tr.op[data-op='If'] td.notgen").first
    assert cell.is_visible() and "not generated: needs subgraphs" in cell.inner_text()
