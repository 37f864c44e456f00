"""One Case -> one single-node QNN graph, run once; generic over ops (the Case says everything).

Why this order: ``backendValidateOpConfig`` is the only call that checks an op configuration
(graphAddNode and graphFinalize accept a wrong output shape and execute then "succeeds"), so a case
is validated before any context exists, and a refusal there is the verdict REJECTED. Anything that
fails after validation is the backend contradicting itself: status "error" with the stage's name.

One context per case, freed afterwards: graphs cannot be freed one by one, and a context per case
keeps the worker's memory flat (measured: ~6 ms a cycle). Every buffer handed to C is allocated here
from the declared shape and the dtype's numpy storage, because execute trusts the dimensions and
over-reads/over-writes whatever buffer it is given.
"""

from __future__ import annotations

import ctypes
import logging
import math
import time
from collections.abc import Callable
from ctypes import byref, c_uint32, c_void_p
from dataclasses import dataclass
from typing import Any

import numpy as np

from adapters.base import ERROR, OK, REJECTED, SKIP, Outcome, output_digest
from cases.case import Case, Encoding
from cases.case import Param as CaseParam
from cases.case import Tensor as CaseTensor
from opdefs import dtypes

from . import bindings as b
from . import encodings

log = logging.getLogger(__name__)

# The three questions a conformance record answers about a case that reached the backend: did
# backendValidateOpConfig accept it, could the graph be built (context, tensors, addNode, finalize),
# did execute run. ``details["stage"]`` names the phase a case stopped in ("ok" when it ran through);
# ``details["call"]`` the QNN function that failed. "Accepted at validate, failed at finalize/execute"
# is the backend contradicting itself, which the reports count apart from wrong numbers.
VALIDATE, FINALIZE, EXECUTE, STAGE_OK = "validate", "finalize", "execute", "ok"
PHASE_OF_CALL = {
    "backendValidateOpConfig": VALIDATE,
    "contextCreate": FINALIZE,
    "graphCreate": FINALIZE,
    "tensorCreateGraphTensor": FINALIZE,
    "graphAddNode": FINALIZE,
    "graphFinalize": FINALIZE,
    "graphExecute": EXECUTE,
}
# Called with the phase name before each phase runs. The worker sets it to a write on its private
# log, so a native crash that takes the process with it still leaves its stage behind; in-process
# callers (tests) leave it None and nothing is written anywhere.
on_stage: Callable[[str], None] | None = None




def _mark(stage: str) -> None:
    if on_stage is not None:
        on_stage(stage)


PACKAGE = b"qti.aisw"
GUARD = 4  # zeroed structs after every params, inputs and outputs array handed to the backend (``_Node``)


def _package(op_name: str) -> bytes:
    """The op's package as its spec names it (an op package's ops are not qti.aisw's)."""
    try:
        import opdefs

        return str(opdefs.load(op_name).package or "qti.aisw").encode()
    except (KeyError, ValueError):  # no spec (hand-made or debug cases): the built-in package
        return PACKAGE
PRECISIONS = ("auto", "float32", "float16", "none")

# Which member of the scalar value union carries each QNN datatype.
_SCALAR_FIELD = {
    "BOOL_8": "b8",
    "INT_8": "i8",
    "INT_16": "i16",
    "INT_32": "i32",
    "INT_64": "i64",
    "UINT_8": "u8",
    "UINT_16": "u16",
    "UINT_32": "u32",
    "UINT_64": "u64",
    "FLOAT_32": "f32",
    "FLOAT_64": "f64",
    "STRING": "string",
}
# Scalar parameters of a datatype the scalar value union has no member for, and the form they are sent in. A scalar
# typed "backend specific" follows its data (Pad's pad_constant_value, OneHot's on/off values, ConstantOfShape's
# value): on a FLOAT_16 tensor it is FLOAT_16, which a QNN scalar cannot hold. Converters send it as a FLOAT_32
# scalar (QNN's ONNX converter and ONNX Runtime's QNN EP both build float scalars as FLOAT_32), and the HTP runs
# fp16 Pad so; the outcome says so in ``details.params_sent_as``.
SCALAR_SENT_AS = {"FLOAT_16": "FLOAT_32", "BFLOAT_16": "FLOAT_32"}


@dataclass
class GraphOptions:
    """How the graph is built.

    ``precision`` is the HTP graph precision option (HTP custom graph config 2):
      - "auto" (default): float16 when any input or output tensor of the case is FLOAT_16,
        otherwise float32: each case asks for the precision its own tensors declare, which is what
        a conformance check against the spec should request.
      - "float32" / "float16": always send that value; "none": do not send the option.
    Measured on the QNN 2.51 simulator: the option changes no result. What decides is the SoC: on
    the default one (SM8350, no FP16 support) FLOAT_32 runs in float32 and FLOAT_16 in half
    precision; with ``soc=43`` (SM8550) FLOAT_32 graphs run relaxed whatever is sent. The option
    is kept explicit so that a backend that honours it is asked the same question.
    ``soc``/``arch`` select the simulated HTP (device custom configs); None leaves the default.
    ``dlc_path``: for the IR backend (libQnnIr.so) only, where graphFinalize writes the graph as a DLC; the graph
    config then carries that option instead of the HTP's precision, which the IR backend would read as its own.
    """

    precision: str = "auto"
    soc: int | None = None
    arch: int | None = None
    dlc_path: str | None = None

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {self.precision!r}")

    def precision_for(self, case: Case) -> str | None:
        if self.precision == "none":
            return None
        if self.precision != "auto":
            return self.precision
        tensors = [t for t in case.inputs if t is not None] + list(case.outputs)
        return "float16" if any(t.dtype == "FLOAT_16" for t in tensors) else "float32"


class Unexpressible(Exception):
    """The case cannot be written as a QNN op config (status skip)."""


def _storage(dtype_name: str) -> dtypes.QnnDtype:
    try:
        d = dtypes.get(dtype_name)
    except KeyError as e:
        raise Unexpressible(str(e)) from None
    if d.storage is None:
        raise Unexpressible(f"no numpy storage for {dtype_name} here")
    return d


class _Builder:
    """Owns every ctypes object and numpy buffer the C side points into until the case is done."""

    def __init__(self) -> None:
        self.keep: list[Any] = []

    def _pin(self, obj: Any) -> Any:
        self.keep.append(obj)
        return obj

    def quantize(self, q: b.QuantizeParams, d: dtypes.QnnDtype, enc: Encoding | None, what: str) -> None:
        if not d.quantized or enc is None:
            q.encodingDefinition = b.UNDEFINED
            q.quantizationEncoding = b.UNDEFINED
            return
        q.encodingDefinition = b.ENCODING_DEF_DEFINED
        if enc.bitwidth is not None:  # values narrower than the datatype: QNN's bit-width encodings
            if enc.per_axis and len(enc.scales) != len(enc.offsets):
                raise Unexpressible(f"{what}: {len(enc.scales)} scales but {len(enc.offsets)} offsets")
            encodings.write_bitwidth(q, enc, self._pin)
        elif enc.per_axis:
            if len(enc.scales) != len(enc.offsets):
                raise Unexpressible(f"{what}: {len(enc.scales)} scales but {len(enc.offsets)} offsets")
            arr = self._pin((b.ScaleOffset * len(enc.scales))(*zip(enc.scales, enc.offsets, strict=True)))
            q.quantizationEncoding = b.QUANT_AXIS_SCALE_OFFSET
            q.u.axisScaleOffset = b.AxisScaleOffset(int(enc.axis), len(enc.scales), arr)
        else:
            if len(enc.scales) != 1 or len(enc.offsets) != 1:
                raise Unexpressible(f"{what}: per-tensor encoding needs one scale and one offset")
            q.quantizationEncoding = b.QUANT_SCALE_OFFSET
            q.u.scaleOffset = b.ScaleOffset(float(enc.scales[0]), int(enc.offsets[0]))

    def tensor(self, name: str, dtype_name: str, shape: tuple[int, ...], ttype: int,
               encoding: Encoding | None = None, data: np.ndarray | None = None) -> b.Tensor:
        d = _storage(dtype_name)
        if any(int(s) < 0 for s in shape):
            raise Unexpressible(f"{name}: negative dimension in {shape}")
        t = b.Tensor()
        t.version = b.TENSOR_VERSION_1
        v = t.u.v1
        v.name = self._pin(name.encode())
        v.type = ttype
        v.dataFormat = b.DATA_FORMAT_DENSE
        v.dataType = d.code
        self.quantize(v.quantizeParams, d, encoding, name)
        v.rank = len(shape)
        # the API wants NULL dimensions for a rank-0 tensor; a pointer there fails validation (3110)
        v.dimensions = self._pin((c_uint32 * len(shape))(*shape)) if shape else None
        v.memType = b.MEM_TYPE_RAW
        if data is not None:
            self.attach(t, self.buffer(name, dtype_name, shape, data))
        return t

    def buffer(self, name: str, dtype_name: str, shape: tuple[int, ...], data: np.ndarray | None = None) -> np.ndarray:
        """A C-contiguous buffer of exactly prod(shape) elements of the dtype's storage. An output buffer starts as
        zeros, not as whatever memory numpy hands back: an element the backend leaves unwritten (a DetectionOutput
        row past its count, a kernel that skips part of its output) is then the same in every run and every
        replay, so a difference between two runs of a case is the backend's own."""
        d = _storage(dtype_name)
        if data is None:
            arr = np.zeros(shape, d.storage)
        else:
            data = np.asarray(data)
            if tuple(data.shape) != tuple(shape):
                raise Unexpressible(f"{name}: data shape {data.shape} != declared {tuple(shape)}")
            if data.dtype != d.storage:
                if d.kind == "bool" or data.dtype.kind in "biu" and d.kind in ("int", "uint", "ufixed", "sfixed"):
                    data = data.astype(d.storage)
                else:
                    raise Unexpressible(f"{name}: data is {data.dtype}, {dtype_name} is stored as {d.storage}")
            arr = np.ascontiguousarray(data)
        expected = math.prod(shape) * d.storage.itemsize
        if arr.nbytes != expected:  # never let C read or write past a buffer
            raise Unexpressible(f"{name}: buffer has {arr.nbytes} bytes, shape {shape} needs {expected}")
        if expected >= 1 << 32:
            raise Unexpressible(f"{name}: {expected} bytes do not fit the API's 32-bit dataSize")
        return self._pin(arr)

    @staticmethod
    def attach(t: b.Tensor, arr: np.ndarray) -> None:
        t.u.v1.mem.clientBuf.data = arr.ctypes.data if arr.nbytes else None
        t.u.v1.mem.clientBuf.dataSize = arr.nbytes

    def param(self, p: CaseParam, prefix: str = "") -> tuple[b.Param, bool]:
        """Returns the Param struct and whether it is a tensor param (to be registered STATIC)."""
        out = b.Param()
        out.name = self._pin(p.name.encode())
        if p.is_tensor:
            value = np.asarray(p.value)
            out.paramType = b.PARAM_TENSOR
            out.u.tensor = self.tensor(f"{prefix}param_{p.name}", p.dtype, tuple(value.shape), b.TENSOR_STATIC,
                                       None, value)
            return out, True
        sent = SCALAR_SENT_AS.get(p.dtype, p.dtype)
        field = _SCALAR_FIELD.get(sent)
        if field is None:
            raise Unexpressible(f"param {p.name}: no scalar form for {p.dtype}")
        out.paramType = b.PARAM_SCALAR
        out.u.scalar.dataType = dtypes.get(sent).code
        value = p.value.item() if isinstance(p.value, np.generic) else p.value
        if field == "string":
            value = self._pin(str(value).encode())
        elif field == "b8":
            value = int(bool(value))
        elif field.startswith("f"):
            value = float(value)
        else:
            value = int(value)
        setattr(out.u.scalar.value, field, value)
        return out, False

    def graph_config(self, precision: str | None, dlc_path: str | None = None) -> Any:
        if dlc_path is not None:
            custom = self._pin(b.IrGraphCustomConfig(option=b.IR_GRAPH_OPTION_SERIALIZATION,
                                                     serialization=b.IR_SERIALIZATION_FLATBUFFER,
                                                     path=self._pin(dlc_path.encode())))  # fmt: skip
        elif precision is None:
            return None
        else:
            custom = self._pin(b.HtpGraphCustomConfig())
            custom.option = b.HTP_GRAPH_OPTION_PRECISION
            custom.value[0] = b.HTP_PRECISION[precision]
        entry = self._pin(b.ConfigEntry(b.CONFIG_OPTION_CUSTOM, ctypes.addressof(custom)))
        return self._pin((c_void_p * 2)(ctypes.addressof(entry), None))


def params_in_spec_order(case: Case) -> list[CaseParam]:
    """The case's parameters in the order the op's spec declares them (others after, by name), whatever order the
    case holds them in. Why: the HTP reads ElementWiseNeuron's params by their order, not their names alone (a
    HARD_SIGMOID case with beta before operation came back as beta everywhere, alpha read as 0; with operation
    first, as the spec says), and a saved case lists its params by name, so a replay sent another order than the run
    it came from and gave other outputs (bench replay: case 5a20ed662e034882). One order for the run and its replay;
    the spec's is the order converters emit."""
    import opdefs

    try:
        order = {name: k for k, name in enumerate(opdefs.load(case.op).params)}
    except (KeyError, opdefs.SpecError):  # an op with no spec here (an op package's): names in order
        order = {}
    return sorted(case.params.values(), key=lambda p: (order.get(p.name, len(order)), p.name))


def sent_as(case: Case) -> dict[str, str]:
    """The scalar parameters of ``case`` sent in another datatype than the case gives them (``SCALAR_SENT_AS``):
    name -> "FLOAT_32 scalar (FLOAT_16 in the case)"."""
    return {k: f"{SCALAR_SENT_AS[p.dtype]} scalar ({p.dtype} in the case)" for k, p in case.params.items()
            if not p.is_tensor and p.dtype in SCALAR_SENT_AS}  # fmt: skip


def present_inputs(case: Case) -> list[CaseTensor]:
    """Inputs as QNN sees them: trailing absent optionals dropped; a gap cannot be expressed."""
    inputs = list(case.inputs)
    while inputs and inputs[-1] is None:
        inputs.pop()
    gaps = [i for i, t in enumerate(inputs) if t is None]
    if gaps:
        raise Unexpressible(
            f"input {gaps[0]} is absent but a later input is present: QNN op configs address inputs by position"
        )
    return inputs  # type: ignore[return-value]


def run_case(lib: b.QnnLibrary, case: Case, options: GraphOptions | None = None) -> Outcome:
    """Validate, build, finalize and execute ``case`` on ``lib``'s backend; never raises for QNN errors."""
    options = options or GraphOptions()
    started = time.perf_counter()
    timing: dict[str, float] = {}
    try:
        node = _Node(_Builder(), case, "")
        outcome = node.validate(lib, timing)
        if outcome is None:
            outcome = _build_and_execute(lib, [node], options.precision_for(case), options, timing)[0]
        if node.sent_as:  # whatever the stage: a finalize error is the backend's answer to the form sent too
            outcome.details.setdefault("params_sent_as", node.sent_as)
    except Unexpressible as e:
        outcome = Outcome(SKIP, message=str(e))
    outcome.seconds = time.perf_counter() - started
    if timing:
        outcome.details.setdefault("timing_ms", {k: round(v * 1e3, 3) for k, v in timing.items()})
    return outcome


def run_batch(lib: b.QnnLibrary, cases: list[Case], options: GraphOptions | None = None,
              log_position: Callable[[], int] | None = None) -> list[Outcome | None]:  # fmt: skip
    """Many independent cases as the nodes of one graph: one context, one finalize, one execute.

    Why: the context/finalize/execute cycle costs ~6 ms whatever the graph holds, which is most of
    a small case's backend time. Each case is still validated alone (backendValidateOpConfig per
    node, the same call as ``run_case``), so a refusal is its own. A case the batch cannot speak for
    gets None: the whole graph failed to build or execute, and which node caused it is unknown, so
    the caller re-runs those cases one graph each. Cases asking for different graph precisions go
    into separate graphs. With ``log_position`` (how many backend log records the caller holds), a
    refused case's outcome carries ``details["log_span"]``: the records its own validation wrote, so
    that its log is not its neighbours'.
    """
    options = options or GraphOptions()
    outcomes: list[Outcome | None] = [None] * len(cases)
    groups: dict[str | None, list[tuple[int, _Node]]] = {}
    started = time.perf_counter()
    bld = _Builder()
    for k, case in enumerate(cases):
        t0 = time.perf_counter()
        timing: dict[str, float] = {}
        if case.steps:  # several executions of one graph: a case of its own (None: it runs alone)
            continue
        first = log_position() if log_position else 0
        try:
            node = _Node(bld, case, f"c{k}_")
            refused = node.validate(lib, timing, f"{VALIDATE} {k}")  # a crash here is case k's alone
        except Unexpressible as e:
            refused = Outcome(SKIP, message=str(e))
        if refused is not None:
            refused.seconds = time.perf_counter() - t0
            if log_position:
                refused.details["log_span"] = (first, log_position())
            outcomes[k] = refused
        else:
            groups.setdefault(options.precision_for(case), []).append((k, node))
    for precision, members in groups.items():
        timing = {}
        t0 = time.perf_counter()
        results = _build_and_execute(lib, [n for _, n in members], precision, options, timing)
        share = (time.perf_counter() - t0) / len(members)
        for (k, _), out in zip(members, results, strict=True):
            if out.status != OK:  # the graph as a whole failed: not this node's verdict to give
                continue
            out.seconds = share
            out.details["timing_ms"] = {key: round(v * 1e3 / len(members), 3) for key, v in timing.items()}
            out.details["batch"] = {"size": len(members), "index": k}
            outcomes[k] = out
    log.debug("batch of %d cases in %.1f ms", len(cases), (time.perf_counter() - started) * 1e3)
    return outcomes


def _timed(timing: dict[str, float], stage: str, fn, *args) -> None:
    t0 = time.perf_counter()
    try:
        fn(*args)
    finally:
        timing[stage] = timing.get(stage, 0.0) + time.perf_counter() - t0


class _Node:
    """One case as a QNN op config: its tensors, params and execute buffers, all pinned in ``bld``.
    ``prefix`` keeps tensor and node names unique when several cases share a graph."""

    def __init__(self, bld: _Builder, case: Case, prefix: str) -> None:
        self.case, self.bld = case, bld
        self.inputs = inputs = present_inputs(case)
        for i, t in enumerate(inputs):
            if t.data is None:
                raise Unexpressible(f"input {i} ({t.name}) has no data")
        if not case.outputs:
            raise Unexpressible("case declares no outputs")
        params: list[b.Param] = []
        self.tensor_params: list[int] = []
        self.sent_as = sent_as(case)
        for p in params_in_spec_order(case):
            struct, is_tensor = bld.param(p, prefix)
            if is_tensor:
                self.tensor_params.append(len(params))
            params.append(struct)
        in_structs = [
            bld.tensor(f"{prefix}in{i}", t.dtype, t.shape, b.TENSOR_STATIC if t.static else b.TENSOR_APP_WRITE,
                       t.encoding, t.data if t.static else None)
            for i, t in enumerate(inputs)
        ]
        out_structs = [bld.tensor(f"{prefix}out{i}", t.dtype, t.shape, b.TENSOR_APP_READ, t.encoding)
                       for i, t in enumerate(case.outputs)]  # fmt: skip
        # Size every execute buffer now, before any native call, so a bad case fails here.
        self.in_bufs = [None if t.static else bld.buffer(f"in{i}", t.dtype, t.shape, t.data)
                        for i, t in enumerate(inputs)]  # fmt: skip
        self.out_bufs = [bld.buffer(f"out{i}", t.dtype, t.shape) for i, t in enumerate(case.outputs)]
        # each array with GUARD zeroed structs after it: a validator that reads past the count it was given
        # (BoxWithNmsLimit reads an Input[3] of three inputs) sees the same bytes in every process, where it saw
        # whatever the worker's earlier cases had left, so that its verdict depended on them
        self.param_arr = bld._pin((b.Param * (len(params) + GUARD))(*params))
        self.in_arr = bld._pin((b.Tensor * (len(in_structs) + GUARD))(*in_structs))
        self.out_arr = bld._pin((b.Tensor * (len(out_structs) + GUARD))(*out_structs))
        self.n_in, self.n_out = len(in_structs), len(out_structs)
        op = self.op = b.OpConfig()
        op.version = b.OPCONFIG_VERSION_1
        op.v1.name = bld._pin(f"{prefix}node0".encode())
        op.v1.packageName = bld._pin(_package(case.op))
        op.v1.typeName = bld._pin(case.op.encode())
        op.v1.numOfParams = len(params)
        op.v1.params = self.param_arr if params else None
        op.v1.numOfInputs = len(in_structs)
        op.v1.inputTensors = self.in_arr if in_structs else None
        op.v1.numOfOutputs = len(out_structs)
        op.v1.outputTensors = self.out_arr

    def validate(self, lib: b.QnnLibrary, timing: dict[str, float], mark: str = VALIDATE) -> Outcome | None:
        """REJECTED when the backend refuses the op config; None when it accepts. ``mark`` is the stage
        announced first: in a batch it names the node, so a crash in validation belongs to one case."""
        _mark(mark)
        t0 = time.perf_counter()
        code = lib.raw("backendValidateOpConfig", lib.backend, self.op)
        timing["validate"] = timing.get("validate", 0.0) + time.perf_counter() - t0
        if not code:
            return None
        text = lib.error_text(code)
        details = {"stage": VALIDATE, "call": "backendValidateOpConfig", "code": code, "error": text}
        if self.sent_as:
            details["params_sent_as"] = self.sent_as
        return Outcome(REJECTED, message=f"backendValidateOpConfig: error {code}" + (f" ({text})" if text else ""),
                       details=details)

    def register(self, lib: b.QnnLibrary, graph: Any, timing: dict[str, float]) -> None:
        for i in self.tensor_params:
            _timed(timing, "tensors", lib.call, "tensorCreateGraphTensor", graph, byref(self.param_arr[i].u.tensor))
        for i in range(self.n_in):
            _timed(timing, "tensors", lib.call, "tensorCreateGraphTensor", graph, byref(self.in_arr[i]))
        for i in range(self.n_out):
            _timed(timing, "tensors", lib.call, "tensorCreateGraphTensor", graph, byref(self.out_arr[i]))

    def execute_tensors(self) -> tuple[list[b.Tensor], list[b.Tensor]]:
        """Copies of the registered structs (ids filled in by registration) pointing at our buffers."""
        ins = []
        for i, t in enumerate(self.inputs):
            if not t.static:
                copy = b.Tensor.from_buffer_copy(self.in_arr[i])
                self.bld.attach(copy, self.in_bufs[i])
                ins.append(copy)
        outs = []
        for i in range(self.n_out):
            copy = b.Tensor.from_buffer_copy(self.out_arr[i])
            self.bld.attach(copy, self.out_bufs[i])
            outs.append(copy)
        return ins, outs

    def result(self, precision: str | None, sizes: list[int], outputs: list[np.ndarray]) -> Outcome:
        """``outputs``: every execution's outputs, one after another (``adapters.base.Outcome``)."""
        details: dict[str, Any] = {"stage": STAGE_OK, "precision": precision or "backend default"}
        if sizes != [buf.nbytes for buf in self.out_bufs]:
            details["output_data_size"] = sizes  # the backend says it wrote a different amount
        if self.case.steps:
            details["executions"] = self.case.executions
        details["output_digest"] = output_digest(outputs)
        if self.sent_as:
            details["params_sent_as"] = self.sent_as
        return Outcome(OK, outputs=outputs, details=details)


def _build_and_execute(lib: b.QnnLibrary, nodes: list[_Node], precision: str | None, options: GraphOptions,
                       timing: dict[str, float]) -> list[Outcome]:  # fmt: skip
    """One context and graph holding ``nodes`` (validated already), finalized and executed once; one
    outcome per node: its outputs, or the same error for all when the graph could not be built or run."""
    bld = nodes[0].bld
    device = lib.device(options.soc, options.arch)
    context = b.Handle()
    _mark(FINALIZE)
    try:
        _timed(timing, "context", lib.call, "contextCreate", lib.backend, device, None, byref(context))
    except b.QnnError as e:
        return [_error("contextCreate", e) for _ in nodes]
    try:
        graph = b.Handle()
        stage = "graphCreate"
        _timed(timing, "graph", lib.call, "graphCreate", context, b"g", bld.graph_config(precision, options.dlc_path),
               byref(graph))
        for node in nodes:
            stage = "tensorCreateGraphTensor"
            node.register(lib, graph, timing)
            stage = "graphAddNode"
            _timed(timing, "add_node", lib.call, "graphAddNode", graph, node.op)
        stage = "graphFinalize"
        _timed(timing, "finalize", lib.call, "graphFinalize", graph, None, None)
        exec_in: list[b.Tensor] = []
        exec_out: list[b.Tensor] = []
        for node in nodes:
            ins, outs = node.execute_tensors()
            exec_in += ins
            exec_out += outs
        ein = bld._pin((b.Tensor * max(1, len(exec_in)))(*exec_in))
        eout = bld._pin((b.Tensor * len(exec_out))(*exec_out))
        stage = "graphExecute"
        _mark(EXECUTE)
        _timed(timing, "execute", lib.call, "graphExecute", graph, ein, len(exec_in), eout, len(exec_out), None, None)
        outputs, at = [], 0
        for node in nodes:
            outputs.append(_collect(node.case, eout, node.out_bufs, at))
            at += node.n_out
        if len(nodes) == 1 and nodes[0].case.steps:  # a stateful op: the same graph runs again on each step's data
            node = nodes[0]
            outputs[0] += _execute_steps(node.case, node.in_bufs, lambda: _timed(
                timing, "execute", lib.call, "graphExecute", graph, ein, len(exec_in), eout, len(exec_out), None, None),
                lambda: _collect(node.case, eout, node.out_bufs, 0))  # fmt: skip
    except b.QnnError as e:
        return [_error(stage, e) for _ in nodes]
    finally:
        code = lib.raw("contextFree", context, None)
        if code:
            log.warning("contextFree failed: error %d", code)
    _mark(STAGE_OK)
    results, at = [], 0
    for node, outs in zip(nodes, outputs, strict=True):
        sizes = [int(eout[at + i].u.v1.mem.clientBuf.dataSize) for i in range(node.n_out)]
        at += node.n_out
        results.append(node.result(precision, sizes, outs))
    return results


def _execute_steps(case: Case, in_bufs: list[np.ndarray | None], execute: Callable[[], None],
                   collect: Callable[[], list[np.ndarray]]) -> list[np.ndarray]:  # fmt: skip
    """Executions 2.. of a case with ``steps``: each step's data is copied into the input buffers already
    attached to the execute tensors (same addresses, same sizes), then the graph runs and its outputs are
    collected. Static inputs keep their data; the graph keeps whatever state the op carries."""
    outputs: list[np.ndarray] = []
    for k in range(1, case.executions):
        for buf, t in zip(in_bufs, case.step_inputs(k), strict=False):  # in_bufs: the present inputs, in order
            if buf is not None:
                np.copyto(buf, np.asarray(t.data).reshape(buf.shape), casting="unsafe")
        execute()
        outputs += collect()
    return outputs


def _collect(case: Case, eout: Any, out_bufs: list[np.ndarray], at: int) -> list[np.ndarray]:
    """Copies of the output buffers (the case's execute tensors start at ``eout[at]``). An output whose
    spec lets the backend report its current size (``valid_rows: {count: current}``) is cut to the
    dimensions the backend wrote back, where they fit."""
    outputs = [buf.copy() for buf in out_bufs]
    current = _current_rows(case)
    for i in current:
        v = eout[at + i].u.v1
        dims = tuple(int(v.dimensions[j]) for j in range(v.rank)) if v.rank and v.dimensions else ()
        if len(dims) == outputs[i].ndim and dims != outputs[i].shape and all(
                0 <= d <= m for d, m in zip(dims, outputs[i].shape, strict=True)):  # fmt: skip
            outputs[i] = outputs[i][tuple(slice(0, d) for d in dims)].copy()
    return outputs


def _current_rows(case: Case) -> list[int]:
    import opdefs

    try:
        rows = opdefs.load(case.op).valid_rows(len(case.outputs))
    except (KeyError, opdefs.SpecError):
        return []
    return [i for i, r in rows.items() if r.get("count") == "current"]


def _error(call: str, e: b.QnnError) -> Outcome:
    return Outcome(ERROR, message=f"{call}: error {e.code}" + (f" ({e.text})" if e.text else ""),
                   details={"stage": PHASE_OF_CALL.get(call, call), "call": call, "code": e.code, "error": e.text})
