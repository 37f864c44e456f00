"""Validation versus execution: per cell, how far cases got into the backend, and the markdown section."""

from __future__ import annotations

from reports import matrix, stages
from reports.record import Record


def rec(verdict: str, stage: str | None, op: str = "Atan", raw: str | None = None) -> Record:
    extra: dict = {"details": {"stage": stage}} if stage else {}
    if raw:
        extra["verdict_before_expectation"] = raw
    return Record(op=op, config="FLOAT_32", backend="qnn-htp", verdict=verdict, extra=extra)


def test_a_cell_counts_its_cases_per_stage() -> None:
    m = matrix.build([rec("REJECTED", "validate"), rec("ERROR", "finalize"), rec("ERROR", "execute"),
                      rec("PASS", "ok")])
    cell = m.cell("Atan", "FLOAT_32", "qnn-htp")
    assert cell.stages() == {"validate": 1, "finalize": 1, "execute": 1, "ok": 1}
    assert cell.accepted_then_failed() == 2


def test_qnn_call_names_of_older_results_files_count_as_their_phase() -> None:
    m = matrix.build([rec("ERROR", "graphFinalize"), rec("ERROR", "graphExecute")])
    cell = m.cell("Atan", "FLOAT_32", "qnn-htp")
    assert cell.stages() == {"finalize": 1, "execute": 1}


def test_a_skipped_case_was_never_sent() -> None:
    cell = matrix.build([rec("SKIP", "lowering")]).cell("Atan", "FLOAT_32", "qnn-htp")
    assert cell.stages() == {"not sent": 1} and cell.accepted_then_failed() == 0


def test_the_columns_read_accepted_built_ran() -> None:
    m = matrix.build([rec("REJECTED", "validate"), rec("ERROR", "finalize"), rec("PASS", "ok"), rec("FAIL", "ok")])
    assert stages.stage_columns(m.cell("Atan", "FLOAT_32", "qnn-htp")) == ("3/4", "2/3", "2/2")


def test_the_section_lists_only_cells_that_were_accepted_then_failed() -> None:
    m = matrix.build([rec("XFAIL", "finalize", raw="ERROR"), rec("PASS", "ok", op="Relu"),
                      rec("REJECTED", "validate", op="Tanh")])
    text = "\n".join(stages.to_markdown(m))
    assert "| Atan | FLOAT_32 | 1/1 | 0/1 | - |" in text, text
    assert "| Relu |" not in text and "| Tanh |" not in text
    assert "1 cell(s) accepted at validation then failed; 1 refused at validation only; 1 ran every" in text


def test_no_stage_information_means_no_section() -> None:
    m = matrix.build([Record(op="Atan", config="FLOAT_32", backend="reference", verdict="PASS")])
    assert stages.to_markdown(m) == []
