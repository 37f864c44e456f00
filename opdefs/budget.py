"""A time budget for work driven by a spec (loading it, drawing its cases): past it, the work stops with
``OutOfTime`` and costs its own op, never the run.

Why a timer signal and not only checks between steps: a spec is untrusted input, and the step that
does not end is the one that never reaches the next check. ``SIGALRM`` raises in the main thread at
the next bytecode, wherever the work is. Where that is not possible (another thread, a platform
without ``setitimer``, a program that owns ``SIGALRM`` already, a budget already running) the budget
is not enforced by a signal; callers that can also check between steps do (``expired``).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

LOAD_SECONDS = 10.0  # one spec file: the 157 built-in ones take ~2 ms each
GENERATION_SECONDS = 300.0  # one cell's draw: the slowest built-in cells take a few seconds
_ENV = {"load": "QNN_CONFORMANCE_LOAD_SECONDS", "generation": "QNN_CONFORMANCE_GENERATION_SECONDS"}


class OutOfTime(Exception):
    """Spec-driven work ran past its budget."""


def seconds(kind: str) -> float:
    """The budget of ``kind`` ("load" or "generation"): its default, or ``$QNN_CONFORMANCE_<KIND>_SECONDS``."""
    default = LOAD_SECONDS if kind == "load" else GENERATION_SECONDS
    try:
        value = float(os.environ.get(_ENV[kind], default))
    except ValueError:
        return default
    return value if value > 0 else default


def expired(deadline: float) -> bool:
    return time.monotonic() > deadline


@contextmanager
def time_budget(limit: float, what: str) -> Iterator[None]:
    """Raise ``OutOfTime`` naming ``what`` in the block once ``limit`` seconds have passed (see the module
    docstring for where this cannot be enforced)."""
    usable = (limit > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None))  # fmt: skip
    if not usable:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise OutOfTime(f"{what} took more than {limit:g} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
