"""Planted bugs: the mutant backend, its classification, and the suite killing a handful of them on the reference."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

import adapters  # noqa: E402
from bench.mutants import catalogue, factory, kinds, run  # noqa: E402
from reports.expectations import Expectations  # noqa: E402
from reports.record import Record  # noqa: E402

# Mutants cheap on the reference, one per place a bug lives: a rewritten case, recomputed numbers, an altered
# outcome (requantization, float16, a vector tail, a crash, a finalize error), a signed-8-bit-only bug.
FAST = ("softmax_beta_ignored", "conv2d_bias_dropped", "pad_reflect_as_symmetric", "logsoftmax_axis_reversed",
        "add_16bit_requant", "sigmoid_f32_as_f16", "transpose_odd_tail", "expanddims_trailing_crash",
        "pack_axis0_finalize", "tanh_s8_sign")  # fmt: skip


def _mutants_run(tmp_path: Path, only: list[str], *extra: str) -> dict:
    rc = run.main(["--base", "reference", "--only", "^(" + "|".join(only) + ")$", "--examples", "8",
                   "--out", str(tmp_path), *extra])  # fmt: skip
    assert rc == 0
    return json.loads((tmp_path / "mutants.json").read_text())


def test_the_catalogue_plants_forty_bugs_over_twenty_five_ops_of_every_drawn_family():
    import opdefs
    from cases import generate

    specs = opdefs.load_all()
    drawn_families = {op.family for op in specs.values() if generate.configs(op)}
    ops = {o for m in catalogue.MUTANTS for o in m.ops}
    assert len(catalogue.MUTANTS) >= 40 and len(ops) >= 25, (len(catalogue.MUTANTS), len(ops))
    assert drawn_families <= {specs[o].family for o in ops}, drawn_families - {specs[o].family for o in ops}
    planted = {m.kind for m in catalogue.MUTANTS}
    assert planted == set(kinds.KINDS), set(kinds.KINDS) - planted


def test_every_mutant_names_an_op_with_a_spec_and_says_what_it_does():
    import opdefs

    names = set(opdefs.load_all())
    for m in catalogue.MUTANTS:
        assert set(m.ops) <= names, f"{m.name}: no spec for {set(m.ops) - names}"
        assert m.what and m.name.isidentifier(), m.name


def test_a_mutant_is_a_backend_by_its_factory_reference_and_names_what_it_wraps():
    adapter = adapters.get(factory("reference", "softmax_beta_ignored"))
    info = adapter.info()
    assert (info["wraps"], info["mutant"]) == ("reference", "softmax_beta_ignored"), info


def test_an_unknown_mutant_is_refused_at_the_door():
    with pytest.raises(adapters.UnknownBackend, match="no_such_bug"):
        adapters.get(factory("reference", "no_such_bug"))


def test_a_findings_entry_for_the_wrapped_backend_covers_the_mutant_run():
    known = Expectations.from_text("- {op: Relu, backend: qnn-htp, scope: cell, reason: r}\n")
    rec = Record(op="Relu", config="FLOAT_32", backend=factory("qnn-htp", "softmax_beta_ignored"), verdict="FAIL",
                 backend_info={"wraps": "qnn-htp"}, tier="typical")  # fmt: skip
    assert known.apply_record(rec).verdict == "XFAIL"
    assert known.apply_record(Record(op="Relu", config="FLOAT_32", backend="other", verdict="FAIL")).verdict == "FAIL"


def _rec(verdict: str, mutated: bool = False, expectation: str | None = None, tier: str = "typical") -> Record:
    extra = {"details": {"mutant": "m"}} if mutated else {}
    return Record(op="Softmax", config="FLOAT_32", backend="b", verdict=verdict, tier=tier, case_id="c1",
                  expectation=expectation, extra=extra)  # fmt: skip


def _side(*records: Record) -> run.Verdicts:
    return run.Verdicts({(r.op, r.config, r.tier, r.case_id): r for r in records})


MUTANT = catalogue.get("softmax_beta_ignored")


def test_a_case_the_bug_turns_red_kills_the_mutant():
    base, side = _side(_rec("PASS")), _side(_rec("FAIL", True))
    j = run.judge(MUTANT, base, base, side, side)
    assert (j.status, j.killed_typical) == (run.KILLED, True), j


def test_a_red_case_that_a_finding_takes_is_swallowed_and_the_finding_named():
    xfail = _rec("XFAIL", True, expectation="[softmax-fixed-small-beta] reason")
    j = run.judge(MUTANT, _side(_rec("PASS")), _side(_rec("PASS")), _side(xfail), _side(_rec("FAIL", True)))
    assert (j.status, j.swallowed_by) == (run.SWALLOWED, {"softmax-fixed-small-beta": 1}), j


def test_a_mutant_no_case_met_is_missed_as_never_drawn():
    j = run.judge(MUTANT, _side(_rec("PASS")), _side(_rec("PASS")), _side(_rec("PASS")), _side(_rec("PASS")))
    assert (j.status, j.why) == (run.MISSED, run.NEVER_DRAWN), j


def test_a_touched_case_that_still_passes_is_within_the_budget():
    base, side = _side(_rec("PASS")), _side(_rec("PASS", True))
    j = run.judge(MUTANT, base, base, side, side)
    assert (j.status, j.why) == (run.MISSED, run.WITHIN_BUDGET), j


def test_a_bug_in_cases_the_base_refuses_anyway_is_not_run_by_the_base():
    j = run.judge(MUTANT, _side(_rec("REJECTED")), _side(_rec("REJECTED")), _side(_rec("REJECTED", True)),
                  _side(_rec("REJECTED", True)))  # fmt: skip
    assert (j.status, j.why) == (run.MISSED, run.NOT_RUN), j


def test_a_bug_caught_only_by_the_edge_tier_is_killed_but_not_in_the_typical_headline():
    j = run.judge(MUTANT, _side(_rec("PASS", tier="edge")), _side(_rec("PASS", tier="edge")),
                  _side(_rec("FAIL", True, tier="edge")), _side(_rec("FAIL", True, tier="edge")))  # fmt: skip
    assert (j.status, j.killed_typical, j.killed_any) == (run.KILLED, False, True), j
    assert run.headline([j]).startswith("mutants: killed 0 / 1 (typical), 1 / 1 (typical+edge)"), run.headline([j])


@pytest.mark.slow
def test_the_suite_kills_every_fast_mutant_on_the_reference(tmp_path):
    report = _mutants_run(tmp_path, list(FAST))
    status = {m["name"]: (m["status"], m["killed_typical"]) for m in report["mutants"]}
    assert status == {name: (run.KILLED, True) for name in FAST}, status
    assert report["headline"].startswith(f"mutants: killed {len(FAST)} / {len(FAST)} (typical)"), report["headline"]


def _softmax_finding(tmp_path: Path, beta: float) -> Path:
    path = tmp_path / f"findings-beta-{beta}.yaml"
    path.write_text(f"- {{id: softmax-beta-as-{beta}, op: Softmax, backend: reference, verdicts: [FAIL], "
                    f"model: {{params: {{beta: {beta}}}}}, reason: every beta computed as {beta}}}\n")  # fmt: skip
    return path


@pytest.mark.slow
def test_a_finding_of_another_bug_in_the_same_cell_does_not_swallow_the_mutant(tmp_path):
    report = _mutants_run(tmp_path / "other", ["softmax_beta_ignored"], "--findings",
                          str(_softmax_finding(tmp_path, 2.0)))  # fmt: skip
    (m,) = report["mutants"]
    assert (m["status"], m["swallowed_by"]) == (run.KILLED, {}), m


@pytest.mark.slow
def test_a_finding_of_exactly_the_planted_bug_swallows_it_and_is_named(tmp_path):
    findings = _softmax_finding(tmp_path, 1.0)
    report = _mutants_run(tmp_path / "own", ["softmax_beta_ignored"], "--findings", str(findings))
    (m,) = report["mutants"]
    assert (m["status"], list(m["swallowed_by"])) == (run.SWALLOWED, ["softmax-beta-as-1.0"]), m


def test_a_bug_whose_form_the_base_refuses_is_missed_as_refused_not_within_budget():
    base, side = _side(_rec("PASS")), _side(_rec("REJECTED", True))
    j = run.judge(MUTANT, base, base, side, side)
    assert (j.status, j.why) == (run.MISSED, run.REFUSED), j
