"""Refusal reasons: the backend's log normalised into a reason every REJECTED record carries, and the matrix
grouping a cell's refusals by it (and naming the standard form a probe found)."""

from __future__ import annotations

import json

import numpy as np

from adapters import refusal
from cases.case import Case, Encoding, Param, Tensor
from reports import grid as family_grid
from reports import matrix, render_text
from reports.record import Record

# What the HTP simulator (QNN 2.51) logs at validation, as the QNN worker collects it (each line twice).
NOT_REGISTERED = ["<E> OpValidator not found c3_node0.", "<E> OpValidator not found c3_node0.",
                  "<E> QnnBackend_validateOpConfig failed 3110", "<E> Failed to validate op c3_node0 with error 0xc26"]
DATATYPES = [
    "<E> Unsupported input/output datatypes requested for the HTP Op 'Conv2d' in the node 'c0_node0'.",
    "<E> Requested I/O datatype set:\n\n   in[0]:QNN_DATATYPE_UFIXED_POINT_16\n   in[1]:QNN_DATATYPE_UFIXED_POINT_16\n"
    "   in[2]:QNN_DATATYPE_UFIXED_POINT_16 (optional)\n   out[0]:QNN_DATATYPE_UFIXED_POINT_16",
    "<E> Supported I/O datatype sets for the configuration: INT16\n   1:\n   in[0]:QNN_DATATYPE_UFIXED_POINT_16\n"
    "   in[1]:QNN_DATATYPE_UFIXED_POINT_8\n   in[2]:QNN_DATATYPE_UFIXED_POINT_8\n"
    "   out[0]:QNN_DATATYPE_UFIXED_POINT_16\n"
    "   2:\n   in[0]:QNN_DATATYPE_UFIXED_POINT_16\n   in[1]:QNN_DATATYPE_UFIXED_POINT_16\n"
    "   in[2]:QNN_DATATYPE_SFIXED_POINT_32\n   out[0]:QNN_DATATYPE_UFIXED_POINT_16",
    "<E> Please refer to the 'HTP Backend Op Definition Supplement' section of QNN SDK for more details",
]
OFFSET = ["<E> [4294967295] has incorrect Value -65535, expected equal to -32768.",
          "<E> [4294967295] has incorrect Value -65535, expected equal to -32768."]
ARCH = ["<E> [4294967295] has incorrect Value 68, expected >= 73."]


def _tanh(offset: int) -> Case:
    x = Tensor("in[0]", "UFIXED_POINT_16", (2, 3), np.zeros((2, 3), np.uint16), Encoding((1e-4,), (-30000,)))
    return Case("Tanh", [x], {}, [Tensor("out[0]", "UFIXED_POINT_16", (2, 3), None, Encoding((3e-5,), (offset,)))])


def test_normalised_lines_drop_node_names_addresses_repeats_and_bookkeeping() -> None:
    lines = refusal.normalise([*NOT_REGISTERED, "<E> handle 0x7f3a9c0012ab refused c12_node3"])
    assert lines == ["OpValidator not found <node>.", "handle <address> refused <node>"], lines


def test_an_op_the_backend_lacks_reads_not_registered() -> None:
    assert refusal.explain(NOT_REGISTERED)["reason"] == refusal.NOT_REGISTERED


def test_a_datatype_refusal_names_the_fewest_changes_to_a_supported_set() -> None:
    got = refusal.explain(DATATYPES)
    assert got["nearest"] == [{"in[2]": "SFIXED_POINT_32"}], got.get("nearest")
    assert got["reason"] == "datatype set not supported; nearest accepted: in[2] SFIXED_POINT_32", got["reason"]
    assert len(got["supported"]) == 2 and got["requested"]["in[1]"] == "UFIXED_POINT_16", got


def test_a_value_the_validator_reports_is_named_by_what_holds_it_in_the_case() -> None:
    assert refusal.explain(OFFSET, case=_tanh(-65535))["reason"] == "out[0] offset must be -32768"


def test_without_the_case_a_value_keeps_both_numbers() -> None:
    assert refusal.explain(OFFSET)["reason"] == "a value must be -32768 (is -65535)"


def test_a_scalar_parameter_is_named_before_a_dimension_of_the_same_size() -> None:
    case = _tanh(0)
    case.params["mode"] = Param("mode", "UINT_32", 2)
    lines = ["<E> [4294967295] has incorrect Value 2, expected equal to 1."]
    assert refusal.explain(lines, case=case)["reason"] == "mode must be 1"


def test_an_axis_is_named_before_an_output_offset_of_the_same_value() -> None:
    case = _tanh(0)
    case.params["axis"] = Param("axis", "INT_32", 0)
    lines = ["<E> [4294967295] has incorrect Value 0, expected equal to 1."]
    assert refusal.explain(lines, case=case)["reason"] == "axis must be 1"


def test_a_rank_refusal_that_names_no_tensor_is_named_by_the_tensors_of_that_rank() -> None:
    """OneHot's validator says only "has incorrect Rank 3": the case's rank-3 tensor is in[0]."""
    idx = Tensor("in[0]", "UINT_32", (1, 3, 6), np.zeros((1, 3, 6), np.uint32))
    case = Case("OneHot", [idx], {}, [Tensor("out[0]", "FLOAT_32", (1, 2, 3, 6))])
    lines = ["<E> [4294967295] has incorrect Rank 3.", "<E> [4294967295] has incorrect Rank 3."]
    assert refusal.explain(lines, case=case)["reason"] == "in[0] rank 3 refused"
    assert refusal.explain(lines)["reason"] == "a tensor rank 3 refused"


def test_an_architecture_floor_reads_as_the_arch_it_needs() -> None:
    assert refusal.explain(ARCH)["reason"] == "needs HTP arch >= 73"


def test_a_refusal_with_no_log_names_the_enum_member_the_case_asked_for() -> None:
    x = Tensor("in[0]", "FLOAT_32", (2,), np.zeros(2, np.float32))
    case = Case("ElementWiseUnary", [x], {"operation": Param("operation", "UINT_32", 0)}, [x])
    got = refusal.explain([], "error 3110", case)["reason"]
    assert got.startswith(refusal.NO_REASON) and got.endswith("for operation=ABS"), got


def test_a_refusal_with_no_log_says_so_with_its_error_code() -> None:
    got = refusal.explain([], "backendValidateOpConfig: error 3110 (QNN_OP_PACKAGE_ERROR_VALIDATION_FAILURE)")
    assert got["reason"] == f"{refusal.NO_REASON} (error 3110)", got


# ---- the matrix -----------------------------------------------------------------------------------------
def _rejected(log: list[str], config: str = "UFIXED_POINT_16", op: str = "Conv2d", **details) -> Record:
    return Record(op=op, config=config, backend="qnn-htp", verdict="REJECTED", tier="typical",
                  message="backendValidateOpConfig: error 3110",
                  extra={"details": {"log": log, **details}})  # fmt: skip


def _probe(verdict: str, form: str, config: str = "UFIXED_POINT_16") -> Record:
    return Record(op="Conv2d", config=config, backend="qnn-htp", verdict=verdict, tier="typical", kind="probe",
                  extra={"probe": {"form": form, "of": "abc"}})  # fmt: skip


def test_an_older_record_gets_its_reason_from_its_log() -> None:
    (cell,) = matrix.build([_rejected(NOT_REGISTERED)]).cells.values()
    assert cell.reasons == {refusal.NOT_REGISTERED: 1}, cell.reasons


def test_the_reason_the_adapter_recorded_wins_over_the_log() -> None:
    r = _rejected(NOT_REGISTERED, refusal={"reason": "out[0] offset must be -32768"})
    (cell,) = matrix.build([r]).cells.values()
    assert cell.reasons == {"out[0] offset must be -32768": 1}, cell.reasons


def test_a_refused_cell_reads_rej_with_its_reason() -> None:
    (cell,) = matrix.build([_rejected(ARCH), _rejected(ARCH)]).cells.values()
    assert cell.display_text() == "REJ: needs HTP arch >= 73", cell.display_text()


def test_a_cell_refused_for_several_reasons_lists_each_with_its_count() -> None:
    (cell,) = matrix.build([_rejected(ARCH), _rejected(ARCH), _rejected(OFFSET)]).cells.values()
    assert cell.display_text() == "REJ: needs HTP arch >= 73 (2) · a value must be -32768 (is -65535) (1)"


def test_probe_records_never_count_in_the_cell_rates() -> None:
    m = matrix.build([_rejected(DATATYPES), _probe("PASS", "32-bit bias: in[2] SFIXED_POINT_32")])
    (cell,) = m.cells.values()
    assert cell.counts == {"REJECTED": 1} and cell.total == 1, cell.counts


def test_a_refused_cell_the_probe_runs_in_a_standard_form_names_the_form() -> None:
    form = "32-bit bias: in[2] SFIXED_POINT_32"
    m = matrix.build([_rejected(DATATYPES), _probe("REJECTED", "8-bit weights: in[1] UFIXED_POINT_8"),
                      _probe("PASS", form)])  # fmt: skip
    (cell,) = m.cells.values()
    assert cell.standard_form() == form and cell.display_text() == f"REJ -> supported as {form}"
    (row,) = family_grid.grid(m).rows
    (family_cell,) = row.cells.values()
    assert family_cell.status == family_grid.FORM and family_cell.text() == "FORM", family_cell.status


def test_a_cell_no_form_rescues_stays_rej_with_its_reasons() -> None:
    m = matrix.build([_rejected(ARCH), _probe("REJECTED", "32-bit bias: in[2] SFIXED_POINT_32")])
    (cell,) = m.cells.values()
    assert cell.standard_form() is None and cell.display_text() == "REJ: needs HTP arch >= 73"


def test_the_markdown_lists_reasons_with_the_cells_they_hold() -> None:
    m = matrix.build([_rejected(NOT_REGISTERED, op="Conv1d", config="FLOAT_32"), _rejected(ARCH)])
    text = render_text.to_markdown(m)
    assert "## Refusals: reasons and standard forms" in text
    assert "- **REJ: op not registered** — 1 case(s) in 1 cell(s): Conv1d `FLOAT_32`" in text, text


def test_the_json_carries_reasons_per_cell_and_per_backend() -> None:
    doc = json.loads(render_text.to_json(matrix.build([_rejected(ARCH)])))
    assert doc["cells"][0]["refusal_reasons"] == {"needs HTP arch >= 73": 1}
    assert doc["refusal_reasons"]["qnn-htp"][0]["reason"] == "needs HTP arch >= 73"
    assert doc["grid"]["rows"][0]["cells"][0]["refusal_reasons"] == {"needs HTP arch >= 73": 1}
