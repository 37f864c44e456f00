"""The support matrix: how records fold into cells, what a cell shows, and what the totals count."""

from __future__ import annotations

from pathlib import Path

import pytest

import opdefs
from opdefs import spec
from reports import matrix, record
from reports.families import families, family_of
from reports.record import Record

DATA = Path(__file__).parent / "data" / "reports"
RESULTS = DATA / "results.jsonl"


def rec(verdict: str, op: str = "ElementWiseAdd", config: str = "FLOAT_32", backend: str = "qnn-htp", **kw) -> Record:
    return Record(op=op, config=config, backend=backend, verdict=verdict, **kw)


def cell_of(*verdicts: str, kind: str = "positive") -> matrix.Cell:
    m = matrix.build(rec(v, kind=kind) for v in verdicts)
    table = m.negative if kind == "negative" else m.cells
    (cell,) = table.values()
    return cell


@pytest.fixture(scope="module")
def fixture_matrix() -> matrix.Matrix:
    return matrix.build(record.read([RESULTS]))


def test_cells_are_keyed_by_op_config_and_backend(fixture_matrix: matrix.Matrix) -> None:
    keys = set(fixture_matrix.cells)
    assert ("ElementWiseAdd", "UFIXED_POINT_8", "qnn-htp") in keys
    assert len(keys) == 12, f"3 ops x 2 configs x 2 backends expected, got {sorted(keys)}"


def test_negative_cases_do_not_count_in_positive_cells(fixture_matrix: matrix.Matrix) -> None:
    positive = fixture_matrix.cell("Conv2d", "FLOAT_32", "qnn-htp")
    negative = fixture_matrix.cell("Conv2d", "FLOAT_32", "qnn-htp", "negative")
    assert positive is not None and negative is not None
    assert dict(positive.counts) == {"ERROR": 1, "PASS": 1}, f"positive cell counts {dict(positive.counts)}"
    assert dict(negative.counts) == {"REJECTED": 1, "PASS": 1}, f"negative cell counts {dict(negative.counts)}"


@pytest.mark.parametrize(
    ("verdicts", "status"),
    [
        (["PASS", "CRASH", "ERROR"], "CRASH"),
        (["PASS", "FAIL", "ERROR"], "ERROR"),
        (["PASS", "FAIL", "XPASS"], "FAIL"),
        (["PASS", "TIMEOUT", "XPASS"], "XPASS"),
        (["PASS", "REJECTED", "TIMEOUT"], "TIMEOUT"),
        (["PASS", "REJECTED"], "REJECTED"),
        (["PASS", "XFAIL"], "XFAIL"),  # a known failure is never counted as passing
        (["XFAIL", "UNCHECKED"], "XFAIL"),
        (["UNCHECKED", "SKIP"], "UNCHECKED"),
        (["SKIP"], "SKIP"),
    ],
)
def test_cell_status_follows_the_documented_precedence(verdicts: list[str], status: str) -> None:
    assert cell_of(*verdicts).status == status, f"{verdicts} should summarise as {status}"


@pytest.mark.parametrize(
    ("verdicts", "status"),
    [
        (["REJECTED", "REJECTED"], "REJECTED"),
        (["REJECTED", "PASS"], "ACCEPTED"),
        (["REJECTED", "FAIL"], "ACCEPTED"),
        (["REJECTED", "ERROR"], "ERRORED"),
        (["PASS", "CRASH"], "CRASHED"),
        (["SKIP"], "NOT RUN"),
    ],
)
def test_negative_cell_status_says_whether_the_backend_rejected_cleanly(verdicts: list[str], status: str) -> None:
    assert cell_of(*verdicts, kind="negative").status == status, f"negative {verdicts} should summarise as {status}"


@pytest.mark.parametrize(
    ("verdicts", "metrics", "text"),
    [
        (["PASS"] * 5, {}, "PASS 5/5"),
        (["PASS", "PASS", "XFAIL"], {}, "known 1/3 (PASS 2)"),
        (["PASS", "PASS", "PASS", "FAIL", "FAIL"], {"max_ulp": 3}, "FAIL 2/5 (max 3 ulp)"),
        (["FAIL"], {"max_steps": 1}, "FAIL 1/1 (max 1 step)"),
        (["REJECTED", "REJECTED"], {}, "REJ"),
        (["ERROR"], {}, "ERR"),
        (["CRASH", "PASS", "PASS"], {}, "CRASH 1/3"),
    ],
)
def test_cell_text_is_compact(verdicts: list[str], metrics: dict, text: str) -> None:
    m = matrix.build(rec(v, metrics=metrics if v == "FAIL" else {}) for v in verdicts)
    (cell,) = m.cells.values()
    assert cell.text() == text


def test_negative_cell_text_counts_clean_rejections() -> None:
    assert cell_of("REJECTED", "REJECTED", kind="negative").text() == "REJ 2"
    assert cell_of("REJECTED", "PASS", kind="negative").text() == "ACCEPTED 1/2"


def test_worst_metrics_are_the_maximum_over_the_cell() -> None:
    m = matrix.build([rec("PASS", metrics={"max_ulp": 1, "max_abs_err": 1e-7}),
                      rec("FAIL", metrics={"max_ulp": 9, "max_abs_err": 1e-6, "tolerance": {"ulp": 2}})])
    (cell,) = m.cells.values()
    assert cell.worst == {"max_ulp": 9, "max_abs_err": 1e-6}, f"worst metrics were {cell.worst}"


def test_nan_error_is_worse_than_any_number() -> None:
    m = matrix.build([rec("FAIL", metrics={"max_abs_err": float("nan")}), rec("FAIL", metrics={"max_abs_err": 5.0})])
    (cell,) = m.cells.values()
    assert cell.worst["max_abs_err"] != cell.worst["max_abs_err"], "a NaN error must stay NaN, not become 5.0"


def test_details_keep_every_case_that_needs_a_look_worst_first(fixture_matrix: matrix.Matrix) -> None:
    cell = fixture_matrix.cell("ElementWiseAdd", "UFIXED_POINT_8", "qnn-htp")
    assert cell is not None
    verdicts = [d.verdict for d in cell.sorted_details()]
    assert verdicts == ["FAIL", "XFAIL"], f"PASS cases are not details; FAIL before XFAIL; got {verdicts}"
    fail = cell.sorted_details()[0]
    assert fail.case_path == "runs/run-a/cases/ElementWiseAdd-UFIXED_POINT_8-8"
    assert fail.metrics["max_steps"] == 3


def test_totals_count_ops_per_backend(fixture_matrix: matrix.Matrix) -> None:
    t = fixture_matrix.totals()["qnn-htp"]
    assert t.ops_with_pass == ["ElementWiseAdd", "Conv2d"], f"ops with any PASS: {t.ops_with_pass}"
    assert t.ops_fully_passing == [], f"no qnn-htp op passes every case: {t.ops_fully_passing}"
    assert (t.ops_with_rejected, t.ops_with_error, t.ops_with_crash) == (["ReduceMean"], ["Conv2d"], ["Conv2d"])


def test_an_op_is_ok_only_when_every_positive_case_passes_and_known_when_the_rest_are_xfail() -> None:
    m = matrix.build([rec("PASS"), rec("XFAIL", config="UFIXED_POINT_8"),
                      rec("REJECTED", kind="negative"),  # negatives do not decide positive support
                      rec("PASS", op="Tanh"),
                      rec("XFAIL", op="Relu")])  # XFAIL alone: known, never ok
    t = m.totals()["qnn-htp"]
    assert t.ops_fully_passing == ["Tanh"], t.ops_fully_passing
    assert sorted(t.ops_known) == ["ElementWiseAdd", "Relu"], t.ops_known


def test_cases_that_did_not_run_are_neither_passed_nor_failed() -> None:
    t = matrix.build([rec("SKIP"), rec("UNCHECKED", op="Relu")]).totals()["qnn-htp"]
    assert t.ops_with_pass == [] and t.ops_with_error == [] and t.ops_with_crash == []
    assert t.cases["SKIP"] == 1 and t.cases["UNCHECKED"] == 1 and t.cases["FAIL"] == 0


def test_totals_count_cases_per_verdict(fixture_matrix: matrix.Matrix) -> None:
    cases = fixture_matrix.totals()["qnn-htp"].cases
    expected = {"PASS": 4, "FAIL": 1, "REJECTED": 1, "ERROR": 1, "CRASH": 1, "TIMEOUT": 1, "UNCHECKED": 0,
                "SKIP": 0, "XFAIL": 1, "XPASS": 1, "FP16_ACCURATE": 0}
    assert dict(cases) == expected


def test_negative_totals_separate_clean_rejections_from_acceptance_and_crashes(fixture_matrix: matrix.Matrix) -> None:
    neg = fixture_matrix.totals()["qnn-htp"].negative_cases
    assert (neg["REJECTED"], neg["ACCEPTED"], neg["ERRORED"], neg["CRASHED"]) == (1, 1, 1, 1), dict(neg)


def test_qnn_htp_comes_first_the_reference_last_others_by_name() -> None:
    m = matrix.build([rec("PASS", backend="reference"), rec("PASS", backend="ort-cpu"), rec("PASS"),
                      rec("PASS", backend="a-backend")])
    assert m.backends() == ["qnn-htp", "a-backend", "ort-cpu", "reference"]


def test_configs_are_ordered_float_first_then_fixed_point_then_others() -> None:
    configs = ["UFIXED_POINT_8+INT_32", "SFIXED_POINT_8", "FLOAT_16", "UFIXED_POINT_8", "FLOAT_32", "BOOL_8"]
    m = matrix.build(rec("PASS", config=c) for c in configs)
    assert m.configs() == ["FLOAT_32", "FLOAT_16", "UFIXED_POINT_8", "UFIXED_POINT_8+INT_32", "SFIXED_POINT_8",
                           "BOOL_8"]


def test_the_build_of_a_backend_is_reported(fixture_matrix: matrix.Matrix) -> None:
    builds = fixture_matrix.totals()["qnn-htp"].builds
    assert builds == ["build_id=v2.31.0.250130 library=libQnnHtp.so qnn_api=2.20.0"]


@pytest.mark.parametrize("op", sorted(opdefs.load_all()))
def test_op_family_comes_from_its_spec(op: str) -> None:
    assert family_of(op) == opdefs.load(op).family, f"{op}: the report's family differs from family: in its spec"


def test_op_without_a_spec_here_is_other() -> None:
    assert family_of("SomeNewerSdkOp") == "other"


def test_family_order_is_the_schemas_with_other_last() -> None:
    assert families() == [*spec.schema()["properties"]["family"]["enum"], "other"]


def test_fail_text_shows_the_worst_error_among_failing_cases() -> None:
    # A passing case may carry a larger error under a larger (shape-aware) budget than the failing one.
    m = matrix.build([rec("PASS", metrics={"max_ulp": 30, "tolerance": {"ulp": 32}}),
                      rec("FAIL", metrics={"max_ulp": 5, "tolerance": {"ulp": 2}})])
    (cell,) = m.cells.values()
    assert cell.text() == "FAIL 1/2 (max 5 ulp)", f"got {cell.text()!r}"


# ---- tiers, per-cell bookkeeping, shrunk cases ----------------------------------------------------


def test_an_edge_failure_never_turns_a_typical_pass_red() -> None:
    m = matrix.build([rec("PASS", tier="typical"), rec("PASS", tier="typical"), rec("FAIL", tier="edge")])
    (cell,) = m.cells.values()
    assert cell.status == "PASS", f"typical cases all pass, the cell shows {cell.status}"
    assert cell.text() == "PASS 2/2 · edge FAIL 1/1", f"edge news belongs beside the cell: {cell.text()!r}"


def test_an_all_good_edge_tier_adds_nothing_to_the_cell_text() -> None:
    m = matrix.build([rec("PASS", tier="typical"), rec("PASS", tier="edge")])
    (cell,) = m.cells.values()
    assert cell.text() == "PASS 1/1", cell.text()


def test_a_cell_with_only_edge_cases_says_it_has_no_typical_case() -> None:
    m = matrix.build([rec("ERROR", tier="edge")])
    (cell,) = m.cells.values()
    assert cell.total == 0 and cell.status == "SKIP", (cell.total, cell.status)
    assert cell.text().startswith("no typical case"), cell.text()


def test_refused_draws_are_counted_per_cell_and_tier() -> None:
    m = matrix.build([rec("", kind="cell", tier="typical", extra={"requested": 5, "cases": 5, "refusals": 7}),
                      rec("", kind="cell", tier="edge", extra={"requested": 2, "cases": 2, "refusals": 1}),
                      rec("PASS", tier="typical")])  # fmt: skip
    (cell,) = m.cells.values()
    assert (cell.refusals("typical"), cell.refusals("edge"), cell.refusals()) == (7, 1, 8)
    assert cell.total == 1, "a cell's bookkeeping record is not a case"
    assert m.totals()["qnn-htp"].refusals == 8


def test_a_shrunk_case_is_listed_but_never_counted_in_the_rates() -> None:
    m = matrix.build([rec("FAIL", tier="typical"), rec("PASS", tier="typical"),
                      rec("FAIL", kind="shrunk", tier="typical", case_path="c.json")])  # fmt: skip
    (cell,) = m.cells.values()
    assert dict(cell.counts) == {"FAIL": 1, "PASS": 1}, dict(cell.counts)
    assert [d.case_path for d in cell.shrunk] == ["c.json"]
    assert cell.shrunk[0].replay == "python -m conformance replay c.json --backend qnn-htp", cell.shrunk[0].replay


def test_records_without_a_tier_count_as_typical() -> None:
    m = matrix.build([rec("FAIL")])
    (cell,) = m.cells.values()
    assert cell.status == "FAIL" and cell.edge is None
