"""The support matrix: records folded into cells keyed by (op, config, backend), plus per-backend totals.

A cell's verdict is its **typical** tier (the op as converters use it); the **edge** tier (corner
cases) is kept beside it in ``Cell.edge`` and shown as a note ("· edge FAIL 2/5"), never as the
cell's colour. Records of kind "cell" carry how many cases a cell asked for and how many draws the
generator refused; records of kind "shrunk" are the smallest failing case of a cell, listed for
replay and never counted. Records without a tier (older results files) count as typical.

Everything a renderer shows is decided here (cell status, compact text, which cases are details) so
markdown, HTML, CSV and JSON cannot disagree about what a cell means.

Cell status precedence for positive cases (a cell shows the first verdict present, left to right):

    CRASH > ERROR > FAIL > XPASS > TIMEOUT > REJECTED > FP16_ACCURATE > XFAIL > PASS > UNCHECKED > SKIP

Why this order: a crash loses the process and an error means the backend contradicted itself (it
accepted the graph, then could not run it); wrong numbers come next. XPASS ranks above TIMEOUT
because it is certain news (an expectations entry is stale). REJECTED outranks PASS so a config the
backend only partly supports never shows as supported. XFAIL ranks above PASS: a known failure is not
news, but a cell holding one is "known", never "ok" (its failures are still failures, explained by a finding);
UNCHECKED and SKIP ran nothing that could be judged, so they never hide a judgement.
FP16_ACCURATE (outside binary32, inside binary16, on a backend documenting float16 arithmetic) is news about
precision, not a deviation: below every failure, above PASS, so a cell of such cases never reads as passing.

Negative cases (kind "negative", built to break one constraint) are a separate dimension: their good
outcome is a clean REJECTED. Their cells summarise outcome classes instead, precedence:

    CRASHED (CRASH, TIMEOUT) > ACCEPTED (PASS, FAIL, UNCHECKED) > ERRORED (ERROR: refused only at
    finalize/execute) > XPASS > XFAIL > REJECTED > NOT RUN (SKIP)
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reports import expectations, refusals
from reports.families import family_of, family_sort_key
from reports.record import (
    CELL,
    CRASH,
    EDGE,
    ERROR,
    FAIL,
    FP16_ACCURATE,
    MODEL,
    NEGATIVE,
    PASS,
    POSITIVE,
    PROBE,
    RAW_VERDICT_KEY,
    REJECTED,
    SHRUNK,
    SKIP,
    TIMEOUT,
    UNCHECKED,
    VERDICTS,
    XFAIL,
    XPASS,
    Record,
    replay_command,
)

STATUS_PRECEDENCE: tuple[str, ...] = (CRASH, ERROR, FAIL, XPASS, TIMEOUT, REJECTED, FP16_ACCURATE, XFAIL, PASS,
                                      UNCHECKED, SKIP)  # fmt: skip

# Outcome classes of negative cases, in precedence order, with the verdicts each class gathers.
CRASHED, ACCEPTED, ERRORED, REJECTED_CLEANLY, NOT_RUN = "CRASHED", "ACCEPTED", "ERRORED", "REJECTED", "NOT RUN"
NEGATIVE_CLASSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (CRASHED, (CRASH, TIMEOUT)),
    (ACCEPTED, (PASS, FAIL, UNCHECKED, FP16_ACCURATE)),
    (ERRORED, (ERROR,)),
    (XPASS, (XPASS,)),
    (XFAIL, (XFAIL,)),
    (REJECTED_CLEANLY, (REJECTED,)),
    (NOT_RUN, (SKIP,)),
)
NEGATIVE_PRECEDENCE: tuple[str, ...] = tuple(name for name, _ in NEGATIVE_CLASSES)
_NEGATIVE_CLASS_OF = {verdict: name for name, verdicts in NEGATIVE_CLASSES for verdict in verdicts}

# Short words for the compact cell text; keeps 6 config columns readable.
ABBREVIATIONS = {
    REJECTED: "REJ",
    ERROR: "ERR",
    UNCHECKED: "UNCHK",
    FP16_ACCURATE: "FP16",
    CRASHED: "CRASH",
    ERRORED: "ERR",
    NOT_RUN: "SKIP",
}

# Error metrics whose worst (largest) value a cell keeps; other metric keys (tolerance) are settings.
ERROR_METRICS = ("max_abs_err", "max_rel_err", "max_ulp", "max_steps", "mismatches")
TIMING_KEYS = ("generate", "reference", "backend", "compare")
HUGE_ULP = 1e6  # past this an error in ulp means nothing to a reader (1.8e+308 ulp): show the absolute error

# The usual datatype configurations first, in this order; anything else after them, by name.
CONFIG_ORDER = ("FLOAT_32", "FLOAT_16", "UFIXED_POINT_8", "SFIXED_POINT_8", "UFIXED_POINT_16", "SFIXED_POINT_16")
REFERENCE_BACKEND = "reference"
PRIMARY_BACKEND = "qnn-htp"


@dataclass
class CaseDetail:
    """One case worth looking at (anything but the good outcome): what the detail view lists."""

    verdict: str
    tier: str
    case_id: str
    replay: str
    test_id: str
    message: str
    metrics: dict[str, Any]
    case_path: str | None
    seed: int | None
    expectation: str | None
    broken: str | None
    dtypes: dict[str, str]
    run_id: str
    near: list[str] = field(default_factory=list)  # findings about its cell whose symptom it does not show
    reason: str = ""  # a refusal's reason (reports.refusals); "" for anything else
    form: str = ""  # a probe's converter-standard form (cases.forms); "" for the cell's own cases

    @classmethod
    def of(cls, r: Record) -> CaseDetail:
        return cls(
            reason=refusals.reason(r) if r.verdict == REJECTED else "",
            form=str((r.extra.get("probe") or {}).get("form", "")) if r.kind == PROBE else "",
            verdict=r.verdict,
            tier=r.tier or "typical",
            case_id=r.case_id,
            replay=r.replay or replay_command(r.case_path, r.backend),
            test_id=r.test_id,
            message=r.message,
            metrics=dict(r.metrics),
            case_path=r.case_path,
            seed=r.seed,
            expectation=r.expectation,
            broken=r.broken,
            dtypes=dict(r.dtypes),
            run_id=r.run_id,
            near=[str(x) for x in r.extra.get("near_findings") or [] if isinstance(x, str | int)],
        )


@dataclass
class Cell:
    """All cases of one op, datatype configuration and backend, of one kind (positive or negative)."""

    op: str
    config: str
    backend: str
    kind: str = POSITIVE
    counts: Counter[str] = field(default_factory=Counter)
    worst: dict[str, float] = field(default_factory=dict)  # over every case with metrics
    worst_failing: dict[str, float] = field(default_factory=dict)  # over FAIL cases: what the FAIL text shows
    seconds: dict[str, float] = field(default_factory=dict)
    details: list[CaseDetail] = field(default_factory=list)
    builds: list[str] = field(default_factory=list)
    tier: str = "typical"
    edge: Cell | None = None  # the same op, config and backend on the edge tier (positive cells only)
    model: Cell | None = None  # and on the model tier: the layers of public models the op's spec lists
    draws: dict[str, dict[str, int]] = field(default_factory=dict)  # tier -> requested, cases, refusals...
    shrunk: list[CaseDetail] = field(default_factory=list)
    stage_counts: Counter[str] = field(default_factory=Counter)  # where each case stopped, see ``stages``
    # where the spec leaves a reading open (reference.diagnose): which reading each case's outputs followed
    readings: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)  # refused cases per reason (reports.refusals)
    # a refused cell's cases run again in converter-standard forms (kind "probe"): form -> verdict counts, in the
    # order the probe tried them; never part of ``counts``
    probes: dict[str, Counter[str]] = field(default_factory=dict)
    probe_details: list[CaseDetail] = field(default_factory=list)
    # cases whose verdict in a worker that had run other cases differed from the one a fresh worker gave (the record
    # holds the fresh one: ``conformance.fresh``): the backend reads memory it does not own
    fresh_changed: int = 0
    nondeterministic: int = 0  # cases whose two runs in a fresh worker disagreed on an element the spec defines

    @property
    def family(self) -> str:
        return family_of(self.op)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def status(self) -> str:
        """The one word a cell shows; see the module docstring for the precedence."""
        if self.total == 0:
            return SKIP  # no case of this tier ran (only edge cases, or the generator built none)
        if self.kind == NEGATIVE:
            classes = self.outcome_classes()
            return next(name for name in NEGATIVE_PRECEDENCE if classes[name])
        return next(verdict for verdict in STATUS_PRECEDENCE if self.counts[verdict])

    def status_count(self) -> int:
        """How many cases carry the cell's status (for negatives: fall in its outcome class)."""
        if self.kind == NEGATIVE:
            return self.outcome_classes()[self.status]
        return self.counts[self.status]

    def outcome_classes(self) -> Counter[str]:
        """Negative cells: case counts per outcome class (rejected cleanly, accepted, crashed...)."""
        classes: Counter[str] = Counter({name: 0 for name in NEGATIVE_PRECEDENCE})
        for verdict, n in self.counts.items():
            classes[_NEGATIVE_CLASS_OF[verdict]] += n
        return classes

    def is_good(self, verdict: str) -> bool:
        """Whether a case with this verdict needs no look: PASS for positive cases, REJECTED for negative."""
        return verdict == (REJECTED if self.kind == NEGATIVE else PASS)

    def stages(self) -> Counter[str]:
        """Cases per stage they stopped in: "validate" (refused by backendValidateOpConfig), "finalize"
        (accepted, then the graph could not be built), "execute" (built, then could not run), "ok" (ran
        through; the numbers are judged elsewhere). Adapters that do not say leave the stage out; a
        case the adapter could not express at all counts as "not sent"."""
        return Counter(self.stage_counts)

    def accepted_then_failed(self) -> int:
        """Cases the backend accepted at validation and then could not finalize or execute: the
        backend contradicting itself, counted apart from wrong numbers."""
        return self.stage_counts[FINALIZE_STAGE] + self.stage_counts[EXECUTE_STAGE]

    def add_probe(self, r: Record) -> None:
        """A probe record: the verdict of one case in one standard form, kept apart from the cell's rates."""
        probe = r.extra.get("probe") or {}
        if not probe.get("beyond_spec"):  # a datatype beyond the spec is no cell's question (reports capabilities)
            self.probes.setdefault(str(probe.get("form") or "standard form"), Counter())[r.verdict] += 1
            self.probe_details.append(CaseDetail.of(r))

    def standard_form(self) -> str | None:
        """When the cell's own cases were all refused: the standard form the backend accepted the most probed cases
        in (the first such form in the probe's order), what a converter must emit for this configuration to run.
        A form's cases may still be refused for another reason (an enum member the backend lacks): they keep
        their reasons, and the cell's tally shows them."""
        if self.status != REJECTED or not self.probes:
            return None
        accepted = {form: sum(n for v, n in counts.items() if v not in (REJECTED, SKIP))
                    for form, counts in self.probes.items()}  # fmt: skip
        best = max(accepted.values(), default=0)
        return next((form for form, n in accepted.items() if n == best), None) if best else None

    def refusal_text(self) -> str:
        """"REJ: op not registered", "REJ: a (3) · b (2)", or "REJ -> supported as <form>" for a cell whose every
        case was refused: what a converter reads from the cell."""
        form = self.standard_form()
        if form:
            return f"REJ -> supported as {form}"
        if not self.reasons:
            return "REJ"
        if len(self.reasons) == 1:
            return f"REJ: {next(iter(self.reasons))}"
        return "REJ: " + " · ".join(f"{why} ({n})" for why, n in self.reasons.most_common())

    def add(self, r: Record) -> None:
        self.counts[r.verdict] += 1
        details = r.extra.get("details") or {}
        long_lived = (details.get("fresh") or {}).get("long_lived") or {}
        if long_lived.get("verdict") not in (None, r.extra.get(RAW_VERDICT_KEY, r.verdict)):
            self.fresh_changed += 1
        if details.get("nondeterministic"):
            self.nondeterministic += 1
        if r.verdict == REJECTED and self.kind == POSITIVE:
            self.reasons[refusals.reason(r)] += 1
        stage = record_stage(r)
        if stage is not None:
            self.stage_counts[stage] += 1
        if isinstance(r.metrics.get("reading"), str):
            self.readings[r.metrics["reading"]] += 1
        for key in ERROR_METRICS:
            value = _number(r.metrics.get(key))
            if value is not None:
                self.worst[key] = _worse(self.worst.get(key), value)
                if r.verdict == FAIL:
                    self.worst_failing[key] = _worse(self.worst_failing.get(key), value)
        for key, value in r.timings.items():
            number = _number(value)
            if number is not None and math.isfinite(number):
                self.seconds[key] = self.seconds.get(key, 0.0) + number
        build = build_label(r.backend_info)
        if build and build not in self.builds:
            self.builds.append(build)
        if not self.is_good(r.verdict):
            self.details.append(CaseDetail.of(r))

    def sorted_details(self) -> list[CaseDetail]:
        """Details worst first (by the kind's precedence), then by test id, so truncation keeps the news."""
        if self.kind == NEGATIVE:
            rank = {v: NEGATIVE_PRECEDENCE.index(_NEGATIVE_CLASS_OF[v]) for v in VERDICTS}
        else:
            rank = {v: STATUS_PRECEDENCE.index(v) for v in VERDICTS}
        return sorted(self.details, key=lambda d: (rank[d.verdict], d.test_id, d.case_path or ""))

    def refusals(self, tier: str | None = None) -> int:
        """Draws the generator threw away for this cell (a tier's, or both)."""
        return sum(d.get("refusals", 0) for t, d in self.draws.items() if tier in (None, t))

    def edge_note(self) -> str:
        """The edge tier beside the cell: "edge FAIL 2/5" when it holds news, "" when all is well."""
        e = self.edge
        if e is None or e.total == 0 or e.status in (PASS, XFAIL, SKIP, UNCHECKED, REJECTED):
            return ""
        return f"edge {e.core_text()}"

    def model_note(self) -> str:
        """The model tier beside the cell, whatever it says: "model PASS 1/1" (the cell holds at a deployed size),
        "model FAIL 1/1" (it does not), "" when no layer ran."""
        m = self.model
        return f"model {m.core_text()}" if m is not None and m.total else ""

    def memory_note(self) -> str:
        """Over every tier of the cell: "2 verdicts only in a used worker" (the backend read memory it does not own:
        the fresh worker's verdict stands), "1 case varies between runs" (two fresh runs disagreed)."""
        tiers = [c for c in (self, self.edge, self.model) if c is not None]
        changed, varies = sum(c.fresh_changed for c in tiers), sum(c.nondeterministic for c in tiers)
        parts = []
        if changed:
            parts.append(f"{changed} verdict{'s' if changed > 1 else ''} only in a used worker")
        if varies:
            parts.append(f"{varies} case{'s vary' if varies > 1 else ' varies'} between runs")
        return "; ".join(parts)

    def notes(self) -> str:
        return " · ".join(n for n in (self.edge_note(), self.model_note(), self.memory_note()) if n)

    def display_text(self) -> str:
        """``text()``, except that a cell whose every typical case was refused says why, or in which standard
        form the backend runs it ("REJ: op not registered", "REJ -> supported as 32-bit bias")."""
        if self.kind == POSITIVE and self.total and self.counts[REJECTED] == self.total:
            note = self.notes()
            return self.refusal_text() + (f" · {note}" if note else "")
        return self.text()

    def text(self) -> str:
        """The compact cell text: typical rate, then edge news and the model tier: "PASS 20/20 · edge FAIL 2/5 · model
        PASS 1/1"."""
        base = self.core_text() if self.total else "no typical case"
        note = self.notes()
        return f"{base} · {note}" if note else base

    def core_text(self) -> str:
        """This tier alone: "PASS 5", "FAIL 2/5 (max 3 ulp)", "REJ", "ERR 1/4", "CRASH"."""
        status, n, total = self.status, self.status_count(), self.total
        word = ABBREVIATIONS.get(status, status)
        share = f"{n}" if n == total else f"{n}/{total}"
        if self.kind == POSITIVE and status == PASS:
            return f"PASS {n}/{total}"
        if self.kind == POSITIVE and status == XFAIL:
            passed = self.counts[PASS]
            return f"known {n}/{total}" + (f" (PASS {passed})" if passed else "")
        if self.kind == NEGATIVE and status == REJECTED_CLEANLY:
            return f"REJ {share}"
        if self.kind == POSITIVE and status == FAIL:
            metric = worst_metric_text(self.worst_failing)  # a passing case may have a larger budget
            return f"FAIL {n}/{total}" + (f" ({metric})" if metric else "")
        return word if n == total else f"{word} {share}"


VALIDATE_STAGE, FINALIZE_STAGE, EXECUTE_STAGE, OK_STAGE, NOT_SENT = "validate", "finalize", "execute", "ok", "not sent"
STAGES = (VALIDATE_STAGE, FINALIZE_STAGE, EXECUTE_STAGE, OK_STAGE)


def record_stage(r: Record) -> str | None:
    """The phase a case stopped in, from the adapter's details; SKIP (never sent) is "not sent";
    None when the adapter does not say (the reference, older results files)."""
    if r.verdict == SKIP or (r.extra.get(RAW_VERDICT_KEY) == SKIP):
        return NOT_SENT
    stage = expectations.record_stage(r)
    return stage if stage in STAGES else None


CellKey = tuple[str, str, str]  # (op, config, backend)


@dataclass
class BackendTotals:
    """Per-backend headline numbers; op lists (not just counts) so JSON readers can see which ops."""

    backend: str
    ops: list[str]
    ops_with_pass: list[str]
    ops_fully_passing: list[str]  # every typical case PASS: "ok"
    ops_with_rejected: list[str]
    ops_with_error: list[str]
    ops_with_crash: list[str]
    cases: Counter[str]  # typical tier
    negative_cases: Counter[str]
    builds: list[str]
    edge_cases: Counter[str] = field(default_factory=Counter)
    model_cases: Counter[str] = field(default_factory=Counter)
    ops_known: list[str] = field(default_factory=list)  # every typical case PASS or XFAIL, some XFAIL: "known"
    refusals: int = 0
    shrunk: int = 0


@dataclass
class Matrix:
    """Cells of positive cases (``cells``) and of negative cases (``negative``), keyed (op, config, backend)."""

    cells: dict[CellKey, Cell] = field(default_factory=dict)
    negative: dict[CellKey, Cell] = field(default_factory=dict)
    # (op, backend) -> why the spec's op has no cases (a "cell" record with ``not_generated``): it still gets a row
    not_generated: dict[tuple[str, str], str] = field(default_factory=dict)
    op_families: dict[str, str] = field(default_factory=dict)  # from the records' ``family`` (the spec's)
    # (op, config) -> why qnn-htp and ort-qnn differ there (reports.routes.RouteNote), when both routes ran
    routes: dict[tuple[str, str], Any] = field(default_factory=dict)
    # CRASH records a run's controller wrote for a cell whose xdist worker died (``worker_crash``), held until
    # ``settle``: a later record of that cell's completion (its --resume) supersedes them
    held: dict[tuple[CellKey, str], list[Record]] = field(default_factory=dict)

    def add(self, r: Record) -> None:
        key = (str(r.op), str(r.config), str(r.backend))
        if r.kind == POSITIVE and r.extra.get("worker_crash"):
            self.held.setdefault((key, r.tier or "typical"), []).append(r)
            return
        if r.kind == CELL:
            self.held.pop((key, r.tier or "typical"), None)
        self._add(key, r)

    def _add(self, key: CellKey, r: Record) -> None:
        family = r.extra.get("family")
        if isinstance(family, str) and family:
            self.op_families[key[0]] = family
        if r.kind == CELL and r.extra.get("not_generated"):
            self.not_generated[(key[0], key[2])] = str(r.extra["not_generated"])
            return
        if r.kind == NEGATIVE:
            self.negative.setdefault(key, Cell(*key, kind=NEGATIVE)).add(r)
            return
        cell = self.cells.get(key)
        if cell is None:
            cell = self.cells[key] = Cell(*key, kind=POSITIVE)
        if r.kind == CELL:
            tier = r.tier or "typical"
            cell.draws[tier] = {k: int(r.extra.get(k, 0)) for k in ("requested", "cases", "duplicates", "refusals")}
            return
        if r.kind == SHRUNK:
            cell.shrunk.append(CaseDetail.of(r))
            return
        if r.kind == PROBE:
            cell.add_probe(r)
            return
        if r.tier == EDGE:
            if cell.edge is None:
                cell.edge = Cell(*key, kind=POSITIVE, tier=EDGE)
            cell.edge.add(r)
            return
        if r.tier == MODEL:
            if cell.model is None:
                cell.model = Cell(*key, kind=POSITIVE, tier=MODEL)
            cell.model.add(r)
            return
        cell.add(r)

    def settle(self) -> None:
        """Count the worker-death records no completion of their cell superseded (see ``held``)."""
        held, self.held = self.held, {}
        for (key, _), recs in held.items():
            for r in recs:
                self._add(key, r)

    def all_cells(self) -> list[Cell]:
        """Typical and negative cells (edge cells hang off their typical cell: ``Cell.edge``)."""
        return list(self.cells.values()) + list(self.negative.values())

    def backends(self) -> list[str]:
        names = {c.backend for c in self.all_cells()} | {b for _, b in self.not_generated}
        return sorted(names, key=backend_sort_key)

    def family(self, op: str) -> str:
        """The op's family: the spec's ``family:`` as recorded at run time, else the name table's."""
        return self.op_families.get(op) or family_of(op)

    def op_key(self, op: str) -> tuple[tuple[int, str], str]:
        return (family_sort_key(self.family(op)), op)

    def ops(self, backend: str | None = None, kind: str | None = None) -> list[str]:
        """Op names in display order (family, then name), optionally only those with cells on a backend.
        Ops that were not generated count when no kind is asked for (they have a row, not cells)."""
        cells = [c for c in self.all_cells() if (backend is None or c.backend == backend) and (kind in (None, c.kind))]
        names = {c.op for c in cells}
        if kind is None:
            names |= {op for op, b in self.not_generated if backend in (None, b)}
        return sorted(names, key=self.op_key)

    def configs(self, backend: str | None = None, kind: str | None = None) -> list[str]:
        cells = [c for c in self.all_cells() if (backend is None or c.backend == backend) and (kind in (None, c.kind))]
        return sorted({c.config for c in cells}, key=config_sort_key)

    def cell(self, op: str, config: str, backend: str, kind: str = POSITIVE) -> Cell | None:
        return (self.negative if kind == NEGATIVE else self.cells).get((op, config, backend))

    def totals(self) -> dict[str, BackendTotals]:
        return {b: self._totals_for(b) for b in self.backends()}

    def _totals_for(self, backend: str) -> BackendTotals:
        by_op: dict[str, Counter[str]] = {}
        cases: Counter[str] = Counter({v: 0 for v in VERDICTS})
        builds: list[str] = []
        for c in self.cells.values():
            if c.backend != backend:
                continue
            by_op.setdefault(c.op, Counter()).update(c.counts)
            cases.update(c.counts)
            builds += [b for b in c.builds if b not in builds]
        edge: Counter[str] = Counter({v: 0 for v in VERDICTS})
        model: Counter[str] = Counter({v: 0 for v in VERDICTS})
        refusals = shrunk = 0
        for c in self.cells.values():
            if c.backend == backend:
                refusals += c.refusals()
                shrunk += len(c.shrunk)
                if c.edge is not None:
                    edge.update(c.edge.counts)
                if c.model is not None:
                    model.update(c.model.counts)
        negative: Counter[str] = Counter({name: 0 for name in NEGATIVE_PRECEDENCE})
        for c in self.negative.values():
            if c.backend == backend:
                negative.update(c.outcome_classes())
                builds += [b for b in c.builds if b not in builds]

        def ops_where(predicate: Any) -> list[str]:
            return sorted((op for op, counts in by_op.items() if predicate(counts)), key=op_sort_key)

        return BackendTotals(
            backend=backend,
            ops=ops_where(lambda c: True),
            ops_with_pass=ops_where(lambda c: c[PASS] > 0),
            ops_fully_passing=ops_where(lambda c: c[PASS] > 0 and c[PASS] == c.total()),
            ops_known=ops_where(lambda c: c[XFAIL] > 0 and c[PASS] + c[XFAIL] == c.total()),
            ops_with_rejected=ops_where(lambda c: c[REJECTED] > 0),
            ops_with_error=ops_where(lambda c: c[ERROR] > 0),
            ops_with_crash=ops_where(lambda c: c[CRASH] > 0),
            cases=cases,
            negative_cases=negative,
            builds=builds,
            edge_cases=edge,
            model_cases=model,
            refusals=refusals,
            shrunk=shrunk,
        )


def build(records: Iterable[Record]) -> Matrix:
    """Fold records into a matrix. Every record counts once; concatenated reruns are not de-duplicated.
    Where both routes to libQnnHtp.so (qnn-htp, ort-qnn) are present, each op and configuration on which they
    disagree gets its note (``reports.routes``): the renderers link the cell to the mechanism or finding.
    A worker's death in the middle of a cell counts as one CRASH case of the cell, unless the cell was
    completed later on (``Matrix.held``)."""
    from reports import routes

    records = list(records)
    m = Matrix()
    for r in records:
        m.add(r)
    m.settle()
    m.routes = routes.notes(records)
    return m


def negative_class(verdict: str) -> str:
    """The outcome class (CRASHED, ACCEPTED, ERRORED, XPASS, XFAIL, REJECTED, NOT RUN) of a negative case's verdict."""
    return _NEGATIVE_CLASS_OF[verdict]


_LAST_LABEL: list[Any] = [None, ""]  # the last (backend_info, label): a run's records mostly share one build


def build_label(info: dict[str, Any]) -> str:
    """A one-line identity of a backend build from ``backend_info`` ("build_id=v2.31 api=2.20"). Every record is
    labelled (cells, capabilities) and a run's records share a few builds: the last one's label is kept, since an
    equal dict compares far faster than the label is built (2.5 s of a main job's reports)."""
    if info == _LAST_LABEL[0]:
        return _LAST_LABEL[1]
    label = _build_label(info)
    _LAST_LABEL[:] = [dict(info), label]
    return label


def _build_label(info: dict[str, Any]) -> str:
    parts = []
    for key in sorted(info):
        value = info[key]
        if isinstance(value, str | int | float | bool) and value != "":
            parts.append(f"{key}={value}")
    return " ".join(parts)


def worst_metric_text(worst: dict[str, float]) -> str:
    """The most telling error number of a cell: ULPs for floats, quantization steps, else absolute error."""
    ulp = worst.get("max_ulp")
    if ulp is not None and (math.isnan(ulp) or ulp < HUGE_ULP):
        return f"max {format_number(ulp)} ulp"
    if ulp is not None:  # an error near a zero expected value is astronomically many ulp: the absolute error says more
        abs_err = worst.get("max_abs_err")
        return f"max abs {format_number(abs_err)}" if abs_err is not None else "max ulp off scale"
    if "max_steps" in worst:
        steps = worst["max_steps"]
        return f"max {format_number(steps)} step" + ("" if steps == 1 else "s")
    if "max_abs_err" in worst:
        return f"max abs {format_number(worst['max_abs_err'])}"
    if "mismatches" in worst:
        return f"{format_number(worst['mismatches'])} mismatched"
    return ""


def format_number(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.3g}"


def op_sort_key(op: str) -> tuple[tuple[int, str], str]:
    """Family (by the name table), then name; ``Matrix.op_key`` also honours recorded families."""
    return (family_sort_key(family_of(op)), op)


def config_sort_key(config: str) -> tuple[int, str]:
    head = config.split("+", 1)[0]
    return (CONFIG_ORDER.index(head) if head in CONFIG_ORDER else len(CONFIG_ORDER), config)


def backend_sort_key(backend: str) -> tuple[int, str]:
    """The HTP simulator first (the backend people run this suite for), the reference last (the
    baseline: it shows what the spec and generator allow, not what a device does), others by name."""
    base = backend.partition("@")[0]  # qnn-htp@2.47, qnn-htp@v73: a release or target of qnn-htp, beside it
    return (0 if base == PRIMARY_BACKEND else 2 if backend == REFERENCE_BACKEND else 1, backend)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _worse(old: float | None, new: float) -> float:
    """The larger error; NaN (the backend produced NaN where the reference did not) is worst of all."""
    if old is None:
        return new
    if math.isnan(old) or math.isnan(new):
        return math.nan
    return max(old, new)


_NUMPY_SCALAR = re.compile(r"np\.(?:float|int|uint|bool|complex)\w*\(([^()]*)\)")


def readable_message(message: str) -> str:
    """A record's message for people: numpy scalar reprs ("np.float64(-4.678)") read as plain numbers,
    so an older results file shows expected and got values the way current ones write them."""
    return _NUMPY_SCALAR.sub(r"\1", message)
