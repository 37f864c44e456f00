"""Starting, interrupting and killing conformance runs for the fault-injection tests (``test_faults_*``)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from reports import record
from tests.conformance_runs import child_env, pytest_cmd
from tests.paths import REPO

PATIENCE = 240.0  # seconds a step may take on a loaded 2-core CI machine before the test calls it hung


def _ctrl_c_as_a_terminal_sends_it() -> None:
    """A run started from a shell's background job (``cmd &``: CI scripts, nohup) inherits SIGINT ignored, and
    Python then never turns it into KeyboardInterrupt: the run under test gets SIGINT as a terminal would give it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Started:
    """A conformance run in its own session (so a group signal reaches it and its xdist workers alone, as a
    terminal's Ctrl-C would), its output in a file (a pipe nobody reads would block it)."""

    def __init__(self, tmp: Path, *args: str, **env: str) -> None:
        self.out = tmp / f"run-{time.monotonic_ns()}.out"
        with open(self.out, "w") as fh:
            self.proc = subprocess.Popen(pytest_cmd(*args), cwd=REPO, env=child_env(**env), stdout=fh,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=_ctrl_c_as_a_terminal_sends_it)  # fmt: skip

    @property
    def pid(self) -> int:
        return self.proc.pid

    def signal(self, sig: int, group: bool = False) -> None:
        (os.killpg if group else os.kill)(self.proc.pid, sig)

    def finish(self, timeout: float = PATIENCE) -> tuple[int, str]:
        """Its exit status and output, once it ends by itself within ``timeout`` (else AssertionError)."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            raise AssertionError(f"the run did not end within {timeout:g} s:\n{self.output()[-2000:]}") from None
        return rc, self.output()

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def kill_all(self) -> None:
        """Whatever is left of it: its session's processes (the ones the test started), by group."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def wait_for_pid(path: Path, run: Started, timeout: float = PATIENCE) -> int:
    """The pid a fault backend wrote to ``path`` when it reached its cue."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        if run.proc.poll() is not None:
            raise AssertionError(f"the run ended (exit {run.proc.returncode}) before its cue:\n{run.output()[-3000:]}")
        time.sleep(0.05)
    run.kill_all()
    raise AssertionError(f"no cue within {timeout:g} s:\n{run.output()[-2000:]}")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped has ended: in a container nothing may reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def outcome(path: Path) -> list[tuple]:
    """What a run concluded, case by case and cell by cell (timings and run ids aside), sorted, each once: a
    cell completed by ``--resume`` after a lost line has its cell record twice, and the CRASH record a
    worker's death left for a cell completed later is not a case of the run. A case recorded with two
    verdicts is an AssertionError."""
    conflicts: list[str] = []
    got = {(r.kind, r.op, r.config, r.tier, r.broken or "", r.case_id, r.verdict, r.extra.get("cases", -1))
           for r in record.read([path], warn=lambda m: None, conflicts=conflicts)
           if not r.extra.get("worker_crash")}  # fmt: skip
    assert not conflicts, f"cases recorded with two verdicts: {conflicts[:3]}"
    return sorted(got)
