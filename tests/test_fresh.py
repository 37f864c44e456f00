"""A recorded verdict is what the case does alone (conformance/fresh.py), shown on a worker-backed double whose
verdicts depend on what its process ran and whose outputs vary on cue (tests/stateful_backend.py), no QNN needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cases.case import Case, Tensor
from conformance import fresh
from conformance.execute import RunContext, execute, execute_many
from reference.compare import defined_masks
from reports import matrix
from reports.record import Record
from tests.conformance_runs import child_env
from tests.paths import REPO
from tests.stateful_backend import StatefulAdapter


def unary(op: str, seed: int) -> Case:
    x = np.random.default_rng(seed).uniform(0.5, 2.0, size=(2, 3)).astype(np.float32)
    return Case(op, [Tensor("in[0]", "FLOAT_32", (2, 3), x)], {}, [Tensor("out[0]", "FLOAT_32", (2, 3))], seed=seed)


def passing_id_case(op: str) -> Case:
    """A case of ``op`` that is in the sample of passing cases (its id chosen so)."""
    return next(c for c in (unary(op, s) for s in range(2000)) if fresh.sampled(c.case_id()))


def unsampled(op: str, n: int) -> list[Case]:
    return [c for c in (unary(op, s) for s in range(200)) if not fresh.sampled(c.case_id())][:n]


@pytest.fixture
def adapter():
    a = StatefulAdapter()
    yield a
    a.close()


def details(rec: Record) -> dict:
    return rec.extra.get("details") or {}


def test_a_verdict_a_used_worker_gave_is_replaced_by_what_a_fresh_worker_gives_and_kept_beside_it(adapter):
    cases = unsampled("Relu", 3)  # the double breaks Relu once its process has run any case
    recs = execute_many(cases, RunContext(adapter, "stateful"))
    first, *later = recs
    assert first.verdict == "PASS" and "fresh" not in details(first), details(first)
    for rec in later:
        assert rec.verdict == "PASS", f"the fresh worker's verdict should stand: {rec.verdict} {rec.message}"
        note = details(rec)["fresh"]
        assert note["long_lived"]["verdict"] == "FAIL", note
        assert note["age"] >= 1 and note["runs"] == 2, note


def test_each_op_starts_in_a_worker_that_has_run_nothing(adapter):
    ctx = RunContext(adapter, "stateful")
    execute_many(unsampled("ElementWiseAbs", 2), ctx)
    (rec,) = execute_many(unsampled("Relu", 1), ctx)
    assert rec.verdict == "PASS" and details(rec).get("served_before") == 0, details(rec)


def test_two_fresh_runs_that_disagree_mark_the_case_nondeterministic_with_the_elements(adapter):
    (rec,) = execute_many(unsampled("Sigmoid", 2)[1:], RunContext(adapter, "stateful"))
    assert rec.verdict == "FAIL"
    differs = details(rec)["nondeterministic"]["outputs"]["out[0]"]
    assert differs == {"elements": 1, "of": 6, "first": [0]}, differs


def test_a_passing_case_in_the_sample_runs_twice_in_a_fresh_worker(adapter):
    ctx = RunContext(adapter, "stateful")
    execute_many(unsampled("ElementWiseAbs", 1), ctx)
    (rec,) = execute_many([passing_id_case("ElementWiseAbs")], ctx)
    note = details(rec)["fresh"]
    assert (rec.verdict, note["why"], note["runs"], details(rec).get("served_before")) == ("PASS", "sample", 2, 0)
    assert "long_lived" not in note and "nondeterministic" not in details(rec), details(rec)


def test_only_the_first_passing_case_of_an_op_in_the_sample_runs_again(adapter):
    ctx = RunContext(adapter, "stateful")
    sampled = [c for c in (unary("ElementWiseAbs", s) for s in range(4000)) if fresh.sampled(c.case_id())][:3]
    first_cell = execute_many(sampled[:2], ctx)
    later_cell = execute_many(sampled[2:], ctx)
    notes = [details(r).get("fresh") for r in first_cell + later_cell]
    assert notes[0] and notes[0]["why"] == "sample", notes
    assert notes[1:] == [None, None], f"a second sample of the op ran again: {notes}"


def test_a_passing_case_outside_the_sample_runs_once(adapter):
    ctx = RunContext(adapter, "stateful")
    recs = execute_many(unsampled("ElementWiseAbs", 3), ctx)
    assert all("fresh" not in details(r) for r in recs), [details(r) for r in recs]


def test_refusals_that_give_one_reason_are_confirmed_by_the_first_and_the_others_name_it(adapter):
    recs = execute_many(unsampled("Tanh", 4), RunContext(adapter, "stateful"))
    assert [r.verdict for r in recs] == ["REJECTED"] * 4
    notes = [details(r)["fresh"] for r in recs]
    assert "as" not in notes[0] and notes[0]["runs"] == 2, notes[0]
    assert [n.get("as") for n in notes[1:]] == [recs[0].case_id] * 3, notes


def test_refusals_of_an_op_s_later_cells_name_the_case_that_confirmed_the_reason(adapter):
    ctx = RunContext(adapter, "stateful")
    first_cell = execute_many(unsampled("Tanh", 2), ctx)
    later_cell = execute_many(unsampled("Tanh", 4)[2:], ctx)
    assert [details(r)["fresh"].get("as") for r in later_cell] == [first_cell[0].case_id] * 2, [
        details(r)["fresh"] for r in later_cell]


def test_errors_that_differ_only_in_the_node_id_they_name_are_confirmed_by_the_first(adapter):
    recs = execute_many(unsampled("Elu", 4), RunContext(adapter, "stateful"))
    assert [r.verdict for r in recs] == ["ERROR"] * 4 and len({r.message for r in recs}) == 4, [r.message for r in recs]
    notes = [details(r)["fresh"] for r in recs]
    assert "as" not in notes[0] and notes[0]["runs"] == 2, notes[0]
    assert [n.get("as") for n in notes[1:]] == [recs[0].case_id] * 3, notes


def test_where_a_fresh_worker_costs_much_one_case_per_verdict_speaks_for_the_cell(adapter):
    adapter.confirm_each = False
    recs = execute_many(unsampled("Sigmoid", 4), RunContext(adapter, "stateful"))  # FAIL, fresh or not
    notes = [details(r)["fresh"] for r in recs]
    assert [r.verdict for r in recs] == ["FAIL"] * 4 and "as" not in notes[0], notes
    assert [n.get("as") for n in notes[1:]] == [recs[0].case_id] * 3, notes


def test_where_a_fresh_worker_costs_much_the_op_s_later_cells_name_the_first_cell_s_case(adapter):
    adapter.confirm_each = False
    ctx = RunContext(adapter, "stateful")
    first_cell = execute_many(unsampled("Sigmoid", 2), ctx)
    later_cell = execute_many(unsampled("Sigmoid", 4)[2:], ctx)
    notes = [details(r)["fresh"] for r in later_cell]
    assert [n.get("as") for n in notes] == [first_cell[0].case_id] * 2, notes


def test_a_new_op_on_such_an_adapter_confirms_its_own_first_case(adapter):
    adapter.confirm_each = False
    ctx = RunContext(adapter, "stateful")
    execute_many(unsampled("Sigmoid", 2), ctx)
    (rec,) = execute_many(unsampled("Tanh", 1), ctx)
    assert "as" not in details(rec)["fresh"] and details(rec)["fresh"]["runs"] == 2, details(rec)


def test_a_verdict_the_first_case_of_a_group_changes_alone_sends_every_case_of_it_to_a_fresh_worker(adapter):
    adapter.confirm_each = False
    recs = execute_many(unsampled("Relu", 4), RunContext(adapter, "stateful"))  # FAIL only in a used worker
    assert [r.verdict for r in recs] == ["PASS"] * 4, [(r.verdict, details(r)) for r in recs]
    assert all("as" not in details(r).get("fresh", {}) for r in recs), [details(r) for r in recs]


def test_a_case_run_alone_by_execute_starts_its_op_in_a_fresh_worker(adapter):
    ctx = RunContext(adapter, "stateful")
    execute(unary("ElementWiseAbs", 1), ctx)
    rec = execute(unary("Relu", 1), ctx)
    assert details(rec)["served_before"] == 0, details(rec)


def test_rows_past_the_valid_count_the_backend_gives_are_not_defined():
    case = Case("NonMaxSuppression", [], {}, [Tensor("out[0]", "INT_32", (4, 3)), Tensor("out[1]", "INT_32", (1,))])
    rows = {0: {"count": "out[1]", "axis": 0, "order": "fixed"}}
    masks = defined_masks(case, [np.zeros((4, 3), np.int32), np.array([2], np.int32)], rows=rows)
    assert masks[1] is None and masks[0][:2].all() and not masks[0][2:].any(), masks


def test_a_count_past_the_rows_leaves_every_row_defined():
    case = Case("NonMaxSuppression", [], {}, [Tensor("out[0]", "INT_32", (4, 3)), Tensor("out[1]", "INT_32", (1,))])
    rows = {0: {"count": "out[1]", "axis": 0, "order": "fixed"}}
    masks = defined_masks(case, [np.zeros((4, 3), np.int32), np.array([9], np.int32)], rows=rows)
    assert masks == [None, None], masks


def test_the_matrix_says_how_many_verdicts_only_a_used_worker_gave_and_how_many_cases_vary(adapter):
    ctx = RunContext(adapter, "stateful")
    recs = execute_many(unsampled("Relu", 3), ctx) + execute_many(unsampled("Sigmoid", 2)[1:], ctx)
    m = matrix.build(recs)
    relu = next(c for c in m.cells.values() if c.op == "Relu")
    sigmoid = next(c for c in m.cells.values() if c.op == "Sigmoid")
    assert relu.memory_note() == "2 verdicts only in a used worker", relu.memory_note()
    assert sigmoid.memory_note() == "1 case varies between runs", sigmoid.memory_note()


def test_bench_replay_finds_every_record_of_a_run_on_a_stateful_backend_as_its_case_does_alone(tmp_path: Path):
    """The run's records hold what each case does alone, so replaying a sample of them alone agrees, verdict, stage and
    digest (the noisy op's records are marked nondeterministic and held to their verdict)."""
    results = tmp_path / "stateful.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q",
         "--backend=tests.stateful_backend:make", "--op=^(Relu|Sigmoid|Tanh)$", "--examples=4", "--tier=typical",
         "--no-shrink", f"--results={results}", f"--case-dir={tmp_path / 'cases'}", "conformance/test_conformance.py"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=child_env())  # fmt: skip
    assert results.is_file(), run.stdout[-2000:] + run.stderr[-2000:]
    proc = subprocess.run([sys.executable, "-m", "bench", "replay", str(results), "--sample", "30", "--out",
                           str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env=child_env())  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "replay-tests.stateful_backend_make.json").read_text())
    assert summary["replayed"] >= 8 and summary["same_verdict"] == summary["replayed"], summary
    assert {"FAIL", "REJECTED"} <= set(summary["verdicts"]), summary["verdicts"]


def test_bench_replay_on_the_reference_backend_agrees_with_every_record_it_replays(tmp_path: Path):
    results = tmp_path / "reference.jsonl"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q", "--backend=reference",
         "--op=^(Logit|ElementWiseMod)$", "--examples=3", "--no-shrink", f"--results={results}",
         f"--case-dir={tmp_path / 'cases'}", "conformance/test_conformance.py"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=child_env())  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "bench", "replay", str(results), "--out", str(tmp_path / "out")],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env=child_env())  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "replay-reference.json").read_text())
    assert summary["replayed"] >= 1 and summary["same_digest"] == summary["held_to_digest"] >= 1, summary


def test_the_memory_report_lists_each_case_a_used_worker_changed_and_each_that_varies(adapter):
    from reports import memory

    ctx = RunContext(adapter, "stateful")
    recs = execute_many(unsampled("Relu", 2), ctx) + execute_many(unsampled("Sigmoid", 2)[1:], ctx)
    text = memory.report(recs)
    assert "1 verdict(s) only a used worker gave" in text and "1 case(s) that vary" in text, text
    assert "out[0]: 1 of 6 elements differ (first at flat [0])" in text, text


@pytest.mark.parametrize("verdict", ["FP16_ACCURATE", "UNCHECKED"])
def test_a_verdict_that_claims_no_deviation_is_not_confirmed_in_a_fresh_worker(verdict):
    from adapters.base import OK, Outcome

    case = unsampled("Softmax", 1)[0]
    rec = Record(op="Softmax", config="FLOAT_32", backend="stateful", verdict=verdict, case_id=case.case_id())
    assert fresh.wanted(rec, Outcome(OK)) == "", f"{verdict} claims no deviation, as PASS does: no fresh worker for it"


@pytest.mark.parametrize("verdict", ["FAIL", "ERROR", "CRASH", "XPASS"])
def test_a_verdict_that_claims_a_deviation_is_confirmed_in_a_fresh_worker(verdict):
    from adapters.base import OK, Outcome

    case = unsampled("Softmax", 1)[0]
    rec = Record(op="Softmax", config="FLOAT_32", backend="stateful", verdict=verdict, case_id=case.case_id())
    assert fresh.wanted(rec, Outcome(OK)) == "confirm", f"a {verdict} must be what the case does alone"


def _counting_models(monkeypatch) -> list:
    from conformance import execute as execute_module

    calls: list = []

    def models(case, outputs, *args, **kwargs):
        calls.append(case.case_id())
        return {"a-finding": {"matches": False}}

    monkeypatch.setattr(execute_module, "_models", models)
    return calls


def test_a_failure_judged_again_alone_is_modelled_and_saved_once_from_the_fresh_worker_s_outputs(adapter, monkeypatch,
                                                                                               tmp_path):  # fmt: skip
    calls = _counting_models(monkeypatch)
    cases = unsampled("Sigmoid", 2)  # the double's noise fails every run, in a used worker and in a fresh one
    recs = execute_many(cases, RunContext(adapter, "stateful", known=object(), case_dir=tmp_path))
    assert [r.verdict for r in recs] == ["FAIL", "FAIL"], [r.message for r in recs]
    assert sorted(calls) == sorted(c.case_id() for c in cases), f"models computed {len(calls)} times for 2 failures"
    for rec in recs:
        assert details(rec)["fresh"]["runs"] == 2 and "judged_again" not in details(rec), details(rec)
        assert "a-finding" in rec.metrics.get("models", {}) and Path(rec.case_path).is_file(), rec


def test_a_failure_left_to_a_fresh_judgement_that_does_not_come_is_judged_in_full(adapter, monkeypatch, tmp_path):
    calls = _counting_models(monkeypatch)
    monkeypatch.setattr(fresh, "_fresh", lambda case, rec, *args, **kwargs: rec)
    recs = execute_many(unsampled("Sigmoid", 1), RunContext(adapter, "stateful", known=object(), case_dir=tmp_path))
    assert recs[0].verdict == "FAIL" and len(calls) == 1, (recs[0].verdict, calls)
    assert "judged_again" not in details(recs[0]) and Path(recs[0].case_path).is_file(), recs[0]
