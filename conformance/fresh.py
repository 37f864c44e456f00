"""The recorded verdict is the replayed verdict: a case's verdict as it stands alone, in a process that ran nothing.

Why: the QNN adapters keep one worker process across many cases (starting one was most of a small case's cost), and a
kernel that reads memory it does not own sees what the earlier cases left there. In a main job, three output digests
differed from the same cases replayed alone (from workers 339-1889 cases old), and all 42 BoxWithNmsLimit records
were refusals naming a batch read past its inputs where the case alone crashed. A replay runs a case alone in a new
process, so the record must say what that gives. Each op already starts in a fresh worker (``begin_op``); what ran
before a case within its op is undone here.

What runs again after a cell's cases ran (``conformance.execute.execute_many``), each in a worker that has run nothing
(``run_fresh``: a fork of the adapter's prepared zygote), twice in a row:
  - every case whose verdict claims something against the backend (not PASS, FP16_ACCURATE or UNCHECKED; not REJECTED
    for a case that breaks the spec): the first run confirms a verdict given in a worker that had run something
    before the case, or in a graph or session shared with other cases (``details.fresh.age``, ``details.batch``),
    the second says whether the backend gives it again;
  - the first good case of an op (PASS, FP16_ACCURATE, UNCHECKED) that is in the sample (one in ``SAMPLE``, chosen
    by its id, so the same cases every run): nondeterminism is measured where it does not change a verdict as well.
    One an op, not one in twenty: a fresh worker's first graph costs the HTP simulator about 60 ms of CPU (its
    second, 12 ms), and a main job's 636 samples were 81 s of its workers' time, more than a quarter of all
    rechecks; the state a long-lived worker carries is the process's, so a second sample of the same op in the same
    process adds little.
A TIMEOUT runs once more, not twice: a second wait of seconds says nothing a first did not.

Why FP16_ACCURATE and UNCHECKED are good verdicts here, as PASS is: neither says the backend deviates. FP16_ACCURATE is
the arithmetic the backend documents (float16 for FLOAT_32 on the HTP from v69), UNCHECKED judged nothing. What a
long-lived worker could hide behind them it could hide behind a PASS (a case that fails alone and passed in a used
worker is not run again either); a failure it adds is confirmed, as for PASS. Measured before the change, every one of
them confirmed in a fresh worker: 5746 of 5746 FP16_ACCURATE and 176 of 176 UNCHECKED verdicts of long-lived workers
were the same alone, output digest included (the s17 sweep's eight qnn-htp runs and s18's main job). At v69 and later
every FLOAT_32 cell is FP16_ACCURATE: their confirmations were 1137 fresh workers a run, about a minute of a 2-core
machine's wall time for each generation of a sweep.

Cost bound: the refusals (REJECTED, ERROR) of one op that give one reason are confirmed by the first of them, in
whichever of the op's cells it came, and the others name it (``details.fresh.as``) unless it disagreed, when each runs
for itself (an op the backend lacks gives one reason in all its configurations: 972 cells' confirmations in a main
job). Reasons that differ only in their numbers are one reason ("Could not prepare op with id 0x1a" and "... 0x19"):
the finalize errors of a main job on the HTP simulator gave 574 confirmations over 244 cells, most of them the same
error at another node id. On an adapter whose fresh worker is not cheap (``confirm_each`` False: ort-qnn, where it
costs 120 ms before the first session) every verdict is confirmed that way across the op's cells, one case per
verdict and reason: the state a long-lived worker carries is the process's, not a configuration's, and per cell
these rechecks were half of ort-qnn's main-job time (1666 fresh workers, 295 s of its workers' time).

What a record keeps: ``details.fresh`` (the age of the worker the case first ran in, the fresh runs, and, where the
fresh verdict or the output digest differs, what the long-lived worker gave: ``long_lived``). The record's verdict
is the fresh one. ``details.nondeterministic``: what the two fresh runs disagree on, output by output over the
elements the spec defines (``reference.compare.defined_masks``), or their statuses.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from adapters.base import CRASH, ERROR, OK, REJECTED, SKIP, TIMEOUT, Outcome
from cases.case import Case
from reports.record import FP16_ACCURATE, PASS, UNCHECKED, Record

_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+")
SAMPLE = 20  # passing cases whose id falls in one in SAMPLE may be sampled; the first of them an op is
REFUSALS = ("REJECTED", "ERROR")
_STATUS_VERDICT = {REJECTED: "REJECTED", ERROR: "ERROR", CRASH: "CRASH", TIMEOUT: "TIMEOUT", SKIP: "SKIP"}

Execute = Callable[..., Record]


def sampled(case_id: str) -> bool:
    """Whether a passing case is in the sample: by its id, so that two runs of one seed sample the same cases."""
    try:
        return int(case_id[-6:], 16) % SAMPLE == 0
    except ValueError:
        return False


_GOOD_POSITIVE = (PASS, FP16_ACCURATE, UNCHECKED)  # claim no deviation (the docstring says why)


def _good(kind: str, verdict: str) -> bool:
    return verdict == "REJECTED" if kind == "negative" else verdict in _GOOD_POSITIVE


def judged_again(adapter: Any, kind: str, verdict: str) -> bool:
    """Whether ``recheck`` will replace a record of this kind and verdict by the judgement of a fresh worker's
    outputs, case by case: then the first judgement need only say that it failed, and what else it would compute (the
    findings' models, a finding's reruns, the reading, the saved case) is computed once, for the fresh outputs.
    Why: on the HTP simulator every non-PASS case is run again alone (``confirm_each``), and the first judgement's
    models and saved copy were thrown away with it (DetectionOutput's ``changes-between-runs`` model alone ran each
    failing case ten more times in the first judgement, and again in the fresh one). Refusals are not: one of them
    can speak for others (``_group``), and those keep their first record."""
    if not hasattr(adapter, "run_fresh") or not getattr(adapter, "confirm_each", True):
        return False
    if verdict in REFUSALS or verdict == "SKIP" or kind not in ("positive", "negative"):
        return False
    return not _good(kind, verdict)


def wanted(rec: Record, outcome: Outcome) -> str:
    """"confirm", "sample" or "" (nothing to run again)."""
    if rec.verdict == "SKIP" or rec.kind not in ("positive", "negative"):
        return ""
    # run twice in a fresh worker even when it ran in one: the second run is the point then
    if not _good(rec.kind, rec.verdict):
        return "confirm"
    return "sample" if rec.kind == "positive" and sampled(rec.case_id or "") else ""


_SAMPLED = ("sample",)  # the op's table holds this key once one of its passing cases was sampled


def _group(rec: Record, each: bool) -> tuple | None:
    """The cases one fresh confirmation speaks for: None, the case alone."""
    from reports import refusals

    if rec.verdict in REFUSALS:  # one reason, whatever node id or size it names
        return (rec.kind, rec.verdict, _NUMBERS.sub("#", str(refusals.reason(rec))))
    if each:
        return None
    return (rec.kind, rec.verdict)


def recheck(cases: Sequence[Case], outcomes: Sequence[Outcome], records: list[Record], ctx: Any,
            execute: Execute, generate_seconds: Sequence[float]) -> list[Record]:  # fmt: skip
    """``records`` with each case ``wanted`` confirmed or sampled in a fresh worker (see the module docstring)."""
    adapter = ctx.adapter
    if not hasattr(adapter, "run_fresh"):
        return records
    each = bool(getattr(adapter, "confirm_each", True))
    out = list(records)
    # group -> (the record a case first gave for it, what a fresh worker gave, whether they agreed); a group spans the
    # op's cells (the table persists on the adapter until its next op)
    settled: dict[tuple, tuple[Record, Record, bool]] = _op_leads(adapter, cases)
    pending: dict[tuple, int] = {}  # group -> this cell's case that runs for it (its fresh verdict not yet known)
    followers: dict[int, list[int]] = {}  # such a case -> the cases it speaks for
    for k, (rec, outcome) in enumerate(zip(records, outcomes, strict=True)):
        why = wanted(rec, outcome)
        if not why:
            continue
        if why == "sample":  # one passing case an op: the state a long-lived worker carries is the process's
            if _SAMPLED not in settled:
                out[k] = _fresh(cases[k], rec, outcome, ctx, execute, generate_seconds[k], why)
                settled[_SAMPLED] = (rec, out[k], out[k].verdict == rec.verdict)
            continue
        key = _group(rec, each)
        if key in pending:
            followers[pending[key]].append(k)
            continue
        done = settled.get(key) if key is not None else None
        if done is not None and done[2]:
            out[k] = _vouched(rec, done[1], done[0], outcome)
            continue
        out[k] = _fresh(cases[k], rec, outcome, ctx, execute, generate_seconds[k], why)
        followers[k] = []
        if key is not None and done is None:
            pending[key] = k
    for key, lead in pending.items():
        settled[key] = (records[lead], out[lead], out[lead].verdict == records[lead].verdict)
    for lead, rest in followers.items():
        agreed = out[lead].verdict == records[lead].verdict
        for k in rest:
            if agreed:
                out[k] = _vouched(records[k], out[lead], records[lead], outcomes[k])
            else:  # the first of them changed its verdict alone: each speaks for itself
                out[k] = _fresh(cases[k], records[k], outcomes[k], ctx, execute, generate_seconds[k],
                                wanted(records[k], outcomes[k]))  # fmt: skip
    for k, rec in enumerate(out):  # a first judgement left to a fresh one that did not come: judged in full now
        if (rec.extra.get("details") or {}).pop("judged_again", None):
            out[k] = execute(cases[k], ctx, outcome=outcomes[k], generate_seconds=generate_seconds[k])
    return out


def _op_leads(adapter: Any, cases: Sequence[Case]) -> dict[tuple, tuple[Record, Record, bool]]:
    """The groups already confirmed for this op on this adapter (a new op, a new table)."""
    op = cases[0].op if cases else ""
    held = getattr(adapter, "_fresh_leads", None)
    if held is None or held[0] != op:
        held = (op, {})
        adapter._fresh_leads = held
    return held[1]


def _vouched(rec: Record, lead_fresh: Record, lead: Record, outcome: Outcome) -> Record:
    details = rec.extra.setdefault("details", {})
    details["fresh"] = {"age": (outcome.details or {}).get("worker_age", 0), "as": lead.case_id,
                        "verdict": lead_fresh.verdict}  # fmt: skip
    return rec


def _fresh(case: Case, rec: Record, outcome: Outcome, ctx: Any, execute: Execute, generate_seconds: float,
           why: str) -> Record:  # fmt: skip
    adapter = ctx.adapter
    started = adapter.worker_start_seconds if hasattr(adapter, "worker_start_seconds") else 0.0
    t0 = time.perf_counter()
    runs = adapter.run_fresh(case, 1 if rec.verdict == "TIMEOUT" else 2)
    spent = time.perf_counter() - t0
    start = (adapter.worker_start_seconds if hasattr(adapter, "worker_start_seconds") else 0.0) - started
    fresh = execute(case, ctx, outcome=runs[0], generate_seconds=generate_seconds)
    details = fresh.extra.setdefault("details", {})
    old = (rec.extra.get("details") or {})
    note: dict[str, Any] = {"age": (outcome.details or {}).get("worker_age", 0), "runs": len(runs), "why": why}
    differs = _nondeterminism(case, runs)
    if differs:
        details["nondeterministic"] = differs
    old_digest, new_digest = old.get("output_digest"), details.get("output_digest")
    if fresh.verdict != rec.verdict or (old_digest and new_digest and old_digest != new_digest and not differs):
        note["long_lived"] = {"verdict": rec.verdict, "message": rec.message[:500], "digest": old_digest}
    if "batch" in old:  # the batch it ran in, as the record said (``execute._confirmed_alone``)
        details["batch"] = {**old["batch"], "alone": "confirmed alone in a fresh worker"}
    details["fresh"] = note
    timings = dict(rec.timings)
    timings["fresh_start"] = round(start, 6)
    timings["confirm" if why == "confirm" else "sample"] = round(runs[0].seconds or 0.0, 6)
    if len(runs) > 1:
        timings["second_run"] = round(runs[1].seconds or 0.0, 6)
    timings["fresh_total"] = round(spent, 6)
    fresh.timings = timings
    return fresh


def _nondeterminism(case: Case, runs: list[Outcome]) -> dict[str, Any]:
    """What the two fresh runs of a case disagree on: their statuses, or the outputs' elements the spec defines."""
    if len(runs) < 2:
        return {}
    a, b = runs[0], runs[1]
    if a.status != b.status:
        return {"status": [_STATUS_VERDICT.get(a.status, a.status), _STATUS_VERDICT.get(b.status, b.status)],
                "messages": [a.message[:300], b.message[:300]]}  # fmt: skip
    if a.status != OK or not a.outputs or not b.outputs:
        return {}
    from reference.compare import defined_masks, differing

    masks_a = defined_masks(case, a.outputs)
    masks_b = defined_masks(case, b.outputs)
    masks = [ma if mb is None else mb if ma is None else (ma & mb if ma.shape == mb.shape else ma)
             for ma, mb in zip(masks_a, masks_b, strict=True)]  # fmt: skip
    names = [t.name for t in case.outputs]
    if case.steps:  # every execution's outputs one after another
        names = [f"{t.name} (execution {k + 1})" for k in range(case.executions) for t in case.outputs]
    found = differing(a.outputs, b.outputs, masks, names)
    return {"outputs": found} if found else {}
