"""Two routes, one case: pairing two runs by case id and listing where verdicts or outputs differ."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reports import agree
from reports.expectations import ExpectationsError
from reports.record import Record

REPO = Path(__file__).resolve().parents[1]


def rec(backend: str, case_id: str, verdict: str, *, digest: str = "", raw: str | None = None, op: str = "Gather",
        tier: str = "typical", kind: str = "positive") -> Record:  # fmt: skip
    extra: dict = {"details": {"stage": "ok", "output_digest": digest}} if digest else {}
    if raw:
        extra["verdict_before_expectation"] = raw
    return Record(op=op, config="FLOAT_16", backend=backend, verdict=verdict, case_id=case_id, tier=tier, kind=kind,
                  extra=extra)  # fmt: skip


def entry(fields: str, op: str = "Gather") -> str:
    """One explanation line with the fields every entry needs besides ``fields``."""
    return f"- {{op: {op}, mechanism: ep-declines-rank-5, case: findings/routes/x.json, {fields}}}\n"


def test_cases_are_paired_by_id_and_an_equal_pair_agrees() -> None:
    r = agree.compare([rec("qnn-htp", "a", "PASS", digest="d1")], [rec("ort-qnn", "a", "PASS", digest="d1")])
    assert (r.paired, r.same, r.disagreements) == (1, 1, [])


def test_a_verdict_difference_is_a_disagreement() -> None:
    r = agree.compare([rec("qnn-htp", "a", "ERROR")], [rec("ort-qnn", "a", "REJECTED")])
    (d,) = r.disagreements
    assert (d.what, d.a.verdict, d.b.verdict) == ("verdict", "ERROR", "REJECTED")


def test_same_verdict_with_different_output_bits_is_a_disagreement_of_outputs() -> None:
    r = agree.compare([rec("qnn-htp", "a", "PASS", digest="d1")], [rec("ort-qnn", "a", "PASS", digest="d2")])
    (d,) = r.disagreements
    assert d.what == "outputs"


def test_the_backends_own_verdict_is_compared_not_the_xfail_an_expectations_file_made() -> None:
    r = agree.compare([rec("qnn-htp", "a", "XFAIL", raw="ERROR")], [rec("ort-qnn", "a", "ERROR")])
    assert r.disagreements == [], "XFAIL on one side is the same ERROR, known"


def test_cases_only_one_run_has_are_counted_not_compared() -> None:
    r = agree.compare([rec("qnn-htp", "a", "PASS"), rec("qnn-htp", "b", "FAIL")], [rec("ort-qnn", "c", "PASS")])
    assert (r.paired, r.only_a, r.only_b) == (0, 2, 1)


def test_cell_bookkeeping_records_are_not_cases() -> None:
    cell = Record(op="Gather", config="FLOAT_16", backend="qnn-htp", verdict="", kind="cell", case_id="")
    r = agree.compare([cell], [])
    assert (r.paired, r.only_a) == (0, 0)


def test_an_explanation_matches_by_op_and_verdict_pair(tmp_path: Path) -> None:
    path = tmp_path / "routes.yaml"
    path.write_text(entry("a: ERROR, b: REJECTED, why: the EP refuses rank-5 gathers"), encoding="utf-8")
    r = agree.compare([rec("qnn-htp", "a", "ERROR")], [rec("ort-qnn", "a", "REJECTED")], agree.load_explanations(path))
    assert r.disagreements[0].why == "the EP refuses rank-5 gathers" and r.unexplained == []


def test_an_explanation_for_other_verdicts_does_not_match(tmp_path: Path) -> None:
    path = tmp_path / "routes.yaml"
    path.write_text(entry("a: FAIL, why: x"), encoding="utf-8")
    r = agree.compare([rec("qnn-htp", "a", "ERROR")], [rec("ort-qnn", "a", "REJECTED")], agree.load_explanations(path))
    assert len(r.unexplained) == 1


def test_a_malformed_explanation_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "routes.yaml"
    path.write_text(entry("why: ok") + "- {op: Gather, because: typo}\n", encoding="utf-8")
    with pytest.raises(ExpectationsError, match=r"routes\.yaml:2: unknown \['because'\]"):
        agree.load_explanations(path)


def test_the_markdown_groups_disagreements_and_states_the_counts() -> None:
    r = agree.compare([rec("qnn-htp", i, "ERROR") for i in "ab"], [rec("ort-qnn", i, "REJECTED") for i in "ab"])
    text = agree.to_markdown(r)
    assert "2 case(s) paired, 0 agree, 2 disagree (2 typical, 2 of them unexplained)" in text, text
    assert "| typical | Gather | FLOAT_16 | ERROR | REJECTED | 2 |" in text, text
    assert "| (unexplained) | 2 |" in text, "the per-mechanism table ends with the unexplained count"


def test_the_agree_command_compares_two_results_files(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(rec("qnn-htp", "x", "PASS", digest="1").to_json() + "\n", encoding="utf-8")
    b.write_text(rec("ort-qnn", "x", "FAIL", digest="2").to_json() + "\n", encoding="utf-8")
    missing = str(tmp_path / "none.yaml")
    out = subprocess.run([sys.executable, "-m", "reports", "agree", str(a), str(b), "--format", "json",
                          "--explain", missing], cwd=REPO, capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 2 and "none.yaml" in out.stderr, "a named explanations file that is missing is an error"
    out = subprocess.run([sys.executable, "-m", "reports", "agree", str(a), str(b), "--format", "json"], cwd=REPO,
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 1 and "1 typical disagreement(s)" in out.stderr, (out.returncode, out.stderr)
    data = json.loads(out.stdout)
    assert (data["paired"], data["disagreements"][0]["a"]["verdict"]) == (1, "PASS")


def test_the_agree_command_succeeds_when_every_typical_case_agrees(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(rec("qnn-htp", "x", "PASS", digest="1").to_json() + "\n", encoding="utf-8")
    b.write_text(rec("ort-qnn", "x", "PASS", digest="1").to_json() + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "reports", "agree", str(a), str(b)], cwd=REPO, capture_output=True,
                         text=True)  # fmt: skip
    assert out.returncode == 0, (out.returncode, out.stderr)


def test_an_explanation_must_name_its_op_not_a_wildcard(tmp_path: Path) -> None:
    path = tmp_path / "routes.yaml"
    for wildcard in ('"*"', '"re:.*"', '"*?"'):
        path.write_text(entry("why: every failure", op=wildcard), encoding="utf-8")
        with pytest.raises(ExpectationsError, match="matches any name"):
            agree.load_explanations(path)


@pytest.mark.parametrize("missing", ["mechanism", "case", "why"])
def test_an_explanation_names_its_mechanism_and_the_case_that_shows_it(tmp_path: Path, missing: str) -> None:
    fields = {"op": "Gather", "mechanism": "ep-declines-rank-5", "case": "findings/routes/x.json", "why": "w"}
    del fields[missing]
    path = tmp_path / "routes.yaml"
    path.write_text("- {" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}\n", encoding="utf-8")
    with pytest.raises(ExpectationsError, match=missing):
        agree.load_explanations(path)


def test_a_message_pattern_selects_by_the_sides_whole_message(tmp_path: Path) -> None:
    path = tmp_path / "routes.yaml"
    path.write_text(entry('b: ERROR, b_message: "re:MEM_ALLOC", why: finalize') + entry("b: ERROR, why: other"),
                    encoding="utf-8")  # fmt: skip
    long = "x" * (agree.MESSAGE_CHARS + 10) + " MEM_ALLOC"
    b = [rec("ort-qnn", "a", "ERROR"), rec("ort-qnn", "b", "ERROR")]
    b[0].message, b[1].message = long, "another error"
    r = agree.compare([rec("qnn-htp", "a", "PASS"), rec("qnn-htp", "b", "PASS")], b, agree.load_explanations(path))
    assert [d.why for d in r.disagreements] == ["finalize", "other"], [d.b.message for d in r.disagreements]


def test_a_finding_pattern_selects_by_the_finding_that_judged_the_side(tmp_path: Path) -> None:
    path = tmp_path / "routes.yaml"
    path.write_text(entry("b: FAIL, b_finding: ep-nearest-*, why: nearest") + entry("b: FAIL, why: other"),
                    encoding="utf-8")  # fmt: skip
    b = [rec("ort-qnn", "a", "XFAIL", raw="FAIL"), rec("ort-qnn", "b", "FAIL"),
         rec("ort-qnn", "c", "XFAIL", raw="FAIL")]
    b[0].expectation, b[2].expectation = "[ep-nearest-floor] reason", "[ep-linear-off] reason"
    r = agree.compare([rec("qnn-htp", i, "REJECTED") for i in "abc"], b, agree.load_explanations(path))
    assert [d.why for d in r.disagreements] == ["nearest", "other", "other"]


def test_explained_disagreements_are_counted_per_mechanism(tmp_path: Path) -> None:
    path = tmp_path / "routes.yaml"
    path.write_text(entry("a: ERROR, why: w"), encoding="utf-8")
    r = agree.compare([rec("qnn-htp", i, "ERROR") for i in "ab"] + [rec("qnn-htp", "c", "FAIL")],
                      [rec("ort-qnn", i, "PASS") for i in "abc"], agree.load_explanations(path))  # fmt: skip
    assert r.mechanisms() == {"ep-declines-rank-5": 2}
    assert agree.mechanism_lines(r) == ["     2  ep-declines-rank-5", "     1  (unexplained)"]


def test_a_case_one_route_did_not_run_is_not_compared_but_counted_with_its_reason() -> None:
    skipped = rec("ort-qnn", "a", "SKIP")
    skipped.message = "no ONNX lowering for Gather"
    r = agree.compare([rec("qnn-htp", "a", "ERROR")], [skipped])
    assert r.disagreements == [] and r.not_compared == {("typical", "ort-qnn", "no ONNX lowering for Gather"): 1}
    assert "1 not compared" in agree.summary_line(r)
