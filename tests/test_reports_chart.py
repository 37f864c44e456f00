"""The summary chart: ops per backend and datatype family, drawn from the grid alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports import chart, matrix, record
from reports import grid as family_grid

RESULTS = Path(__file__).parent / "data" / "reports" / "results.jsonl"


@pytest.fixture(scope="module")
def grid() -> family_grid.Grid:
    return family_grid.grid(matrix.build(record.read([RESULTS])))


def test_each_bar_stacks_every_op_with_cases_in_its_column(grid: family_grid.Grid) -> None:
    fig = chart.figure(grid)
    axes = [ax for ax in fig.axes if ax.get_title()]
    ops_per_column = grid.passing_ops()
    for ax in axes:
        backend = ax.get_title()
        heights: dict[float, float] = {}
        for bar in ax.patches:
            x = round(bar.get_x() + bar.get_width() / 2, 6)
            heights[x] = heights.get(x, 0.0) + bar.get_height()
        want = [sum(ops_per_column[(backend, f)].values()) for f in grid.families_of(backend)]
        got = [heights[x] for x in sorted(heights)]
        assert got == want, f"{backend}: bar heights {got}, ops with cases per family {want}"


def test_the_bottom_layer_counts_ops_whose_typical_cases_all_pass(grid: family_grid.Grid) -> None:
    fig = chart.figure(grid)
    ax = next(a for a in fig.axes if a.get_title() == "reference")
    passing = [t.get_text() for t in ax.texts]
    want = [str(grid.passing_ops()[("reference", f)][matrix.PASS]) for f in grid.families_of("reference")]
    assert passing == want


def test_the_chart_is_a_png_for_the_readme_and_the_page(grid: family_grid.Grid, tmp_path: Path) -> None:
    path = chart.write(grid, tmp_path / "chart.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_svg_chart_of_the_same_results_is_byte_identical(grid: family_grid.Grid) -> None:
    assert chart.render(grid, "svg") == chart.render(grid, "svg"), "a re-render must not change a checked-in chart"


def test_a_chart_path_with_another_suffix_is_refused(grid: family_grid.Grid, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        chart.write(grid, tmp_path / "chart.gif")
