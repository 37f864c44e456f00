"""Backends the fault-injection tests (``tests/test_faults_*.py``) plug in with ``--backend
tests.fault_backends:FACTORY``: each is the reference, or a worker-backed adapter, that misbehaves on
cue, so a test can stop a run at a known point instead of racing it.

- ``pausing``: the reference, except that its N-th case ($PAUSE_AT) writes the pid of the process running
  it to $PAUSE_FILE and sleeps, once (not when $PAUSE_FILE exists: a worker xdist starts in place of a
  killed one runs on): the test then interrupts or kills the run mid-cell. Without $PAUSE_AT it is the
  reference (the uninterrupted run and the ``--resume`` that finishes one).
- ``raising``: the reference, except that its N-th case ($RAISE_AT) raises once per $RAISE_FILE (created
  when it raised): an exception in the middle of a cell, which a rerun does not meet again.
- ``pausing_qnn_htp``: ``pausing`` with the QNN HTP simulator in place of the reference.
- ``hanging_worker``: a worker-backed adapter (``adapters.worker``) whose worker process writes its pid to
  $PAUSE_FILE and hangs in its first case, as a QNN backend stuck in a graph does; no QNN needed.
- ``hanging_qnn_htp``: the same with the real QNN HTP worker (the debug hang hook), where the simulator is.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from adapters.base import Outcome
from adapters.worker import Worker, WorkerAdapter, serve
from cases.case import Case
from tests.fake_backends import _Wrapper


def _claim(marker: str) -> bool:
    """Whether this process is the first to get here: it creates ``marker`` (holding its pid), atomically."""
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return True


class _Pausing(_Wrapper):
    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.count = 0
        self.at = int(os.environ.get("PAUSE_AT", "0") or 0)

    def run(self, case: Case) -> Outcome:
        self.count += 1
        if self.at and self.count == self.at and _claim(os.environ["PAUSE_FILE"]):
            time.sleep(600)
        return self.inner.run(case)


def pausing(options: dict[str, Any]) -> _Pausing:
    from adapters.reference import make

    return _Pausing(make(options))


def pausing_qnn_htp(options: dict[str, Any]) -> _Pausing:
    """``pausing`` on the QNN HTP simulator (one case per graph: the wrapper has no ``run_many``)."""
    from adapters.qnn.adapter import make

    return _Pausing(make(options))


class _Raising(_Wrapper):
    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.count = 0
        self.at = int(os.environ.get("RAISE_AT", "0") or 0)

    def run(self, case: Case) -> Outcome:
        self.count += 1
        if self.at and self.count == self.at and _claim(os.environ["RAISE_FILE"]):
            raise RuntimeError("fault injected: the backend adapter raised in the middle of a cell")
        return self.inner.run(case)


def raising(options: dict[str, Any]) -> _Raising:
    from adapters.reference import make

    return _Raising(make(options))


# ---- a worker process that hangs, without QNN ---------------------------------------------------------
class _HangingWorkerAdapter(WorkerAdapter):
    name = "hanging-worker"

    def __init__(self) -> None:
        super().__init__()
        self._worker = Worker({}, timeout=600)
        self._worker.child_module = "tests.fault_backends"

    def capabilities(self) -> dict[str, Any]:
        return {}

    def run(self, case: Case) -> Outcome:
        return self._worker.run(case.op)


def hanging_worker(options: dict[str, Any]) -> _HangingWorkerAdapter:
    return _HangingWorkerAdapter()


def _child(req_fd: int, rep_fd: int) -> int:
    from adapters.worker import child_setup

    child_setup()

    def run(op: str) -> dict[str, Any]:
        _claim(os.environ["PAUSE_FILE"])
        while True:
            time.sleep(3600)

    return serve(req_fd, rep_fd, {"hello": lambda cfg: {"adapter": "hanging-worker"}, "run": run})


class _HangingQnn(_Wrapper):
    """The QNN HTP worker, sent the debug hang hook as its first case after its pid is written down."""

    def run(self, case: Case) -> Outcome:
        self.inner.available()
        Path(os.environ["PAUSE_FILE"]).write_text(str(self.inner.worker_pid))
        return self.inner.run(Case("__debug_hang__", [], {}, []))


def hanging_qnn_htp(options: dict[str, Any]) -> _HangingQnn:
    from adapters.qnn.adapter import QnnAdapter

    return _HangingQnn(QnnAdapter(precision=options.get("precision", "auto"), debug_hooks=True, timeout=600))


if __name__ == "__main__":
    sys.exit(_child(int(sys.argv[1]), int(sys.argv[2])))
