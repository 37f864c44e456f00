"""``python -m reports refusals``: the typical tier's refusals by normalised reason, each with its cases, its cells and
its class, decided by rules over the reason text and, where they cannot tell, by the table in
reports/refusal_classes.yaml. Records are made by hand here; no backend runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reports import refusal_classes as rc
from reports import refusals
from reports.record import Record, append
from tests.paths import REPO


def _refused(op: str, config: str, reason: str, *, tier: str = "typical", kind: str = "positive",
             backend: str = "qnn-htp", verdict: str = "REJECTED") -> Record:  # fmt: skip
    return Record(op=op, config=config, backend=backend, verdict=verdict, tier=tier, kind=kind,
                  message="backendValidateOpConfig: error 3110", extra={"details": {"refusal": {"reason": reason}}})


RECORDS = [
    _refused("Moments", "FLOAT_32", "param axes must be a tensor"),
    _refused("Moments", "FLOAT_16", "param axes must be a tensor"),
    _refused("Moments", "FLOAT_16", "param axes must be a tensor"),
    _refused("Shape", "FLOAT_32+UINT_32", "op not registered"),
    _refused("Conv2d", "UFIXED_POINT_16", "datatype set not supported; nearest accepted: in[2] SFIXED_POINT_32"),
    _refused("LayerNorm", "UFIXED_POINT_16", "needs HTP arch >= 73"),
    _refused("Conv3d", "FLOAT_32", "dilation must be 1"),
    _refused("Tanh", "UFIXED_POINT_16", "out[0] offset must be -32768"),
    _refused("Frobnicate", "FLOAT_32", "the validator said something new"),
]


@pytest.mark.parametrize("reason,op,klass", [
    ("op not registered", "Shape", rc.OP_ABSENT),
    ("datatype set not supported; nearest accepted: in[0] FLOAT_16, out[0] FLOAT_16", "Tile", rc.DATATYPE_SET),
    ("out[0] datatype SFIXED_POINT_8 refused", "ConstantOfShape", rc.DATATYPE_SET),
    ("dilation must be 1", "Conv3d", rc.VALUE_LIMIT),
    ("reduction must be < 1", "ScatterElements", rc.VALUE_LIMIT),
    ("in[0] rank 3 refused", "OneHot", rc.VALUE_LIMIT),
    ("BLOCKING mode 0 not supported", "Buffer", rc.VALUE_LIMIT),
    ("needs HTP arch >= 73", "LayerNorm", rc.ARCH_GATE),
    ("param axes must be a tensor", "Moments", rc.SUITE_FORM),
    ("param k must be a scalar", "TopK", rc.SUITE_FORM),
    ("out[0] offset must be -32768", "Tanh", rc.SUITE_FORM),
])  # fmt: skip
def test_the_rules_class_a_reason_by_its_text(reason: str, op: str, klass: str) -> None:
    got = rc.classify(reason, op, table=[])
    assert (got.klass, got.by) == (klass, "rule"), f"{reason!r}: {got}"


def test_a_reason_no_rule_knows_is_unclassified_not_guessed() -> None:
    assert rc.classify("the validator said something new", "Frobnicate", table=[]).klass == rc.UNCLASSIFIED


def test_a_table_entry_overrules_the_rules_for_the_ops_it_names() -> None:
    entry = rc.Entry("in[1] rank 1 refused", rc.SUITE_FORM, "a rank reading", ops="^ImageProjectionTransform$")
    assert rc.classify("in[1] rank 1 refused", "ImageProjectionTransform", [entry]).klass == rc.SUITE_FORM
    assert rc.classify("in[1] rank 1 refused", "Gather", [entry]).klass == rc.VALUE_LIMIT


def test_a_table_entry_may_match_reasons_by_regular_expression() -> None:
    entry = rc.Entry("re:for operation=FMOD$", rc.OP_ABSENT, "ElementWiseFmod is not registered")
    got = rc.classify("refused at validation; the backend logged no reason (error 3110) for operation=FMOD",
                      "ElementWiseBinary", [entry])  # fmt: skip
    assert (got.klass, got.by, got.basis) == (rc.OP_ABSENT, "table", "ElementWiseFmod is not registered")


def test_every_entry_of_the_shipped_table_has_a_class_and_evidence() -> None:
    entries = rc.load_table()
    assert entries, "the table is empty"
    assert all(e.klass in rc.CLASSES and e.evidence for e in entries)


@pytest.mark.parametrize("text,complaint", [
    ("- {reason: x, class: suite form}", "needs reason, class and evidence"),
    ("- {reason: x, class: broken, evidence: y}", "is not one of"),
    ("- {reason: 're:(', class: suite form, evidence: y}", "not a regular expression"),
])  # fmt: skip
def test_a_malformed_table_entry_is_refused_with_its_place(tmp_path: Path, text: str, complaint: str) -> None:
    path = tmp_path / "table.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match="entry 1") as e:
        rc.load_table(path)
    assert complaint in str(e.value)


def test_each_distinct_reason_is_one_row_with_its_cases_and_cells() -> None:
    rows = refusals.by_reason(RECORDS, table=[])
    moments = next(w for w in rows if w.reason == "param axes must be a tensor")
    assert (moments.cases, moments.cells) == (3, {("Moments", "FLOAT_32"), ("Moments", "FLOAT_16")})
    assert len(rows) == len({r.extra["details"]["refusal"]["reason"] for r in RECORDS})


def test_only_the_typical_tiers_refused_positive_cases_count() -> None:
    others = [_refused("Pad", "FLOAT_32", "op not registered", tier="edge"),
              _refused("Pad", "FLOAT_32", "op not registered", kind="probe"),
              _refused("Pad", "FLOAT_32", "op not registered", kind="negative"),
              _refused("Pad", "FLOAT_32", "", verdict="PASS")]  # fmt: skip
    assert refusals.by_reason(others, table=[]) == []


def test_a_refusal_an_expectation_relabelled_still_counts() -> None:
    r = _refused("Pad", "FLOAT_32", "op not registered", verdict="XFAIL")
    r.extra["verdict_before_expectation"] = "REJECTED"
    assert [w.cases for w in refusals.by_reason([r], table=[])] == [1]


def test_class_totals_count_reasons_cases_and_distinct_cells() -> None:
    totals = refusals.class_totals(refusals.by_reason(RECORDS, table=[]))["qnn-htp"]
    want_cases = sum(1 for r in RECORDS if rc.classify(r.extra["details"]["refusal"]["reason"], r.op, []).klass
                     == rc.SUITE_FORM)  # fmt: skip
    assert totals[rc.SUITE_FORM] == {"reasons": 2, "cases": want_cases, "cells": 3}, totals[rc.SUITE_FORM]
    assert list(totals) == [k for k in rc.CLASSES if k in totals], "classes out of their order"


def test_the_markdown_has_a_class_table_and_each_reason_under_its_class() -> None:
    rows = refusals.by_reason(RECORDS, table=[])
    text = refusals.to_markdown(rows)
    t = refusals.class_totals(rows)["qnn-htp"][rc.SUITE_FORM]
    assert f"| suite form | {t['reasons']} | {t['cases']} | {t['cells']} |" in text, text
    section = text.split("### suite form", 1)[1]
    assert "| param axes must be a tensor | 3 | 2: Moments: FLOAT_16, FLOAT_32 | rule: " in section, section


def test_the_json_lists_each_reason_with_class_basis_and_cells() -> None:
    doc = json.loads(refusals.to_json(refusals.by_reason(RECORDS, table=[])))
    row = next(w for w in doc["reasons"] if w["reason"] == "op not registered")
    assert (row["class"], row["by"], row["cases"]) == (rc.OP_ABSENT, "rule", 1)
    assert row["cells"] == [{"op": "Shape", "config": "FLOAT_32+UINT_32"}]


def test_no_refusal_says_so() -> None:
    assert "No typical-tier case was refused" in refusals.to_markdown([])


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_the_command_prints_the_table_and_exits_0(tmp_path: Path, fmt: str) -> None:
    results = tmp_path / "run.jsonl"
    append(results, RECORDS)
    proc = subprocess.run([sys.executable, "-m", "reports", "refusals", str(results), "--format", fmt],
                          capture_output=True, text=True, cwd=REPO)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "param axes must be a tensor" in proc.stdout and "suite form" in proc.stdout, proc.stdout[:2000]
