"""The end of a conformance run, seen from the controller: cells lost with a worker, what is left to run, which
expectations did nothing or too much. Registered by ``conformance.plugin`` once the door has let the run in."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pytest

from reports import record as results

if TYPE_CHECKING:
    from conformance.plugin import Run


def _param(nodeid: str) -> str:
    return nodeid.split("[", 1)[1].rstrip("]") if "[" in nodeid else ""


def _cell_of(nodeid: str) -> tuple[str, str, str] | None:
    """(op, configuration, tier) of a ``test_op`` id; None for other tests and the spec-error rows."""
    if "::test_op[" not in nodeid:
        return None
    parts = _param(nodeid).split("-")
    if len(parts) < 3 or parts[-1] not in ("typical", "edge", "model"):
        return None
    return parts[0], "-".join(parts[1:-1]), parts[-1]


class RunEnd:
    """The controller's view of the run's end. Why a plugin object of its own: under xdist only the
    controller sees every test's outcome and a worker's death, and only it outlives them to say what
    the results file still lacks."""

    def __init__(self, config: pytest.Config, run: Run, examples: tuple[int, int], expectations: Any) -> None:
        """``examples``: (typical, edge) cases per cell; ``expectations``: the ``--expectations`` entries read at
        the door."""
        self.config, self.run, self.examples, self.expectations = config, run, examples, expectations
        self.planned: list[str] = []
        self.finished: set[str] = set()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.planned = [i.nodeid for i in session.items if i.get_closest_marker("conformance")]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.planned:
            self.planned = [i for i in ids if "::test_op[" in i or "::test_rejects[" in i]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.finished.add(report.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        """An xdist worker died running ``crashitem`` (a segfault in an in-process backend, the OOM killer,
        a kill): the cases it had not recorded are gone. One CRASH record says so, so the cell never reads
        as complete; ``--resume`` runs it again (it has no cell record), and the cell's records of that
        resume supersede this one in the matrix."""
        if not self.run.results:
            return
        worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "?")
        message = (f"the pytest-xdist worker {worker} running this test died; the cases it had not recorded are "
                   "lost (--resume runs them)")  # fmt: skip
        cell = _cell_of(crashitem)
        if cell is None:  # a negative case has no record until it ran: --resume runs it again as it is
            return
        rec = results.Record(op=cell[0], config=cell[1], backend=self.run.backend, verdict=results.CRASH,
                             tier=cell[2], test_id=crashitem, run_id=self.run.run_id, message=message,
                             extra={"worker_crash": worker})  # fmt: skip
        try:
            results.append(self.run.results, [rec])
        except OSError as e:
            print(f"conformance: the CRASH record of {crashitem} could not be written: {e}", file=sys.stderr)

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        if not self.run.results:
            if exitstatus == pytest.ExitCode.INTERRUPTED:
                terminalreporter.write_line("conformance: interrupted; without --results nothing is kept to resume")
            return
        try:
            recs = [r for r in results.read([self.run.results], warn=lambda m: None) if r.run_id == self.run.run_id]
        except (OSError, ValueError):
            return
        line = self.remaining(recs, exitstatus)
        if line:
            terminalreporter.write_line(line)
        for line in self.expectation_notes(recs):
            terminalreporter.write_line(line)

    def remaining(self, recs: list[results.Record], exitstatus: int) -> str:
        """One line when the run ends with cases still to run: how many, and the command that runs them."""
        from conformance.plugin import examples_for, runs_tier

        typical, edge = self.examples
        options = {"examples": typical, "edge_examples": edge, "tier": self.config.getoption("--tier"),
                   "model_examples": self.config.getoption("--model-examples")}  # fmt: skip
        counted: dict[tuple[str, str, str], set[str]] = {}
        complete: set[tuple[str, str, str]] = set()
        negatives: set[tuple[str, str]] = set()
        for r in recs:
            if r.kind == results.POSITIVE and r.case_id:
                counted.setdefault((r.op, r.config, r.tier), set()).add(r.case_id)
            elif r.kind == results.CELL:
                complete.add((r.op, r.config, r.tier))
            elif r.kind == results.NEGATIVE and r.broken:
                negatives.add((r.op, r.broken))
        planned = left = cells = 0
        for nodeid in self.planned:
            cell = _cell_of(nodeid)
            if cell is not None:
                if not runs_tier(options, cell[2]):  # "all", the default, takes every tier in
                    continue
                n = examples_for(options, cell[2])
                planned += n
                if cell in complete:  # a cell that failed short of its cell record is --resume's to finish
                    continue
                left += max(0, n - len(counted.get(cell, ())))
                cells += 1
            elif "::test_rejects[" in nodeid:
                planned += 1
                op, _, broken = _param(nodeid).partition("-")
                if (op, broken) not in negatives and nodeid not in self.finished:
                    left += 1
                    cells += 1
        if not cells and exitstatus != pytest.ExitCode.INTERRUPTED:
            return ""
        if not cells:
            return "conformance: interrupted, but every selected test had finished: nothing remains to run"
        command = f"rerun the same command with --resume (results: {self.run.results})"
        return (f"conformance: run {self.run.run_id} ended with {left} of {planned} planned cases still to run "
                f"({cells} tests unfinished); to finish it, {command}")  # fmt: skip

    def expectation_notes(self, recs: list[results.Record]) -> list[str]:
        """Entries of ``--expectations`` that matched no case although their op ran (stale or mistyped), and
        entries whose op pattern took in cases of several ops (``re:.*`` hides every failure of a run)."""
        known = self.expectations
        if known is None or not known.entries:
            return []
        from reports.expectations import Expectations

        fresh = Expectations.load_all(self.config.getoption("--expectations"))
        ops: dict[int, set[str]] = {}
        match = fresh.match

        def spy(op: str, *args: Any, **kwargs: Any) -> Any:
            entry = match(op, *args, **kwargs)
            if entry is not None:
                ops.setdefault(id(entry), set()).add(op)
            return entry

        fresh.match = spy  # type: ignore[method-assign]
        good = {results.POSITIVE: results.PASS, results.NEGATIVE: results.REJECTED}
        for r in recs:
            # a good outcome no entry touched (it would be XPASS) cannot have matched one: most cases, skipped
            if r.kind in good and not r.extra.get("worker_crash") and (r.verdict != good[r.kind] or r.expectation):
                fresh.apply_record(r)
        ran = {r.op for r in recs}
        notes = []
        for entry in fresh.entries:
            hit = ops.get(id(entry), set())
            if not hit and any(p.matches(op) for p in entry.op for op in ran):
                notes.append(f"conformance: expectation {entry.where} matched no case of this run although its op "
                             "ran: stale or mistyped?")  # fmt: skip
            elif len(hit) > 1 and not all(_literal(p.text) for p in entry.op):
                names = ", ".join(sorted(hit)[:5]) + (", ..." if len(hit) > 5 else "")
                notes.append(f"conformance: expectation {entry.where} (op {', '.join(p.text for p in entry.op)}) "
                             f"matched cases of {len(hit)} ops ({names}): an entry should name the op it is about")
        return notes


def _literal(pattern: str) -> bool:
    """Whether an expectations op pattern names one op (no glob or regular expression)."""
    return not pattern.startswith("re:") and not any(c in pattern for c in "*?[")
