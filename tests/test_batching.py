"""Batched execution gives every case the outcome it gets alone.

``run_many`` puts many cases in one QNN graph or one ONNX Runtime session. That is only kept because
a case's verdict does not depend on its neighbours: these tests run the same mixed cases both ways
(a passing, a rejected, an erroring and a crashing case side by side) and compare status, stage and
the digest of every output.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from adapters.base import (  # noqa: E402
    CRASH,
    ERROR,
    OK,
    REJECTED,
    SKIP,
    TIMEOUT,
    GroupHung,
    GroupRefused,
    Outcome,
    output_digest,  # noqa: E402
    run_batched,
)
from cases.case import Case, Param, Tensor  # noqa: E402
from tests.simulator import NEEDS_SIMULATOR  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FINDING_CASES = REPO / "findings" / "cases"

needs_simulator = NEEDS_SIMULATOR


# ---- cases ------------------------------------------------------------------------------------------
def _add(seed: int, shape: tuple[int, ...] = (2, 3)) -> Case:
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(-4, 4, shape).astype(np.float32) for _ in range(2))
    return Case("ElementWiseAdd", [Tensor("in[0]", "FLOAT_32", shape, a), Tensor("in[1]", "FLOAT_32", shape, b)], {},
                [Tensor("out[0]", "FLOAT_32", shape)])  # fmt: skip


def _transpose(out_shape: tuple[int, ...]) -> Case:
    """(2, 3) transposed: the right output shape passes, (2, 3) is refused at validation."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    return Case("Transpose", [Tensor("in[0]", "FLOAT_32", (2, 3), x)],
                {"perm": Param("perm", "UINT_32", np.array([1, 0], np.uint32))},
                [Tensor("out[0]", "FLOAT_32", out_shape)])  # fmt: skip


def _finding(op: str, finding_id: str) -> Case:
    return Case.load(FINDING_CASES / op / f"{finding_id}.json")


def _erroring() -> Case:
    """Validation accepts it, finalize fails on the default SoC (finding elementwiseatan-f32-default-soc-finalize)."""
    return _finding("ElementWiseAtan", "elementwiseatan-f32-default-soc-finalize")


def _crashing() -> Case:
    """backendValidateOpConfig segfaults (finding boxwithnmslimit-validate-segv)."""
    return _finding("BoxWithNmsLimit", "boxwithnmslimit-validate-segv")


def _summary(outcome: Outcome) -> tuple:
    digest = output_digest(outcome.outputs) if outcome.status == OK else None
    return outcome.status, outcome.details.get("stage"), digest


def _assert_same(cases: list[Case], alone: list[Outcome], together: list[Outcome],
                 names: tuple[str, str] = ("alone", "batched")) -> None:  # fmt: skip
    differ = [f"case {k} ({c.op}): {names[0]} {_summary(a)}, {names[1]} {_summary(b)}"
              for k, (c, a, b) in enumerate(zip(cases, alone, together, strict=True)) if _summary(a) != _summary(b)]
    assert not differ, f"{names[1]} outcomes differ from {names[0]} ones:\n" + "\n".join(differ)


# ---- the policy (no backend) ------------------------------------------------------------------------
def _fake(statuses: dict[int, str]):
    calls: list[tuple[str, list[int]]] = []

    def one(case: int) -> Outcome:
        calls.append(("alone", [case]))
        return Outcome(statuses.get(case, OK))

    def group(chunk: list[int]) -> list[Outcome | None]:
        calls.append(("group", list(chunk)))
        return [None if statuses.get(c, OK) == ERROR else Outcome(statuses.get(c, OK)) for c in chunk]

    return one, group, calls


def test_a_case_the_batch_cannot_speak_for_runs_alone():
    one, group, calls = _fake({2: ERROR})
    out = run_batched([0, 1, 2, 3], one, group, batch_size=4)
    assert [o.status for o in out] == [OK, OK, ERROR, OK]
    assert calls == [("group", [0, 1, 2, 3]), ("alone", [2])]
    assert out[2].details["batch"]["alone"], "a case re-run alone says why"


def test_cases_a_batch_never_ran_because_validation_crashed_are_batched_again():
    """A worker that dies validating case k (alone, before any graph) settles case k only: CRASH. The rest
    never ran; they go into a batch again, not one by one."""
    one, group, calls = _dying_validating({1, 3})
    out = run_batched([0, 1, 2, 3, 4], one, group, batch_size=8)
    assert [o.status for o in out] == [OK, CRASH, OK, CRASH, OK], [o.status for o in out]
    assert calls == [("group", [0, 1, 2, 3, 4]), ("group", [0, 2, 3, 4]), ("group", [0, 2, 4])], calls


def test_batches_hold_at_most_batch_size_cases():
    one, group, calls = _fake({})
    run_batched(list(range(5)), one, group, batch_size=2)
    assert calls == [("group", [0, 1]), ("group", [2, 3]), ("alone", [4])]


def test_a_probe_first_that_does_not_run_sends_every_case_alone():
    one, group, calls = _spoiled_by({0, 1, 2})
    out = run_batched([0, 1, 2], one, group, batch_size=8, probe=True, probe_first=True)
    assert [o.status for o in out] == [REJECTED] * 3
    assert all(kind == "alone" for kind, _ in calls), calls


def test_a_probe_first_that_runs_batches_the_rest():
    one, group, calls = _spoiled_by(set())
    run_batched([0, 1, 2], one, group, batch_size=8, probe=True, probe_first=True)
    assert calls == [("alone", [0]), ("group", [1, 2])], calls


def test_a_batch_that_runs_needs_no_probe():
    one, group, calls = _spoiled_by(set())
    run_batched([0, 1, 2], one, group, batch_size=8, probe=True)
    assert calls == [("group", [0, 1, 2])], calls


def test_a_refused_batch_whose_probe_is_refused_too_sends_every_case_alone():
    one, group, calls = _spoiled_by({0, 1, 2, 3, 4, 5})
    out = run_batched(list(range(6)), one, group, batch_size=8, probe=True, bisect=True)
    assert [o.status for o in out] == [REJECTED] * 6
    assert calls == [("group", list(range(6)))] + [("alone", [k]) for k in range(6)], \
        "one failed batch, then no more: the probe says the backend refuses this kind of case"


def test_a_refused_batch_whose_probe_runs_is_split_without_its_probe():
    one, group, calls = _spoiled_by({5})
    out = run_batched(list(range(7)), one, group, batch_size=8, probe=True, bisect=True)
    assert [o.status for o in out] == [OK] * 5 + [REJECTED, OK]
    assert calls[:3] == [("group", list(range(7))), ("alone", [0]), ("group", [1, 2, 3])], calls
    assert ("group", [4, 5, 6]) in calls and ("alone", [5]) in calls, calls


def _spoiled_by(bad: set[int]):
    """A group that fails as a whole when it holds a bad case (an ONNX Runtime session refusing one node)."""
    calls: list[tuple[str, list[int]]] = []

    def one(case: int) -> Outcome:
        calls.append(("alone", [case]))
        return Outcome(REJECTED if case in bad else OK)

    def group(chunk: list[int]) -> list[Outcome | None]:
        calls.append(("group", list(chunk)))
        return [None] * len(chunk) if bad & set(chunk) else [Outcome(OK) for _ in chunk]

    return one, group, calls


def test_bisecting_keeps_the_spoiling_case_alone_and_its_neighbours_batched():
    one, group, calls = _spoiled_by({5})
    out = run_batched(list(range(8)), one, group, batch_size=8, bisect=True)
    assert [o.status for o in out] == [OK] * 5 + [REJECTED] + [OK] * 2
    assert ("group", [0, 1, 2, 3]) in calls and ("group", [6, 7]) in calls, calls
    assert [c for kind, c in calls if kind == "alone"] == [[4], [5]], calls


def test_without_bisect_a_spoiled_batch_runs_every_case_alone():
    one, group, calls = _spoiled_by({5})
    run_batched(list(range(8)), one, group, batch_size=8)
    assert len([1 for kind, _ in calls if kind == "alone"]) == 8, calls


def test_a_hung_batch_is_not_split_its_cases_run_alone():
    calls: list[tuple[str, list[int]]] = []

    def one(case: int) -> Outcome:
        calls.append(("alone", [case]))
        return Outcome(TIMEOUT if case == 5 else OK)

    def group(chunk: list[int]) -> list[Outcome | None]:
        calls.append(("group", list(chunk)))
        if 5 in chunk:
            raise GroupHung("batch exceeded its timeout")
        return [Outcome(OK) for _ in chunk]

    out = run_batched(list(range(8)), one, group, batch_size=8, bisect=True)
    assert [kind for kind, _ in calls] == ["group"] + ["alone"] * 8, f"a hung batch was split: {calls}"
    assert out[5].status == TIMEOUT and out[0].details["batch"]["alone"] == "the batch timed out"


def test_cases_a_refused_batch_names_run_alone_and_the_rest_batch_again():
    calls: list[tuple[str, list[int]]] = []
    bad = {2, 6}

    def one(case: int) -> Outcome:
        calls.append(("alone", [case]))
        return Outcome(REJECTED if case in bad else OK)

    def group(chunk: list[int]) -> list[Outcome | None]:
        calls.append(("group", list(chunk)))
        if bad & set(chunk):
            raise GroupRefused({k for k, c in enumerate(chunk) if c in bad})
        return [Outcome(OK) for _ in chunk]

    out = run_batched(list(range(8)), one, group, batch_size=8, bisect=True)
    assert [o.status for o in out] == [OK, OK, REJECTED, OK, OK, OK, REJECTED, OK]
    assert sorted(c for kind, c in calls if kind == "alone") == [[2], [6]], calls
    assert ("group", [0, 1, 3, 4, 5, 7]) in calls, f"the unnamed cases were not batched again: {calls}"
    assert "index" not in out[2].details.get("batch", {}) and out[2].details["batch"]["alone"]


def _stopping_at_first(bad: set[int], alone: str, spoiled: Callable[[int, list[int]], list[Outcome | None]]):
    """A group that stops at the first bad case it holds, ``spoiled(k, chunk)`` giving what it then returns; a bad
    case alone gets ``alone``."""
    calls: list[tuple[str, list[int]]] = []

    def one(case: int) -> Outcome:
        calls.append(("alone", [case]))
        return Outcome(alone if case in bad else OK)

    def group(chunk: list[int]) -> list[Outcome | None]:
        calls.append(("group", list(chunk)))
        first = next((k for k, c in enumerate(chunk) if c in bad), None)
        return [Outcome(OK) for _ in chunk] if first is None else spoiled(first, chunk)

    return one, group, calls


def _naming_one_at_a_time(bad: set[int]):
    """A group refused naming only the first bad case it holds (the QNN EP stops at the first node it declines)."""

    def refuse(first: int, chunk: list[int]) -> list[Outcome | None]:
        raise GroupRefused({first})

    return _stopping_at_first(bad, REJECTED, refuse)


def _dying_validating(bad: set[int]):
    """A worker that dies validating the first bad case of a batch, before any graph exists."""

    def died(first: int, chunk: list[int]) -> list[Outcome | None]:
        got: list[Outcome | None] = [None] * len(chunk)
        got[first] = Outcome(CRASH, details={"batch": {"size": len(chunk), "died_validating": first}})
        return got

    return _stopping_at_first(bad, CRASH, died)


def test_a_cell_refused_outright_one_name_at_a_time_costs_two_failed_batches_not_one_per_case():
    one, group, calls = _naming_one_at_a_time(set(range(6)))
    out = run_batched(list(range(6)), one, group, batch_size=8, probe=True, bisect=True)
    assert [o.status for o in out] == [REJECTED] * 6
    assert [kind for kind, _ in calls].count("group") == 2, calls


def test_a_first_refusal_that_names_cases_batches_the_others_again_without_a_probe():
    one, group, calls = _naming_one_at_a_time({3})
    out = run_batched(list(range(6)), one, group, batch_size=8, probe=True, bisect=True)
    assert [o.status for o in out] == [OK, OK, OK, REJECTED, OK, OK]
    assert calls == [("group", list(range(6))), ("group", [0, 1, 2, 4, 5]), ("alone", [3])], calls


def test_a_second_refusal_probes_and_a_probe_that_runs_batches_the_unnamed_cases_again():
    one, group, calls = _naming_one_at_a_time({1, 3})
    out = run_batched(list(range(6)), one, group, batch_size=8, probe=True, bisect=True)
    assert [o.status for o in out] == [OK, REJECTED, OK, REJECTED, OK, OK]
    assert calls == [("group", list(range(6))), ("group", [0, 2, 3, 4, 5]), ("alone", [0]),
                     ("group", [2, 4, 5]), ("alone", [3]), ("alone", [1])], calls


def test_a_refused_batch_that_names_no_case_is_bisected():
    one, group_spoiled, calls = _spoiled_by({5})

    def group(chunk: list[int]) -> list[Outcome | None]:
        got = group_spoiled(chunk)
        if all(o is None for o in got):
            raise GroupRefused(set())
        return got

    out = run_batched(list(range(8)), one, group, batch_size=8, bisect=True)
    assert [o.status for o in out] == [OK] * 5 + [REJECTED] + [OK] * 2
    assert ("group", [0, 1, 2, 3]) in calls, calls


def test_batch_size_one_never_groups():
    one, group, calls = _fake({})
    run_batched([0, 1, 2], one, group, batch_size=1)
    assert [kind for kind, _ in calls] == ["alone"] * 3


# ---- QNN HTP simulator ------------------------------------------------------------------------------
def _usable(adapter):
    ok, why = adapter.available()
    if not ok:
        pytest.skip(f"{adapter.name} not usable here: {why}")
    return adapter


@pytest.fixture(scope="module")
def qnn():
    from adapters.qnn.adapter import QnnAdapter

    with _usable(QnnAdapter(timeout=60, batch_size=8)) as ad:
        yield ad


@pytest.mark.parametrize("mark", [pytest.param(None, marks=needs_simulator)])
def test_qnn_mixed_batch_gives_each_case_its_own_verdict(qnn, mark):
    cases = [_add(1), _transpose((2, 3)), _erroring(), _add(2), _crashing(), _transpose((3, 2)), _add(3, (4, 5))]
    alone = [qnn.run(c) for c in cases]
    assert [o.status for o in alone] == [OK, REJECTED, ERROR, OK, CRASH, OK, OK], [o.message for o in alone]
    together = qnn.run_many(cases)
    _assert_same(cases, alone, together)
    assert together[4].details["batch"]["died_validating"] == 4, \
        "a crash while validating one node is that case's verdict without running it again"


@pytest.mark.parametrize("mark", [pytest.param(None, marks=needs_simulator)])
def test_qnn_cases_that_build_share_one_graph_and_a_refusal_stays_its_own(qnn, mark):
    cases = [_add(4), _transpose((2, 3)), _add(5), _transpose((3, 2))]
    together = qnn.run_many(cases)
    _assert_same(cases, [qnn.run(c) for c in cases], together)
    assert [o.details.get("batch", {}).get("size") for o in together] == [3, None, 3, 3], \
        "the three valid cases run as the nodes of one graph, the refused one stays out of it"


@pytest.mark.parametrize("mark", [pytest.param(None, marks=needs_simulator)])
def test_a_refused_case_in_a_batch_carries_only_its_own_log(qnn, mark):
    cases = [_transpose((2, 3)), _add(9), _transpose((2, 3)), _add(10)]
    together = qnn.run_many(cases)
    assert [o.status for o in together] == [REJECTED, OK, REJECTED, OK], [o.message for o in together]
    for k in (0, 2):
        log = together[k].details.get("log") or []
        assert log, f"case {k} was refused without the backend's words"
        others = [line for line in log if any(f"c{j}_" in line for j in range(len(cases)) if j != k)]
        assert not others, f"case {k}'s log holds lines about other cases of its batch: {others}"


# ---- a FAIL from a batch stands only if the case fails alone ----------------------------------------
class _NeighbourSensitive:
    """A backend whose batched outputs are wrong and whose one-case outputs are right: a kernel reading
    its neighbours' memory, as TransposeConv1d did on the HTP simulator."""

    name = "neighbour-sensitive"
    batch_size = 8

    def __init__(self, wrong_alone: bool = False) -> None:
        self.wrong_alone, self.alone_runs = wrong_alone, 0

    def info(self) -> dict:
        return {}

    def _outputs(self, case: Case, wrong: bool) -> list[np.ndarray]:
        total = case.inputs[0].data + case.inputs[1].data
        return [total + 1.0 if wrong else total]

    def run(self, case: Case) -> Outcome:
        self.alone_runs += 1
        return Outcome(OK, outputs=self._outputs(case, self.wrong_alone))

    def run_many(self, cases: list[Case]) -> list[Outcome]:
        return [Outcome(OK, outputs=self._outputs(c, True), details={"batch": {"size": len(cases), "index": k}})
                for k, c in enumerate(cases)]  # fmt: skip


def test_a_batched_fail_that_passes_alone_is_a_pass_with_the_batched_verdict_beside_it():
    from conformance.execute import RunContext, execute_many

    adapter = _NeighbourSensitive()
    recs = execute_many([_add(11), _add(12)], RunContext(adapter, adapter.name))
    assert [r.verdict for r in recs] == ["PASS", "PASS"], [r.message for r in recs]
    note = recs[0].extra["details"]["batch"]
    assert note["batched_verdict"] == "FAIL" and note["batched_message"], note
    assert adapter.alone_runs == 2, "each batched FAIL runs again alone"


def test_a_batched_fail_that_fails_alone_stays_a_fail_without_a_second_verdict():
    from conformance.execute import RunContext, execute_many

    recs = execute_many([_add(13), _add(14)], RunContext(_NeighbourSensitive(wrong_alone=True), "neighbour-sensitive"))
    assert [r.verdict for r in recs] == ["FAIL", "FAIL"]
    assert "batched_verdict" not in recs[0].extra["details"]["batch"], recs[0].extra["details"]


# ---- ONNX Runtime ---------------------------------------------------------------------------------
def _ort_mix() -> list[Case]:
    """A passing probe, cases ORT refuses (a wrong declared shape fails strict shape inference), one
    without a lowering (SKIP), and more passing ones."""
    unlowered = Case("NoSuchOp", [], {}, [Tensor("out[0]", "FLOAT_32", (1,))])
    return [_add(6), _transpose((3, 2)), _transpose((2, 3)), unlowered, _add(7, (3, 4)), _add(8)]


def test_ort_cpu_batched_outcomes_match_one_session_per_case():
    pytest.importorskip("onnxruntime")
    from adapters.onnxruntime import OrtCpuAdapter

    ad = OrtCpuAdapter(batch_size=8)
    cases = _ort_mix()
    alone = [ad.run(c) for c in cases]
    assert [o.status for o in alone] == [OK, OK, REJECTED, SKIP, OK, OK], [o.message for o in alone]
    _assert_same(cases, alone, ad.run_many(cases))


def test_ort_cpu_cases_that_build_share_one_session():
    pytest.importorskip("onnxruntime")
    from adapters.onnxruntime import OrtCpuAdapter

    ad = OrtCpuAdapter(batch_size=8)
    cases = [_add(9), _add(10), _transpose((3, 2)), _add(11, (5,))]
    together = ad.run_many(cases)
    _assert_same(cases, [ad.run(c) for c in cases], together)
    assert [o.details.get("batch", {}).get("size") for o in together] == [4, 4, 4, 4], \
        "cases that build share one model, with no probe alone before it"


@pytest.fixture(scope="module")
def ort_qnn():
    pytest.importorskip("onnxruntime_qnn")
    from adapters.ort_qnn import OrtQnnAdapter

    with _usable(OrtQnnAdapter(timeout=60, batch_size=8, debug_hooks=True)) as ad:
        yield ad


@pytest.mark.parametrize("mark", [pytest.param(None, marks=needs_simulator)])
def test_ort_qnn_warm_session_changes_no_outcome(mark):
    """The ort-qnn worker holds one small session open (``keep_warm``) so the simulator is not started
    again for every session. Each case's session is still its own; this checks that nothing else
    changed: the mixed cases and every committed finding's case (refused, erroring, crashing and wrong
    ones, many ops and datatypes) give the same status, stage and output digest with a cold worker."""
    pytest.importorskip("onnxruntime_qnn")
    from adapters.ort_qnn import OrtQnnAdapter

    cases = [*_ort_mix(), _erroring(), *(Case.load(p) for p in sorted(FINDING_CASES.glob("*/*.json")))]
    outcomes = {}
    for warm in (False, True):
        with _usable(OrtQnnAdapter(timeout=60, keep_warm=warm)) as ad:
            outcomes[warm] = [ad.run(c) for c in cases]
    _assert_same(cases, outcomes[False], outcomes[True], ("cold worker", "warm worker"))


@pytest.mark.parametrize("mark", [pytest.param(None, marks=needs_simulator)])
def test_ort_qnn_mixed_batch_gives_each_case_its_own_verdict(ort_qnn, mark):
    crash = Case("__debug_segv__", [], {}, [Tensor("out[0]", "FLOAT_32", (1,))])
    cases = [*_ort_mix(), _erroring(), crash, _add(12)]
    alone = [ort_qnn.run(c) for c in cases]
    assert alone[-2].status == CRASH, alone[-2].message
    _assert_same(cases, alone, ort_qnn.run_many(cases))
