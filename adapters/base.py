"""The adapter protocol: how any backend runs one Case and reports what happened.

An adapter never judges numbers; it says whether the backend accepted and ran the case and what it
produced. Judging against the reference happens in ``reference.compare``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cases.case import Case

# Outcome statuses. They map onto verdicts: ok -> PASS/FAIL/UNCHECKED (after comparison),
# rejected -> REJECTED, error -> ERROR, crash -> CRASH, timeout -> TIMEOUT, skip -> SKIP.
OK, REJECTED, ERROR, CRASH, TIMEOUT, SKIP = "ok", "rejected", "error", "crash", "timeout", "skip"
STATUSES = (OK, REJECTED, ERROR, CRASH, TIMEOUT, SKIP)


@dataclass
class Outcome:
    """What one case did on a backend.

    A case with ``steps`` (a stateful op executed several times, ``Case.executions``) gives the outputs of
    every execution one after another in ``outputs``: execution 0's declared outputs, then execution 1's...,
    ``len(case.outputs) * case.executions`` arrays in all (the layout ``reference.expected.expected`` uses),
    with ``details["executions"]`` saying how many ran. A backend that cannot carry state between
    executions returns SKIP, never the outputs of one execution."""

    status: str
    outputs: list[np.ndarray] = field(default_factory=list)  # stored values in each output's dtype
    message: str = ""
    seconds: float = 0.0  # wall time spent in the backend for this case
    details: dict[str, Any] = field(default_factory=dict)  # e.g. error code, signal, stage

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown outcome status {self.status!r}")


# A case's time budget on a worker-backed backend, from its size, at most the run's --case-timeout (the cap). Why not
# one figure for every case: the hangs seen are runaways on tiny cases (a 1x1 per-axis FullyConnected keeps the
# simulator busy forever), and a flat 5 s made each of them cost 7.5 s of a main job (its batch's wait, then its
# own), twelve of them a quarter of a route's time; while a case of deployed size legitimately takes a second or
# more. The slowest small case seen took 0.53 s (ort-qnn, a busy 2-core machine): the floor is four times that.
CASE_FLOOR_SECONDS = 2.0
BATCH_FLOOR_SECONDS = 2.5  # a graph or session holding a cell's cases; the slowest such batch seen took 1.24 s
ELEMENTS_PER_SECOND = 50_000  # added to the floor per element a case holds (inputs, outputs, every execution)


def output_digest(outputs: list[np.ndarray]) -> str:
    """A short hash of what the backend returned (dtype, shape and bytes of every output), kept in the
    record so two routes to one backend (qnn-htp, ort-qnn) can be compared output for output without
    storing the outputs themselves (``python -m reports agree``), and a replay be held to the run
    (``python -m bench replay``). ``conformance.execute`` takes it over the elements the spec defines."""
    h = hashlib.sha256()
    for a in outputs:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def case_elements(case: Case) -> int:
    tensors = [t for t in [*case.inputs, *case.outputs] if t is not None]
    return max(1, case.executions) * sum(int(np.prod(t.shape, dtype=np.int64)) for t in tensors)


def case_seconds(case: Case, cap: float) -> float:
    """How long ``case`` may take before its worker is killed (TIMEOUT): the floor and its size's share, at most
    ``cap``."""
    return min(cap, CASE_FLOOR_SECONDS + case_elements(case) / ELEMENTS_PER_SECOND)


def batch_seconds(cases: Sequence[Case], cap: float) -> float:
    """How long one backend call holding ``cases`` may take: a hung batch settles no verdict (its cases then run
    alone, each with its own budget), so waiting less costs at most that re-run."""
    return min(cap, BATCH_FLOOR_SECONDS + sum(case_elements(c) for c in cases) / ELEMENTS_PER_SECOND)


class Adapter(Protocol):
    name: str

    def available(self) -> tuple[bool, str]:
        """(True, "") when usable here; otherwise (False, why) so the run can skip with a reason."""

    def info(self) -> dict[str, Any]:
        """Identity of the backend for results records: library path, build id, API versions..."""

    def capabilities(self) -> dict[str, Any]:
        """What the backend says it supports (e.g. {"ops": [...]}); {} where it cannot say."""

    def run(self, case: Case) -> Outcome: ...

    def close(self) -> None: ...


def run_all(adapter: Adapter, cases: Sequence[Case]) -> list[Outcome]:
    """Outcomes of ``cases`` in order. An adapter may offer ``run_many(cases)`` (several cases per backend
    call, e.g. one QNN graph or one ONNX Runtime session for many); it must give each case the outcome
    ``run`` would, which ``tests/test_batching.py`` checks for the built-in ones."""
    many = getattr(adapter, "run_many", None)
    if many is None or len(cases) < 2:
        return run_each(adapter, cases)
    return list(many(list(cases)))


def run_each(adapter: Adapter, cases: Sequence[Case]) -> list[Outcome]:
    """Outcomes of ``cases`` in order, every case alone (one graph or session per case). An adapter may
    offer ``run_each(cases)`` that does the same faster (a worker keeps the next request queued); it must
    give each case the outcome ``run`` would."""
    each = getattr(adapter, "run_each", None)
    if each is None or len(cases) < 2:
        return [adapter.run(c) for c in cases]
    return list(each(list(cases)))


MAX_BISECT_DEPTH = 2


class GroupRefused(Exception):
    """Raised by a ``run_group`` whose batch failed as a whole but which can name the cases that spoiled it
    (an ONNX Runtime session refused for the nodes its log names). Those run alone; the rest are tried
    together again. A wrong name costs time, never a verdict: every verdict still comes from a batch that
    ran or from the case alone."""

    def __init__(self, culprits: set[int], why: str = "") -> None:
        super().__init__(why or f"cases {sorted(culprits)} spoiled the batch")
        self.culprits = set(culprits)


class GroupHung(Exception):
    """Raised by a ``run_group`` whose batch did not finish in time: no case of it is settled. Splitting a
    hung batch would wait the timeout again in every part holding the hanging case (a 1x1 FullyConnected
    that never returns cost four timeouts that way), so its cases go straight to running alone."""


def run_batched(cases: Sequence[Any], run_one: Callable[[Any], Outcome],
                run_group: Callable[[Sequence[Any]], list[Outcome | None]] | None, batch_size: int,
                probe: bool = False, bisect: bool = False, probe_first: bool = False,
                refused_with: Callable[[Sequence[Any], Outcome], list[Outcome | None]] | None = None,
                ) -> list[Outcome]:  # fmt: skip
    """Each case's outcome with up to ``batch_size`` cases per ``run_group`` call: the batching policy
    every adapter's ``run_many`` shares.

    A case the batch cannot speak for (None from ``run_group``: the graph or session failed as a whole,
    or the worker died with it) runs again alone through ``run_one``, so every failure belongs to
    exactly one case. Where the worker died validating one case alone (its outcome says
    ``details["batch"]["died_validating"]``), that CRASH is the case's own and the others, which never
    ran, are batched again without it. With ``bisect``, a batch that failed as a whole is split in
    halves first and each half tried again: where one case spoils a batch of many, its neighbours still
    share a session. With ``probe``, the first batch of the call that fails as a whole naming no case, or the
    second refused batch that names some, runs one case alone before anything is split or batched
    again (its first case, or the first one the refusal does not name): where that case does not run
    either, the backend refuses this kind of case (an ONNX Runtime route refusing the op for every case
    of a cell) and the others run alone with no more failed batches; where it runs, the rest are split,
    or batched again without the named ones, as usual. A first refusal that names cases is trusted
    (the QNN EP's log names every node it declined, so the rest usually runs); a second one means it
    named only some, and without the probe a cell refused outright could cost a failed batch per case.

    With ``probe_first`` the probe runs before any batch: the first case alone, the rest batched only if it
    ran. Where a route refuses whole kinds of cases that pays: on a 20-per-cell main job the ort-qnn route
    took 299 s probing every new kind first and 365 s probing only after a refused batch (its refused
    cells each cost a failed batch, in both tiers, more than the probes of the cells that ran saved).
    Adapters probe first for a kind (op and configuration) new to them, and after a refusal for a kind
    that batched before (a cell's edge tier after its typical one).
    """
    cases = list(cases)
    if run_group is None or batch_size <= 1 or len(cases) < 2:
        return [run_one(c) for c in cases]
    out: list[Outcome] = []
    probed = not probe
    refusals = [0]  # refused batches that named cases, in this call
    if probe_first:
        out.append(run_one(cases[0]))
        if out[0].status != OK:
            # refused alone: ``refused_with`` may settle the rest from one session of them all, each case whose own
            # refusal there reads as the probe's (None: it runs alone, as every case did before)
            rest = cases[1:]
            settled = refused_with(rest, out[0]) if refused_with and out[0].status == REJECTED and len(rest) > 1 \
                else [None] * len(rest)  # fmt: skip
            return [out[0], *(o if o is not None else run_one(c) for c, o in zip(rest, settled, strict=True))]
        probed = True

    def alone(case: Any, size: int, why: str) -> Outcome:
        outcome = run_one(case)
        if size > 1:
            outcome.details.setdefault("batch", {"size": size, "alone": why})
        return outcome

    def split(chunk: list[Any], size: int, depth: int, why: str) -> list[Outcome]:
        """A chunk known to fail as a whole: halves (then quarters) where worth it, else every case alone.
        Where most cases spoil a batch, deeper splitting costs more than it saves."""
        if bisect and depth < MAX_BISECT_DEPTH and len(chunk) > 2:
            half = len(chunk) // 2
            return settle(chunk[:half], size, depth + 1) + settle(chunk[half:], size, depth + 1)
        return [alone(c, size, why) for c in chunk]

    def settle(chunk: list[Any], size: int, depth: int) -> list[Outcome]:
        nonlocal probed
        hung = False
        try:
            got = run_group(chunk) if len(chunk) > 1 else [None]
        except GroupHung:
            got, hung = [None] * len(chunk), True
        except GroupRefused as e:
            named = {k for k in e.culprits if 0 <= k < len(chunk)}
            got = [None] * len(chunk)
            if named:  # the named cases alone, the others together again (a smaller batch: this ends)
                rest = [k for k in range(len(chunk)) if k not in named]
                result: dict[int, Outcome] = {}
                refusals[0] += 1
                if refusals[0] > 1 and not probed and rest:  # refused again: is every case of this kind refused?
                    probed = True
                    result[rest[0]] = alone(chunk[rest[0]], size, "the probe of a refused batch")
                    if result[rest[0]].status != OK:
                        result.update({k: alone(chunk[k], size, "the batch and its probe failed: every case alone")
                                       for k in range(len(chunk)) if k not in result})  # fmt: skip
                        return [result[k] for k in range(len(chunk))]
                    rest = rest[1:]
                result.update(zip(rest, settle([chunk[k] for k in rest], size, depth) if rest else [], strict=True))
                result.update({k: alone(chunk[k], size, "named by the refused batch") for k in named})
                return [result[k] for k in range(len(chunk))]
        died = [k for k, o in enumerate(got) if o is not None and "died_validating" in (o.details.get("batch") or {})]
        if not hung and len(died) == 1 and len(chunk) > 2 and sum(o is not None for o in got) == 1:
            # the worker died checking case k's op config alone, before any graph existed: that CRASH is case
            # k's, and the others never ran, so they are tried together again (one crash fewer each time)
            k = died[0]
            rest = settle([c for j, c in enumerate(chunk) if j != k], size, depth)
            return [*rest[:k], got[k], *rest[k:]]
        if hung or not all(o is None for o in got):
            why = "the batch timed out" if hung else "the batch failed as a whole"
            return [o if o is not None else alone(c, size, why) for c, o in zip(chunk, got, strict=True)]
        if not probed and len(chunk) > 1:
            probed = True
            first = alone(chunk[0], size, "the probe of a batch that failed as a whole")
            if first.status != OK:
                return [first, *(alone(c, size, "the batch and its probe failed: every case alone") for c in chunk[1:])]
            return [first, *split(chunk[1:], size, depth, "the batch failed as a whole")]
        return split(chunk, size, depth, "the batch failed as a whole")

    for lo in range(len(out), len(cases), batch_size):
        chunk = cases[lo:lo + batch_size]
        out += settle(chunk, len(chunk), 0)
    return out
