"""``python -m reports diff`` between two releases or targets of one backend: the same cases, paired by id,
regressions and fixes per op and datatype family, each with a case that replays on both sides."""

from __future__ import annotations

import json
from pathlib import Path

from reports import diff
from reports.__main__ import main as reports_main
from reports.record import Record

OLD, NEW = "qnn-htp@2.47", "qnn-htp@2.51"


def rec(backend: str, op: str, config: str, cid: str, verdict: str, tier: str = "typical") -> Record:
    path = None if verdict == "PASS" else f"runs/cases/{op}/{cid}.json"
    return Record(op=op, config=config, backend=backend, verdict=verdict, case_id=cid, tier=tier, case_path=path,
                  backend_info={"build_id": "v2.47.0.1" if backend == OLD else "v2.51.0.1"})  # fmt: skip


PAIRS = [  # op, config, case, old verdict, new verdict
    ("Gelu", "FLOAT_32", "a1", "PASS", "ERROR"),
    ("Gelu", "FLOAT_32", "a2", "PASS", "ERROR"),
    ("Gelu", "UFIXED_POINT_8", "a3", "PASS", "PASS"),
    ("Softmax", "UFIXED_POINT_8", "b1", "FAIL", "PASS"),
    ("Softmax", "UFIXED_POINT_8", "b2", "FAIL", "CRASH"),
    ("Relu", "FLOAT_16", "c1", "REJECTED", "PASS"),
]


def runs() -> tuple[list[Record], list[Record]]:
    old = [rec(OLD, op, cfg, cid, a) for op, cfg, cid, a, _ in PAIRS]
    new = [rec(NEW, op, cfg, cid, b) for op, cfg, cid, _, b in PAIRS]
    return old, new


def test_cases_are_paired_by_id_and_grouped_per_op_and_datatype_family():
    d = diff.diff_variants(*runs())
    assert d.paired == len(PAIRS) and d.same == sum(a == b for *_, a, b in PAIRS)
    assert [(g.op, g.family, g.count) for g in d.regressions] == [("Gelu", "f32", 2)]
    assert sorted((g.op, g.family, g.count) for g in d.fixes) == [("Relu", "f16", 1), ("Softmax", "8b", 1)]
    assert dict(d.other) == {"FAIL→CRASH": 1}, "a change between two bad verdicts is neither a regression nor a fix"


def test_each_group_carries_a_case_that_replays_on_both_sides():
    d = diff.diff_variants(*runs())
    g = d.regressions[0]
    assert g.replay_old == f"python -m conformance replay runs/cases/Gelu/a1.json --backend {OLD}"
    assert g.replay_new == f"python -m conformance replay runs/cases/Gelu/a1.json --backend {NEW}"


def test_the_command_line_pairs_cases_when_the_two_runs_are_different_backends(tmp_path: Path, capsys):
    old, new = runs()
    for name, records in (("old.jsonl", old), ("new.jsonl", new)):
        (tmp_path / name).write_text("".join(r.to_json() + "\n" for r in records))
    assert reports_main(["diff", str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "qnn-conformance-variant-diff"
    assert [g["op"] for g in doc["regressions"]] == ["Gelu"]


def test_two_cases_never_share_a_saved_file(tmp_path: Path):
    import numpy as np

    from cases.case import Case, Tensor
    from conformance.execute import case_stem

    paths = set()
    for k in range(2):
        case = Case("Relu", [Tensor("in[0]", "FLOAT_32", (1,), np.array([float(k)], np.float32))], {},
                    [Tensor("out[0]", "FLOAT_32", (1,))], config="FLOAT_32", tier="typical")  # fmt: skip
        paths.add(case.save(tmp_path / case_stem(case)))
    assert len(paths) == 2, f"two cases, one file: {paths}"


def test_a_sweep_compares_each_variant_with_the_plain_run_case_by_case() -> None:
    plain = [rec("qnn-htp", "Gelu", "FLOAT_32", "a1", "PASS"), rec("qnn-htp", "Relu", "FLOAT_16", "c1", "PASS")]
    v73 = [rec("qnn-htp@v73", "Gelu", "FLOAT_32", "a1", "ERROR"), rec("qnn-htp@v73", "Relu", "FLOAT_16", "c1", "PASS")]
    v75 = [rec("qnn-htp@v75", "Gelu", "FLOAT_32", "a1", "PASS"), rec("qnn-htp@v75", "Relu", "FLOAT_16", "c1", "PASS")]
    text = diff.sweep_to_markdown(plain + v73 + v75)
    assert "qnn-htp -> qnn-htp@v73: 2 case(s) paired, 1 same verdict; 1 regressed" in text, text
    assert "qnn-htp -> qnn-htp@v75: 2 case(s) paired, 2 same verdict; 0 regressed" in text, text
    assert "PASS→ERROR" in text and "runs/cases/Gelu/a1.json --backend qnn-htp@v73" in text, text


def test_the_sweep_runs_each_generation_and_each_release_against_the_plain_backend_not_their_product() -> None:
    from adapters.qnn import releases, targets
    from conformance.main_job import sweep_backends

    names = sweep_backends()
    gens = [n for n in names if n.partition("@")[2] in targets.GENERATIONS]
    rels = [n for n in names if n.partition("@")[2] in {r.label for r in releases.KNOWN}]
    assert names[0] == "qnn-htp" and names[-1] == "qnn-cpu", names
    assert len(gens) == len(targets.GENERATIONS) - 1 and len(rels) == len(releases.KNOWN) - 1, names
