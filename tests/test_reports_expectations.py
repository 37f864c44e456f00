"""Expectations files: known failures become XFAIL, unexpected passes XPASS, stale entries are reported."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reports.expectations import Expectations, ExpectationsError, apply
from reports.record import Record

DATA = Path(__file__).parent / "data" / "reports"
FIXTURE = DATA / "expectations.yaml"


@pytest.fixture
def exp() -> Expectations:
    return Expectations.load(FIXTURE)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expectations.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_matched_failure_becomes_xfail_with_the_reason(exp: Expectations) -> None:
    entry = exp.match("ElementWiseAdd", "UFIXED_POINT_8", "qnn-htp")
    assert apply("FAIL", entry) == ("XFAIL", "HTP rounds half away from zero when requantizing (ticket QNN-123)")


def test_a_matched_case_that_passes_becomes_xpass(exp: Expectations) -> None:
    entry = exp.match("ElementWiseAdd", "UFIXED_POINT_8", "qnn-htp")
    verdict, reason = apply("PASS", entry)
    assert verdict == "XPASS" and reason is not None and "QNN-123" in reason


def test_a_verdict_outside_the_entry_stays_as_it_is(exp: Expectations) -> None:
    entry = exp.match("ReduceMean", "FLOAT_32", "qnn-htp")
    assert apply("ERROR", entry) == ("ERROR", None), "the entry expects FAIL only"
    assert apply("REJECTED", entry) == ("REJECTED", None)


def test_default_verdicts_are_fail_error_and_crash(exp: Expectations) -> None:
    entry = exp.match("ElementWiseAdd", "UFIXED_POINT_8", "qnn-htp")
    assert entry is not None and entry.verdicts == ("FAIL", "ERROR", "CRASH")


def test_an_unmatched_case_is_left_alone(exp: Expectations) -> None:
    assert exp.match("ElementWiseAdd", "FLOAT_32", "qnn-htp") is None, "config glob UFIXED_POINT_* excludes FLOAT_32"
    assert exp.match("ElementWiseAdd", "UFIXED_POINT_8", "ort-cpu") is None, "backend pattern excludes ort-cpu"
    assert apply("FAIL", None) == ("FAIL", None)


def test_op_patterns_can_be_regular_expressions(exp: Expectations) -> None:
    assert exp.match("ReduceSum", "FLOAT_32", "qnn-htp") is not None
    assert exp.match("ReduceMax", "FLOAT_32", "qnn-htp") is None, "re: patterns match the whole name"


def test_entries_for_negative_cases_treat_a_clean_rejection_as_the_pass(exp: Expectations) -> None:
    assert exp.match("Conv2d", "FLOAT_32", "qnn-htp") is None, "a negative entry must not match positive cases"
    entry = exp.match("Conv2d", "FLOAT_32", "qnn-htp", kind="negative")
    assert apply("PASS", entry)[0] == "XFAIL", "an accepted negative case is the expected failure"
    assert apply("REJECTED", entry)[0] == "XPASS", "a clean rejection means the known failure is gone"


def test_unused_lists_entries_that_matched_nothing(exp: Expectations) -> None:
    exp.match("ElementWiseAdd", "UFIXED_POINT_8", "qnn-htp")
    exp.match("ReduceMean", "FLOAT_32", "qnn-htp")
    exp.match("Conv2d", "FLOAT_32", "qnn-htp", kind="negative")
    unused = exp.unused()
    assert [e.reason for e in unused] == ["stale entry, Softmax is fixed since v2.28"]
    assert unused[0].where == f"{FIXTURE}:16", f"the warning should point at the entry, got {unused[0].where}"


def test_apply_record_sets_verdict_and_reason_and_keeps_the_raw_verdict(exp: Expectations) -> None:
    r = Record(op="ElementWiseAdd", config="UFIXED_POINT_8", backend="qnn-htp", verdict="FAIL")
    out = exp.apply_record(r)
    assert (out.verdict, out.extra["verdict_before_expectation"]) == ("XFAIL", "FAIL")
    assert out.expectation is not None and "QNN-123" in out.expectation
    assert r.verdict == "FAIL", "the input record must not be modified"


def test_reapplying_judges_the_backend_verdict_not_the_previous_xfail(exp: Expectations) -> None:
    once = exp.apply_record(Record(op="ElementWiseAdd", config="UFIXED_POINT_8", backend="qnn-htp", verdict="FAIL"))
    again = Expectations.from_text("[]").apply_record(once)
    assert (again.verdict, again.expectation) == ("FAIL", None), "with no entry left the raw FAIL comes back"


def test_first_matching_entry_wins(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, "- {op: 'Conv*', reason: first}\n- {op: Conv2d, reason: second}\n"))
    entry = exp.match("Conv2d", "FLOAT_32", "qnn-htp")
    assert entry is not None and entry.reason == "first"


def test_a_mapping_with_an_expectations_list_is_accepted(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, "expectations:\n  - op: Relu\n    reason: r\n"))
    assert [e.reason for e in exp.entries] == ["r"]


def test_an_empty_file_has_no_entries(tmp_path: Path) -> None:
    assert Expectations.load(write(tmp_path, "# nothing known yet\n")).entries == []


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("- op: Relu\n  reason: ok\n- op: Tanh\n  verdict: [FAIL]\n  reason: typo\n", 4, "unknown field 'verdict'"),
        ("- op: Relu\n  reason: ok\n- op: Tanh\n", 3, "no 'reason'"),
        ("- reason: no op\n", 1, "no 'op'"),
        ("- op: Relu\n  reason: ''\n", 2, "non-empty string"),
        ("- op: 're:Conv('\n  reason: r\n", 1, "bad regular expression"),
        ("- op: Relu\n  reason: r\n  verdicts: [XFAIL]\n", 3, "not an expectable verdict"),
        ("- op: Relu\n  reason: r\n  verdicts: [PASS]\n", 3, "good outcome"),
        ("- op: Relu\n  reason: r\n  kind: sometimes\n", 3, "positive or negative"),
        ("- Relu\n", 1, "must be a mapping"),
        ("op: Relu\n", 1, "may only hold 'defaults' and 'expectations'"),
        ("- op: [Relu\n  reason: r\n", 2, "not valid YAML"),
    ],
)
def test_a_malformed_entry_is_reported_with_file_and_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ExpectationsError) as info:
        Expectations.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}:"), f"message should start with {path}:{line}: -> {message}"
    assert words in message, f"message should say {words!r}: {message}"


def test_a_missing_file_is_an_expectations_error(tmp_path: Path) -> None:
    with pytest.raises(ExpectationsError, match="cannot read"):
        Expectations.load(tmp_path / "absent.yaml")


def test_yaml_tags_are_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    path = write(tmp_path, f"- op: !!python/object/apply:os.system ['touch {marker}']\n  reason: r\n")
    with pytest.raises(ExpectationsError):
        Expectations.load(path)
    assert not marker.exists(), "loading an expectations file ran code from it"


def test_several_files_act_as_one_list_in_order(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("- {op: Relu, reason: from a}\n")
    second.write_text("- {op: Tanh, reason: from b}\n- {op: Relu, reason: shadowed}\n")
    exp = Expectations.load_all([first, second])
    relu = exp.apply_record(Record(op="Relu", config="FLOAT_32", backend="b", verdict="FAIL"))
    tanh = exp.apply_record(Record(op="Tanh", config="FLOAT_32", backend="b", verdict="FAIL"))
    assert (relu.expectation, tanh.expectation) == ("from a", "from b")
    assert [e.reason for e in exp.unused()] == ["shadowed"]


def test_defaults_fill_the_fields_an_entry_leaves_out(tmp_path: Path) -> None:
    path = write(tmp_path, "defaults: {backend: qnn-htp, build: v1}\n"
                           "expectations:\n- {op: Relu, reason: r}\n- {op: Tanh, backend: other, reason: r}\n")
    relu, tanh = Expectations.load(path).entries
    assert [p.text for p in relu.backend] == ["qnn-htp"] and relu.info["build"] == "v1"
    assert [p.text for p in tanh.backend] == ["other"], "an entry's own field wins over the default"


def test_a_default_for_an_entrys_own_identity_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "defaults: {op: Relu}\nexpectations: []\n")
    with pytest.raises(ExpectationsError, match=r"expectations.yaml:1: 'op' cannot be a default"):
        Expectations.load(path)


def test_a_finding_carries_its_class_and_spec_quote(tmp_path: Path) -> None:
    path = write(tmp_path, "- op: Relu\n  reason: r\n  class: deviation\n"
                           "  spec: {lines: [10, 11], quote: \"Output is\\n  max(0, x)\"}\n")
    (entry,) = Expectations.load(path).entries
    assert entry.klass == "deviation"
    assert (entry.spec.first, entry.spec.last, entry.spec.quote) == (10, 11, "Output is max(0, x)")


@pytest.mark.parametrize("text, words", [
    ("- {op: Relu, reason: r, class: wrong}\n", "'class' must be one of"),
    ("- {op: Relu, reason: r, spec: {lines: [5, 2], quote: q}}\n", "first <= last"),
    ("- {op: Relu, reason: r, spec: {lines: 5}}\n", "'lines' ([first, last]) and 'quote'"),
])
def test_a_malformed_class_or_spec_names_its_line(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(ExpectationsError, match=r"expectations.yaml:1: .*" + re.escape(words)):
        Expectations.load(write(tmp_path, text))


def test_a_conformance_run_checks_failures_against_the_models_of_their_cells_findings(tmp_path: Path) -> None:
    """The conformance module hands the run's findings to every case it runs: a Relu that returns zeros is XFAIL under a
    finding whose model says so, and a finding whose model it does not show leaves the same failure red."""
    import json

    from tests import conformance_runs

    def run(model: str) -> list[dict]:
        known = tmp_path / f"{model}.yaml"
        known.write_text(f"- {{id: relu-zeros, op: Relu, config: FLOAT_32, verdicts: [FAIL], "
                         f"model: {{outputs: {model}}}, reason: zeros}}\n")  # fmt: skip
        results = tmp_path / f"{model}.jsonl"
        proc = conformance_runs.run("--backend", "tests.fake_backends:zero_relu", "--op", "^Relu$", "--examples", "2",
                                    "--tier", "typical", "--seed", "0", "--no-shrink", "--results", str(results),
                                    "--expectations", str(known), "-k", "FLOAT_32-typical")  # fmt: skip
        assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
        return [r for r in map(json.loads, results.read_text().splitlines()) if r.get("kind") == "positive"]

    covered = run("zeros")
    assert covered and all(r["verdict"] == "XFAIL" for r in covered), [r["verdict"] for r in covered]
    assert all(r["metrics"]["models"]['{"outputs":"zeros"}']["matches"] for r in covered)
    other = run("input-codes")
    assert other and all(r["verdict"] == "FAIL" for r in other), [r["verdict"] for r in other]


TARGETED = """expectations:
- op: IsNan
  config: FLOAT_32+BOOL_8
  backend: qnn-htp
  verdicts: [FAIL]
  targets: [v69, v73]
  releases: ['2.51']
  reason: infinities reported as NaN
"""


def _isnan_record(soc: object, build: str = "v2.51.0.260929181845") -> Record:
    return Record(op="IsNan", config="FLOAT_32+BOOL_8", backend="qnn-htp", verdict="FAIL",
                  backend_info={"soc": soc, "build_id": build})  # fmt: skip


def test_a_finding_that_names_its_generations_applies_on_them_only(tmp_path: Path) -> None:
    known = Expectations.load(write(tmp_path, TARGETED))
    verdicts = {soc: known.apply_record(_isnan_record(soc)).verdict for soc in (43, 36, 57, "default")}
    assert verdicts == {43: "XFAIL", 36: "XFAIL", 57: "FAIL", "default": "FAIL"}, verdicts


def test_a_finding_that_names_its_releases_applies_on_them_only(tmp_path: Path) -> None:
    known = Expectations.load(write(tmp_path, TARGETED))
    assert known.apply_record(_isnan_record(43, "v2.51.0.1")).verdict == "XFAIL"
    assert known.apply_record(_isnan_record(43, "v2.47.0.1")).verdict == "FAIL"



def test_a_default_soc_finding_applies_where_v68_is_named_by_its_soc(tmp_path: Path) -> None:
    """``soc: default`` is the simulator's own target, SM8350 (v68, SoC 30): a run with --target v68 (SoC 30) is that
    target too, and another SoC is not."""
    known = Expectations.load(write(tmp_path, TARGETED.replace("  targets: [v69, v73]\n  releases: ['2.51']\n",
                                                                "  soc: default\n")))
    verdicts = {soc: known.apply_record(_isnan_record(soc)).verdict for soc in ("default", 30, "30", 43)}
    assert verdicts == {"default": "XFAIL", 30: "XFAIL", "30": "XFAIL", 43: "FAIL"}, verdicts

def test_a_target_that_is_no_htp_generation_is_refused_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(ExpectationsError, match=r"expectations.yaml:\d+.*'targets' lists HTP generations"):
        Expectations.load(write(tmp_path, TARGETED.replace("[v69, v73]", "[v72]")))


def test_an_entry_added_after_a_match_is_matched_too(exp: Expectations) -> None:
    assert exp.match("Relu", "FLOAT_32", "qnn-htp") is None
    (entry,) = Expectations.from_text("- op: Relu\n  backend: qnn-htp\n  reason: added later\n").entries
    exp.entries.append(entry)
    assert exp.match("Relu", "FLOAT_32", "qnn-htp") is entry, "the index of entries by op kept a stale list"
