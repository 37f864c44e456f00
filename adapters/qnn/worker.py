"""The QNN worker's child: loads the backend library once and answers run / run_batch / ops requests.

Everything around it (framing, crash and timeout outcomes, restarts, the request loop) is the
generic worker in ``adapters.worker``; this module holds only what is QNN's.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import sys
from typing import Any

from adapters.worker import (  # noqa: F401 - re-exported: the QNN adapter's public worker names
    DEBUG_OPS,
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    STAGE_MARK,
    Worker,
    WorkerError,
    _Collect,
    child_setup,
    debug_hook,
    serve,
)


def _collector() -> _Collect:
    collect = _Collect()
    qnn_log = logging.getLogger("adapters.qnn")
    qnn_log.addHandler(collect)
    qnn_log.setLevel(logging.DEBUG - 5)
    qnn_log.propagate = False
    return collect


def _load(cfg: dict[str, Any], backend: bool = True) -> Any:
    """The library of ``cfg`` loaded and (``backend``) its backend created: what every case of a worker needs first."""
    from adapters.qnn import bindings

    if cfg.get("saver_directory"):  # the Saver's capture goes there: said before the library's first other call
        bindings.saver_initialize(cfg["library"], cfg["saver_directory"])
    lib = bindings.QnnLibrary(cfg.get("library"), log_level=cfg.get("log_level", "error"),
                              known=cfg.get("known_core_api"))  # fmt: skip
    if backend:
        lib.backend  # noqa: B018 - create the backend now so the first case is not charged for it
    return lib


def _backend_starts_threads(lib: Any) -> bool:
    """Whether creating ``lib``'s backend starts threads, asked of a throwaway fork so this process stays as it was.
    Why: a zygote that holds threads cannot fork a whole worker (``adapters.zygote``), and then every worker of the
    run starts the ordinary way. The simulators of QNN 2.47 to 2.49 (onnxruntime-qnn 2.3.0 to 2.5.0) start their 11
    HVX/HMX threads at backendCreate, later ones at the first graph: in s19's sweep each of those three releases spent
    207 s of its workers' time starting 1116 fresh workers the ordinary way (184 ms each, 3 ms forked)."""
    pid = os.fork()
    if pid == 0:  # the probe: create the backend, say whether threads came with it, leave without any cleanup
        try:
            lib.backend  # noqa: B018
            os._exit(3 if len(os.listdir("/proc/self/task")) > 1 else 0)
        except BaseException:  # noqa: BLE001 - the zygote creates it itself and says what went wrong
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 3


def prepare(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The zygote's part (``adapters.zygote``): modules imported, the library loaded, its backend created where that
    starts no thread (``_backend_starts_threads``; where it does, each worker creates its own, a fork still being far
    cheaper than a new process). Nothing here starts a thread, so every worker forked from it is a process that has
    run no case. Returns the state ``serve_prepared`` takes and the library's info."""
    faulthandler.enable()
    collect = _collector()
    from adapters import refusal  # noqa: F401 - imported here once, for every worker forked
    from adapters.qnn import graph  # noqa: F401

    lib = _load(cfg, backend=False)
    if cfg.get("saver_directory") or not _backend_starts_threads(lib):  # the Saver: no probe writing a capture
        lib.backend  # noqa: B018 - create the backend now so the first case is not charged for it
    return {"lib": lib, "cfg": dict(cfg), "collect": collect}, lib.info()


def serve_prepared(prepared: dict[str, Any], req_fd: int, rep_fd: int) -> int:
    """A worker forked from the zygote: the prepared library, this worker's pipes."""
    prepared["collect"].take()  # the zygote's own log records are not this worker's
    return _serve_with(req_fd, rep_fd, prepared["collect"], prepared)


def _child(req_fd: int, rep_fd: int) -> int:
    child_setup()
    return _serve_with(req_fd, rep_fd, _collector(), None)


def _serve_with(req_fd: int, rep_fd: int, collect: _Collect, prepared: dict[str, Any] | None) -> int:
    from adapters import refusal
    from adapters.qnn import bindings, graph  # imported here: loading is the child's job only

    def mark(stage: str) -> None:
        try:
            os.write(2, f"{STAGE_MARK}{stage}\n".encode())
        except OSError:
            pass

    graph.on_stage = mark
    state: dict[str, Any] = {"lib": None, "options": graph.GraphOptions(), "debug_hooks": False}

    def hello(cfg: dict[str, Any]) -> dict[str, Any]:
        state["options"] = graph.GraphOptions(**cfg.get("graph", {}))
        state["debug_hooks"] = bool(cfg.get("debug_hooks", False))
        same = prepared is not None and all(prepared["cfg"].get(k) == cfg.get(k)
                                            for k in ("library", "log_level", "known_core_api"))  # fmt: skip
        lib = state["lib"] = prepared["lib"] if same else _load(cfg)
        if cfg.get("check_device"):  # a SoC the backend does not know fails here, once, not in every case
            g = state["options"]
            try:
                lib.device(g.soc, g.arch)
            except bindings.QnnError as e:
                raise RuntimeError(f"the backend refuses the target soc={g.soc} arch={g.arch}: {e}") from None
        for pkg in cfg.get("op_packages") or ():  # before any case: ops of the package validate like any
            try:
                lib.register_op_package(pkg["path"], pkg["interface"], pkg.get("target") or "")
            except bindings.QnnError as e:
                raise RuntimeError(f"op package {pkg['path']} (interface {pkg['interface']}) refused: {e}") from None
        return lib.info()

    def with_log(outcome: Any, case: Any = None) -> dict[str, Any]:
        """The backend's warnings of a case that did not run go into its details (the rest of the log
        travels with the reply); a refusal also gets its reason, read from all of them (``adapters.refusal``)."""
        span = outcome.details.pop("log_span", None)  # a batched case's own records (graph.run_batch)
        if outcome.status != "ok":
            records = collect.records if span is None else collect.records[span[0]:span[1]]
            notes = [text for level, text in records if level >= logging.WARNING]
            if notes:
                outcome.details.setdefault("log", notes[-20:])
            if outcome.status == "rejected":
                outcome.details["refusal"] = refusal.explain(notes, outcome.message, case)
        return dict(vars(outcome))

    def run(case: Any) -> dict[str, Any]:
        if state["debug_hooks"] and case.op in DEBUG_OPS:
            debug_hook(case.op)
        return with_log(graph.run_case(state["lib"], case, state["options"]), case)

    def run_batch(cases: list[Any]) -> list[dict[str, Any] | None]:
        for case in cases:
            if state["debug_hooks"] and case.op in DEBUG_OPS:
                debug_hook(case.op)
        outcomes = graph.run_batch(state["lib"], cases, state["options"], lambda: len(collect.records))
        return [None if o is None else with_log(o, c) for o, c in zip(outcomes, cases, strict=True)]

    try:
        return serve(req_fd, rep_fd, {"hello": hello, "run": run, "run_batch": run_batch,
                                      "ops": lambda: state["lib"].supported_operations()}, collect)  # fmt: skip
    finally:
        if state["lib"] is not None:
            state["lib"].close()


if __name__ == "__main__":
    sys.exit(_child(int(sys.argv[1]), int(sys.argv[2])))
