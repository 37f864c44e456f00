"""Fresh worker processes in milliseconds: a prepared process (the zygote) forks each new worker.

Why: a worker started with ``python -m <child module>`` paid about 180 ms before its first case (the interpreter,
110 ms of imports, loading the backend library), and a process is started far more often than once per run: after
every crash (339 in a 20-per-cell main job on the HTP simulator), and for every op and every confirmation in a
worker that has run nothing before (``Worker.fresh``), so that no verdict depends on what an earlier case left in the
process. The zygote is started once per worker handle. It imports the child module and has it ``prepare`` what every
worker needs before its first case (the QNN library loaded and its backend created); each worker is then a fork of
that state: a process that has run no case, as a newly started one is, at a few milliseconds.

Why that is safe: ``fork`` copies only the calling thread, so the zygote must hold no other thread when it forks
(a library that started threads would find them missing in the child). It checks before every fork (``_threads``)
and refuses instead of forking then; OpenBLAS' thread pool, which numpy starts at import, is kept to one thread in
the zygote's environment. A child module whose preparation would start threads prepares less (ONNX Runtime starts
a thread at import, so the ort-qnn zygote imports everything else and each of its workers
imports ONNX Runtime itself: 120 ms a worker, 360 ms started the ordinary way).

Who reaps whom: a worker is the zygote's child, not the adapter's. The adapter watches it through a pidfd (readable
when it ends), kills it through that pidfd, and asks the zygote to reap it (``wait`` returns the status the adapter
reads the signal from, as ``Popen.returncode`` did); until then its pid cannot be reused. A worker dies with the
zygote and the zygote with the adapter's process (``adapters.lifetime``).
"""

from __future__ import annotations

import importlib
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
from typing import Any

from adapters import lifetime

_MAX = 1 << 20
ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}  # the zygote must not hold threads when it forks


class ZygoteError(RuntimeError):
    """The zygote could not be started, prepared or asked for a worker: the caller starts one the ordinary way."""


def _send(sock: socket.socket, obj: Any, fds: list[int] | None = None) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) > _MAX:
        raise ZygoteError("control message too large")
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.sendall(data)


def _recv(sock: socket.socket, timeout: float | None = None) -> tuple[Any, list[int]]:
    if timeout is not None:
        ready, _, _ = select.select([sock], [], [], timeout)
        if not ready:
            raise TimeoutError("no answer")
    data, fds, _flags, _addr = socket.recv_fds(sock, _MAX, 4)
    if not data:
        raise EOFError("the other side closed")
    return pickle.loads(data), fds


class Zygote:
    """The adapter's side: start the zygote (``child_module`` prepared with ``config``), fork workers from it."""

    def __init__(self, child_module: str, config: dict[str, Any], env: dict[str, str], timeout: float) -> None:
        self.child_module, self.config, self.env, self.timeout = child_module, dict(config), dict(env), timeout
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.info: Any = None
        self.forks = 0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> Any:
        """Start and prepare the zygote (once); returns what the child module's ``prepare`` said of itself."""
        if self.alive and self.info is not None:
            return self.info
        self.close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", __name__, self.child_module, str(theirs.fileno())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), env={**self.env, **ENV}, start_new_session=True,
                close_fds=True)  # fmt: skip
        finally:
            theirs.close()
        self.sock = ours
        try:
            _send(ours, ("prepare", self.config))
            (status, payload), _ = _recv(ours, self.timeout)
        except (OSError, EOFError, TimeoutError, pickle.PickleError) as e:
            self.close()
            raise ZygoteError(f"the zygote did not start: {e}") from None
        if status != "ok":
            self.close()
            raise ZygoteError(f"the zygote could not prepare {self.child_module}: {payload}")
        self.info = payload
        return payload

    def fork(self, req_fd: int, rep_fd: int, log_fd: int) -> Forked:
        """A new worker on these pipes and log, forked from the prepared zygote."""
        self.start()
        try:
            _send(self.sock, ("fork",), [req_fd, rep_fd, log_fd])
            (status, payload), _ = _recv(self.sock, self.timeout)
        except (OSError, EOFError, TimeoutError, pickle.PickleError) as e:
            self.close()
            raise ZygoteError(f"the zygote did not fork: {e}") from None
        if status != "ok":
            raise ZygoteError(str(payload))
        self.forks += 1
        return Forked(self, int(payload))

    def reap(self, pid: int) -> int:
        """The raw wait status of an ended worker (the zygote waits for it)."""
        try:
            _send(self.sock, ("reap", pid))
            (status, payload), _ = _recv(self.sock, self.timeout)
        except (OSError, EOFError, TimeoutError, pickle.PickleError, AttributeError):
            return 0
        return int(payload) if status == "ok" else 0

    def close(self) -> None:
        if self.sock is not None:
            try:
                _send(self.sock, ("quit",))
            except (OSError, ZygoteError):
                pass
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
            self.proc = None
        self.info = None


class Forked:
    """A forked worker, with what the adapter used of ``subprocess.Popen``: ``pid``, ``poll``, ``wait``, ``kill``
    and ``returncode`` (negative: the signal that ended it)."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None
        self._pidfd = os.pidfd_open(pid)

    def _ended(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._pidfd], [], [], timeout)
        return bool(ready)

    def _settle(self) -> int:
        self.returncode = os.waitstatus_to_exitcode(self.zygote.reap(self.pid))  # -N: ended by signal N
        os.close(self._pidfd)
        self._pidfd = -1
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None and self._ended(0):
            return self._settle()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not self._ended(timeout if timeout is not None else 1e9):
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0)
            return self._settle()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None and self._pidfd >= 0:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass


# ---- the zygote ----------------------------------------------------------------------------------
def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _serve(module_name: str, sock: socket.socket) -> int:
    parent = lifetime.expected_parent()
    if parent is not None:
        lifetime.die_with_parent(parent)
    module = importlib.import_module(module_name)
    state: Any = None
    while True:
        try:
            message, fds = _recv(sock)
        except (EOFError, OSError):
            return 0
        kind = message[0]
        if kind == "quit":
            return 0
        if kind == "prepare":
            try:
                state, info = module.prepare(message[1])
                _warm_specs()
                reply = ("ok", info)
            except Exception as e:  # noqa: BLE001 - said to the adapter, which starts workers the ordinary way
                reply = ("error", f"{type(e).__name__}: {e}")
        elif kind == "fork":
            reply = _fork(module, state, sock, fds)
        elif kind == "reap":
            try:
                _, status = os.waitpid(int(message[1]), 0)
                reply = ("ok", status)
            except ChildProcessError:
                reply = ("ok", 0)
        else:
            reply = ("error", f"unknown request {kind!r}")
        try:
            _send(sock, reply)
        except OSError:
            return 0


def _warm_specs() -> None:
    """Every op spec parsed once here, so that no worker parses one: a worker's first case read the specs' cache
    file (75 ms of JSON) before its first backend call, which made a fresh worker's first case 100 ms where a
    long-lived worker's took 5 (measured on a refused case: validation 4 ms of it). With thousands of fresh
    confirmations a main job (``conformance.fresh``), that was most of their cost. Specs are data, no threads start;
    a malformed one is the run's to report, not the zygote's (``load_each`` never raises for it)."""
    try:
        import opdefs

        opdefs.load_each()
    except Exception:  # noqa: BLE001 - an unwarmed spec is parsed by the worker that needs it, as before
        pass


def _fork(module: Any, state: Any, sock: socket.socket, fds: list[int]) -> tuple[str, Any]:
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return "error", "a fork needs the request pipe, the reply pipe and the log"
    if _threads() != 1:  # a thread the library started would be missing in the child
        for fd in fds:
            os.close(fd)
        return "error", f"the zygote holds {_threads()} threads: it cannot fork a whole worker"
    req_fd, rep_fd, log_fd = fds
    zygote = os.getpid()
    pid = os.fork()
    if pid == 0:  # the worker: the zygote's state, its own pipes and log
        code = 1
        try:
            sock.close()
            os.setsid()
            lifetime.die_with_parent(zygote)
            os.dup2(log_fd, 2)
            os.dup2(log_fd, 1)
            os.close(log_fd)
            code = module.serve_prepared(state, req_fd, rep_fd)
        finally:
            os._exit(code or 0)
    for fd in fds:
        os.close(fd)
    return "ok", pid


if __name__ == "__main__":
    raise SystemExit(_serve(sys.argv[1], socket.socket(fileno=int(sys.argv[2]))))
