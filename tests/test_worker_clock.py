"""A TIMEOUT means the backend hangs, not that the machine was busy (``adapters.clock``).

The machine's other jobs are made here, small and certain: two spinning processes pinned, with the worker, to one
CPU, so that the worker gets a third of it (less on a machine already busy).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from adapters.clock import WALL_FACTOR, Deadline  # noqa: E402
from adapters.qnn.adapter import QnnAdapter  # noqa: E402
from adapters.worker import DEBUG_WORK_SECONDS  # noqa: E402
from cases.case import Case  # noqa: E402
from tests.simulator import NEEDS_SIMULATOR  # noqa: E402

BUDGET = 1.5 * DEBUG_WORK_SECONDS  # the case's budget, seconds: 1.5 times the CPU time "__debug_work__" spends


def _needs_simulator(test):
    for mark in NEEDS_SIMULATOR:
        test = mark(test)
    return test


@pytest.fixture
def crowded():
    """A worker started (debug hooks on, a case budget of ``BUDGET``) and pinned to one CPU beside two spinners."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs Linux CPU affinity")
    ad = QnnAdapter(debug_hooks=True, timeout=BUDGET)
    ok, why = ad.available()
    if not ok:
        pytest.skip(f"QNN backend not usable here: {why}")
    cpu = {min(os.sched_getaffinity(0))}
    spin = "print('spinning', flush=True)\nwhile True: pass"
    spinners = [subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for p in spinners:
            os.sched_setaffinity(p.pid, cpu)
            assert p.stdout is not None and p.stdout.readline().strip() == "spinning"  # started, not still starting
        os.sched_setaffinity(ad.worker_pid, cpu)
        yield ad
    finally:
        for p in spinners:
            p.kill()
            p.wait()
        ad.close()


def _yielding(pid: int, nice: int = 5) -> None:
    """Let the worker yield to the spinners, so that they hold it back past its budget however the kernel shares the
    CPU. Two spinners alone did not always: with autogroup scheduling the worker's process group got a half to four
    fifths of the CPU (0.63 s and 0.93 s for 0.5 s of work in full-suite runs), a third only without it. Nice 5 gives
    it about a seventh to a quarter: 2-3.5 s of wall time, inside the wall-clock cap."""
    os.setpriority(os.PRIO_PROCESS, pid, nice)
    # the group's own nice, where autogroup is on, unless it is this process's group (it would outlive the test)
    group = _autogroup(pid)
    if group is not None and group != _autogroup("self"):
        try:
            Path(f"/proc/{pid}/autogroup").write_text(str(nice))
        except OSError:
            pass


def _autogroup(pid: int | str) -> str | None:
    """The process's scheduling group, or None where the kernel shows none: CI's sandbox has the file but reads it
    empty."""
    try:
        words = Path(f"/proc/{pid}/autogroup").read_text().split()
    except OSError:
        return None
    return words[0] if words else None


@_needs_simulator
def test_a_case_kept_waiting_for_a_cpu_past_its_budget_is_not_timed_out(crowded):
    _yielding(crowded.worker_pid)
    t0 = time.monotonic()
    out = crowded.run(Case("__debug_work__", [], {}, []))
    took = time.monotonic() - t0
    assert took > BUDGET, f"the spinners did not hold the worker back ({took:.2f} s): the test proves nothing"
    assert out.status != "timeout", (out.message, out.details)


@_needs_simulator
def test_a_runaway_case_is_timed_out_after_its_budget_of_its_own_time_however_busy_the_machine(crowded):
    t0 = time.monotonic()
    out = crowded.run(Case("__debug_spin__", [], {}, []))
    took = time.monotonic() - t0
    assert out.status == "timeout" and f"exceeded {BUDGET:g} s of its own time" in out.message, out.message
    assert out.details["run_queue_seconds"] > 0 and took < BUDGET * WALL_FACTOR, (took, out.details)


@_needs_simulator
def test_a_blocked_case_is_timed_out_after_its_budget_however_busy_the_machine(crowded):
    t0 = time.monotonic()
    out = crowded.run(Case("__debug_hang__", [], {}, []))  # sleeps: never waits for a CPU
    took = time.monotonic() - t0
    assert out.status == "timeout" and f"exceeded {BUDGET:g} s of its own time" in out.message, out.message
    assert took < 2 * BUDGET + 1, f"a blocked worker was given {took:.1f} s"


def test_without_a_run_queue_delay_to_read_the_budget_is_the_wall_clocks():
    deadline = Deadline(0.2, pid=None)
    assert 0 < deadline.remaining() <= 0.2
    time.sleep(0.25)
    assert deadline.remaining() == 0 and deadline.exceeded() == "0.2 s"

