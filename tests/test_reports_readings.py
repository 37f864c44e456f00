"""Open readings of the spec: the records' closest reading, counted per cell and shown in the report."""

from __future__ import annotations

from reports import matrix, readings
from reports.record import Record


def _rec(reading: str | None, verdict: str = "PASS") -> Record:
    metrics = {"reading": reading} if reading else {}
    return Record(op="Nv12ToRgb", config="UFIXED_POINT_8", backend="qnn-htp", verdict=verdict, metrics=metrics,
                  tier="typical")  # fmt: skip


def test_a_cell_counts_the_reading_of_each_case() -> None:
    m = matrix.build([_rec("bt601_full"), _rec("bt601_full"), _rec("bt709_full", "FAIL"), _rec(None)])
    assert m.cell("Nv12ToRgb", "UFIXED_POINT_8", "qnn-htp").readings == {"bt601_full": 2, "bt709_full": 1}


def test_the_section_lists_each_reading_with_its_share_of_the_cases() -> None:
    text = "\n".join(readings.to_markdown(matrix.build([_rec("bt601_full"), _rec("bt709_full")])))
    assert "| Nv12ToRgb | UFIXED_POINT_8 | qnn-htp | bt601_full 1/2, bt709_full 1/2 |" in text \
        or "| Nv12ToRgb | UFIXED_POINT_8 | qnn-htp | bt709_full 1/2, bt601_full 1/2 |" in text, text


def test_no_section_without_readings() -> None:
    assert readings.to_markdown(matrix.build([_rec(None)])) == []
