"""Run diffs: two runs of qnn-htp on different library builds (tests/data/reports/diff_old|new.jsonl).

Between the two files: ElementWiseAdd FLOAT_32 goes PASS -> FAIL (regression), Conv2d FLOAT_32
FAIL -> PASS (fix), the negative Conv2d case goes from rejected to accepted (regression), Conv2d
UFIXED_POINT_8 ERROR -> CRASH (status change), ReduceMean keeps FAIL with more failing cases
(count change), Softmax vanishes and Relu appears.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports import diff, record
from reports.record import Record

DATA = Path(__file__).parent / "data" / "reports"


@pytest.fixture(scope="module")
def result() -> diff.RunDiff:
    return diff.diff(record.read([DATA / "diff_old.jsonl"]), record.read([DATA / "diff_new.jsonl"]))


def keys(changes: list) -> list[tuple[str, str, str]]:
    return [(c.op, c.config, c.kind) for c in changes]


def test_diff_finds_the_regression(result: diff.RunDiff) -> None:
    assert ("ElementWiseAdd", "FLOAT_32", "positive") in keys(result.regressions), keys(result.regressions)


def test_diff_finds_the_fix(result: diff.RunDiff) -> None:
    assert keys(result.fixes) == [("Conv2d", "FLOAT_32", "positive")]


def test_a_negative_case_that_is_now_accepted_is_a_regression(result: diff.RunDiff) -> None:
    assert ("Conv2d", "FLOAT_32", "negative") in keys(result.regressions), keys(result.regressions)


def test_a_change_between_two_bad_statuses_is_listed_not_dropped(result: diff.RunDiff) -> None:
    (change,) = result.status_changes
    assert (change.op, change.config, change.old_status, change.new_status) == (
        "Conv2d", "UFIXED_POINT_8", "ERROR", "CRASH")


def test_same_status_with_different_counts_is_a_count_change(result: diff.RunDiff) -> None:
    (change,) = result.count_changes
    assert (change.op, change.old_counts, change.new_counts) == (
        "ReduceMean", {"PASS": 1, "FAIL": 1}, {"FAIL": 2})


def test_cells_only_in_one_run_are_new_or_vanished(result: diff.RunDiff) -> None:
    assert [c.op for c in result.new_cells] == ["Relu"]
    assert [c.op for c in result.vanished_cells] == ["Softmax"]


def test_cells_are_matched_by_backend_name_not_build(result: diff.RunDiff) -> None:
    assert result.old_builds == {"qnn-htp": ["build_id=v2.30.0"]}
    assert result.new_builds == {"qnn-htp": ["build_id=v2.31.0"]}
    assert not any(c.op == "ElementWiseAdd" for c in result.new_cells), "a new build id must not make cells 'new'"


def test_identical_runs_have_no_differences() -> None:
    records = list(record.read([DATA / "diff_old.jsonl"]))
    d = diff.diff(records, records)
    assert not (d.regressions or d.fixes or d.status_changes or d.count_changes or d.new_cells or d.vanished_cells)


def test_a_rejection_of_a_previously_passing_config_is_a_regression() -> None:
    old = [Record(op="A", config="FLOAT_16", backend="b", verdict="PASS")]
    new = [Record(op="A", config="FLOAT_16", backend="b", verdict="REJECTED")]
    assert len(diff.diff(old, new).regressions) == 1


def test_a_newly_checked_pass_is_not_a_fix() -> None:
    old = [Record(op="A", config="FLOAT_32", backend="b", verdict="UNCHECKED")]
    new = [Record(op="A", config="FLOAT_32", backend="b", verdict="PASS")]
    d = diff.diff(old, new)
    assert not d.fixes and len(d.status_changes) == 1, "UNCHECKED was never broken, so PASS is news but not a fix"


def test_diff_markdown_lists_each_kind_of_change(result: diff.RunDiff) -> None:
    md = diff.to_markdown(result)
    for heading in ("## Regressions", "## Fixes", "## Other status changes", "## Verdict-count changes",
                    "## New cells", "## Vanished cells"):
        assert heading in md, f"missing section {heading}"
    assert "| qnn-htp   | ElementWiseAdd | FLOAT_32 | positive | PASS 2/2 | FAIL 1/2 (max 7 ulp) |" in md
    assert "2 regression(s), 1 fix(es)" in md


def test_diff_json_is_machine_readable(result: diff.RunDiff) -> None:
    doc = json.loads(diff.to_json(result))
    assert [c["op"] for c in doc["fixes"]] == ["Conv2d"]
    assert doc["regressions"][0]["old_status"] == "PASS" and doc["regressions"][0]["new_status"] == "FAIL"


# ---- record by record (python -m reports diff --records) --------------------------------------------
def _case(**changes) -> Record:
    base = dict(op="Relu", config="FLOAT_32", backend="onnxruntime", verdict="PASS", case_id="c1", tier="typical",
                metrics={"max_ulp": 0.0}, message="", run_id="run-a", timings={"backend": 0.1},
                extra={"details": {"onnx_nodes": ["Relu"], "session_seconds": 0.01}})  # fmt: skip
    base.update(changes)
    return Record(**base)


def test_runs_differing_only_in_run_specific_fields_have_the_same_records() -> None:
    again = _case(run_id="run-b", timings={"backend": 9.0}, case_path="/tmp/x", backend_info={"build": "2"},
                  extra={"details": {"onnx_nodes": ["Relu"], "session_seconds": 5.0}})  # fmt: skip
    assert diff.record_differences([_case()], [again]) == []


def test_a_qnn_workers_timings_and_process_id_are_run_specific() -> None:
    first = _case(message="case exceeded 5 s; qnn-worker 13556 killed",
                  extra={"details": {"timing_ms": {"finalize": 8.6}, "pid": 13556}})  # fmt: skip
    again = _case(message="case exceeded 5 s; qnn-worker 13661 killed",
                  extra={"details": {"timing_ms": {"finalize": 9.7}, "pid": 13661}})  # fmt: skip
    assert diff.record_differences([first], [again]) == []


def test_the_htp_object_ids_in_a_backend_log_are_run_specific() -> None:
    first = _case(extra={"details": {"log": ["could not create op: q::Gather, op id=0x401d00000056"]}})
    again = _case(extra={"details": {"log": ["could not create op: q::Gather, op id=0x401d00000016"]}})
    assert diff.record_differences([first], [again]) == []
    other = _case(extra={"details": {"log": ["could not create op: q::Concat, op id=0x401d00000016"]}})
    assert diff.record_differences([first], [other]) != [], "another log line is another record"


def test_the_same_test_in_a_module_that_moved_is_the_same_record() -> None:
    first = _case(test_id="cases/test_conformance.py::test_op[Relu-FLOAT_32-typical]")
    again = _case(test_id="conformance/test_conformance.py::test_op[Relu-FLOAT_32-typical]")
    assert diff.record_differences([first], [again]) == []
    other = _case(test_id="conformance/test_conformance.py::test_op[Relu-FLOAT_16-typical]")
    assert diff.record_differences([first], [other]) != [], "another cell's test is another record"


def test_a_changed_result_field_is_named_with_both_values() -> None:
    lines = diff.record_differences([_case()], [_case(metrics={"max_ulp": 2.0})])
    assert lines == ["onnxruntime Relu FLOAT_32 positive typical c1: metrics.max_ulp: 0.0 -> 2.0"], lines


def test_a_case_only_one_run_has_is_a_difference() -> None:
    lines = diff.record_differences([_case()], [_case(), _case(case_id="c2")])
    assert lines == ["onnxruntime Relu FLOAT_32 positive typical c2: 0 record(s) in the old run, 1 in the new"], lines


def test_diff_records_command_exits_1_and_prints_one_line_per_difference(tmp_path: Path, capsys) -> None:
    from reports.__main__ import main

    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    record.append(old, [_case()])
    record.append(new, [_case(verdict="FAIL")])
    assert main(["diff", "--records", str(old), str(new)]) == 1
    want = 'onnxruntime Relu FLOAT_32 positive typical c1: verdict: "PASS" -> "FAIL"'
    assert capsys.readouterr().out.splitlines() == [want]
