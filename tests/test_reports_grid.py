"""The readable grid: ops x (backend x datatype family), its cells' rates and marks, and its markdown width."""

from __future__ import annotations

import pytest

import opdefs
from cases import generate
from reports import families, matrix, render_text
from reports import grid as family_grid
from reports.record import Record


def rec(verdict: str, op: str = "Conv2d", config: str = "FLOAT_32", backend: str = "qnn-htp", **kw) -> Record:
    return Record(op=op, config=config, backend=backend, verdict=verdict, **kw)


def family_cell(*records: Record) -> family_grid.FamilyCell:
    g = family_grid.grid(matrix.build(records))
    (row,) = g.rows
    (cell,) = row.cells.values()
    return cell


@pytest.mark.parametrize(
    ("config", "family"),
    [
        ("FLOAT_32", "float32"),
        ("FLOAT_16", "float16"),
        ("UFIXED_POINT_8", "8-bit"),
        ("SFIXED_POINT_16", "16-bit"),
        ("FLOAT_32+INT_32", "float32"),  # an index tensor does not make a float op mixed
        ("UFIXED_POINT_8+SFIXED_POINT_8/axis+SFIXED_POINT_32", "8-bit"),  # nor does a 32-bit bias
        ("UFIXED_POINT_16+UFIXED_POINT_8+SFIXED_POINT_32", "mixed"),  # 16-bit activations, 8-bit weights
        ("UFIXED_POINT_8+FLOAT_32", "mixed"),  # Quantize / Dequantize
        ("INT_32+FLOAT_32", "mixed"),  # Cast from integer data
        ("UFIXED_POINT_8+SFIXED_POINT_4/axis+SFIXED_POINT_32", "mixed"),
        ("INT_32", "integer"),
        ("INT_32+BOOL_8", "integer"),
    ],
)
def test_a_configuration_belongs_to_one_datatype_family(config: str, family: str) -> None:
    assert families.dtype_family(config) == family


def test_every_spec_configuration_falls_in_one_of_the_six_datatype_families() -> None:
    labels = {c.label for op in opdefs.load_all().values() for c in generate.configs(op)}
    outside = sorted(label for label in labels if families.dtype_family(label) not in families.DTYPE_FAMILIES)
    assert not outside, f"configurations without a column: {outside}"


def test_a_family_cell_shows_the_share_of_typical_cases_that_pass() -> None:
    cell = family_cell(rec("PASS"), rec("PASS"), rec("FAIL"))
    assert (cell.text(), cell.status) == ("66%", "FAIL")


def test_a_family_cell_reads_100_only_when_every_case_passes() -> None:
    cell = family_cell(*[rec("PASS")] * 199, rec("FAIL"))
    assert cell.text() == "99%", "199/200 must not round up to a full pass"


def test_configurations_of_one_family_are_gathered_into_one_cell() -> None:
    cell = family_cell(rec("PASS", config="UFIXED_POINT_8"), rec("PASS", config="SFIXED_POINT_8"))
    assert [c.config for c in cell.cells] == ["UFIXED_POINT_8", "SFIXED_POINT_8"] and cell.total == 2


def test_passes_beside_refusals_are_partial_support_marked_with_a_tilde() -> None:
    cell = family_cell(rec("PASS", config="UFIXED_POINT_8"), rec("REJECTED", config="SFIXED_POINT_8"))
    assert (cell.status, cell.text()) == (family_grid.PARTIAL, "50%~")


def test_errors_and_crashes_are_marked_apart_from_wrong_numbers() -> None:
    assert family_cell(rec("PASS"), rec("ERROR")).text() == "50%!"
    assert family_cell(rec("PASS"), rec("FAIL")).text() == "50%"


def test_edge_findings_are_marked_without_changing_the_colour() -> None:
    cell = family_cell(rec("PASS", tier="typical"), rec("FAIL", tier="edge"))
    assert (cell.status, cell.text()) == ("PASS", "100%*")
    assert cell.edge_news() == ["FLOAT_32: edge FAIL 1/1"]


@pytest.mark.parametrize(
    ("verdicts", "text"), [(["REJECTED", "REJECTED"], "REJ"), (["UNCHECKED"], "UNC"), (["XFAIL"], "XF")]
)
def test_a_family_cell_with_nothing_passing_or_failing_says_why_in_a_word(verdicts: list[str], text: str) -> None:
    assert family_cell(*[rec(v) for v in verdicts]).text() == text


def test_grid_columns_put_qnn_htp_first_and_the_reference_last_with_families_in_order() -> None:
    records = [rec("PASS", backend=b, config=c) for b in ("reference", "onnxruntime", "qnn-htp")
               for c in ("UFIXED_POINT_8", "FLOAT_32")]  # fmt: skip
    cols = family_grid.grid(matrix.build(records)).columns
    assert cols == [("qnn-htp", "float32"), ("qnn-htp", "8-bit"), ("onnxruntime", "float32"),
                    ("onnxruntime", "8-bit"), ("reference", "float32"), ("reference", "8-bit")]  # fmt: skip


def test_an_op_that_was_not_generated_has_a_row_with_its_reason() -> None:
    m = matrix.build([rec("PASS"), Record(op="If", config="", backend="qnn-htp", verdict="", kind="cell",
                                          extra={"not_generated": "needs subgraphs"})])  # fmt: skip
    rows = {r.op: r for r in family_grid.grid(m).rows}
    assert rows["If"].not_generated == {"qnn-htp": "needs subgraphs"} and not rows["If"].cells


def test_rows_group_by_the_recorded_family_before_the_name_table() -> None:
    m = matrix.build([rec("PASS", op="Conv2d", extra={"family": "my family"}), rec("PASS", op="Softmax")])
    assert {r.op: r.family for r in family_grid.grid(m).rows} == {"Conv2d": "my family", "Softmax": "activation"}


def test_numpy_scalar_reprs_in_old_messages_read_as_plain_numbers() -> None:
    message = "expected np.float64(-4.678), got np.uint8(219)"
    assert matrix.readable_message(message) == "expected -4.678, got 219"


def test_an_astronomical_ulp_error_is_shown_as_the_absolute_error() -> None:
    assert matrix.worst_metric_text({"max_ulp": 1.8e308, "max_abs_err": 0.5}) == "max abs 0.5"
    assert matrix.worst_metric_text({"max_ulp": 3.0, "max_abs_err": 1e-6}) == "max 3 ulp"


def test_the_markdown_grid_of_every_spec_op_on_four_backends_stays_under_200_columns() -> None:
    backends = ("qnn-htp", "onnxruntime", "ort-qnn", "reference")
    records = []
    for name, op in opdefs.load_all().items():
        configs = generate.configs(op)
        for backend in backends:
            if not configs:
                records.append(Record(op=name, config="", backend=backend, verdict="", kind="cell",
                                      extra={"not_generated": generate.skip_reason(op) or "none"}))  # fmt: skip
            for c in configs:  # the widest cell text: a failing rate with every mark
                records += [rec("PASS", name, c.label, backend), rec("ERROR", name, c.label, backend),
                            rec("REJECTED", name, c.label, backend), rec("FAIL", name, c.label, backend, tier="edge")]
    md = render_text.to_markdown(matrix.build(records))
    grid_lines = [line for line in md.splitlines() if line.startswith("|") and not line.startswith("| ")]
    widest = max(grid_lines, key=len)
    assert len(grid_lines) >= len(opdefs.load_all()), "every spec op has a grid row"
    assert len(widest) < 200, f"grid line of {len(widest)} columns: {widest}"


def test_the_terminal_summary_fits_100_columns_with_long_build_details() -> None:
    info = {"library": "/a/very/long/path/" * 8 + "libQnnHtp.so", "build_id": "v2.51.0.260929181845"}
    records = [rec(v, backend=b, backend_info=info) for b in ("qnn-htp", "onnxruntime", "ort-qnn", "reference")
               for v in ("PASS", "FAIL", "ERROR", "CRASH", "TIMEOUT", "REJECTED", "UNCHECKED", "XFAIL", "XPASS")]
    text = render_text.to_summary(matrix.build(records))
    wide = [line for line in text.splitlines() if len(line) > render_text.SUMMARY_WIDTH]
    assert not wide, f"lines past {render_text.SUMMARY_WIDTH} columns: {wide}"
    assert "libQnnHtp.so" in text.replace("\n      ", ""), "the build details are below the table"


def test_generations_that_agree_with_their_base_on_every_cell_fold_into_its_column_group() -> None:
    runs = [rec(v, op=op, backend=b) for b in ("qnn-htp", "qnn-htp@v73", "qnn-htp@v79")
            for op, v in (("Conv2d", "PASS"), ("Relu", "FAIL"))]  # fmt: skip
    g = family_grid.grid(matrix.build(runs))
    assert g.backends() == ["qnn-htp"], g.columns
    assert g.label("qnn-htp") == "qnn-htp = @v73 @v79", g.collapsed


def test_a_folded_generation_is_not_a_column_of_the_summary_and_the_page_renders() -> None:
    """A sweep whose variants all agree with qnn-htp: the summary counts qnn-htp's columns only (the sweep's report
    writing once died here on the folded variant's cells)."""
    runs = [rec(v, op=op, backend=b) for b in ("qnn-htp", "qnn-htp@2.47")
            for op, v in (("Conv2d", "PASS"), ("Relu", "FAIL"))]  # fmt: skip
    m = matrix.build(runs)
    g = family_grid.grid(m)
    assert list(g.passing_ops()) == g.columns == [("qnn-htp", "float32")], g.passing_ops()
    assert g.passing_ops()[("qnn-htp", "float32")] == {"PASS": 1, "FAIL": 1}
    assert "qnn-htp = @2.47" in render_text.to_markdown(m)


def test_a_generation_that_differs_keeps_its_columns_and_marks_the_cells_that_differ() -> None:
    runs = [rec("PASS", op="Conv2d", backend="qnn-htp"), rec("PASS", op="Relu", backend="qnn-htp"),
            rec("PASS", op="Conv2d", backend="qnn-htp@v73"), rec("FAIL", op="Relu", backend="qnn-htp@v73")]  # fmt: skip
    g = family_grid.grid(matrix.build(runs))
    assert g.backends() == ["qnn-htp", "qnn-htp@v73"] and not g.collapsed, (g.columns, g.collapsed)
    cells = {row.op: row.cells[("qnn-htp@v73", "float32")] for row in g.rows}
    assert cells["Relu"].text() == "0%^" and cells["Relu"].differs == "qnn-htp: 100%", cells["Relu"].differs
    assert cells["Conv2d"].text() == "100%" and not cells["Conv2d"].differs, cells["Conv2d"].differs


def test_a_backend_without_its_base_in_the_run_is_shown_as_itself() -> None:
    g = family_grid.grid(matrix.build([rec("PASS", backend="qnn-htp@v73")]))
    assert g.backends() == ["qnn-htp@v73"] and g.label("qnn-htp@v73") == "qnn-htp@v73"
