"""Processes that end with the process that started them: the QNN/ORT worker processes of an adapter and
the pytest-xdist workers of a conformance run.

Why: a run's controller can die without a word (SIGKILL, the OOM killer, a closed terminal). A worker
that outlives it keeps a hung backend busy forever (the QNN workers live in their own session, so a
kill of the run's process group misses them), and an xdist worker that outlives it goes on appending
records to a results file another run may already have taken over. Linux can tie a child's life to its
parent's: ``prctl(PR_SET_PDEATHSIG)`` has the kernel signal the child the moment the parent goes.
Elsewhere there is no such request and this does nothing (the results lock still refuses orphans'
records, see ``reports.record.RunLock``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_ENV = "QNN_CONFORMANCE_PARENT"  # the pid a worker process expects as its parent


def die_with_parent(parent: int | None = None, sig: int = signal.SIGKILL) -> bool:
    """Have the kernel send ``sig`` to this process when its parent ends. ``parent``: the pid that started
    it; when that one is already gone (it died before the request was made), this process ends at once
    the same way. Returns whether the request could be made (Linux only).

    The kernel watches the parent *thread* that started the process: start such children from a thread
    that lives as long as the process (the main thread, for the workers here)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), sig)
    return True


def expected_parent() -> int | None:
    """The parent pid a worker process was told to expect (``PARENT_ENV``), or None."""
    try:
        return int(os.environ.get(PARENT_ENV, ""))
    except ValueError:
        return None
