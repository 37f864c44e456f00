"""ONNX Runtime's CPU execution provider as a backend: each Case lowered to a small ONNX model.

Why ORT at all in a QNN suite: its CPU EP is an independent implementation of the ONNX op each QNN
op cites, so it separates "the QNN backend disagrees with the spec" from "the spec reading is odd";
and its QNN EP (``adapters.ort_qnn``) runs the same lowered models on the HTP, which is how most
users meet QNN. Both share ``run_session`` so a verdict means the same on either.

The CPU EP runs in-process: its kernels are not known to crash on odd input the way a QNN backend
does, and a session per case costs about a millisecond here.

Outcome mapping: no lowering -> SKIP; ORT refusing the model while building the session (invalid
graph, no kernel for the type, an EP declining a node) or a kernel refusing its data type as it runs
-> REJECTED; any other failure while running -> ERROR.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from adapters.base import ERROR, OK, REJECTED, SKIP, TIMEOUT, GroupHung, GroupRefused, Outcome, run_batched
from adapters.onnx import Lowered, Unlowerable, lower, read_outputs, supported
from cases.case import Case

OPTIMIZATION_LEVELS = ("all", "extended", "basic", "disable")


def session_options(ort: Any, optimization: str = "all", log_level: int = 4) -> Any:
    """Fresh options; ORT's own console log is off (4 = fatal only) because its errors come back as
    exceptions, which become the outcome's message.

    Strict shape inference: the model declares each output with the case's shape, as a QNN graph
    declares its output tensors; by default ORT only warns when the op infers another shape and then
    returns its own, strict mode makes that a refusal at session creation (REJECTED).
    """
    so = ort.SessionOptions()
    so.add_session_config_entry("session.strict_shape_type_inference", "1")
    so.log_severity_level = log_level
    so.graph_optimization_level = {
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    }[optimization]
    so.intra_op_num_threads = 1  # one case at a time; threads only add noise to the timings
    return so


def run_session(ort: Any, lowered: Lowered, make_options: Any, providers: list[str] | None = None) -> dict[str, Any]:
    """Build a session for ``lowered`` and run it once; returns Outcome fields (outputs raw, as ORT gave them).

    ``make_options()`` returns SessionOptions already carrying any EP (plugin EPs are attached there).
    """
    t0 = time.perf_counter()
    try:
        # enable_fallback=0: the Python wrapper would otherwise retry a failing EP on the CPU EP and
        # report CPU numbers as the EP's
        sess = ort.InferenceSession(lowered.model, make_options(), providers=providers, enable_fallback=0)
    except Exception as e:  # noqa: BLE001 - every ORT refusal is a verdict, whatever its class
        return {"status": REJECTED, "message": _text(e), "seconds": time.perf_counter() - t0,
                "details": {"stage": "session", "code": type(e).__name__}}  # fmt: skip
    t1 = time.perf_counter()
    try:
        arrays = sess.run([o.name for o in lowered.outputs], lowered.feeds)
    except Exception as e:  # noqa: BLE001
        del sess  # a session's teardown is backend time too (the QNN EP frees its context and backend: ~8 ms)
        text = _text(e)
        # a kernel that checks its types only when it runs ("MLFloat16 data type is not supported with ScatterND
        # opset 16 when reduction is 'add'") declines the case as a missing kernel does at session creation
        status = REJECTED if _UNSUPPORTED_TYPE in text else ERROR
        return {"status": status, "message": text, "seconds": time.perf_counter() - t0,
                "details": {"stage": "run", "code": type(e).__name__}}  # fmt: skip
    providers = sess.get_providers()
    del sess
    return {"status": OK, "outputs": [np.asarray(a) for a in arrays], "seconds": time.perf_counter() - t0,
            "details": {"providers": providers, "session_seconds": round(t1 - t0, 6)}}  # fmt: skip


_UNSUPPORTED_TYPE = "data type is not supported"  # ORT's words when a kernel refuses a type as it runs


def _text(e: BaseException) -> str:
    return " ".join(str(e).split())[:2000]


def finish(lowered: Lowered, outcome: Outcome) -> Outcome:
    """Raw session result -> outputs in each declared storage dtype and shape."""
    outcome.details.setdefault("onnx_nodes", lowered.node_types)
    if outcome.status == OK:
        outcome.outputs, notes = read_outputs(lowered.outputs, outcome.outputs)
        outcome.details.update(notes)
    return outcome


def lower_or_skip(case: Case) -> Lowered | Outcome:
    if case.steps:  # an ONNX Runtime session keeps no state between runs: a sequence would test nothing
        return Outcome(SKIP, message=f"a sequence of {case.executions} executions of one graph: an ONNX model keeps no "
                                     "state between runs", details={"stage": "lowering"})  # fmt: skip
    try:
        return lower(case)
    except Unlowerable as e:
        return Outcome(SKIP, message=str(e), details={"stage": "lowering"})


def run_merged(cases: Sequence[Case], run: Callable[[Lowered], Outcome]) -> list[Outcome | None]:
    """Several cases as one model and one session (``adapters.onnx_batch``): the batched ``run_group`` of
    both ONNX Runtime adapters. ``run`` builds and runs a session for a lowered model and returns its raw
    outcome. A case without a lowering gets its SKIP here; when the merged session is refused or fails,
    the lowered cases get None (each then runs alone, so a refusal names its own case)."""
    from adapters.onnx_batch import merge, named_parts, split

    lowered = [lower_or_skip(c) for c in cases]
    outcomes: list[Outcome | None] = [lw if isinstance(lw, Outcome) else None for lw in lowered]
    parts = [(k, lw) for k, lw in enumerate(lowered) if not isinstance(lw, Outcome)]
    if len(parts) < 2:
        return outcomes
    t0 = time.perf_counter()
    try:
        merged = merge([lw for _, lw in parts])
    except Exception:  # noqa: BLE001 - a model that does not merge runs case by case
        return outcomes
    raw = run(merged)
    if raw.status == TIMEOUT:
        raise GroupHung(raw.message)
    if raw.status == REJECTED:  # a refusal names the nodes it refused: those parts' cases run alone
        named = named_parts(" ".join([raw.message, *raw.details.get("log", [])]), len(parts))
        raise GroupRefused({parts[k][0] for k in named})
    if raw.status != OK:
        return outcomes
    share = (time.perf_counter() - t0) / len(parts)
    for (k, lw), arrays in zip(parts, split([lw for _, lw in parts], raw.outputs), strict=True):
        details = {key: v for key, v in raw.details.items() if key in ("providers", "stage", "call")}
        details["batch"] = {"size": len(parts), "index": k}
        outcomes[k] = finish(lw, Outcome(OK, outputs=arrays, seconds=share, details=details))
    return outcomes


class OrtCpuAdapter:
    """ONNX Runtime CPUExecutionProvider, in-process.

    ``optimization``: ORT graph optimization level (all, extended, basic, disable). With "all",
    QDQ models are fused into ORT's integer kernels (QLinearConv ...): the arithmetic a user of ORT
    gets; "disable" runs DequantizeLinear -> float op -> QuantizeLinear literally.
    """

    name = "onnxruntime"

    def __init__(self, optimization: str = "all", batch_size: int = 32) -> None:
        if optimization not in OPTIMIZATION_LEVELS:
            raise ValueError(f"optimization must be one of {OPTIMIZATION_LEVELS}, not {optimization!r}")
        self.optimization = optimization
        self.batch_size = max(1, int(batch_size))
        self._ort: Any = None
        self._why_not = ""
        try:
            import onnxruntime

            self._ort = onnxruntime
        except ImportError as e:
            self._why_not = f"onnxruntime is not importable: {e}"
        self._info: dict[str, Any] | None = None

    def available(self) -> tuple[bool, str]:
        if self._ort is None:
            return False, self._why_not
        if "CPUExecutionProvider" not in self._ort.get_available_providers():
            return False, "this onnxruntime build has no CPUExecutionProvider"
        return True, ""

    def info(self) -> dict[str, Any]:
        if self._info is None:
            if self._ort is None:
                return {"error": self._why_not}
            import onnx

            self._info = {
                "adapter": self.name,
                "onnxruntime": self._ort.__version__,
                "onnx": onnx.__version__,
                "providers": ["CPUExecutionProvider"],
                "available_providers": self._ort.get_available_providers(),
                "optimization": self.optimization,
            }
        return self._info

    def capabilities(self) -> dict[str, Any]:
        return {"ops": supported()}

    def run(self, case: Case) -> Outcome:
        if self._ort is None:
            return Outcome(ERROR, message=self._why_not, details={"stage": "load"})
        lowered = lower_or_skip(case)
        if isinstance(lowered, Outcome):
            return lowered
        return finish(lowered, self._session(lowered))

    def _session(self, lowered: Lowered) -> Outcome:
        return Outcome(**run_session(self._ort, lowered, lambda: session_options(self._ort, self.optimization),
                                     providers=["CPUExecutionProvider"]))  # fmt: skip

    def run_many(self, cases: Sequence[Case]) -> list[Outcome]:
        """Up to ``batch_size`` cases per session (``run_merged``); a refused session is probed, then split."""
        if self._ort is None:
            return [self.run(c) for c in cases]
        return run_batched(cases, self.run, lambda group: run_merged(group, self._session), self.batch_size,
                           probe=True, bisect=True)

    def close(self) -> None:
        pass


def make(options: dict[str, Any] | None = None) -> OrtCpuAdapter:
    """Keys: ``optimization``, ``batch_size``. ``library``/``precision`` (the QNN options the conformance fixture always
    passes) mean nothing to the CPU EP and are ignored; other unknown keys are an error."""
    opts = dict(options or {})
    opts.pop("library", None)
    opts.pop("precision", None)
    kwargs: dict[str, Any] = {}
    if "optimization" in opts:
        kwargs["optimization"] = str(opts.pop("optimization"))
    if "batch_size" in opts:
        kwargs["batch_size"] = int(opts.pop("batch_size"))
    if opts:
        raise ValueError(f"unknown onnxruntime adapter options: {sorted(opts)}")
    return OrtCpuAdapter(**kwargs)
