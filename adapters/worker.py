"""Run a backend in a child process that keeps it loaded across cases: the parent-side handle, the
child's request loop, and the base of the adapters built on them (qnn, qnn-htp, ort-qnn).

Why a child process at all: QNN backends answer some misuse by corrupting the heap and aborting,
so a crash must cost one case (verdict CRASH), not the run.

Why one module for both routes to the HTP: the framing, the crash/timeout outcomes, the restart and
the request loop are the same whether the child drives the QNN C API (``adapters.qnn.worker``) or
ONNX Runtime's QNN EP (``adapters.ort_qnn``); each child only registers its handlers with ``serve``.

Why ``subprocess`` + ``python -m <child module>`` with a length-prefixed pickle protocol over
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
    exits when its request pipe closes (parent gone or closed), and is killed by the kernel when the
    parent dies (``adapters.lifetime``): a child hung in the backend never reads its pipe again, and a
    kill of the run's process group does not reach its session.
The parent never loads the backend library: only the child module imports it.
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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from adapters import lifetime
from adapters.base import CRASH, ERROR, TIMEOUT, GroupHung, Outcome, run_batched
from adapters.clock import Deadline

log = logging.getLogger(__name__)
backend_log = logging.getLogger("adapters.qnn.backend")
# the backend's own log lines (QNN's "<E> ..." validation chatter) reach whoever configures logging; without this, a
# command line tool that configures none (python -m conformance replay, python -m bench replay) had Python's
# last-resort handler print every ERROR line to the terminal
backend_log.addHandler(logging.NullHandler())

# s per case, and per batch. Measured on two 20-per-cell main jobs (~53k cases per route, 2 cores, one of
# them with a second job competing): the slowest case alone took 0.20 s (qnn-htp) and 0.53 s (ort-qnn), the
# slowest batch 1.24 s (a 20-node qnn-htp graph) and 0.73 s (a 19-case ort-qnn session). The hangs it
# catches are runaways, not slow work: a 1x1 per-axis FullyConnected keeps the simulator at 100% CPU with
# its RSS growing ~90 MB/s (6 GB after 68 s). Each hang costs a batch's wait (half of this: ``batch_timeout``)
# and then this one, alone: at 20 s the eight hangs of a main job cost it minutes.
DEFAULT_TIMEOUT = 5.0
DEFAULT_START_TIMEOUT = 120.0
PROJECT_ROOT = Path(__file__).resolve().parents[1]  # the checkout: the child imports from it

# Op names that trigger test-only failures in the child, honoured only when the worker was started
# with debug hooks on (an explicit constructor option). Without it they are ordinary unknown op
# names and go to the backend like any other (which rejects them: no op is named like this).
DEBUG_OPS = ("__debug_abort__", "__debug_segv__", "__debug_exit__", "__debug_hang__", "__debug_raise__",
             "__debug_spin__", "__debug_work__")
DEBUG_WORK_SECONDS = 0.5  # CPU seconds "__debug_work__" spends before the case goes on (to the backend: refused)

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
    """A request ran out of time; ``args[0]``: its ``Deadline`` (what the worker spent, and how it ran out)."""


# ---- framing -------------------------------------------------------------------------------------
def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _send(fd: int, obj: Any) -> None:
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEADER.pack(len(payload)) + payload)


def _read_exact(fd: int, n: int, deadline: Deadline | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        while deadline is not None:  # until there is something to read, or the time is up (``adapters.clock``)
            remaining = deadline.remaining()
            if remaining <= 0:
                raise _TimedOut(deadline)
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                break
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise _Died
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(fd: int, deadline: Deadline | None = None) -> Any:
    (length,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exact(fd, length, deadline))


# ---- parent side ---------------------------------------------------------------------------------
class Worker:
    """Parent-side handle of one worker process; restarts it transparently after a crash or timeout."""

    child_module = "adapters.qnn.worker"  # the module whose ``serve`` loop answers (ort-qnn names its own)
    log_prefix = "qnn-worker"
    # workers forked from a prepared zygote (``adapters.zygote``); only child modules whose preparation starts no
    # thread can have one: the QNN one (ONNX Runtime starts a thread at import)
    use_zygote = True

    def __init__(self, config: dict[str, Any], timeout: float = DEFAULT_TIMEOUT,
                 start_timeout: float = DEFAULT_START_TIMEOUT) -> None:
        self.config = dict(config)  # library, log_level, graph options, debug_hooks: sent in "hello"
        self.timeout = float(timeout)
        self.start_timeout = float(start_timeout)
        self.proc: subprocess.Popen | None = None
        self.info: dict[str, Any] | None = None
        self.starts = 0
        self.start_seconds = 0.0  # spent starting workers (the first, and each after a crash): for the benchmark
        self.served = 0  # cases the current process has been handed: a record's ``details.worker_age``
        self._req_w = self._rep_r = -1
        self._log_fd = -1  # an unlinked temp file: the child's fds 1 and 2; nothing to clean up on disk
        self._zygote: Any = None

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
        t0 = time.perf_counter()
        try:
            return self._start()
        finally:
            self.start_seconds += time.perf_counter() - t0

    def _start(self) -> dict[str, Any]:
        self._discard()
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        fd, name = tempfile.mkstemp(prefix=f"{self.log_prefix}-", suffix=".log")
        os.unlink(name)
        self._log_fd = fd
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
        env[lifetime.PARENT_ENV] = str(os.getpid())
        try:
            self.proc = self._forked(env, req_r, rep_w, fd) or subprocess.Popen(
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
        self.served = 0
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

    def _forked(self, env: dict[str, str], req_r: int, rep_w: int, log_fd: int) -> Any:
        """A worker forked from this handle's zygote (``adapters.zygote``), or None where the child module has no
        ``prepare`` or the zygote cannot be had (then the worker is started the ordinary way, as before)."""
        if not self.use_zygote:
            return None
        from adapters import zygote

        if self._zygote is None:
            self._zygote = zygote.Zygote(self.child_module, self.config, env, self.start_timeout)
        try:
            return self._zygote.fork(req_r, rep_w, log_fd)
        except zygote.ZygoteError as e:
            log.info("%s: no zygote (%s); workers start the ordinary way", self.log_prefix, e)
            self._zygote.close()
            self.use_zygote = False
            return None

    def renew(self) -> None:
        """Let the next request start a process that has run nothing, if this one has run any case. Why: a kernel
        that reads memory it does not own sees what earlier cases left there (three output digests of a main job
        differed from the same cases replayed alone, from workers 339-1889 cases old), so each op, and each
        confirmation of a verdict (``conformance.fresh``), starts in a fresh process: a fork of the zygote."""
        if self.proc is not None and self.served:
            self._discard()

    def close(self) -> None:
        if self.alive:
            try:
                _send(self._req_w, ("quit",))
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._discard()
        if self._zygote is not None:
            self._zygote.close()

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
        deadline = None if timeout is None else Deadline(timeout, self.proc.pid if self.proc is not None else None)
        status, payload, records, _ = _recv(self._rep_r, deadline)
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

    @property
    def batch_timeout(self) -> float:
        """How long a request holding many cases may take: half a case's timeout. A batch that hangs settles
        no verdict (its cases run again alone, each with the full timeout), so waiting less costs at most a
        re-run, while each hang of a main job (eight in 2 routes, all runaways) cost the full wait twice:
        its batch's, then its own. The slowest batch seen took 1.24 s (a 20-node qnn-htp graph)."""
        return self.timeout / 2

    def run(self, payload: Any, timeout: float | None = None) -> Outcome:
        """Run one case (whatever the child's "run" handler takes); a dead or hung worker becomes this
        case's CRASH/TIMEOUT outcome. ``timeout``: this request's wait, when not a case's (a merged
        session of many cases, ``batch_timeout``)."""
        started = time.perf_counter()
        try:
            self.start()
        except WorkerError as e:
            return Outcome(ERROR, message=str(e), details={"stage": "worker-start"})
        pid = self.proc.pid
        since = self._log_size()
        age = self._take(1)
        wait = self.timeout if timeout is None else timeout
        t0 = time.perf_counter()
        try:
            result = self._request(("run", payload), wait)
        except (_Died, _TimedOut) as e:
            return _aged(self._lost(e, pid, since, time.perf_counter() - t0, wait), age)
        except WorkerError as e:  # a Python exception inside the worker: a bug of ours, not the backend
            return _aged(Outcome(ERROR, message=f"adapter error in worker: {e}",
                                 details={"stage": "adapter", "traceback": e.remote_traceback}), age)
        outcome = Outcome(**result)
        outcome.details.setdefault("roundtrip_seconds", round(time.perf_counter() - started, 6))
        return _aged(outcome, age)

    def run_each(self, payloads: Sequence[Any], timeouts: Sequence[float] | None = None) -> list[Outcome]:
        """What ``[self.run(p, t) for p, t in zip(payloads, timeouts)]`` gives, with the next request already in the
        pipe while the child works on one. Why: a child idle for the few microseconds it takes the parent to read a
        reply still waits for the parent to be scheduled again. Measured on qnn-htp (8 ms cases): a
        round trip cost 0.5 ms beyond the backend's own time, a ping 0.07 ms, a ping after 8 ms idle
        0.2 ms. With one request queued, the child goes straight from one case to the next.

        Crash and timeout still belong to exactly one case: the child answers in order, so the oldest
        unanswered request is the one it was running; the queued one never started and is sent again to
        the restarted worker. Its clock starts when the case before it was answered."""
        out: list[Outcome] = []
        todo = list(payloads)
        waits = list(timeouts) if timeouts is not None else [self.timeout] * len(todo)
        while len(out) < len(todo):
            try:
                self.start()
            except WorkerError as e:
                out.append(Outcome(ERROR, message=str(e), details={"stage": "worker-start"}))
                continue
            out += self._stream(todo[len(out):], waits[len(out):])
        return out

    def _stream(self, payloads: list[Any], waits: list[float]) -> list[Outcome]:
        """Outcomes of ``payloads`` on the running worker, two requests in flight, up to and including the
        first case that ends the process (the rest are the caller's to send again)."""
        pid = self.proc.pid
        done: list[Outcome] = []
        in_flight: list[int] = []  # ages of the requests sent and not answered, oldest first
        since = self._log_size()  # where the oldest unanswered case's lines start in the child's log
        started = time.perf_counter()
        sent = 0
        while len(done) < len(payloads):
            while sent < len(payloads) and len(in_flight) < 2:
                try:
                    _send(self._req_w, ("run", payloads[sent]))
                except (BrokenPipeError, OSError):
                    break  # the child is gone: the reply loop below finds out how
                in_flight.append(self._take(1))
                sent += 1
            wait = waits[len(done)]  # the oldest request in flight is the case the child is running
            try:
                status, payload, records, position = _recv(self._rep_r, Deadline(wait, pid))
            except (_Died, _TimedOut) as e:
                age = in_flight[0] if in_flight else self.served
                done.append(_aged(self._lost(e, pid, since, time.perf_counter() - started, wait), age))
                return done
            for level, text in records:
                backend_log.log(level, "%s", text)
            age = in_flight.pop(0)
            if status == "ok":
                outcome = Outcome(**payload)
                outcome.details.setdefault("roundtrip_seconds", round(time.perf_counter() - started, 6))
            else:  # a Python exception inside the worker: a bug of ours, not the backend
                error = WorkerError(*payload)
                outcome = Outcome(ERROR, message=f"adapter error in worker: {error}",
                                  details={"stage": "adapter", "traceback": error.remote_traceback})
            done.append(_aged(outcome, age))
            since = position if position >= 0 else self._log_size()
            started = time.perf_counter()
        return done

    def _take(self, n: int) -> int:
        """How many cases this process had been handed before these ``n`` (an ONNX Runtime session holding many
        counts once). Why keep it: some backend
        verdicts depend on what the process ran before (TransposeConv1d's validation crashes in a fresh
        process and refuses after other work), so a record says how used its worker was."""
        age, self.served = self.served, self.served + n
        return age

    def run_batch(self, payloads: Sequence[Any], timeout: float | None = None) -> list[Outcome | None]:
        """Many cases in one request (the child's "run_batch" handler). None for every case the batch
        cannot speak for: the child said so, or the worker died or hung with the batch (the caller
        re-runs those one by one, so a crash belongs to exactly one case)."""
        try:
            self.start()
        except WorkerError as e:
            return [Outcome(ERROR, message=str(e), details={"stage": "worker-start"}) for _ in payloads]
        since = self._log_size()
        age = self._take(len(payloads))
        t0 = time.perf_counter()
        # the batch's budget (``adapters.base.batch_seconds``; half the cap when not given): a batch of small cases
        # takes well under a second, and a hang costs this wait once before its cases run alone
        wait = self.batch_timeout if timeout is None else timeout
        try:
            results = self._request(("run_batch", list(payloads)), wait)
        except (_Died, _TimedOut) as e:
            lost = self._lost(e, self.proc.pid, since, time.perf_counter() - t0, wait)
            if isinstance(e, _TimedOut):
                log.info("%s: a batch of %d cases timed out; they run one by one", self.log_prefix, len(payloads))
                raise GroupHung(lost.message) from None
            out: list[Outcome | None] = [None] * len(payloads)
            # "validate <k>": the child died checking case k's op config alone, before any graph existed
            stage, _, index = str(lost.details.get("stage", "")).partition(" ")
            if isinstance(e, _Died) and stage == "validate" and index.isdigit() and int(index) < len(payloads):
                lost.details.update(stage=stage, batch={"size": len(payloads), "died_validating": int(index)})
                out[int(index)] = _aged(lost, age + int(index))
            log.info("%s: a batch of %d cases was lost (%s); the rest run one by one", self.log_prefix,
                     len(payloads), lost.message)  # fmt: skip
            return out
        except WorkerError as e:
            log.warning("%s: batch failed in the worker (%s); its cases run one by one", self.log_prefix, e)
            return [None] * len(payloads)
        return [None if r is None else _aged(Outcome(**r), age + k) for k, r in enumerate(results)]

    def _lost(self, e: Exception, pid: int, since: int, seconds: float, timeout: float | None = None) -> Outcome:
        """The CRASH or TIMEOUT outcome of a request the worker never answered; the worker is gone after."""
        if isinstance(e, _TimedOut):
            stage = self.last_stage(since) or "worker"
            self._discard()
            deadline = e.args[0] if e.args else None
            waited = self.timeout if timeout is None else timeout
            exceeded = deadline.exceeded() if deadline is not None else f"{waited:g} s"
            return Outcome(TIMEOUT, message=f"case exceeded {exceeded}; {self.log_prefix} {pid} killed",
                           seconds=seconds, details={"stage": stage, "pid": pid,
                                                     **(deadline.spent() if deadline is not None else {})})
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
        return Outcome(CRASH, message=f"{self.log_prefix.replace('-', ' ')} died during the case: {what}",
                       seconds=seconds, details=details)

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


def _aged(outcome: Outcome, age: int) -> Outcome:
    outcome.details["worker_age"] = age
    return outcome


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


def debug_hook(op: str) -> None:
    """The test-only failures behind ``DEBUG_OPS``: crash, exit, hang (blocked), spin (a runaway), work a while or
    raise on purpose."""
    if op == "__debug_abort__":
        os.abort()
    if op == "__debug_segv__":
        os.kill(os.getpid(), signal.SIGSEGV)
    if op == "__debug_exit__":
        os._exit(3)
    if op == "__debug_hang__":
        while True:
            time.sleep(3600)
    if op == "__debug_spin__":
        while True:
            pass
    if op == "__debug_work__":
        end = time.thread_time() + DEBUG_WORK_SECONDS
        while time.thread_time() < end:
            pass
    if op == "__debug_raise__":
        raise RuntimeError("debug hook: deliberate exception in the worker")




def serve(req_fd: int, rep_fd: int, handlers: dict[str, Callable[..., Any]], collect: _Collect | None = None) -> int:
    """The child's loop: one reply per request until "quit" or the parent closes the pipe.

    ``handlers`` maps a request kind ("hello", "run", "run_batch", ...) to a function of the request's
    arguments; its return value is the reply. A Python exception is reported to the parent (which
    raises WorkerError) and the loop goes on: only native failures end the process.
    """
    while True:
        try:
            message = _recv(req_fd)
        except _Died:
            break
        kind = message[0]
        if kind == "quit":
            break
        try:
            if kind == "ping":
                reply = ("ok", os.getpid())
            elif kind in handlers:
                reply = ("ok", handlers[kind](*message[1:]))
            else:
                reply = ("error", ("ProtocolError", f"unknown request {kind!r}", ""))
        except Exception as e:  # noqa: BLE001 - report any Python failure to the parent, keep serving
            reply = ("error", (type(e).__name__, str(e), traceback.format_exc()))
        try:
            _send(rep_fd, (*reply, collect.take() if collect is not None else [], _log_position()))
        except OSError:
            break
    return 0


def _log_position() -> int:
    """Where the next case's lines will start in this child's log (fd 2), sent with every reply: with a
    request already queued, the parent cannot read it off the file before the next case writes."""
    try:
        return os.lseek(2, 0, os.SEEK_CUR)
    except OSError:  # a terminal: no log file, nothing to slice
        return -1


def child_setup() -> None:
    """Before anything native loads: native banners on fd 1 go to the worker's private log (fd 2, a
    file the parent made) or, at a terminal, nowhere; a native crash leaves the Python stack there. The
    child dies with its parent, whatever kills the parent."""
    parent = lifetime.expected_parent()
    if parent is not None:
        lifetime.die_with_parent(parent)
    if os.isatty(2):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    else:
        os.dup2(2, 1)
    faulthandler.enable()


# ---- the adapters built on a worker ----------------------------------------------------------------
class WorkerAdapter:
    """What qnn and ort-qnn share around their worker: availability, identity, lifetime, and running
    many cases at once (``run_many``). Subclasses set ``_worker`` (None with ``_why_not`` when the
    backend cannot be found), implement ``run`` and, to batch, ``run_group``."""

    name = "worker"
    _worker: Worker | None = None
    _why_not = ""
    batch_size = 1  # cases per batch; 1 runs every case alone
    # whether a non-PASS verdict is confirmed in a fresh worker case by case (a fork of a prepared zygote: a few ms),
    # or one case per (verdict, reason) of a cell where a fresh worker costs a tenth of a second (``conformance.fresh``)
    confirm_each = True
    probe = False  # probe a new kind of case before batching it, a known one after a refused batch (``run_batched``)
    bisect = False  # a batch that failed as a whole is halved and retried before its cases run alone

    def __init__(self) -> None:
        self._info: dict[str, Any] | None = None  # the backend's info, read at the first start
        self._batched: set[tuple[str, str]] = set()  # (op, config) pairs that ran batched in this adapter's life

    def available(self) -> tuple[bool, str]:
        """Starts the worker, which loads the backend: a missing library or a refused start says why."""
        if self._worker is None:
            return False, self._why_not
        try:
            self._worker.start()
        except WorkerError as e:
            return False, str(e)
        return True, ""

    def info(self) -> dict[str, Any]:
        """Kept after the first start: every record carries it, and asking a dead worker (after a crash)
        would start a new process just to say the same thing."""
        if self._worker is None:
            return {"adapter": self.name, "library": None, "error": self._why_not}
        if self._info is None:
            self._info = {**self._worker.start(), "adapter": self.name, **self.identity()}
        return dict(self._info)

    def identity(self) -> dict[str, Any]:
        """The options that make this backend what it is (precision, SoC ...), for every record."""
        return {}

    def run_group(self, cases: Sequence[Any]) -> list[Outcome | None]:
        raise NotImplementedError

    def run_each(self, cases: Sequence[Any]) -> list[Outcome]:
        """Each case alone, as ``run`` would; subclasses whose request is the case itself pipe them through
        ``Worker.run_each``."""
        return [self.run(c) for c in cases]

    def run_many(self, cases: Sequence[Any]) -> list[Outcome]:
        """Each case's outcome, as ``run`` would give it, with up to ``batch_size`` cases per backend
        call (``adapters.base.run_batched``)."""
        cases = list(cases)
        if self.batch_size <= 1:
            return self.run_each(cases)
        kind = (cases[0].op, cases[0].config) if cases else None
        # an op and configuration new to this adapter is probed before its first batch; one that batched before
        # (a cell's edge tier after its typical one) is probed only if a batch of it is refused
        first = self.probe and kind not in self._batched
        out = run_batched(cases, self.run, self.run_group if self.batch_size > 1 else None, self.batch_size,
                          self.probe, self.bisect, probe_first=first,
                          refused_with=getattr(self, "refused_with", None))  # fmt: skip
        if any("index" in (o.details.get("batch") or {}) for o in out):
            self._batched.add(kind)
        return out

    def begin_op(self, op: str) -> None:
        """Each op starts in a worker that has run nothing (``Worker.renew``): no verdict of one op depends on what
        another op's cases left in the process."""
        if self._worker is not None and op != getattr(self, "_op", None):
            self._worker.renew()
        self._op = op

    def run_fresh(self, case: Any, times: int = 2) -> list[Outcome]:
        """``case`` in a worker that has run nothing, ``times`` times in a row (the second run of a case whose first
        ran through, or was refused, says whether the backend gives the same again: ``conformance.fresh``). A crash
        or a timeout ends it there: nothing is left to compare."""
        if self._worker is not None:
            self._worker.renew()
        out = [self.run(case)]
        while len(out) < times and out[-1].status not in (CRASH, TIMEOUT):
            out.append(self.run(case))
        return out

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()

    def __enter__(self) -> WorkerAdapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def worker_pid(self) -> int | None:
        return None if self._worker is None else self._worker.pid

    @property
    def worker_starts(self) -> int:
        return 0 if self._worker is None else self._worker.starts

    @property
    def worker_start_seconds(self) -> float:
        """Seconds spent starting worker processes (the first, and one after each crash or timeout)."""
        return 0.0 if self._worker is None else self._worker.start_seconds

    def worker_rss_kb(self) -> int | None:
        return None if self._worker is None else self._worker.rss_kb()

