"""``python -m reports capabilities``: the accepted envelope as data, and the false support claims beside it."""

from __future__ import annotations

import json
from pathlib import Path

from reports import capabilities, record
from reports.__main__ import main
from reports.record import Record

DT = {"in[0]": "UFIXED_POINT_16", "out[0]": "UFIXED_POINT_16"}


def case(verdict: str, stage: str, config: str = "UFIXED_POINT_16", ranks: int = 4, **params) -> Record:
    details = {"stage": stage}
    if verdict == "REJECTED":
        details["refusal"] = {"reason": "needs HTP arch >= 73"}
    return Record(op="Softmax", config=config, backend="qnn-htp", verdict=verdict, tier="typical", dtypes=dict(DT),
                  extra={"details": details, "signature": {"ranks": {"in[0]": ranks}, "params": params}})  # fmt: skip


def test_each_combination_says_how_far_its_cases_got() -> None:
    doc = capabilities.envelope([case("PASS", "ok"), case("ERROR", "finalize"), case("REJECTED", "validate")])
    combo = doc["backends"]["qnn-htp"]["ops"]["Softmax"]["combinations"]["UFIXED_POINT_16"]
    reached = [combo[k] for k in ("cases", "validated", "finalized", "executed", "passed")]
    assert reached == [3, 2, 1, 1, 1], f"cases, validated, finalized, executed, passed: {reached}"
    assert combo["refused_because"] == {"needs HTP arch >= 73": 1}, combo


def test_ranks_and_integer_parameters_are_split_into_accepted_and_refused() -> None:
    doc = capabilities.envelope([case("PASS", "ok", ranks=4, axis=3), case("REJECTED", "validate", ranks=2, axis=0)])
    combo = doc["backends"]["qnn-htp"]["ops"]["Softmax"]["combinations"]["UFIXED_POINT_16"]
    assert combo["ranks"] == {"in[0]": {"accepted": [4], "refused": [2]}}, combo["ranks"]
    assert combo["params"] == {"axis": {"accepted": [3], "refused": [0]}}, combo["params"]


def test_validation_accepting_what_finalize_refuses_is_a_false_support_claim() -> None:
    doc = capabilities.envelope([case("ERROR", "finalize", config="FLOAT_32"), case("PASS", "ok")])
    claims = doc["backends"]["qnn-htp"]["false_support_claims"]
    assert [c["combination"] for c in claims] == ["FLOAT_32"], claims
    assert "finalize" in next(iter(claims[0]["failures"])), claims


def test_only_combinations_that_ran_are_listed_as_accepted_datatype_sets() -> None:
    doc = capabilities.envelope([case("ERROR", "finalize", config="FLOAT_32"), case("PASS", "ok")])
    assert doc["backends"]["qnn-htp"]["ops"]["Softmax"]["accepted_datatype_sets"] == [DT]


def test_a_refusal_about_an_encoding_is_an_encoding_requirement() -> None:
    r = case("REJECTED", "validate")
    r.extra["details"]["refusal"] = {"reason": "out[0] offset must be -32768"}
    doc = capabilities.envelope([r])
    assert doc["backends"]["qnn-htp"]["ops"]["Softmax"]["encoding_requirements"] == ["out[0] offset must be -32768"]


def test_the_command_writes_the_json_and_the_false_claims(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    record.append(results, [case("ERROR", "execute"), case("PASS", "ok")])
    out, claims = tmp_path / "cap.json", tmp_path / "claims.md"
    assert main(["capabilities", str(results), "-o", str(out), "--false-claims", str(claims)]) == 0
    assert json.loads(out.read_text())["format"] == capabilities.FORMAT
    assert "| Softmax | `UFIXED_POINT_16` |" in claims.read_text()


def test_each_combination_says_from_which_generation_it_runs() -> None:
    def at(soc: object, verdict: str, stage: str) -> Record:
        r = case(verdict, stage)
        r.backend_info = {"soc": soc, "build_id": "v2.51.0.260929181845"}
        return r

    doc = capabilities.envelope([at("default", "REJECTED", "validate"), at(43, "PASS", "ok"), at(69, "PASS", "ok")])
    combo = doc["backends"]["qnn-htp"]["ops"]["Softmax"]["combinations"]["UFIXED_POINT_16"]
    assert combo["runs_from"] == "v73 2.51", combo.get("by_target")
    assert combo["by_target"]["v68 2.51"] == {"sent": 1}, combo["by_target"]
