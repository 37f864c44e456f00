"""Run QNN calls in a child process that keeps the backend library loaded across cases.

Why a child process at all: QNN backends answer some misuse by corrupting the heap and aborting,
so a crash must cost one case (verdict CRASH), not the run.

Why ``subprocess`` + ``python -m adapters.qnn.worker`` with a length-prefixed pickle protocol over
two pipes, rather than ``multiprocessing``:
  - the 'spawn' and 'forkserver' start methods re-import the caller's ``__main__`` in the child,
    which re-runs any unguarded script (and drags pytest's entry module along); a ``-m`` child
    imports only what it needs;
  - the child's file descriptors are ours to arrange before anything native is loaded: fd 2 is a
    private (already unlinked) log file and the child ``os.dup2``s it onto fd 1, where the library
    prints its ``# LIBNATIVE`` line, so nothing reaches the user's terminal; the tail of that file
    goes into a CRASH outcome's details;
  - ``Popen.returncode`` gives the killing signal directly, and ``select`` on the reply pipe gives
    the per-case timeout without helper threads;
  - the child is started in its own session so a terminal Ctrl-C reaches the parent only; the child
    exits when its request pipe closes (parent gone or closed).
The parent never loads the backend library: it imports ``bindings`` only in the child.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from adapters.base import CRASH, ERROR, TIMEOUT, Outcome
from cases.case import Case

log = logging.getLogger(__name__)
backend_log = logging.getLogger("adapters.qnn.backend")

DEFAULT_TIMEOUT = 60.0
DEFAULT_START_TIMEOUT = 120.0
PROJECT_ROOT = Path(__file__).resolve().parents[2]

# Op names that trigger test-only failures in the child, honoured only when the worker was started
# with debug hooks on (an explicit constructor option). Without it they are ordinary unknown op
# names and go to the backend like any other (which rejects them: no op is named like this).
DEBUG_OPS = ("__debug_abort__", "__debug_segv__", "__debug_exit__", "__debug_hang__", "__debug_raise__")

_HEADER = struct.Struct(">Q")
STAGE_MARK = "#qnn-stage "  # a phase announcement in the child's log (graph.STAGE_MARK: the same text)


class WorkerError(RuntimeError):
    """The worker could not do what was asked (e.g. the library failed to load); not a case verdict."""

    def __init__(self, remote_type: str, message: str, remote_traceback: str = "") -> None:
        self.remote_type, self.remote_traceback = remote_type, remote_traceback
        super().__init__(f"{remote_type}: {message}")


class _Died(Exception):
    pass


class _TimedOut(Exception):
    pass


# ---- framing -------------------------------------------------------------------------------------
def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _send(fd: int, obj: Any) -> None:
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEADER.pack(len(payload)) + payload)


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _TimedOut
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise _TimedOut
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise _Died
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(fd: int, deadline: float | None = None) -> Any:
    (length,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exact(fd, length, deadline))


# ---- parent side ---------------------------------------------------------------------------------
class Worker:
    """Parent-side handle of one worker process; restarts it transparently after a crash or timeout."""

    child_module = "adapters.qnn.worker"  # the module whose child loop serves requests (ort-qnn has its own)
    log_prefix = "qnn-worker"

    def __init__(self, config: dict[str, Any], timeout: float = DEFAULT_TIMEOUT,
                 start_timeout: float = DEFAULT_START_TIMEOUT) -> None:
        self.config = dict(config)  # library, log_level, graph options, debug_hooks: sent in "hello"
        self.timeout = float(timeout)
        self.start_timeout = float(start_timeout)
        self.proc: subprocess.Popen | None = None
        self.info: dict[str, Any] | None = None
        self.starts = 0
        self._req_w = self._rep_r = -1
        self._log_fd = -1  # an unlinked temp file: the child's fds 1 and 2; nothing to clean up on disk

    # -- lifetime ----------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.alive else None

    def start(self) -> dict[str, Any]:
        """Start (if needed) and load the library; returns the library's info."""
        if self.alive and self.info is not None:
            return self.info
        self._discard()
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        fd, name = tempfile.mkstemp(prefix=f"{self.log_prefix}-", suffix=".log")
        os.unlink(name)
        self._log_fd = fd
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", self.child_module, str(req_r), str(rep_w)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=fd,
                pass_fds=(req_r, rep_w),
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            for f in (req_r, rep_w):
                os.close(f)
        self._req_w, self._rep_r = req_w, rep_r
        self.starts += 1
        try:
            self.info = self._request(("hello", self.config), self.start_timeout)
        except (_Died, _TimedOut) as e:
            tail = self.log_tail()
            what = "timed out" if isinstance(e, _TimedOut) else self._death_text()
            self._discard()
            raise WorkerError("WorkerStartFailed", f"worker did not start: {what}; {tail[-500:]}") from None
        except WorkerError:
            self._discard()
            raise
        return self.info

    def close(self) -> None:
        if self.alive:
            try:
                _send(self._req_w, ("quit",))
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._discard()

    def _discard(self) -> None:
        """Forget the current process: kill it if still there (by its own pid), close our fds."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - the kernel did not reap in time
                log.warning("qnn worker %d did not exit after SIGKILL", self.proc.pid)
        for fd in (self._req_w, self._rep_r, self._log_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._req_w = self._rep_r = self._log_fd = -1
        self.proc = None
        self.info = None

    def log_tail(self, limit: int = 4000) -> str:
        if self._log_fd < 0:
            return ""
        size = os.fstat(self._log_fd).st_size
        data = os.pread(self._log_fd, limit, max(0, size - limit))
        return "\n".join(line for line in data.decode("utf-8", "replace").splitlines()
                         if "# LIBNATIVE" not in line and not line.startswith(STAGE_MARK))  # fmt: skip

    def _log_size(self) -> int:
        return os.fstat(self._log_fd).st_size if self._log_fd >= 0 else 0

    def last_stage(self, since: int, limit: int = 1 << 20) -> str:
        """The last phase the child announced in its log after byte ``since`` ("" if none): where a
        case that killed the worker was when it died."""
        if self._log_fd < 0:
            return ""
        size = os.fstat(self._log_fd).st_size
        start = max(since, size - limit)
        text = os.pread(self._log_fd, max(0, size - start), start).decode("utf-8", "replace")
        stages = [line[len(STAGE_MARK):].strip() for line in text.splitlines() if line.startswith(STAGE_MARK)]
        return stages[-1] if stages else ""

    def _death_text(self) -> str:
        code = self.proc.wait(timeout=10) if self.proc is not None else None
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = "unknown signal"
            return f"signal {-code} ({name})"
        return f"exit code {code}"

    # -- requests ----------------------------------------------------------------------------------
    def _request(self, message: tuple, timeout: float | None) -> Any:
        try:
            _send(self._req_w, message)
        except (BrokenPipeError, OSError):
            raise _Died from None
        deadline = None if timeout is None else time.monotonic() + timeout
        status, payload, records = _recv(self._rep_r, deadline)
        for level, text in records:
            backend_log.log(level, "%s", text)
        if status == "ok":
            return payload
        raise WorkerError(*payload)

    def call(self, message: tuple, timeout: float | None = None) -> Any:
        """A non-case request (capabilities, ...): any failure raises."""
        self.start()
        try:
            return self._request(message, self.timeout if timeout is None else timeout)
        except _Died:
            what = self._death_text()
            self._discard()
            raise WorkerError("WorkerDied", f"worker died: {what}") from None
        except _TimedOut:
            self._discard()
            raise WorkerError("WorkerTimeout", f"no answer in {self.timeout} s") from None

    def run(self, case: Case) -> Outcome:
        """Run one case; a dead or hung worker becomes this case's CRASH/TIMEOUT outcome."""
        started = time.perf_counter()
        try:
            self.start()
        except WorkerError as e:
            return Outcome(ERROR, message=str(e), details={"stage": "worker-start"})
        pid = self.proc.pid
        since = self._log_size()
        t0 = time.perf_counter()
        try:
            result = self._request(("run", case), self.timeout)
        except _Died:
            what = self._death_text()
            code = self.proc.returncode
            details: dict[str, Any] = {"stage": self.last_stage(since) or "worker", "pid": pid,
                                       "log_tail": self.log_tail()}  # fmt: skip
            if code is not None and code < 0:
                details["signal"] = -code
                details["signal_name"] = what[what.find("(") + 1:-1]
            else:
                details["exit_code"] = code
            self._discard()
            return Outcome(CRASH, message=f"qnn worker died during the case: {what}",
                           seconds=time.perf_counter() - t0, details=details)
        except _TimedOut:
            stage = self.last_stage(since) or "worker"
            self._discard()
            return Outcome(TIMEOUT, message=f"case exceeded {self.timeout:g} s; qnn worker {pid} killed",
                           seconds=time.perf_counter() - t0, details={"stage": stage, "pid": pid})
        except WorkerError as e:  # a Python exception inside the worker: a bug of ours, not the backend
            return Outcome(ERROR, message=f"adapter error in worker: {e}",
                           details={"stage": "adapter", "traceback": e.remote_traceback})
        outcome = Outcome(**result)
        outcome.details.setdefault("roundtrip_seconds", round(time.perf_counter() - started, 6))
        return outcome

    def rss_kb(self) -> int | None:
        """Resident set size of the worker (Linux /proc), for memory checks."""
        if not self.alive:
            return None
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None


# ---- child side ----------------------------------------------------------------------------------
class _Collect(logging.Handler):
    """Buffers log records in the child; each reply carries them to the parent's logger."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG - 5)
        self.records: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.records.append((record.levelno, record.getMessage()))
        except Exception:  # noqa: BLE001 - a logging failure must not take the case down
            pass

    def take(self) -> list[tuple[int, str]]:
        out, self.records = self.records, []
        return out


def _debug_hook(op: str) -> None:
    if op == "__debug_abort__":
        os.abort()
    if op == "__debug_segv__":
        os.kill(os.getpid(), signal.SIGSEGV)
    if op == "__debug_exit__":
        os._exit(3)
    if op == "__debug_hang__":
        while True:
            time.sleep(3600)
    if op == "__debug_raise__":
        raise RuntimeError("debug hook: deliberate exception in the worker")


def _child(req_fd: int, rep_fd: int) -> int:
    # Native code writes to fd 1 (the "# LIBNATIVE" banner): point fd 1 at the worker's log (fd 2,
    # which the parent made a private file) before anything native loads; at a terminal, at devnull.
    if os.isatty(2):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    else:
        os.dup2(2, 1)
    faulthandler.enable()  # a native crash leaves the Python stack (which QNN call) in the log tail
    collect = _Collect()
    qnn_log = logging.getLogger("adapters.qnn")
    qnn_log.addHandler(collect)
    qnn_log.setLevel(logging.DEBUG - 5)
    qnn_log.propagate = False

    from adapters.qnn import bindings, graph  # imported here: loading is the child's job only

    def mark(stage: str) -> None:
        try:
            os.write(2, f"{STAGE_MARK}{stage}\n".encode())
        except OSError:
            pass

    graph.on_stage = mark

    lib = None
    options = graph.GraphOptions()
    debug_hooks = False
    while True:
        try:
            message = _recv(req_fd)
        except _Died:
            break
        kind = message[0]
        try:
            if kind == "quit":
                break
            if kind == "hello":
                cfg = message[1]
                options = graph.GraphOptions(**cfg.get("graph", {}))
                debug_hooks = bool(cfg.get("debug_hooks", False))
                lib = bindings.QnnLibrary(cfg.get("library"), log_level=cfg.get("log_level", "error"),
                                          known=cfg.get("known_core_api"))
                lib.backend  # noqa: B018 - create the backend now so the first case is not charged for it
                for pkg in cfg.get("op_packages") or ():  # before any case: ops of the package validate like any
                    try:
                        lib.register_op_package(pkg["path"], pkg["interface"], pkg.get("target") or "")
                    except bindings.QnnError as e:
                        raise RuntimeError(f"op package {pkg['path']} (interface {pkg['interface']}) refused: {e}") \
                            from None
                reply = ("ok", lib.info(), collect.take())
            elif kind == "run":
                case = message[1]
                if debug_hooks and case.op in DEBUG_OPS:
                    _debug_hook(case.op)
                outcome = graph.run_case(lib, case, options)
                records = collect.take()
                if outcome.status != "ok":
                    notes = [text for level, text in records if level >= logging.WARNING]
                    if notes:
                        outcome.details.setdefault("log", notes[-20:])
                reply = ("ok", dict(vars(outcome)), records)
            elif kind == "ops":
                reply = ("ok", lib.supported_operations(), collect.take())
            elif kind == "ping":
                reply = ("ok", os.getpid(), collect.take())
            else:
                reply = ("error", ("ProtocolError", f"unknown request {kind!r}", ""), collect.take())
        except Exception as e:  # noqa: BLE001 - report any Python failure to the parent, keep serving
            reply = ("error", (type(e).__name__, str(e), traceback.format_exc()), collect.take())
        try:
            _send(rep_fd, reply)
        except OSError:
            break
    if lib is not None:
        lib.close()
    return 0


if __name__ == "__main__":
    sys.exit(_child(int(sys.argv[1]), int(sys.argv[2])))
