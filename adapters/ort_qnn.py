"""ONNX Runtime with the QNN execution provider (HTP backend) as a backend: the lowered ONNX models of
``adapters.onnx`` run through the onnxruntime-qnn plugin EP.

How the EP is reached: the onnxruntime-qnn wheel is a *plugin* EP library, not a provider compiled
into onnxruntime. The worker registers it with ``onnxruntime.register_execution_provider_library(
"QNNExecutionProvider", onnxruntime_qnn.get_library_path())``, picks the EP's device from
``onnxruntime.get_ep_devices()`` and attaches it per session with
``SessionOptions.add_provider_for_devices(devices, {"backend_path": <wheel's libQnnHtp.so>, ...})``.

Why these session settings:
  - ``session.disable_cpu_ep_fallback=1``: a node the QNN EP declines would otherwise run on the CPU
    EP and its numbers would be reported as the HTP's; with it, session creation fails (REJECTED) and
    the EP's reason (its log line listing unsupported nodes) goes into the outcome.
  - ``offload_graph_io_quantization=0``: the graph's input DequantizeLinear / output QuantizeLinear
    stay on the HTP, which then receives and returns the fixed-point codes the case holds, as a QNN
    graph would; the EP's default moves them to the CPU EP.
  - ``enable_fallback=0`` on InferenceSession: the Python wrapper retries a failed EP on CPU otherwise.

Why a worker process: the HTP simulator is native code that can abort the process; a crash must cost
one case (CRASH), not the run. The adapter is a ``WorkerAdapter`` (``adapters.worker``: framing,
timeouts, crash/timeout outcomes, restart, the request loop) with this module as the child; the
lowering runs in the parent, so the child only builds sessions and runs them and a lowering gap never
touches it. ``run_many`` puts up to ``batch_size`` cases of a cell in one model and one session
(``adapters.onnx_batch``): session creation is most of a case's cost on this route. The worker also holds
one small session open (``keep_warm``): without it the simulator started again for every session, 57 ms
of a one-node session's 63.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from adapters import refusal
from adapters.base import ERROR, OK, REJECTED, Outcome, batch_seconds, case_seconds, output_digest
from adapters.onnx import Lowered, supported
from adapters.onnxruntime import (
    OPTIMIZATION_LEVELS,
    finish,
    lower_or_skip,
    run_merged,
    run_session,
    session_options,
)
from adapters.qnn.targets import float32_declaration
from adapters.worker import (
    DEBUG_OPS,
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    Worker,
    WorkerAdapter,
    WorkerError,
    child_setup,
    debug_hook,
    serve,
)
from cases.case import Case

EP_NAME = "QNNExecutionProvider"
PRECISIONS = ("auto", "float32", "float16", "none")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FINALIZE = "Failed to finalize QNN graph"
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2} ")
# EP banner warnings printed for every session; they say nothing about the case.
_BOILERPLATE = ("File mapped weights", "EPContext encryption config", "# LIBNATIVE")


def provider_options(backend_path: str, precision: str, soc: int | None, arch: int | None) -> dict[str, str]:
    """QNN EP options for one session.

    ``precision``: "auto" and "none" send nothing (the EP's default, ``enable_htp_fp16_precision`` 1 in its
    documentation); "float32"/"float16" set ``enable_htp_fp16_precision`` 0/1 (the EP refuses 1 without
    ``soc_model``). Measured on the simulator here (onnxruntime-qnn 2.7.0): what decides is the target, as on
    qnn-htp. At the default SoC (v68) FLOAT_32 Softmax, Sigmoid and Conv2d come back within a few float32 ulps with
    "auto" or "float32", and only SpaceToDepth (inputs rounded to binary16) and LayerNorm (within binary16's budget)
    at float16 precision; from v69 on every FLOAT_32 result is at float16 precision, as the HTP backend documents
    for float32 graphs (``EP_SOURCE``, declared per target: ``adapters.qnn.targets.float32_declaration``).
    """
    opts = {"backend_path": backend_path, "offload_graph_io_quantization": "0"}
    if precision == "float32":
        opts["enable_htp_fp16_precision"] = "0"
    elif precision == "float16":
        opts["enable_htp_fp16_precision"] = "1"
    if soc is not None:
        opts["soc_model"] = str(int(soc))
    if arch is not None:
        opts["htp_arch"] = str(int(arch))
    return opts


# What the EP and the HTP backend document about FLOAT_32 arithmetic on this route, which the verdicts then take at
# their word (conformance/execute.py): a FLOAT_32 result outside binary32's budget and inside binary16's is
# FP16_ACCURATE here, as on qnn-htp (adapters.qnn.adapter.HTP_SOURCE, the same libQnnHtp.so).
EP_SOURCE = ("ONNX Runtime QNN Execution Provider documentation, option 'enable_htp_fp16_precision' ('1': default, a "
             "float32 model run with fp16 precision on the HTP backend), and the Qualcomm AI Engine Direct (QNN) SDK "
             "documentation, 'QNN HTP Precision': a graph of float32 tensors is executed on the HTP with float16 math; "
             "measured with onnxruntime-qnn 2.7.0 on the simulator, the option at its default or set to 0")


# ---- parent side ---------------------------------------------------------------------------------
class _OrtWorker(Worker):
    """The QNN adapter's worker handle, started on this module's child loop instead of the QNN one."""

    child_module = __name__
    log_prefix = "ort-qnn-worker"
    # forked from a zygote that has imported everything but ONNX Runtime (which starts a thread at import, so a fork
    # of it would miss that thread): each worker imports it, registers the EP and warms the simulator itself
    use_zygote = True

    def clear_log(self) -> None:
        """Empty the worker's log before a case. The child's fd 2 shares this file description (and
        so its offset) with ours: truncating and seeking here makes the child write from 0 again, so
        the file holds one case's log however long the run, and a crash tail is this case's."""
        if self._log_fd >= 0:
            os.ftruncate(self._log_fd, 0)
            os.lseek(self._log_fd, 0, os.SEEK_SET)

    def log_text(self, limit: int = 1 << 20) -> str:
        """The case's ORT/QNN log as the worker wrote it (colour codes and all)."""
        if self._log_fd < 0:
            return ""
        size = os.fstat(self._log_fd).st_size
        return os.pread(self._log_fd, min(size, limit), 0).decode("utf-8", "replace")

    def log_records(self, limit: int = 1 << 20) -> list[str]:
        """The case's ORT/QNN log as records (a record keeps its continuation lines), colour removed."""
        text = _ANSI.sub("", self.log_text(limit))
        records: list[str] = []
        for line in text.splitlines():
            if _STAMP.match(line) or not records:
                records.append(line.strip())
            elif line.strip():
                records[-1] += " " + line.strip()
        return records


def _notable(records: list[str]) -> list[str]:
    """Errors, warnings and the EP's per-node validation verdicts; the verbose rest is dropped."""
    keep = [r for r in records if ("[E:" in r or "[W:" in r or "Validation FAILED" in r)
            and not any(b in r for b in _BOILERPLATE)]  # fmt: skip
    return [r.split("] ", 1)[-1] if r[:4].isdigit() else r for r in keep]


_COMPOSED = re.compile(r"ComposeQnnGraph\] Qnn_OpConfig node name: \S+ package_name: \S+ QNN_op_type: (\w+)")


def composed_ops(log: str) -> list[str]:
    """The QNN op types of the graph(s) the EP composed for the backend, in order, from its verbose log: what
    this route handed libQnnHtp.so, to set beside the one op qnn-htp hands it (``findings/routes.yaml`` names
    them). Empty when the EP composed nothing (it declined a node, or ORT folded the whole model). Read off the
    raw text: every case run alone asks, and splitting its verbose log into records first cost more than the rest
    of the parent's work on the case."""
    return _COMPOSED.findall(log)


def _reason(notes: list[str]) -> str:
    """The EP's own words for a refusal: ORT's exception only says CPU fallback was disabled."""
    for key in ("backendValidateOpConfig", "Validation FAILED", "Unsupported nodes", "failed", "Failed"):
        for note in notes:
            if key in note and "fallback to CPU EP has been explicitly disabled" not in note:
                return note
    return ""


def _phase(outcome: Outcome) -> None:
    """``details["stage"]`` in the QNN adapter's words (validate / finalize / execute / ok), the ORT
    step kept as ``details["call"]``. What can be told from outside the EP: a session the EP refused
    is its node validation (the EP asks backendValidateOpConfig), "Failed to finalize QNN graph" is
    finalize, a failure in ``run`` is execute. A crash or timeout keeps the stage the worker saw."""
    step = outcome.details.get("stage")
    phase = {"session": "validate", "finalize": "finalize", "run": "execute"}.get(step or "")
    if outcome.status == OK:
        phase = "ok"
    if phase is not None:
        if step and step != phase:
            outcome.details["call"] = step
        outcome.details["stage"] = phase


class OrtQnnAdapter(WorkerAdapter):
    """ONNX Runtime + QNN EP on HTP (the simulator on x86_64), lowered models run in a worker.

    ``library``: QNN backend library for the EP's ``backend_path`` (default the wheel's libQnnHtp.so).
    ``precision``/``soc``/``arch``: see ``provider_options``. ``optimization``: ORT graph optimization level.
    ``timeout``: the most seconds a case may take before the worker is killed (TIMEOUT); a case's own budget grows
    with its size up to it (``adapters.base.case_seconds``).
    ``recycle_every``: sessions per worker process (0: never restart; default 5000 with ``keep_warm``, 500
    without). Measured here: the worker's RSS grew about 540 kB per one-case session without ``keep_warm``
    (the simulator's start-up and teardown leaking, faster as it went: 2400 sessions of 10 ops), and about 3
    kB per session with it, one case or a batch each (2400 one-case sessions; 575 batched ones, flat at 237
    MB); a restart costs about 0.12 s with the warm session (a fork of the zygote).
    ``batch_size``: cases per model and session in ``run_many`` (1: one session per case, as ``run``).
    ``keep_warm``: hold one small session open in the worker, so the simulator is not started anew for every
    session (``_keep_warm``; False: every session starts it, as before).

    Outcome mapping on top of the CPU adapter's: "Failed to finalize QNN graph" at session creation
    means the EP accepted every node and QNN then could not build the graph: ERROR, stage "finalize".
    """

    name = "ort-qnn"
    probe = True  # the EP refuses a whole session for one node it declines: probe a new kind before batching it
    bisect = True  # and then one declined case among many spoils only the halves it is in
    # a fresh worker costs 120 ms here (ONNX Runtime imported, the EP registered, the simulator warmed): a cell's
    # non-PASS cases are confirmed one per verdict and reason, not case by case (``conformance.fresh``)
    confirm_each = False

    def __init__(self, library: str | os.PathLike | None = None, precision: str = "auto", soc: int | None = None,
                 arch: int | None = None, optimization: str = "all", timeout: float = DEFAULT_TIMEOUT,
                 start_timeout: float = DEFAULT_START_TIMEOUT, debug_hooks: bool = False,
                 recycle_every: int | None = None, batch_size: int = 32, keep_warm: bool = True) -> None:  # fmt: skip
        super().__init__()
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
        if optimization not in OPTIMIZATION_LEVELS:
            raise ValueError(f"optimization must be one of {OPTIMIZATION_LEVELS}, not {optimization!r}")
        self.precision, self.soc, self.arch, self.optimization = precision, soc, arch, optimization
        self.debug_hooks = bool(debug_hooks)
        self.keep_warm = bool(keep_warm)
        self.recycle_every = int(recycle_every) if recycle_every is not None else (5000 if self.keep_warm else 500)
        self.batch_size = max(1, int(batch_size))
        self._sessions = 0
        self._why_not = ""
        self.library = self._find_library(library)
        self._worker: _OrtWorker | None = None
        if self.library is not None:
            # the warm session is built as the worker starts, with the options every case's session gets: a
            # failure there is the worker's, never the first case's
            warm = provider_options(self.library, precision, soc, arch) if self.keep_warm else None
            config = {"library": self.library, "optimization": optimization, "debug_hooks": self.debug_hooks,
                      "warm_options": warm}  # fmt: skip
            self._worker = _OrtWorker(config, timeout=timeout, start_timeout=start_timeout)

    def _find_library(self, library: str | os.PathLike | None) -> str | None:
        if library:
            path = Path(library)
            if not path.is_file():
                self._why_not = f"QNN backend library {path} does not exist"
                return None
            return str(path.resolve())
        try:
            import onnxruntime_qnn
        except ImportError as e:
            self._why_not = f"the onnxruntime-qnn wheel is not importable: {e}"
            return None
        path = Path(onnxruntime_qnn.get_qnn_htp_path())
        if not path.is_file():
            self._why_not = f"onnxruntime-qnn has no {path.name} at {path}"
            return None
        return str(path)

    # -- protocol ----------------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        return {"precision": self.precision, "optimization": self.optimization,
                "soc": "default" if self.soc is None else self.soc,
                "arch": "default" if self.arch is None else self.arch}  # fmt: skip

    def capabilities(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ops": supported()}
        if self.library is not None and "htp" in Path(self.library).name.lower():  # per target, as on qnn-htp
            out["arithmetic"] = float32_declaration(self.soc, self.arch, EP_SOURCE)
        return out

    def run(self, case: Case) -> Outcome:
        if self._worker is None:
            return Outcome(ERROR, message=f"ort-qnn unavailable: {self._why_not}", details={"stage": "load"})
        if self.debug_hooks and case.op in DEBUG_OPS:
            lowered: Lowered | Outcome = Lowered(case.op.encode(), {}, [])
        else:
            lowered = lower_or_skip(case)
        if isinstance(lowered, Outcome):
            return lowered
        return _with_digest(finish(lowered, self._session(lowered, case_seconds(case, self._worker.timeout))))

    def run_group(self, cases: Sequence[Case]) -> list[Outcome | None]:
        """Up to ``batch_size`` cases in one model and session; None where a case must run alone."""
        if self._worker is None or (self.debug_hooks and any(c.op in DEBUG_OPS for c in cases)):
            return [None] * len(cases)
        # a hang settles no verdict; a merged graph's QNN ops are every case's at once, so they are not recorded
        merged = functools.partial(self._session, timeout=batch_seconds(cases, self._worker.timeout), graph=False)
        return [o if o is None else _with_digest(o) for o in run_merged(cases, merged)]

    def refused_with(self, cases: Sequence[Case], probe: Outcome) -> list[Outcome | None]:
        """The refusals of a cell whose first case (``probe``) the EP refused alone, read from one session of the
        others: a case whose node units the merged session's log names, with a reason that reads as the probe's
        (node names aside), is REJECTED with its own lines; any other case gets None and runs alone, as every case
        of such a cell did before. Why: a refused session costs the EP about 20 ms (it builds a QNN backend and
        validates every node unit), and such cells were a third of this route's time. What it rests on, measured on
        a 20-per-cell main job's 3666 cases refused alone whose merged session named them: 3421 gave the reason
        they gave alone; the 245 that did not were lowerings of several node units, where the log's first
        refused unit differs, and they run alone here because their reason is not the probe's; a lowering of several
        units is not settled here at all. A merged session that is not refused settles nothing (the EP ran 168
        cases together that it refused alone)."""
        from adapters.onnx_batch import merge

        out: list[Outcome | None] = [None] * len(cases)
        if self._worker is None:
            return out
        lowered = [lower_or_skip(c) for c in cases]
        parts = [(k, lw) for k, lw in enumerate(lowered) if not isinstance(lw, Outcome)]
        # lowerings of one node unit only: where several units make the case, the EP may take some and then fail to
        # build the graph alone (Conv3d's transposes: ERROR alone, a refusal in the merged session)
        if len(parts) < 2 or any(len(set(lw.node_types) - _QDQ) > 1 for _, lw in parts):
            return out
        want = refusal.explain(probe.details.get("log") or [], probe.message)["reason"]
        try:
            model = merge([lw for _, lw in parts])
        except Exception:  # noqa: BLE001 - a model that does not merge: every case alone
            return out
        raw = self._session(model, timeout=batch_seconds([cases[k] for k, _ in parts], self._worker.timeout),
                            graph=False)  # fmt: skip
        if raw.status != REJECTED:
            return out
        notes = _notable(self._worker.log_records())
        head = raw.message.split(" [QNN EP:", 1)[0]
        for j, (k, _) in enumerate(parts):
            if not _names_part(notes, j):  # the session did not say why this case's nodes were refused
                continue
            mine = _part_lines(notes, j)
            if refusal.explain(mine[-20:], "")["reason"] != want:
                continue
            why = _reason(mine)
            out[k] = Outcome(REJECTED, message=f"{head} [QNN EP: {why}]"[:2000] if why else head,
                             details={"stage": "validate", "call": "session", "log": mine[-20:],
                                      "batch": {"size": len(parts), "refused_with": "the cell's probe"}})  # fmt: skip
        return out

    def _session(self, lowered: Lowered, timeout: float | None = None, graph: bool = True) -> Outcome:
        """One session for ``lowered`` in the worker: its raw outcome (outputs as ORT gave them), with the
        EP's own words for a refusal and the stage in the QNN adapter's terms. ``timeout``: the worker's
        wait when not one case's (a merged model's: ``Worker.batch_timeout``). ``graph``: record the QNN ops
        the EP composed (``details["qnn_ops"]``, see ``composed_ops``)."""
        opts = provider_options(self.library, self.precision, self.soc, self.arch)
        if self.recycle_every and self._sessions and self._sessions % self.recycle_every == 0:
            self._worker.renew()  # a fresh worker starts just below (see ``recycle_every``)
        self._sessions += 1
        try:
            self._worker.start()
        except WorkerError as e:
            return Outcome(ERROR, message=str(e), details={"stage": "worker-start"})
        self._worker.clear_log()
        outcome = self._worker.run((lowered, opts), timeout)
        if outcome.status == REJECTED and _FINALIZE in outcome.message:
            # the EP took every node and QNN then failed to build the graph: accepted, then failed
            outcome.status = ERROR
            outcome.details["stage"] = "finalize"
        _phase(outcome)
        ops = composed_ops(self._worker.log_text()) if graph else []
        if ops:
            outcome.details["qnn_ops"] = ops
        if outcome.status in (REJECTED, ERROR):
            notes = _notable(self._worker.log_records())
            if notes:
                outcome.details["log"] = notes[-20:]
                why = _reason(notes)
                if why and why not in outcome.message:
                    outcome.message = f"{outcome.message} [QNN EP: {why}]"[:2000]
        return outcome


_QDQ = frozenset({"QuantizeLinear", "DequantizeLinear"})  # the unit's edges, not a node unit of their own
_PART_OF = re.compile(r"(?<![A-Za-z0-9_])c(\d+)_")  # a merged session's part prefix (adapters.onnx_batch)


def _names_part(lines: list[str], k: int) -> bool:
    return any(int(m) == k for line in lines for m in _PART_OF.findall(line))


def _part_lines(lines: list[str], k: int) -> list[str]:
    """The log lines of a merged session that are part ``k``'s alone (its prefix taken off), with those that name no
    part (the session's own words): what its own session would have logged."""
    out = []
    for line in lines:
        named = {int(m) for m in _PART_OF.findall(line)}
        if named == {k}:
            out.append(_PART_OF.sub("", line))
        elif not named:
            out.append(line)
    return out


def _with_digest(outcome: Outcome) -> Outcome:
    """The same digest as the QNN adapter's, over the same declared storage (``reports agree``)."""
    if outcome.status == OK:
        outcome.details["output_digest"] = output_digest(outcome.outputs)
    return outcome


def _flag(value: Any) -> bool:
    """A yes/no option from a command line or config file; anything else is an error, so a typo does not
    silently turn it on."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"keep_warm takes yes or no (1/0, true/false, on/off), not {value!r}")


def make(options: dict[str, Any] | None = None) -> OrtQnnAdapter:
    """Keys: ``library`` (or ``lib``/``path``), ``precision``, ``soc``, ``arch``, ``optimization``,
    ``timeout``, ``recycle_every``, ``batch_size``, ``keep_warm``. Unknown keys are an error, so a typo does not
    silently run the default."""
    from adapters.qnn.adapter import target_from_env  # $QNN_HTP_SOC / $QNN_HTP_ARCH, as for qnn-htp

    opts = target_from_env(dict(options or {}))
    library = opts.pop("library", None) or opts.pop("lib", None) or opts.pop("path", None)
    kwargs: dict[str, Any] = {"library": library}
    for key, conv in (("precision", str), ("optimization", str), ("timeout", float), ("recycle_every", int),
                      ("batch_size", int), ("keep_warm", _flag)):
        if key in opts:
            kwargs[key] = conv(opts.pop(key))
    for key in ("soc", "arch"):
        if key in opts:
            value = opts.pop(key)
            kwargs[key] = None if value in (None, "") else int(value)
    if opts:
        raise ValueError(f"unknown ort-qnn adapter options: {sorted(opts)}")
    return OrtQnnAdapter(**kwargs)


# ---- child side ----------------------------------------------------------------------------------
def _hello(cfg: dict[str, Any]) -> tuple[Any, list[Any], dict[str, Any]]:
    """Register the plugin EP once per process and describe what was loaded."""
    import onnxruntime as ort
    import onnxruntime_qnn

    ort.register_execution_provider_library(EP_NAME, onnxruntime_qnn.get_library_path())
    devices = [d for d in ort.get_ep_devices() if d.ep_name == EP_NAME]
    if not devices:
        raise RuntimeError(f"{EP_NAME} registered from {onnxruntime_qnn.get_library_path()} but offers no device")
    info: dict[str, Any] = {
        "onnxruntime": ort.__version__,
        "onnxruntime_qnn": onnxruntime_qnn.__version__,
        "qnn_sdk": getattr(onnxruntime_qnn.build_and_package_info, "qnn_version", None),
        "ep_library": onnxruntime_qnn.get_library_path(),
        "backend_path": cfg["library"],
        "providers": [EP_NAME],
        "ep_devices": [{"vendor": d.ep_vendor, "device": str(d.device.type), **dict(d.ep_metadata)} for d in devices],
    }
    info.update(cfg.get("_library_info") or _library_info(cfg["library"]))
    return ort, devices, info


def _library_info(library: str) -> dict[str, Any]:
    """The QNN library's own build id, read through the QNN adapter's bindings (no backend created). The zygote reads
    it once for every worker it forks (the library stays loaded, as it did in each worker before: ctypes never
    unloads it), 48 ms a worker otherwise."""
    try:
        from adapters.qnn import bindings

        lib = bindings.QnnLibrary(library)
        return {"qnn_build_id": lib.build_id, "qnn_core_api": ".".join(map(str, lib.provider.core_api)),
                "qnn_backend_api": ".".join(map(str, lib.provider.backend_api))}  # fmt: skip
    except Exception as e:  # noqa: BLE001 - the build id is nice to have, never a reason to stop
        return {"qnn_build_id_error": f"{type(e).__name__}: {e}"}


def _qnn_session_options(ort: Any, devices: list[Any], opts: dict[str, str], optimization: str) -> Any:
    """Verbose (level 0): the EP gives a node's validation failure reason only there; the worker log
    holds one case at a time and the parent keeps only the notable records."""
    so = session_options(ort, optimization, log_level=0)
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    so.add_provider_for_devices(devices, opts)
    return so


def _tiny_model() -> bytes:
    """A one-node float model (y = x + x over one element) that every HTP target takes: the warm session's."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "warm", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def _keep_warm(state: dict[str, Any], opts: dict[str, str]) -> None:
    """Hold one small session open for the worker's life, with the provider options every case's session gets.

    Why: every session's EP creates its own QNN backend, and when the last one is freed the HTP simulator
    tears down its state and builds it again for the next (measured here: 57 ms to create a one-node
    session with none open, 6.5 ms with one held; 47 ms of the 57 were the first graph of a fresh backend).
    Each case's session is still its own backend, context and graph, built and freed as before; only the
    simulator's process-wide start-up is not repeated. ``tests/test_batching.py`` runs the same cases with
    and without it and finds the same outcomes and outputs. Built as the worker starts (``hello``), so that
    its failure is never a case's; one that cannot be built is left out (the cases only cost more).
    Errors-only logging: its records never mix into a case's log."""
    ort = state["ort"]
    try:
        so = session_options(ort, state["cfg"].get("optimization", "all"), log_level=3)
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        so.add_provider_for_devices(state["devices"], opts)
        session = ort.InferenceSession(_tiny_model(), so, enable_fallback=0)
        session.run(None, {"x": np.zeros(1, np.float32)})
    except Exception:  # noqa: BLE001 - without it the cases run as before, only slower
        session = None
    state["warm"] = session


def prepare(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The zygote's part (``adapters.zygote``): the modules every worker needs imported, ONNX Runtime not (it starts
    a thread at import). A worker forked from it starts in about a third of the time of one started the ordinary
    way (python, numpy and onnx imports are most of it); ``hello`` then does what cannot be shared."""
    import faulthandler

    faulthandler.enable()
    import onnx.helper  # noqa: F401 - the warm session's model

    from adapters import onnxruntime as _ort_helpers  # noqa: F401 - run_session, session_options

    return {"library_info": _library_info(cfg["library"])}, {"prepared": "imports and the library's build id"}


def serve_prepared(prepared: dict[str, Any], req_fd: int, rep_fd: int) -> int:
    """A worker forked from the zygote: the same request loop as a worker started the ordinary way."""
    return _serve(req_fd, rep_fd, prepared["library_info"])


def _child(req_fd: int, rep_fd: int) -> int:
    child_setup()
    return _serve(req_fd, rep_fd)


def _serve(req_fd: int, rep_fd: int, library_info: dict[str, Any] | None = None) -> int:
    state: dict[str, Any] = {}

    def hello(cfg: dict[str, Any]) -> dict[str, Any]:
        if library_info is not None:
            cfg = {**cfg, "_library_info": library_info}
        state["cfg"] = cfg
        state["ort"], state["devices"], info = _hello(cfg)
        if cfg.get("warm_options"):
            _keep_warm(state, cfg["warm_options"])
        return info

    def run(payload: tuple[Lowered, dict[str, str]]) -> dict[str, Any]:
        lowered, opts = payload
        cfg = state["cfg"]
        if cfg.get("debug_hooks") and lowered.model.decode("ascii", "replace") in DEBUG_OPS:
            debug_hook(lowered.model.decode())
        make = functools.partial(_qnn_session_options, state["ort"], state["devices"], opts,
                                 cfg.get("optimization", "all"))  # fmt: skip
        return run_session(state["ort"], lowered, make)

    return serve(req_fd, rep_fd, {"hello": hello, "run": run})


if __name__ == "__main__":
    sys.exit(_child(int(sys.argv[1]), int(sys.argv[2])))
