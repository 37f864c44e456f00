"""Findings: expectations entries with evidence, narrowed by tier, SoC, stage and message, and the findings table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reports import findings
from reports.expectations import Expectations, ExpectationsError
from reports.record import Record

REPO = Path(__file__).resolve().parents[1]
FINDINGS = findings.default_files()

ENTRY = """
- id: reshape-shape-input
  op: Reshape
  backend: qnn-htp
  tier: edge
  stage: finalize
  verdicts: [ERROR]
  reason: finalize fails when in[1] is given
  contradicts: "in[1] ... is ignored when out[0] is static"
  build: v2.51.0
  log: "could not create op: q::QNN_Reshape"
  case: findings/cases/Reshape/reshape-shape-input-static.json
- id: atan-f32-default-soc
  op: ElementWiseAtan
  config: "FLOAT_32"
  soc: default
  verdicts: [ERROR]
  reason: no float32 kernel on the default SoC
  contradicts: "FLOAT_32 is a valid datatype"
  build: v2.51.0
  case: findings/cases/ElementWiseAtan/atan.json
"""


def rec(op: str, verdict: str, *, tier: str = "typical", stage: str | None = None, soc=None, config: str = "FLOAT_32",
        message: str = "", case_id: str = "c1") -> Record:  # fmt: skip
    extra = {"details": {"stage": stage}} if stage else {}
    info = {} if soc is None else {"soc": soc}
    return Record(op=op, config=config, backend="qnn-htp", verdict=verdict, tier=tier, extra=extra, backend_info=info,
                  message=message, case_id=case_id)  # fmt: skip


@pytest.fixture
def known() -> Expectations:
    return Expectations.from_text(ENTRY, "f.yaml")


def test_a_case_showing_the_findings_symptom_becomes_xfail_with_the_id(known: Expectations) -> None:
    out = known.apply_record(rec("Reshape", "ERROR", tier="edge", stage="finalize"))
    assert out.verdict == "XFAIL", out
    assert out.expectation is not None and out.expectation.startswith("[reshape-shape-input]"), out.expectation


def test_a_passing_case_of_a_cases_scope_finding_stays_pass(known: Expectations) -> None:
    out = known.apply_record(rec("Reshape", "PASS", tier="edge", stage="ok"))
    assert out.verdict == "PASS", "a PASS does not show the symptom, so it says nothing about the finding"


def test_a_failure_at_another_stage_is_not_covered(known: Expectations) -> None:
    out = known.apply_record(rec("Reshape", "ERROR", tier="edge", stage="execute"))
    assert out.verdict == "ERROR", "the finding names finalize; an execute failure is news"


def test_a_finding_of_one_tier_does_not_cover_the_other(known: Expectations) -> None:
    out = known.apply_record(rec("Reshape", "ERROR", tier="typical", stage="finalize"))
    assert out.verdict == "ERROR", "an edge-tier finding must leave a typical failure standing out"


def test_a_record_without_a_tier_counts_as_typical(known: Expectations) -> None:
    out = known.apply_record(rec("Reshape", "ERROR", tier="", stage="finalize"))
    assert out.verdict == "ERROR"


def test_a_cell_scope_finding_turns_a_pass_into_xpass(known: Expectations) -> None:
    out = known.apply_record(rec("ElementWiseAtan", "PASS", stage="ok"))
    assert out.verdict == "XPASS", "the whole cell was expected to fail: a pass means it is fixed"


def test_a_finding_for_the_default_soc_does_not_cover_another_soc(known: Expectations) -> None:
    assert known.apply_record(rec("ElementWiseAtan", "ERROR", soc="default")).verdict == "XFAIL"
    assert known.apply_record(rec("ElementWiseAtan", "ERROR")).verdict == "XFAIL", "no soc in backend_info: default"
    assert known.apply_record(rec("ElementWiseAtan", "ERROR", soc=43)).verdict == "ERROR"


def test_a_message_pattern_selects_failures_by_their_text() -> None:
    known = Expectations.from_text('- {op: Gather, message: "re:rank > 4", reason: r}')
    hit = rec("Gather", "ERROR", message="Can't gather into an output with rank > 4")
    assert known.apply_record(hit).verdict == "XFAIL"
    assert known.apply_record(rec("Gather", "ERROR", message="something else")).verdict == "ERROR"


def test_stage_with_cell_scope_is_refused_with_its_line() -> None:
    with pytest.raises(ExpectationsError, match=r"^f\.yaml:1: .*scope is 'cases'"):
        Expectations.from_text("- {op: A, stage: finalize, scope: cell, reason: r}", "f.yaml")


def test_an_unknown_scope_is_refused() -> None:
    with pytest.raises(ExpectationsError, match="'scope' must be cell or cases"):
        Expectations.from_text("- {op: A, scope: some, reason: r}", "f.yaml")


PARAMS_ENTRY = "- {op: Resize, verdicts: [FAIL], params: {transformation_mode: 0, nearest_mode: [2, 3]}, reason: r}"


def _saved_case(tmp_path: Path, params: dict, name: str = "case") -> str:
    """A Resize case saved as the suite saves it: only its params are read when a finding names some."""
    from cases.case import Case, Param

    case = Case("Resize", [], {k: Param(k, "UINT_32", v) for k, v in params.items()}, [])
    return str(case.save(tmp_path / f"{name}.json"))


def _resize_fail(case_path: str | None) -> Record:
    return Record(op="Resize", config="FLOAT_32", backend="qnn-htp", verdict="FAIL", tier="typical",
                  case_path=case_path)  # fmt: skip


def test_a_params_finding_covers_a_failure_whose_case_has_those_values(tmp_path: Path) -> None:
    known = Expectations.from_text(PARAMS_ENTRY, "f.yaml")
    hit = _resize_fail(_saved_case(tmp_path, {"transformation_mode": 0, "nearest_mode": 3}))
    assert known.apply_record(hit).verdict == "XFAIL"


def test_a_params_finding_leaves_a_failure_with_other_values_standing_out(tmp_path: Path) -> None:
    known = Expectations.from_text(PARAMS_ENTRY, "f.yaml")
    other = _resize_fail(_saved_case(tmp_path, {"transformation_mode": 0, "nearest_mode": 0}))
    assert known.apply_record(other).verdict == "FAIL", "nearest_mode 0 is not among the finding's values"


def test_a_parameter_the_case_leaves_out_counts_at_its_spec_default(tmp_path: Path) -> None:
    import opdefs

    default = opdefs.load("Resize").params["transformation_mode"]["default"]
    known = Expectations.from_text(f"- {{op: Resize, verdicts: [FAIL], params: {{transformation_mode: {default}}}, "
                                   "reason: r}", "f.yaml")  # fmt: skip
    left_out = _resize_fail(_saved_case(tmp_path, {"nearest_mode": 2}))
    assert known.apply_record(left_out).verdict == "XFAIL", f"transformation_mode left out is its default {default}"


def test_a_vector_parameter_is_read_from_the_saved_cases_arrays(tmp_path: Path) -> None:
    import numpy as np

    from cases.case import Case, Param

    known = Expectations.from_text("- {op: TransposeConv2d, verdicts: [FAIL], "
                                   "params: {output_padding: [[0, 1], [1, 1]]}, reason: r}", "f.yaml")  # fmt: skip

    def failing(padding: list[int]) -> Record:
        case = Case("TransposeConv2d", [], {"output_padding": Param("output_padding", "UINT_32",
                                                                    np.array(padding, np.uint32))}, [])  # fmt: skip
        path = case.save(tmp_path / f"tc-{padding[0]}{padding[1]}.json")
        return Record(op="TransposeConv2d", config="FLOAT_32", backend="qnn-htp", verdict="FAIL", case_path=str(path))

    assert known.apply_record(failing([0, 1])).verdict == "XFAIL"
    assert known.apply_record(failing([0, 0])).verdict == "FAIL", "[0, 0] is not among the finding's values"


def test_a_failure_whose_case_cannot_be_read_does_not_show_a_params_symptom(tmp_path: Path) -> None:
    known = Expectations.from_text(PARAMS_ENTRY, "f.yaml")
    assert known.apply_record(_resize_fail(str(tmp_path / "gone.json"))).verdict == "FAIL"
    assert known.apply_record(_resize_fail(None)).verdict == "FAIL"


def test_params_with_cell_scope_is_refused_with_its_line() -> None:
    with pytest.raises(ExpectationsError, match=r"^f\.yaml:1: .*scope is 'cases'"):
        Expectations.from_text("- {op: A, params: {axis: 0}, scope: cell, reason: r}", "f.yaml")


def test_params_that_are_not_plain_values_are_refused_with_their_line() -> None:
    with pytest.raises(ExpectationsError, match=r"^f\.yaml:1: params: 'axis' must map to a number"):
        Expectations.from_text("- {op: A, params: {axis: {x: 1}}, reason: r}", "f.yaml")


def test_a_finding_whose_params_do_not_hold_for_its_own_case_is_a_problem(tmp_path: Path) -> None:
    _saved_case(tmp_path, {"transformation_mode": 1}, "own")
    known = Expectations.from_text("- {id: x, op: Resize, verdicts: [FAIL], params: {transformation_mode: 0}, "
                                   "contradicts: c, build: b, case: own.json, reason: r}", "f.yaml")  # fmt: skip
    (line,) = [p for p in findings.problems(known, tmp_path, spec_lines=[]) if "params" in p]
    assert "do not hold for its own case" in line, line


def test_a_finding_without_its_evidence_is_a_problem(tmp_path: Path) -> None:
    known = Expectations.from_text("- {op: A, reason: r}", "f.yaml")
    (line,) = [p for p in findings.problems(known, tmp_path, spec_lines=[]) if "finding has no" in p]
    assert "no id, contradicts, build, case, class, spec" in line, line


def test_a_finding_whose_case_is_not_in_the_repo_is_a_problem(known: Expectations, tmp_path: Path) -> None:
    issues = findings.problems(known, tmp_path)
    assert any("reshape-shape-input-static.json is not in the repo" in p for p in issues), issues


def test_check_run_counts_covered_cases_per_finding_and_lists_new_failures(known: Expectations) -> None:
    run = findings.check_run(known, [
        rec("Reshape", "ERROR", tier="edge", stage="finalize", case_id="a"),
        rec("Reshape", "ERROR", tier="edge", stage="finalize", case_id="b"),
        rec("Conv2d", "FAIL", case_id="c"),
    ])  # fmt: skip
    assert run.xfail == {"reshape-shape-input": 2}
    assert run.new == {("qnn-htp", "Conv2d", "FLOAT_32", "typical", "FAIL"): 1}


@pytest.mark.skipif(not FINDINGS, reason="no findings files in the repo")
@pytest.mark.parametrize("path", FINDINGS, ids=lambda p: p.name)
def test_every_committed_finding_has_its_evidence_and_its_case(path: Path) -> None:
    known = Expectations.load(path)
    assert known.entries, f"{path} has no findings"
    assert findings.problems(known) == []


@pytest.mark.skipif(not FINDINGS, reason="no findings files in the repo")
@pytest.mark.parametrize("path", FINDINGS, ids=lambda p: p.name)
def test_every_committed_finding_names_a_masterobdef_line(path: Path) -> None:
    for e in Expectations.load(path).entries:
        assert "line" in e.info.get("contradicts", "").lower(), f"{e.where}: contradicts names no MasterOpDef line"


def test_the_findings_command_prints_one_row_per_finding(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(ENTRY, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "reports", "findings", "--file", str(path)], cwd=REPO,
                         capture_output=True, text=True)  # fmt: skip
    assert "| reshape-shape-input |" in out.stdout and "| atan-f32-default-soc |" in out.stdout, out.stdout
    assert out.returncode == 2, "the cases named in this file are not in the repo: the command says so"
    assert "is not in the repo" in out.stdout


# ---- a finding is a model of one bug: it covers the cases that show it, and nothing else in the cell ----------
def _softmax_case(tmp_path: Path, shape: tuple[int, ...], name: str = "s") -> str:
    import numpy as np

    from cases.case import Case, Param, Tensor

    x = Tensor("in[0]", "FLOAT_32", shape, np.zeros(shape, np.float32))
    case = Case("Softmax", [x], {"beta": Param("beta", "FLOAT_32", 0.5)}, [Tensor("out[0]", "FLOAT_32", shape)])
    return str(case.save(tmp_path / f"{name}.json"))


def _softmax_fail(case_path: str | None = None, metrics: dict | None = None, log: list[str] | None = None) -> Record:
    extra = {"details": {"stage": "ok", "log": log}} if log else {}
    return Record(op="Softmax", config="FLOAT_32", backend="qnn-htp", verdict="FAIL", tier="typical",
                  case_path=case_path, metrics=metrics or {}, extra=extra)  # fmt: skip


def test_a_when_condition_covers_only_cases_that_meet_it(tmp_path: Path) -> None:
    known = Expectations.from_text("- {op: Softmax, verdicts: [FAIL], when: 'rank(in[0]) == 3', reason: r}", "f.yaml")
    assert known.apply_record(_softmax_fail(_softmax_case(tmp_path, (2, 3, 4), "r3"))).verdict == "XFAIL"
    assert known.apply_record(_softmax_fail(_softmax_case(tmp_path, (2, 3), "r2"))).verdict == "FAIL"


def _neuron_case(tmp_path: Path, operation: int, name: str) -> str:
    import numpy as np

    from cases.case import Case, Param, Tensor

    x = Tensor("in[0]", "FLOAT_16", (1, 2), np.zeros((1, 2), np.float16))
    params = {"operation": Param("operation", "UINT_32", operation), "beta": Param("beta", "FLOAT_32", 1.0)}
    case = Case("ElementWiseNeuron", [x], params, [Tensor("out[0]", "FLOAT_16", (1, 2))])
    return str(case.save(tmp_path / f"{name}.json"))


def test_a_when_condition_names_an_enum_parameters_member(tmp_path: Path) -> None:
    """``operation == SOFTPLUS``: the member's name reads as the spec's number (7), so a finding about one operation of
    ElementWiseNeuron leaves another operation's failure (GELU, 1) red."""
    entry = "- {op: ElementWiseNeuron, verdicts: [FAIL], when: operation == SOFTPLUS, reason: r}"
    known = Expectations.from_text(entry, "f.yaml")

    def fail(path: str) -> Record:
        return Record(op="ElementWiseNeuron", config="FLOAT_16", backend="ort-qnn", verdict="FAIL", tier="typical",
                      case_path=path)  # fmt: skip

    assert known.apply_record(fail(_neuron_case(tmp_path, 7, "softplus"))).verdict == "XFAIL"
    assert known.apply_record(fail(_neuron_case(tmp_path, 1, "gelu"))).verdict == "FAIL"


def test_a_when_condition_that_does_not_parse_names_its_line() -> None:
    with pytest.raises(ExpectationsError, match=r"f.yaml:1: when:"):
        Expectations.from_text("- {op: Softmax, when: 'rank(in[0]) ==', reason: r}", "f.yaml")


def test_a_model_covers_a_failure_only_where_the_outputs_matched_it() -> None:
    from reference.models import key

    model = {"params": {"beta": 1.0}}
    known = Expectations.from_text("- {op: Softmax, verdicts: [FAIL], model: {params: {beta: 1.0}}, reason: r}", "f")
    shown = _softmax_fail(metrics={"models": {key(model): {"matches": True}}})
    other = _softmax_fail(metrics={"models": {key(model): {"matches": False, "max_abs_err": 0.3}}})
    assert known.apply_record(shown).verdict == "XFAIL"
    assert known.apply_record(other).verdict == "FAIL", "outputs that do not match the model are another bug"
    assert known.apply_record(_softmax_fail()).verdict == "FAIL", "a model never checked covers nothing"


def test_a_failure_beside_a_finding_it_does_not_show_is_marked_near_it() -> None:
    known = Expectations.from_text("- {id: f1, op: Softmax, verdicts: [FAIL], model: {outputs: zeros}, reason: r}", "f")
    r = known.apply_record(_softmax_fail())
    assert (r.verdict, r.extra.get("near_findings")) == ("FAIL", ["f1"]), (r.verdict, r.extra)


def test_an_accuracy_band_covers_errors_up_to_it_and_no_further() -> None:
    known = Expectations.from_text("- {op: Softmax, verdicts: [FAIL], band: {steps: 2}, reason: r}", "f")
    assert known.apply_record(_softmax_fail(metrics={"max_steps": 2})).verdict == "XFAIL"
    assert known.apply_record(_softmax_fail(metrics={"max_steps": 40})).verdict == "FAIL"


def test_a_log_pattern_selects_by_the_backends_own_words() -> None:
    known = Expectations.from_text("- {op: Softmax, verdicts: [FAIL], log_says: 're:could not create op', reason: r}",
                                   "f")  # fmt: skip
    assert known.apply_record(_softmax_fail(log=["x.cc:1::ERROR:could not create op: q::S"])).verdict == "XFAIL"
    assert known.apply_record(_softmax_fail(log=["something else"])).verdict == "FAIL"


QUOTED = """
- id: q
  class: deviation
  op: Softmax
  verdicts: [FAIL]
  model: {params: {beta: 1.0}}
  spec: {lines: [2, 3], quote: "exp(beta * x ) / sum"}
  reason: r
  contradicts: c
  build: b
  case: findings/cases/Softmax/none.json
"""


def test_a_quote_is_found_across_the_lines_it_names_with_markdown_escapes_dropped() -> None:
    (entry,) = Expectations.from_text(QUOTED, "f.yaml").entries
    assert findings.quote_problem(entry, ["", "head", "- out = exp(beta \\* x", "  ) / sum over the axis"]) is None
    wrong = findings.quote_problem(entry, ["", "head", "something else", "entirely"])
    assert wrong is not None and "not at lines 2-3" in wrong, wrong


def test_lint_refuses_a_failure_finding_that_selects_by_op_configuration_and_tier_alone(tmp_path: Path) -> None:
    text = QUOTED.replace("  model: {params: {beta: 1.0}}\n", "  config: FLOAT_32\n  tier: typical\n")
    issues = findings.problems(Expectations.from_text(text, "f.yaml"), tmp_path, spec_lines=[])
    assert any("by op, configuration and tier alone" in p for p in issues), issues
    assert any("needs a model" in p for p in issues), issues


def test_lint_wants_a_class_and_a_quote(tmp_path: Path) -> None:
    quote = '  spec: {lines: [2, 3], quote: "exp(beta * x ) / sum"}\n'
    text = QUOTED.replace("  class: deviation\n", "").replace(quote, "")
    (line,) = [p for p in findings.problems(Expectations.from_text(text, "f.yaml"), tmp_path, []) if "has no" in p]
    assert "class" in line and "spec" in line, line


def test_a_model_with_a_band_covers_outputs_within_the_band_of_the_model() -> None:
    """Two bugs at once (a dropped bias in a configuration whose products are imprecise): the outputs are held to the
    band around the model's outputs, not to the case's own budget; an error the model does not explain stays red."""
    from reference.models import key

    model = {"without": ["in[2]"]}
    known = Expectations.from_text("- {op: Softmax, verdicts: [FAIL], model: {without: ['in[2]']}, band: {steps: 100},"
                                   " reason: r}", "f")  # fmt: skip

    def fail(got: dict) -> Record:
        return _softmax_fail(metrics={"max_steps": 2000, "models": {key(model): got}})

    assert known.apply_record(fail({"matches": True})).verdict == "XFAIL"
    assert known.apply_record(fail({"matches": False, "max_steps": 100})).verdict == "XFAIL"
    assert known.apply_record(fail({"matches": False, "max_steps": 101})).verdict == "FAIL", "beyond the band"
    assert known.apply_record(fail({"matches": False, "error": "cannot compute"})).verdict == "FAIL"
    assert known.apply_record(_softmax_fail(metrics={"max_steps": 50})).verdict == "FAIL", "the model never checked"


# ---- a second route's finding names the backend's finding it reproduces instead of copying it ---------------
SAME_AS_HTP = """
defaults: {backend: qnn-htp}
expectations:
- {id: sqrt-16, class: accuracy, op: ElementWiseSquareRoot, config: '?FIXED_POINT_16', verdicts: [FAIL],
   band: {steps: 90}, reason: r, spec: {lines: [2, 3], quote: q}, contradicts: 'line 2'}
"""


def test_a_finding_same_as_another_takes_its_selectors_band_and_evidence(tmp_path: Path) -> None:
    (tmp_path / "qnn-htp.yaml").write_text(SAME_AS_HTP, encoding="utf-8")
    ep = tmp_path / "ort-qnn.yaml"
    ep.write_text("defaults: {backend: ort-qnn}\nexpectations:\n"
                  "- {id: ep-sqrt-16, same_as: 'qnn-htp:sqrt-16', stage: ok, reason: seen through the EP}\n",
                  encoding="utf-8")  # fmt: skip
    (entry,) = Expectations.load(ep).entries
    assert [p.text for p in entry.op] == ["ElementWiseSquareRoot"] and entry.band == {"steps": 90}
    assert (entry.klass, entry.spec.quote, entry.info["contradicts"]) == ("accuracy", "q", "line 2")
    assert [p.text for p in entry.backend] == ["ort-qnn"], "the route's own backend, not the named finding's"
    assert [p.text for p in entry.stage] == ["ok"] and entry.reason == "seen through the EP"


def test_a_finding_same_as_one_that_is_not_there_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "qnn-htp.yaml").write_text(SAME_AS_HTP, encoding="utf-8")
    ep = tmp_path / "ort-qnn.yaml"
    ep.write_text("- {id: e, same_as: 'qnn-htp:no-such', reason: r}\n", encoding="utf-8")
    with pytest.raises(ExpectationsError, match=r"ort-qnn.yaml:1: same_as: qnn-htp.yaml has no finding 'no-such'"):
        Expectations.load(ep)
