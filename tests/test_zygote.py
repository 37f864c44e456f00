"""Workers forked from a prepared zygote (``adapters.zygote``): a new worker is a process that has run nothing, in
milliseconds, and a zygote that could not fork a whole process never does."""

from __future__ import annotations

import signal
import subprocess

import pytest

from adapters.worker import Worker
from adapters.zygote import Forked


class _Plain(Worker):
    child_module = "tests.children.plain"
    log_prefix = "plain-worker"


class _Threaded(Worker):
    child_module = "tests.children.threaded"
    log_prefix = "threaded-worker"


def test_a_worker_of_a_preparable_child_is_forked_from_its_zygote_with_the_prepared_state():
    w = _Plain({})
    try:
        info = w.start()
        assert isinstance(w.proc, Forked), f"the worker was started as {type(w.proc).__name__}, not forked"
        assert info["prepared"], "the forked worker does not hold what the zygote prepared"
    finally:
        w.close()


def test_a_new_worker_starts_from_the_prepared_state_not_from_the_last_workers():
    w = _Plain({})
    try:
        w.start()
        w.call(("touch",))
        assert w.call(("read",)) is True
        first = w.proc.pid
        w._discard()
        w.start()
        assert w.proc.pid != first
        assert w.call(("read",)) is False, "a new worker saw what the previous worker had done"
    finally:
        w.close()


def test_a_killed_forked_worker_reports_the_signal_as_a_started_one_does():
    w = _Plain({})
    try:
        w.start()
        proc = w.proc
        proc.kill()
        assert proc.wait(timeout=10) == -signal.SIGKILL
        assert proc.poll() == -signal.SIGKILL and not w.alive
    finally:
        w.close()


def test_a_zygote_holding_a_thread_refuses_to_fork_and_the_worker_starts_the_ordinary_way():
    w = _Threaded({})
    try:
        info = w.start()
        assert isinstance(w.proc, subprocess.Popen), "a zygote with a thread forked a worker that lacks it"
        assert not w.use_zygote, "the handle keeps asking a zygote that cannot fork"
        assert info["pid"] == w.proc.pid
    finally:
        w.close()


@pytest.mark.qnn
def test_the_qnn_worker_restarted_after_a_crash_is_forked_and_has_run_no_case(qnn_htp):
    from cases.case import Case

    crashed = qnn_htp.run(Case("__debug_segv__", [], {}, []))
    assert crashed.status == "crash" and "SIGSEGV" in crashed.message, crashed.message
    qnn_htp._worker.start()
    assert isinstance(qnn_htp._worker.proc, Forked), "after a crash the worker was not forked from the zygote"
    assert qnn_htp._worker.served == 0


@pytest.fixture
def qnn_htp():
    from adapters.qnn import adapter

    a = adapter.QnnAdapter(debug_hooks=True)
    ok, why = a.available()
    if not ok:
        pytest.skip(f"the HTP simulator is not usable here: {why}")
    yield a
    a.close()
