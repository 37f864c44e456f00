"""The graph builder every ONNX lowering writes through: one Case -> one small ONNX model.

Values inside the model are real: a fixed-point input enters through DequantizeLinear (zero_point =
-offset, scale from its Encoding, ``axis`` for per-axis encodings) and a fixed-point output leaves
through QuantizeLinear. That is the QDQ form ONNX Runtime's QNN execution provider consumes. Layout
moves on a quantized value (the NHWC <-> NCHW Transposes around Conv/Pool/Resize) are wrapped as
DQ -> Transpose -> Q with the value's own encoding, so every float node the QNN EP sees sits in a QDQ
unit and ORT's transpose optimizer can cancel the Transposes against its own NHWC layout.

Parameters reach a lowering resolved by the spec (``opdefs.OpDef.resolved_params``: the case's value,
else the per-operation, concrete or symbolic default), and enum parameters by their member names, so
no lowering repeats a default or a numbering the YAML holds.

Anything a lowering cannot express raises ``Unlowerable`` (the adapter's SKIP), never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import opdefs
from cases import quant
from cases.case import Case, Encoding
from opdefs import dtypes

OPSET = 21  # what the QNN EP build here and ORT's CPU kernels both cover (Gelu needs 20, Pad 21 ok)
IR_VERSION = 10

T = TensorProto
# QNN datatype -> ONNX element type of the tensor Q/DQ and the ops see. Absent: no ONNX tensor holds it
# here (BFLOAT_16: no numpy I/O through ORT's Python API; UFIXED_POINT_32: DequantizeLinear has no
# uint32; STRING). 4-bit types are INT4/UINT4 inside the model, but graph inputs and outputs carry them
# one code per byte (IO_TYPE), as cases store them: a Cast at the boundary packs and unpacks them.
ONNX_TYPE: dict[str, int] = {
    "FLOAT_16": T.FLOAT16, "FLOAT_32": T.FLOAT, "FLOAT_64": T.DOUBLE,
    "INT_8": T.INT8, "INT_16": T.INT16, "INT_32": T.INT32, "INT_64": T.INT64,
    "UINT_8": T.UINT8, "UINT_16": T.UINT16, "UINT_32": T.UINT32, "UINT_64": T.UINT64,
    "BOOL_8": T.BOOL,
    "UFIXED_POINT_8": T.UINT8, "UFIXED_POINT_16": T.UINT16,
    "SFIXED_POINT_8": T.INT8, "SFIXED_POINT_16": T.INT16, "SFIXED_POINT_32": T.INT32,
    "SFIXED_POINT_4": T.INT4, "UFIXED_POINT_4": T.UINT4,
}  # fmt: skip
IO_TYPE = {**ONNX_TYPE, "SFIXED_POINT_4": T.INT8, "UFIXED_POINT_4": T.UINT8}
# QuantizeLinear (opset 21) cannot produce int32: SFIXED_POINT_32 is an input-only type here (biases).
QUANTIZE_TARGETS = {"UFIXED_POINT_4", "UFIXED_POINT_8", "UFIXED_POINT_16", "SFIXED_POINT_4", "SFIXED_POINT_8",
                    "SFIXED_POINT_16"}  # fmt: skip
FLOAT_TYPES = {T.FLOAT16, T.FLOAT, T.DOUBLE}
INT_TYPES = {T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32, T.UINT64}
NP_OF = {t: np.dtype(helper.tensor_dtype_to_np_dtype(t)) for t in set(ONNX_TYPE.values()) - {T.INT4, T.UINT4}}


class Unlowerable(Exception):
    """This case has no ONNX form here (the adapter reports SKIP with this message)."""


@dataclass
class OutputSpec:
    name: str  # the ONNX graph output
    dtype: str  # declared QNN datatype
    shape: tuple[int, ...]  # declared shape


@dataclass
class Lowered:
    """What a session needs: the serialized model, its feeds, and how to read its outputs back."""

    model: bytes
    feeds: dict[str, np.ndarray]
    outputs: list[OutputSpec]
    node_types: list[str] = field(default_factory=list)


# ---- parameters -----------------------------------------------------------------------------------
class Params:
    """A case's params with every default its spec states underneath (concrete, per-operation and
    symbolic ones, resolved by ``OpDef.resolved_params`` on the case's input ranks)."""

    def __init__(self, case: Case) -> None:
        self._given = {k: p.value for k, p in case.params.items()}
        try:
            self._spec: opdefs.OpDef | None = opdefs.load(case.op)
        except Exception:  # noqa: BLE001 - an op without a spec (debug names) simply has no defaults
            self._spec = None
        ranks = [None if t is None else len(t.shape) for t in case.inputs]
        self._values = self._spec.resolved_params(self._given, ranks) if self._spec else dict(self._given)

    def get(self, name: str, default: Any = None) -> Any:
        v = self._values.get(name)
        return default if v is None or isinstance(v, (str, dict)) else v

    def member(self, name: str) -> str:
        """The member name of enum parameter ``name`` (the spec numbers members; lowerings name them)."""
        v = self.get(name)
        if v is None or self._spec is None:
            raise Unlowerable(f"parameter {name} is missing")
        try:
            return self._spec.enum_name(name, v)
        except (KeyError, ValueError) as e:
            raise Unlowerable(str(e)) from None

    def has(self, name: str) -> bool:
        return name in self._given

    def int(self, name: str, default: int | None = None) -> int:
        v = self.get(name, default)
        if v is None:
            raise Unlowerable(f"parameter {name} is missing")
        return int(np.asarray(v).reshape(-1)[0])

    def float(self, name: str, default: float | None = None) -> float:
        v = self.get(name, default)
        if v is None:
            raise Unlowerable(f"parameter {name} is missing")
        return float(np.asarray(v, dtype=np.float64).reshape(-1)[0])

    def bool(self, name: str, default: bool = False) -> bool:
        return bool(np.asarray(self.get(name, default)).reshape(-1)[0])

    def ints(self, name: str, default: Any = None) -> list[int]:
        v = self.get(name, default)
        if v is None:
            raise Unlowerable(f"parameter {name} is missing")
        return [int(x) for x in np.asarray(v).reshape(-1)]


# ---- the graph builder ----------------------------------------------------------------------------
class Builder:
    """Collects nodes for one case and tracks each value's element type.

    Operands go to ONNX in the types the case declares, and outputs are declared in the case's types:
    where those do not fit the ONNX op's type rules, ORT refuses the model (REJECTED), as a QNN backend
    refuses such an op config. Casts appear only where the QNN op itself converts (``converts``).

    ``_owed``: values produced by a layout move from a dequantized value; before a compute node
    consumes one, it is re-quantized with that encoding (Q -> DQ) so the node stays a QDQ unit.
    """

    def __init__(self, case: Case, graph_name: str | None = None) -> None:
        self.case = case
        self.graph_name = graph_name or case.op  # the op the model stands for (Relu6 built as ElementWiseNeuron)
        self.p = Params(case)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.graph_inputs: list[onnx.ValueInfoProto] = []
        self.feeds: dict[str, np.ndarray] = {}
        self.types: dict[str, int] = {}
        self._owed: dict[str, tuple[Encoding, str]] = {}
        self._settled: dict[str, str] = {}
        self.retype: set[str] = set()
        self.opset = OPSET  # a lowering whose node is newer (RMSNormalization: 23) raises it for its own model
        self._count = 0

    # -- naming / constants --------------------------------------------------------------------------
    def fresh(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def const(self, value: Any, elem: int) -> str:
        name = self.fresh("c")
        if elem in (T.INT4, T.UINT4):  # no numpy dtype here: the helper packs plain integers
            a = np.asarray(value, dtype=np.int64)
            self.inits.append(helper.make_tensor(name, elem, list(a.shape), a.reshape(-1).tolist()))
        else:
            self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=NP_OF[elem]), name))
        self.types[name] = elem
        return name

    def like(self, value: Any, ref: str) -> str:
        """A constant in the element type of ``ref`` (Clip bounds, Mul factors must match it)."""
        return self.const(value, self.types[ref])

    def i64(self, values: Sequence[int] | int) -> str:
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.asarray(values, dtype=np.int64), name))
        self.types[name] = T.INT64
        return name

    # -- nodes ---------------------------------------------------------------------------------------
    def node(self, op_type: str, inputs: Sequence[str], out_type: int | None = None, outputs: int = 1,
             settle: bool = True, **attrs: Any) -> Any:  # fmt: skip
        """Add a node; returns its output name (or names when ``outputs`` > 1)."""
        ins = [self._settle(i) if i and settle else i for i in inputs]
        outs = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, ins, outs, **attrs))
        elem = out_type if out_type is not None else self.types.get(ins[0], T.FLOAT) if ins else T.FLOAT
        for o in outs:
            self.types[o] = elem
        return outs[0] if outputs == 1 else outs

    def cast(self, value: str, elem: int) -> str:
        if self.types[value] == elem:
            return value
        return self.node("Cast", [value], out_type=elem, to=elem)

    def to_bool(self, value: str) -> str:
        """Logical operands: non-zero is true (the QNN logical ops' rule; ONNX And/Or/Not want bool)."""
        if self.types[value] == T.BOOL:
            return value
        return self.node("Not", [self.node("Equal", [value, self.like(0, value)], out_type=T.BOOL)], out_type=T.BOOL)

    def converts(self, value: str) -> str:
        """Mark a value whose op converts types by QNN's own definition (Cast, index outputs, comparison
        results as numbers): only such a value is cast to its output's declared type."""
        self.retype.add(value)
        return value

    # -- quantization ----------------------------------------------------------------------------------
    def _qparams(self, enc: Encoding, dtype: str) -> tuple[str, str, dict[str, int]]:
        d = dtypes.get(dtype)
        zps = quant.zero_points(enc)
        if any(z < d.qmin or z > d.qmax for z in zps):
            raise Unlowerable(f"{dtype} offset(s) {list(enc.offsets)} give zero points outside [{d.qmin}, {d.qmax}]")
        if len(enc.scales) != len(enc.offsets):
            raise Unlowerable(f"encoding has {len(enc.scales)} scales and {len(enc.offsets)} offsets")
        shape: Any = () if not enc.per_axis else (len(zps),)
        scale = self.const(np.asarray(enc.scales, np.float32).reshape(shape), T.FLOAT)
        zp = self.const(np.asarray(zps).reshape(shape), ONNX_TYPE[dtype])
        return scale, zp, ({"axis": int(enc.axis)} if enc.per_axis else {})

    def dequantize(self, stored: str, enc: Encoding, dtype: str) -> str:
        scale, zp, attrs = self._qparams(enc, dtype)
        return self.node("DequantizeLinear", [stored, scale, zp], out_type=T.FLOAT, **attrs)

    def quantize(self, value: str, enc: Encoding, dtype: str) -> str:
        if dtype not in QUANTIZE_TARGETS:
            raise Unlowerable(f"QuantizeLinear cannot produce {dtype}")
        scale, zp, attrs = self._qparams(enc, dtype)
        value = value if self.types[value] == T.FLOAT else self.node("Cast", [value], out_type=T.FLOAT, to=T.FLOAT)
        return self.node("QuantizeLinear", [value, scale, zp], out_type=ONNX_TYPE[dtype], settle=False, **attrs)

    def _settle(self, value: str) -> str:
        """Pay a re-quantization owed by a layout move before a compute node reads the value."""
        if value not in self._owed:
            return value
        if value not in self._settled:
            enc, dtype = self._owed[value]
            self._settled[value] = self.dequantize(self.quantize(value, enc, dtype), enc, dtype)
        return self._settled[value]

    def on_output_grid(self, value: str, j: int = 0) -> str:
        """Q -> DQ onto output j's encoding, so a layout move after a compute node stays in QDQ form."""
        t = self.case.outputs[j]
        if not dtypes.get(t.dtype).quantized or t.encoding is None:
            return value
        return self.dequantize(self.quantize(value, t.encoding, t.dtype), t.encoding, t.dtype)

    # -- inputs ----------------------------------------------------------------------------------------
    def has(self, i: int) -> bool:
        return i < len(self.case.inputs) and self.case.inputs[i] is not None

    def shape(self, i: int) -> tuple[int, ...]:
        t = self.case.inputs[i]
        if t is None:
            raise Unlowerable(f"input {i} is absent")
        return t.shape

    def rank(self, i: int) -> int:
        return len(self.shape(i))

    def input(self, i: int, perm: Sequence[int] | None = None) -> str:
        """The real value of input i, optionally transposed by ``perm`` (a static input is transposed
        in numpy, so weights stay a plain initializer -> DequantizeLinear, as the QNN EP wants)."""
        t = self.case.inputs[i] if i < len(self.case.inputs) else None
        if t is None:
            raise Unlowerable(f"input {i} is absent")
        if t.dtype not in ONNX_TYPE:
            raise Unlowerable(f"no ONNX tensor type for {t.dtype}")
        d = dtypes.get(t.dtype)
        if t.data is None:
            raise Unlowerable(f"input {i} ({t.name}) has no data")
        elem = IO_TYPE[t.dtype]
        enc = t.encoding
        name = f"in{i}"
        data = np.ascontiguousarray(t.data)
        if t.static:
            if perm is not None:
                data = np.ascontiguousarray(data.transpose(perm))
                enc = _permute_encoding(enc, perm)
                perm = None
            self.inits.append(numpy_helper.from_array(data, name))
        else:
            self.feeds[name] = data
            self.graph_inputs.append(helper.make_tensor_value_info(name, elem, list(data.shape)))
        self.types[name] = elem
        if d.quantized:
            if enc is None:
                raise Unlowerable(f"input {i} is {t.dtype} without an encoding")
            if d.bits == 32 and data.size:
                # ORT's DequantizeLinear subtracts the zero point in 32-bit integers: a code and a zero point far
                # apart wrap (one SFIXED_POINT_32 Dequantize case gave 2.93 where -3.94 belongs, 2^32 steps off)
                codes, zps = data.astype(np.int64), quant.zero_points(enc)
                if int(codes.min()) - max(zps) < -(2**31) or int(codes.max()) - min(zps) > 2**31 - 1:
                    raise Unlowerable(f"input {i}: {t.dtype} codes minus the zero point leave 32-bit integers, where "
                                      "ONNX Runtime's DequantizeLinear subtracts them")
            name = self.cast(name, ONNX_TYPE[t.dtype])  # packs 4-bit codes; a no-op otherwise
            value = self.dequantize(name, enc, t.dtype)
            if perm is not None:
                value = self.move("Transpose", value, perm=list(perm))
                self._owed[value] = (_permute_encoding(enc, perm), t.dtype)
            return value
        return self.node("Transpose", [name], perm=list(perm)) if perm is not None else name

    def move(self, op_type: str, value: str, *extra: str, **attrs: Any) -> str:
        """A pure data move (Transpose/Reshape): the result keeps the source's quantization debt."""
        out = self.node(op_type, [value, *extra], **attrs)
        if value in self._owed:
            enc, dtype = self._owed[value]
            if op_type == "Transpose" and enc.per_axis:
                enc = _permute_encoding(enc, attrs["perm"])
            elif op_type != "Transpose" and enc.per_axis:
                raise Unlowerable("a reshape of a per-axis quantized value")
            self._owed[out] = (enc, dtype)
        return out

    def transpose(self, value: str, perm: Sequence[int]) -> str:
        return self.move("Transpose", value, perm=[int(p) for p in perm])

    def to_declared(self, value: str, j: int = 0) -> str:
        """Reshape onto output j's declared shape where ONNX's rank rule differs from QNN's (a full
        reduction gives [] in ONNX, [1] in QNN; StridedSlice's shrunk axes)."""
        return self.move("Reshape", self.on_output_grid(value, j), self.i64(self.case.outputs[j].shape))

    # -- outputs ---------------------------------------------------------------------------------------
    def finish(self, values: Sequence[str]) -> Lowered:
        case = self.case
        if len(values) != len(case.outputs):
            raise Unlowerable(f"lowering gives {len(values)} outputs, the case declares {len(case.outputs)}")
        outs, specs = [], []
        renamed: dict[str, str] = {}
        fixed = {*self.feeds, *(i.name for i in self.inits)}
        for j, (value, t) in enumerate(zip(values, case.outputs, strict=True)):
            if t.dtype not in ONNX_TYPE:
                raise Unlowerable(f"no ONNX tensor type for output {t.dtype}")
            self._owed.pop(value, None)  # the output conversion below re-quantizes anyway
            if dtypes.get(t.dtype).quantized:
                if t.encoding is None:
                    raise Unlowerable(f"output {j} is {t.dtype} without an encoding")
                final = self.cast(self.quantize(value, t.encoding, t.dtype), IO_TYPE[t.dtype])
            elif value in self.retype:
                final = self.cast(value, ONNX_TYPE[t.dtype])
            else:
                final = value
            if final in renamed:
                final = renamed[final]
            if final in fixed or final in outs:
                final = self.node("Identity", [final])
            name = f"out{j}"
            for n in self.nodes:  # the producer writes the graph output directly: no extra node
                for k, o in enumerate(n.output):
                    if o == final:
                        n.output[k] = name
                for k, o in enumerate(n.input):
                    if o == final:
                        n.input[k] = name
            renamed[final] = name
            self.types[name] = self.types[final]
            outs.append(name)
            specs.append(OutputSpec(name, t.dtype, t.shape))
        graph = helper.make_graph(
            self.nodes, self.graph_name, self.graph_inputs,
            [helper.make_tensor_value_info(s.name, IO_TYPE[s.dtype], list(s.shape)) for s in specs],
            self.inits,
        )  # fmt: skip
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="qnn-conformance")  # fmt: skip
        model.ir_version = IR_VERSION
        return Lowered(model.SerializeToString(), dict(self.feeds), specs, [n.op_type for n in self.nodes])


def _permute_encoding(enc: Encoding | None, perm: Sequence[int]) -> Encoding | None:
    if enc is None or not enc.per_axis:
        return enc
    return Encoding(enc.scales, enc.offsets, list(perm).index(int(enc.axis)))


# ---- helpers the family modules share -------------------------------------------------------------
Lowering = Callable[[Builder], list[str]]


def indices(b: Builder, i: int) -> str:
    return b.cast(b.input(i), T.INT64)


def real_data(b: Builder, i: int) -> np.ndarray:
    """Input i's real values (codes dequantized), for lowerings whose node attributes depend on them."""
    t = b.case.inputs[i]
    if dtypes.get(t.dtype).quantized and t.encoding is not None:
        return quant.dequantize(t.data, t.encoding)
    return np.asarray(t.data, np.float64)


def batch_index(b: Builder, i: int, batches: int) -> str:
    """Input i as Gather indices into ``batches`` images. ONNX Gather reads a negative index from the
    end and fails at run time past the end, where the reference refuses both: such cases are not
    lowered (SKIP) rather than given Gather's reading."""
    idx = real_data(b, i).reshape(-1)
    if np.any(idx < 0) or np.any(idx > batches - 1):
        raise Unlowerable(f"in[{i}] = {idx.tolist()} holds batch indices outside [0, {batches - 1}]")
    return b.cast(b.input(i), T.INT64)  # Gather takes no unsigned indices; the values were checked above


def on_input_grid(b: Builder, i: int, value: str) -> str:
    """Q -> DQ onto input i's encoding after a pure move of its values (exact: the values, and a pad's
    0, are on that grid), so each move is a QDQ unit. Without it ORT 1.32's QDQ propagation builds an
    invalid QuantizeLinear (int8 output, uint8 zero point) for SFIXED_POINT_8 chains such as
    DQ -> Slice -> Unsqueeze -> Concat -> Q (refused at session creation)."""
    t = b.case.inputs[i]
    if not dtypes.get(t.dtype).quantized or t.encoding is None:
        return value
    return b.dequantize(b.quantize(value, t.encoding, t.dtype), t.encoding, t.dtype)


def zero_pad(b: Builder, i: int, value: str, pads: Sequence[int]) -> str:
    """Pad with real 0. On a quantized input the pad value is input i's zero point through
    DequantizeLinear, the QDQ form: ORT's QNN EP takes a float constant_value 0 inside a QDQ unit as
    the code 0 (real -scale * zero_point on the HTP, probed with Im2Col and Correlation1D)."""
    t = b.case.inputs[i]
    if dtypes.get(t.dtype).quantized and t.encoding is not None and not t.encoding.per_axis:
        fill = b.dequantize(b.const(-int(t.encoding.offsets[0]), ONNX_TYPE[t.dtype]), t.encoding, t.dtype)
    else:
        fill = b.like(0, value)
    return b.node("Pad", [value, b.i64(pads), fill])


def col(b: Builder, value: str, i: int) -> str:
    """Column i of the last axis, kept as a size-1 axis (so it broadcasts against its neighbours)."""
    return b.node("Slice", [value, b.i64([i]), b.i64([i + 1]), b.i64([-1])])


def arith(b: Builder, op: str, x: str, y: str | float) -> str:
    return b.node(op, [x, y if isinstance(y, str) else b.like(y, x)])


def sample_grid(b: Builder, xs: str, ys: str, sizes: tuple[int, int], nearest: str | None) -> str:
    """Pixel coordinates (float64, already broadcast to the grid's shape without its last axis) -> a
    GridSample grid for align_corners 0: g = (2c + 1) / size - 1, which GridSample maps back to c. The
    coordinates stay float64 up to here so inside/outside tests and nearest rounding are the
    reference's own arithmetic; ``nearest`` 'away' rounds half away from zero (Sign * Floor(|c| + 0.5)),
    so the whole-number coordinate GridSample's nearest mode (half to even) then reads is the same."""
    parts = []
    for c, size in ((xs, sizes[1]), (ys, sizes[0])):
        if nearest == "away":
            c = arith(b, "Mul", b.node("Sign", [c]), b.node("Floor", [arith(b, "Add", b.node("Abs", [c]), 0.5)]))
        g = arith(b, "Sub", arith(b, "Div", arith(b, "Add", arith(b, "Mul", c, 2.0), 1.0), float(size)), 1.0)
        parts.append(b.node("Unsqueeze", [b.cast(g, T.FLOAT), b.i64([-1])]))
    return b.node("Concat", parts, axis=-1)


def _to_channels_first(rank: int) -> list[int]:
    return [0, rank - 1, *range(1, rank - 1)]


def _to_channels_last(rank: int) -> list[int]:
    return [0, *range(2, rank), 1]


def channels_first(inner: Callable[[Builder, str, int], str]) -> Lowering:
    """Wrap an NCHW ONNX op for an NHWC QNN op: Transpose in, the op, (onto the output grid) Transpose out."""

    def lower(b: Builder) -> list[str]:
        r = b.rank(0)
        x = b.input(0, _to_channels_first(r))
        y = inner(b, x, r)
        return [b.transpose(b.on_output_grid(y), _to_channels_last(r))]

    return lower


def pairs(b: Builder, spatial: int) -> tuple[list[int], list[int]]:
    amounts = np.asarray(b.p.ints("pad_amount", [0] * (2 * spatial))).reshape(spatial, 2)
    return [int(v) for v in amounts[:, 0]], [int(v) for v in amounts[:, 1]]


def read_outputs(case_outputs: Sequence[OutputSpec], arrays: Sequence[np.ndarray]) -> tuple[list[np.ndarray], dict]:
    """Raw session outputs -> each output's storage dtype and declared shape.

    A result whose element count matches the declaration is reshaped to it (ONNX's rank-0 reductions vs
    QNN's [1], squeezed StridedSlice axes); any other shape is returned as ORT produced it, so the
    comparator reports the mismatch. Returns the outputs and notes for the outcome's details.
    """
    notes: dict[str, Any] = {}
    out = []
    for spec, a in zip(case_outputs, arrays, strict=True):
        a = np.asarray(a)
        storage = dtypes.get(spec.dtype).storage
        if storage is not None and a.dtype != storage:
            a = a.astype(storage)
        if tuple(a.shape) != tuple(spec.shape):
            notes.setdefault("ort_shapes", {})[spec.name] = list(a.shape)
            if a.size == int(np.prod(spec.shape, dtype=np.int64)):
                a = a.reshape(spec.shape)
        out.append(a)
    return out, notes
