"""``python -m bench --against REV``: another revision's own benchmark, run beside this one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from bench import run as bench  # noqa: E402


def test_against_a_revision_the_checkout_lacks_says_so_and_measures_nothing(capsys):
    got = bench.against("no-such-revision-here", ["reference"], {})
    assert got == {"rev": "no-such-revision-here", "error": "not a revision of this checkout"}, got
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no-such-revision-here" in err, err


def test_the_headline_ends_with_the_speed_up_over_the_revision():
    doc = {"backends": {"ort-qnn": {"available": True, "cases_per_second_2_workers": 200.0,
                                    "batched": {"cases_per_second_2_workers": 380.0}}},
           "main_job": {"estimated_seconds": 66.0},
           "against": {"rev": "cbee60e", "commit": "cbee60e474" + "0" * 30,
                       "backends": {"ort-qnn": {"speedup": 14.2}}}}  # fmt: skip
    line = bench._headline(doc)
    assert line.endswith("; against cbee60e: ort-qnn x14.2"), line


class _FakeWorker:
    """A worker whose resident memory grows by ``leak_kb`` per case run; ``crash_on`` restarts it (a new pid)."""

    def __init__(self, leak_kb: int) -> None:
        self.leak_kb, self.kb, self.alive = leak_kb, 100_000, True
        self.proc = type("Proc", (), {"pid": 1000})()

    def rss_kb(self) -> int:
        return self.kb


class _FakeAdapter:
    def __init__(self, leak_kb: int, crash_on: str = "") -> None:
        self._worker, self.crash_on = _FakeWorker(leak_kb), crash_on

    def run_cell(self, cell: list) -> None:
        for case in cell:
            self._worker.kb += self._worker.leak_kb
            if case == self.crash_on:
                self._worker.proc = type("Proc", (), {"pid": self._worker.proc.pid + 1})()


def _measure(monkeypatch, adapter: _FakeAdapter, cells: list[list], restarted: set[int]) -> dict:
    from conformance import execute

    monkeypatch.setattr(execute, "execute_many", lambda cell, ctx: ctx.adapter.run_cell(cell))
    return bench._memory(adapter, "fake", cells, 1, restarted)


def test_worker_growth_is_what_running_the_same_cells_again_adds(monkeypatch):
    cells = [["a"] * 10, ["b"] * 10]
    got = _measure(monkeypatch, _FakeAdapter(leak_kb=3), cells, set())
    assert got["worker_rss_cases_run_again"] == 20, got
    assert got["worker_rss_growth_kb_per_1000_cases"] == 3000.0, got


def test_a_worker_that_does_not_grow_reads_zero_growth(monkeypatch):
    got = _measure(monkeypatch, _FakeAdapter(leak_kb=0), [["a"] * 10], set())
    assert got["worker_rss_growth_kb_per_1000_cases"] == 0.0, got


def test_cells_whose_worker_restarted_in_the_pass_are_left_out(monkeypatch):
    cells = [["a"] * 10, ["crash"] + ["b"] * 9]
    got = _measure(monkeypatch, _FakeAdapter(leak_kb=1, crash_on="crash"), cells, {1})
    assert got["worker_rss_cases_run_again"] == 10, got


def test_a_restart_between_the_two_runs_gives_no_growth_figure(monkeypatch):
    got = _measure(monkeypatch, _FakeAdapter(leak_kb=1, crash_on="crash"), [["crash"] * 2], set())
    assert got["worker_rss_growth_kb_per_1000_cases"] is None and got["worker_rss_cases_run_again"] == 0, got
