"""The main job watching its backends: each backend's pytest process writes progress events (``pytest_with_events``)
and results records; ``BackendRun`` reads both as they grow, for the live line and the closing summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports.record import GOOD_NEGATIVE, NEGATIVE, POSITIVE

PYTEST_OK = (0, 1)  # all passed / some cases failed: either way the backend ran; failures are results
PYTEST_CODES = {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"}


class BackendRun:
    """One backend's pytest process as the main job watches it: progress events and results records."""

    def __init__(self, name: str, runs: Path, examples: int, edge_examples: int | None) -> None:
        self.name = name
        self.results = runs / f"{name}.jsonl"
        self.log = runs / f"{name}.log"
        self.events = runs / f"{name}.events"  # not *.jsonl: `reports matrix runs/*.jsonl` reads results only
        self.examples = examples
        self.edge_examples = edge_examples or max(1, -(-examples // 4))
        self.total_tests: int | None = None
        self.planned_cases = 0
        self.tests_done = 0
        self.current = ""
        self.cases = 0
        self.tally: dict[str, int] = {}
        self.negative_ok = self.negative = 0
        self.problems: list[str] = []
        self.rc: int | None = None
        self.seconds = 0.0
        self._offsets: dict[Path, int] = {}

    @property
    def ran(self) -> bool:
        return self.rc in PYTEST_OK

    def poll(self) -> list[str]:
        """Read what appeared since the last poll; returns new one-line problems (failing cells)."""
        new: list[str] = []
        for event in self._new_lines(self.events):
            if "collected" in event:
                ids = event["collected"]
                self.total_tests = len(ids)
                self.planned_cases = sum(self._planned(i) for i in ids)
            elif "start" in event:
                self.current = _op_of(event["start"])
            elif "done" in event:
                self.tests_done += 1
                if event.get("outcome") == "failed":
                    line = f"{self.name}: {_short_id(event['done'])}: {event.get('summary', '')}"
                    self.problems.append(line)
                    new.append(line)
        for rec in self._new_lines(self.results):  # xdist's workers append to the results file itself
            kind = rec.get("kind")
            if kind == POSITIVE:
                self.cases += 1
                self.tally[rec.get("verdict", "?")] = self.tally.get(rec.get("verdict", "?"), 0) + 1
            elif kind == NEGATIVE:
                self.cases += 1
                self.negative += 1
                self.negative_ok += rec.get("verdict") in GOOD_NEGATIVE
        return new

    def _planned(self, nodeid: str) -> int:
        if "::test_rejects[" in nodeid:
            return 1
        if nodeid.endswith("-typical]"):
            return self.examples
        if nodeid.endswith("-edge]"):
            return self.edge_examples
        return 0

    def _new_lines(self, path: Path) -> list[dict[str, Any]]:
        """Complete JSON lines past the last offset (a line still being written waits for the next poll)."""
        import json

        try:
            with open(path, "rb") as fh:
                fh.seek(self._offsets.get(path, 0))
                chunk = fh.read()
        except OSError:
            return []
        end = chunk.rfind(b"\n") + 1
        self._offsets[path] = self._offsets.get(path, 0) + end
        out = []
        for line in chunk[:end].splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # a torn line is the results reader's business, not the progress line's
            if isinstance(obj, dict):
                out.append(obj)
        return out

    def tally_text(self) -> str:
        """Short enough for a 100-column line: "✓861 ✗28 E20 R259 U12 neg 88/89" (TALLY_LEGEND says what)."""
        parts = [f"{mark}{self.tally[v]}" for v, mark in TALLY_MARKS.items() if self.tally.get(v)]
        if self.negative:
            parts.append(f"neg {self.negative_ok}/{self.negative}")
        return " ".join(parts)

    def cases_text(self) -> str:
        return f"{self.cases}/{self.planned_cases or '?'}"

    def status_line(self, seconds: float, state: str = "") -> str:
        """The plain form of the live line, for a console that is not a terminal."""
        tests = f"{self.tests_done}/{self.total_tests or '?'} tests"
        doing = state or self.current or "starting"
        return f"{self.name}: {doing}, {tests}, {self.cases_text()} cases, {self.tally_text()}, {seconds:.0f} s"


TALLY_MARKS = {"PASS": "✓", "FAIL": "✗", "ERROR": "E", "CRASH": "C", "TIMEOUT": "T", "REJECTED": "R",
               "UNCHECKED": "U", "XFAIL": "xf", "XPASS": "xp", "SKIP": "s"}  # fmt: skip
TALLY_LEGEND = ("columns: backend, op running, tests done/total, cases done/planned, tallies, elapsed < left\n"
                "tallies: ✓ pass ✗ fail E error C crash T timeout R refused U unchecked, neg: negatives refused/run")


def _op_of(nodeid: str) -> str:
    return nodeid.split("[", 1)[1].split("-", 1)[0] if "[" in nodeid else nodeid.rsplit("::", 1)[-1]


def _short_id(nodeid: str) -> str:
    return nodeid.split("::", 1)[-1]


def pytest_with_events(events: str, pytest_args: list[str]) -> int:
    """pytest with a small plugin that writes progress events (collected ids, test started, test done
    with its outcome) as JSON lines to ``events``: what the main job's progress line reads. It ends with the
    main job (SIGTERM: the run tears down, its workers with it): left running, it would hold its results
    file's lock against the next main job."""
    import signal

    import pytest

    from adapters import lifetime

    parent = lifetime.expected_parent()
    if parent is not None:
        lifetime.die_with_parent(parent, signal.SIGTERM)
    return int(pytest.main(pytest_args, plugins=[_ProgressEvents(Path(events))]))


class _ProgressEvents:
    """Lives in the controller process only: under xdist the workers' reports arrive here."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("")
        self.collected = False
        self.worst: dict[str, str] = {}
        self.summaries: dict[str, str] = {}

    def _emit(self, **event: Any) -> None:
        import json

        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(event) + "\n")

    def pytest_collection_finish(self, session: Any) -> None:
        if session.items and not self.collected:
            self.collected = True
            self._emit(collected=[i.nodeid for i in session.items])

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.collected:
            self.collected = True
            self._emit(collected=list(ids))

    # an xdist hook: optional, so a run without xdist does not reject this plugin
    pytest_xdist_node_collection_finished.optionalhook = True  # type: ignore[attr-defined]

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._emit(start=nodeid)

    def pytest_runtest_logreport(self, report: Any) -> None:
        rank = {"passed": 0, "skipped": 1, "failed": 2}
        before = self.worst.get(report.nodeid, "passed")
        if rank.get(report.outcome, 0) > rank[before]:
            self.worst[report.nodeid] = report.outcome
            if report.outcome == "failed":
                lines = [ln.strip() for ln in (getattr(report, "longreprtext", "") or "").splitlines()]
                lines = [ln for ln in lines if ln and not ln.startswith("[gw")]  # xdist's "[gw0] linux -- Python"
                errors = [ln[1:].strip() for ln in lines if ln.startswith("E ")]  # a traceback's own message
                first = (errors or lines or [f"failed in {report.when}"])[0]
                self.summaries[report.nodeid] = first[:160]
        if report.when == "teardown":
            outcome = self.worst.pop(report.nodeid, before)
            event: dict[str, Any] = {"done": report.nodeid, "outcome": outcome}
            if outcome == "failed":
                event["summary"] = self.summaries.pop(report.nodeid, "")
            self._emit(**event)
