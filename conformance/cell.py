"""One cell of the run (op x datatype configuration x tier): its cases drawn, run, recorded, then judged as a whole.

Why a runner of its own: the cell's steps (draw or read back from the case cache, skip what ``--resume`` has,
run the rest together, write the cell record last, probe a refused typical cell in converter forms, shrink a
failing one) share a dozen values; as closures inside the pytest test they could be neither read top-down nor
tested alone. ``CellRunner.run`` does the steps in order and returns a ``CellOutcome``; the pytest module turns
that into pytest's pass, skip, fail or xfail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import HealthCheck, Phase, find, given
from hypothesis import seed as hyp_seed
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from adapters import refusal
from cases import forms, generate
from cases.case import MODEL, Case
from cases.cell_cache import Cell, CellCache
from conformance.execute import RunContext, execute, execute_many
from conformance.plugin import examples_for, hypothesis_settings
from opdefs import OpDef, budget
from reference.expected import infer
from reports import refusals
from reports.record import BAD, CELL, PROBE, REJECTED, SHRUNK, SKIP, UNCHECKED, XFAIL, XPASS, Record

FAILS_THE_TEST = BAD | {XPASS}  # a known failure that passed: its expectation is stale
NOT_JUDGED = {REJECTED, SKIP, UNCHECKED}
SHRINK_SECONDS = 60.0  # a shrinking step stops improving after this long: a bound on a slow backend's cost


class Unsatisfied(Exception):
    """Hypothesis gave up for want of valid cases; the message says what could not be built."""


def drive(body: Callable[[Case], None], strategy: Any, options: dict, generate_only: bool = False) -> bool:
    """Run ``body`` over drawn cases under the run's seed (generation only: no replay, no shrinking). False when
    hypothesis gave up for want of valid cases (the caller decides what that means: it may still have cases)."""
    s = hypothesis_settings(options)
    if generate_only:
        s = hyp_settings(s, max_examples=max(20, s.max_examples))
    runner = hyp_settings(s, suppress_health_check=list(HealthCheck), deadline=None)(given(strategy)(body))
    runner = hyp_seed(options["seed"])(runner)  # always set (the plugin draws one when not given): resumable
    try:
        runner()
    except Unsatisfiable:
        return False
    return True


class _Found(Exception):
    """Raised by ``first_made``'s body to end the draw at the first case that makes what it wants."""


def first_made(make: Callable[[Case], Any], strategy: Any, options: dict) -> tuple[bool, Any]:
    """The first non-None ``make(case)`` over cases drawn as ``drive`` draws them (same seed, same order), and
    whether hypothesis could build cases at all. Why not ``drive`` with a body that ignores the rest: hypothesis
    still draws its twenty-odd examples, and a negative test (one broken case wanted) spent nine tenths of its
    time building base cases it threw away, half of a whole reference run. As ``hypothesis.find`` does, the body
    raises at the first success and no shrinking follows (generation only), so the case found is the first
    success of the same draws as before. ``make`` must be deterministic: hypothesis runs that example once more."""
    found: list[Any] = []

    def body(case: Case) -> None:
        made = make(case)
        if made is not None:
            found[:] = [made]
            raise _Found

    try:
        satisfiable = drive(body, strategy, options, generate_only=True)
    except _Found:
        return True, found[0]
    return satisfiable, None


def shrink(strategy: Any, verdict: str, run_case: Callable[[Case], Record], options: dict) -> Case | None:
    """The smallest case of this cell with ``verdict``, found by hypothesis' shrinker within a time
    budget (each attempt runs the backend), or None."""
    deadline = time.monotonic() + SHRINK_SECONDS

    def still_fails(case: Case) -> bool:
        if time.monotonic() > deadline:
            return False
        return run_case(case).verdict == verdict

    s = hyp_settings(max_examples=max(20, examples_for(options, "typical")), phases=[Phase.generate, Phase.shrink],
                     database=None, deadline=None, suppress_health_check=list(HealthCheck))  # fmt: skip
    try:
        return find(strategy, still_fails, settings=s, random=None)
    except (NoSuchExample, Unsatisfiable):
        return None


# A refused cell's first cases are probed, not all of them: the probe names the form the backend accepts, and a form
# either meets the refusal's reason or does not; its other cases only repeated the answer (a main job's 3961 probe
# records, 20 a refused cell, were a tenth of qnn-htp's backend calls, each recorded and its case saved).
PROBED_CASES = 5


def needs_probe(tier: str, recs: list[Record]) -> bool:
    """A typical cell whose every case the backend refused, for a reason a standard form might meet (not an op
    the backend does not have). A cell read back whole by --resume is not probed again."""
    if tier != generate.TYPICAL or not recs:
        return False
    if any(r.verdict != REJECTED for r in recs):
        return False
    return any(refusals.reason(r) != refusal.NOT_REGISTERED for r in recs)


@dataclass
class CellOutcome:
    """What the cell's records say, in pytest's terms: ``fail``, ``skip`` or ``xfail`` hold the one line pytest
    shows (at most one is set; none: the cell passed)."""

    records: list[Record]
    fail: str = ""
    skip: str = ""
    xfail: str = ""


class CellRunner:
    """The cell ``(op, config, tier)`` of a run: ``options`` are the run's (``conformance_options``), ``ctx`` the
    run context every record of the cell is made with, ``record`` writes one record (findings applied) and returns
    it as written."""

    def __init__(self, op: OpDef, config: Any, tier: str, options: dict, ctx: RunContext,
                 record: Callable[[Record], Record]) -> None:  # fmt: skip
        self.op, self.config, self.tier = op, config, tier
        self.options, self.ctx, self.record = options, ctx, record
        self.settings = generate.Settings(infer=infer, max_elements=options["max_elements"] or 4096, tier=tier)
        self.n = examples_for(options, tier)
        self.key = (op.name, config.label, tier)
        self.stopped: dict[str, str] = {}  # why drawing stopped short, when it did
        self.seen: dict[str, Record] = {}  # case id -> its record, in draw order

    # ---- the steps, in the order ``run`` takes them ------------------------------------------------------------
    def run(self) -> CellOutcome:
        cannot = (self.op.generation.get("unsatisfiable") or {}).get(self.tier)
        if cannot:  # the spec says why this tier cannot be built yet: no draw is wasted on it
            self._cell_record(0, 0, 0, unsatisfiable=cannot)
            return CellOutcome([], skip=f"{self.op.name} {self.tier}: {cannot}")
        prior = self.options["prior"]
        got: Cell | None = None
        if self.key in prior.cells:  # --resume: this cell finished before the kill; read it back
            self.seen.update({cid: r for (*key, cid), r in prior.cases.items() if tuple(key) == self.key})
        else:
            got, seconds = self._drawn_cell()
            pending: dict[str, tuple[Case, float]] = {}
            for case, took in zip(got.cases, seconds, strict=True):
                cid = case.case_id()
                done = prior.cases.get((*self.key, cid))
                if done is not None:  # --resume: recorded cases stand
                    self.seen[cid] = done
                else:
                    pending[cid] = (case, took)
            self._run_pending(pending)
            # every case is recorded: only now is the cell finished (an interrupt or an exception above leaves no
            # cell record, and --resume runs what this cell lacks)
            self._cell_record(len(got.cases), got.duplicates, max(0, got.draws - len(got.cases) - got.duplicates),
                              **self.stopped)  # fmt: skip
            if not got.satisfiable:
                return CellOutcome(list(self.seen.values()), skip=(
                    f"the generator could not build a valid {self.tier} {self.op.name} case for {self.config.label} "
                    "from the spec"))  # fmt: skip
            if self.stopped and not got.cases:
                return CellOutcome([], fail=f"{self.tier}: {self.stopped['generation_stopped']}, before any case "
                                            "was drawn")  # fmt: skip
        recs = list(self.seen.values())
        if got is not None and needs_probe(self.tier, recs):
            self._probe(got.cases[:PROBED_CASES])
        if got is not None and got.cases and self._probes_beyond_spec():
            self._probe_beyond_spec(got.cases[0])
        bad = [r for r in recs if r.verdict in FAILS_THE_TEST]
        if bad and not self.options["no_shrink"] and self.key not in prior.shrunk and self.tier != MODEL:
            # a model layer's shape is the point of its case: there is nothing smaller to shrink it to
            self._shrink(bad[0].verdict)
        return self._judged(recs, bad)

    def _draw(self) -> tuple[Cell, list[float]]:
        """The cell's distinct cases in draw order, and the seconds each took to draw."""
        tally = {"draws": 0, "duplicates": 0}
        limit = budget.seconds("generation")
        deadline = time.monotonic() + limit

        @st.composite
        def counted(draw: Any, inner: Any) -> Case:
            # checked before every draw as well as by the budget's timer, so that hypothesis' replay of the draw
            # that ran out of time stops the same way
            if budget.expired(deadline):
                raise budget.OutOfTime(f"drawing the cell took more than {limit:g} s")
            tally["draws"] += 1  # every attempt; the ones that end in a refusal never reach the body
            return draw(inner)

        drawn: dict[str, Case] = {}
        seconds: list[float] = []
        last = time.perf_counter()

        def collect(case: Case) -> None:
            nonlocal last
            cid = case.case_id()
            if cid in drawn:  # another draw built the same case: it counts once
                tally["duplicates"] += 1
                return
            drawn[cid] = case
            seconds.append(time.perf_counter() - last)
            last = time.perf_counter()

        try:
            with budget.time_budget(limit, f"drawing {self.op.name} {self.config.label} {self.tier}"):
                # a typical cell's parts (batch 1 or not, deployed size or not: ``generate.cell_strategies``)
                satisfiable = False
                for strategy, count, salt in generate.cell_strategies(self.op, self.config, self.settings, self.n):
                    satisfiable |= drive(collect, counted(strategy), {**self.options, "examples": count,
                                                                      "edge_examples": count,
                                                                      "seed": self.options["seed"] + salt})  # fmt: skip
        except (budget.OutOfTime, BaseExceptionGroup) as e:
            if isinstance(e, BaseExceptionGroup) and e.subgroup(budget.OutOfTime) is None:
                raise
            self.stopped["generation_stopped"] = f"drawing took more than its budget of {limit:g} s"
            satisfiable = True
        return Cell(list(drawn.values()), tally["draws"], tally["duplicates"], satisfiable), seconds

    def _drawn_cell(self) -> tuple[Cell, list[float]]:
        """From the run's case cache when another backend drew this cell already (``--case-cache``)."""
        cache = CellCache(self.options["case_cache"]) if self.options.get("case_cache") else None
        if cache is None:
            return self._draw()
        key = cache.key(self.op.path, self.config.label, self.tier, self.options["seed"], self.n,
                        self.settings.max_elements)  # fmt: skip
        t0 = time.perf_counter()
        got = cache.get(self.op.name, key)
        if got is not None:
            return got, [(time.perf_counter() - t0) / max(1, len(got.cases))] * len(got.cases)
        got, seconds = self._draw()
        if not self.stopped:  # a draw cut short by its budget is not what this key draws
            try:
                cache.put(self.op.name, key, got)
            except OSError:  # a cache that cannot be written costs the next backend a draw, not this cell
                pass
        return got, seconds

    def _run_pending(self, pending: dict[str, tuple[Case, float]]) -> None:
        """The cell's cases (id -> case, seconds to draw) on the backend together (batched where the adapter
        can), each recorded as it is judged."""
        recs = execute_many([c for c, _ in pending.values()], self.ctx, [g for _, g in pending.values()])
        for cid, rec in zip(pending, recs, strict=True):
            self.seen[cid] = self.record(rec)

    def _cell_record(self, cases: int, duplicates: int, refused: int, **extra: Any) -> None:
        """The cell's bookkeeping: cases asked for, drawn, drawn twice, refused by the generator."""
        self.record(Record(op=self.op.name, config=self.config.label, backend=self.ctx.backend, verdict="",
                           kind=CELL, tier=self.tier, test_id=self.ctx.test_id, run_id=self.ctx.run_id,
                           extra={"requested": self.n, "cases": cases, "duplicates": duplicates, "refusals": refused,
                                  **extra}))  # fmt: skip

    def _probe(self, cases: list[Case]) -> None:
        """The refused cell's first cases again in each converter-standard form (``cases.forms``), one change at a time
        and all together, recorded as kind "probe" (never in the cell's rates): the matrix then names the form the
        backend runs, or keeps REJ with the reasons. No finding is checked: a probe is not judged."""
        todo: list[tuple[str, str, Case]] = []
        for case in cases:
            todo += [(form, case.case_id(), variant) for form, variant in forms.variants(self.op, case, infer)]
        if not todo:
            return
        recs = execute_many([v for _, _, v in todo], replace(self.ctx, known=None, fresh=False))
        for (form, of, _), rec in zip(todo, recs, strict=True):
            rec.kind = PROBE
            rec.extra["probe"] = {"form": form, "of": of}
            self.record(rec)

    def _probes_beyond_spec(self) -> bool:
        """Once per op, on a QNN backend: the typical cell ``forms.beyond_spec_config`` names (an op the spec lists in
        fewer than the HTP's datatypes)."""
        return (self.tier == generate.TYPICAL and self.ctx.backend.startswith("qnn")
                and forms.beyond_spec_config(self.op) == self.config.label)  # fmt: skip

    def _probe_beyond_spec(self, case: Case) -> None:
        """The cell's first case again in each HTP datatype the spec does not list for in[0] (``forms.beyond_spec``):
        probe records marked ``beyond_spec``, which no cell counts and ``python -m reports capabilities`` lists."""
        todo = forms.beyond_spec(self.op, case, infer)
        if not todo:
            return
        recs = execute_many([v for _, v in todo], replace(self.ctx, known=None, fresh=False))
        for (form, _), rec in zip(todo, recs, strict=True):
            rec.kind = PROBE
            rec.extra["probe"] = {"form": form, "of": case.case_id(), "beyond_spec": True}
            self.record(rec)

    def _shrink(self, verdict: str) -> None:
        # the cell's own strategy forces a schedule of parameter values on its first draws: shrinking needs draws
        # that replay to the same case, so it gets one without it
        plain = generate.case_strategy(self.op, self.config, replace(self.settings, stratify=False))
        smallest = shrink(plain, verdict, lambda case: execute(case, self.ctx), self.options)
        if smallest is not None:  # recorded as it does alone, in a fresh worker (``conformance.fresh``)
            (shrunk,) = execute_many([smallest], self.ctx)
            shrunk.kind = SHRUNK
            self.record(shrunk)

    def _judged(self, recs: list[Record], bad: list[Record]) -> CellOutcome:
        if bad:
            first = bad[0]
            counts = ", ".join(f"{v} {sum(r.verdict == v for r in recs)}/{len(recs)}"
                               for v in sorted({r.verdict for r in bad}))  # fmt: skip
            return CellOutcome(recs, fail=f"{self.tier}: {counts}; first: {first.message[:300]} "
                                          f"(replay: {first.replay or first.case_path})")  # fmt: skip
        if recs and all(r.verdict in NOT_JUDGED for r in recs):
            verdicts = sorted({r.verdict for r in recs})
            return CellOutcome(recs, skip=f"{self.ctx.backend}: {'/'.join(verdicts)} for every {self.tier} case "
                                          f"({len(recs)}): {recs[0].message[:200]}")  # fmt: skip
        if not recs:  # a cell that ran no case is never a pass
            return CellOutcome(recs, skip=f"{self.tier}: no case of this cell was drawn")
        xfailed = [r for r in recs if r.verdict == XFAIL]
        if xfailed:  # "known", never passed: pytest's own outcome says so too
            return CellOutcome(recs, xfail=f"{self.tier}: XFAIL {len(xfailed)}/{len(recs)}: "
                                           f"{xfailed[0].expectation or ''}"[:300])  # fmt: skip
        return CellOutcome(recs)
