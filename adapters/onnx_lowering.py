"""One Case -> one small ONNX model that means the same thing, for the ONNX Runtime adapters.

Why a table of lowerings rather than one function per op: most QNN ops are one ONNX node with renamed
attributes, so a handful of factories (unary, binary, comparison, logical, reduction, convolution,
pooling, ...) cover them; the table says which factory each QNN op uses and the ``operation`` enums of
ElementWiseUnary/Binary/Neuron reuse the same entries as their dedicated ops, so the two spellings
cannot drift apart. A few QNN ops have no single ONNX node (Rsqrt, SquaredDifference, Softplus with
beta, float Mod ...): their lowering is a short composite, still in the same table.

Values inside the model are real: a fixed-point input enters through DequantizeLinear (zero_point =
-offset, scale from its Encoding, ``axis`` for per-axis encodings) and a fixed-point output leaves
through QuantizeLinear. That is the QDQ form ONNX Runtime's QNN execution provider consumes. Layout
moves on a quantized value (the NHWC <-> NCHW Transposes around Conv/Pool/Resize) are wrapped as
DQ -> Transpose -> Q with the value's own encoding, so every float node the QNN EP sees sits in a QDQ
unit and ORT's transpose optimizer can cancel the Transposes against its own NHWC layout.

Anything a lowering cannot express raises ``Unlowerable`` (the adapter's SKIP), never a guess.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import opdefs
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
    """Case params with the spec's concrete defaults underneath; symbolic defaults stay the lowering's."""

    def __init__(self, case: Case) -> None:
        try:
            self._defaults = opdefs.load(case.op).param_defaults()
        except Exception:  # noqa: BLE001 - an op without a spec (debug names) simply has no defaults
            self._defaults = {}
        self._given = {k: p.value for k, p in case.params.items()}

    def get(self, name: str, default: Any = None) -> Any:
        v = self._given.get(name, self._defaults.get(name))
        return default if v is None or isinstance(v, (str, dict)) else v

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

    def __init__(self, case: Case) -> None:
        self.case = case
        self.p = Params(case)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.graph_inputs: list[onnx.ValueInfoProto] = []
        self.feeds: dict[str, np.ndarray] = {}
        self.types: dict[str, int] = {}
        self._owed: dict[str, tuple[Encoding, str]] = {}
        self._settled: dict[str, str] = {}
        self.retype: set[str] = set()
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
        zps = [-int(o) for o in enc.offsets]
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
            self.nodes, f"{case.op}", self.graph_inputs,
            [helper.make_tensor_value_info(s.name, IO_TYPE[s.dtype], list(s.shape)) for s in specs],
            self.inits,
        )  # fmt: skip
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="qnn-conformance")  # fmt: skip
        model.ir_version = IR_VERSION
        return Lowered(model.SerializeToString(), dict(self.feeds), specs, [n.op_type for n in self.nodes])


def _permute_encoding(enc: Encoding | None, perm: Sequence[int]) -> Encoding | None:
    if enc is None or not enc.per_axis:
        return enc
    return Encoding(enc.scales, enc.offsets, list(perm).index(int(enc.axis)))


# ---- lowering factories ---------------------------------------------------------------------------
Lowering = Callable[[Builder], list[str]]


def unary(onnx_op: str, **attrs: Any) -> Lowering:
    return lambda b: [b.node(onnx_op, [b.input(0)], **attrs)]


def binary(onnx_op: str, **attrs: Any) -> Lowering:
    return lambda b: [b.node(onnx_op, [b.input(0), b.input(1)], **attrs)]


def comparison(onnx_op: str, negate: bool = False) -> Lowering:
    def lower(b: Builder) -> list[str]:
        out = b.node(onnx_op, [b.input(0), b.input(1)], out_type=T.BOOL)
        return [b.converts(b.node("Not", [out], out_type=T.BOOL) if negate else out)]

    return lower


def logical(onnx_op: str) -> Lowering:
    def lower(b: Builder) -> list[str]:
        operands = [b.to_bool(b.input(i)) for i in range(1 if onnx_op == "Not" else 2)]
        return [b.converts(b.node(onnx_op, operands, out_type=T.BOOL))]

    return lower


def clip(lo: float | None, hi: float | None) -> Lowering:
    def lower(b: Builder) -> list[str]:
        x = b.input(0)
        lo_, hi_ = lo, hi
        if lo_ is None:
            lo_, hi_ = b.p.float("min_value"), b.p.float("max_value")
        return [b.node("Clip", [x, b.like(lo_, x), b.like(hi_, x)])]

    return lower


def _rsqrt(b: Builder) -> list[str]:
    return [b.node("Reciprocal", [b.node("Sqrt", [b.input(0)])])]


def _squared_difference(b: Builder) -> list[str]:
    d = b.node("Sub", [b.input(0), b.input(1)])
    return [b.node("Mul", [d, d])]


def _floor_div(b: Builder) -> list[str]:
    """floor(in0 / in1) on the real quotient: integer operands go through double, as ONNX's integer
    Div truncates toward zero."""
    x, y = b.input(0), b.input(1)
    if b.types[x] in INT_TYPES and b.types[y] in INT_TYPES:
        return [b.converts(b.node("Floor", [b.node("Div", [b.cast(x, T.DOUBLE), b.cast(y, T.DOUBLE)])]))]
    return [b.node("Floor", [b.node("Div", [x, y])])]


def _mod(b: Builder) -> list[str]:
    """Sign of the divisor. ONNX Mod does it for integers only (fmod=0 is invalid on floats), so
    floats take in0 - in1 * floor(in0 / in1)."""
    x, y = b.input(0), b.input(1)
    if b.types[x] not in FLOAT_TYPES:
        return [b.node("Mod", [x, y], fmod=0)]
    return [b.node("Sub", [x, b.node("Mul", [y, b.node("Floor", [b.node("Div", [x, y])])])])]


def _softplus(b: Builder, beta: float, threshold: float) -> list[str]:
    x = b.input(0)
    if beta == 1.0 and threshold < 0:
        return [b.node("Softplus", [x])]
    bx = b.node("Mul", [x, b.like(beta, x)])
    y = b.node("Div", [b.node("Softplus", [bx]), b.like(beta, x)])
    if threshold >= 0:  # the QNN reversion to x above the threshold; negative disables it
        y = b.node("Where", [b.node("Greater", [bx, b.like(threshold, x)], out_type=T.BOOL), x, y])
    return [y]


def _elementwise_softplus(b: Builder) -> list[str]:
    return _softplus(b, b.p.float("beta", 1.0), b.p.float("threshold", -1.0))


def _elu(b: Builder) -> list[str]:
    return [b.node("Elu", [b.input(0)], alpha=b.p.float("alpha", 1.0))]


def _select(b: Builder) -> list[str]:
    a, c = b.input(1), b.input(2)
    return [b.node("Where", [b.to_bool(b.input(0)), a, c], out_type=b.types[a])]


def _is_inf(b: Builder) -> list[str]:
    return [b.node("IsInf", [b.input(0)], out_type=T.BOOL, detect_negative=int(b.p.bool("detect_negative", True)),
                   detect_positive=int(b.p.bool("detect_positive", True)))]  # fmt: skip


UNARY_ENUM: dict[int, Lowering] = {
    0: unary("Abs"), 1: unary("Asin"), 2: unary("Atan"), 3: unary("Ceil"), 4: unary("Cos"), 5: unary("Exp"),
    6: unary("Floor"), 7: unary("Log"), 8: unary("Neg"), 9: logical("Not"), 10: unary("Reciprocal"),
    11: unary("Round"), 12: _rsqrt, 13: unary("Sign"), 14: unary("Sin"), 15: unary("Sqrt"),
}  # fmt: skip
BINARY_ENUM: dict[int, Lowering] = {
    0: binary("Add"), 1: logical("And"), 2: binary("Div"), 3: comparison("Equal"), 4: _floor_div,
    5: binary("Mod", fmod=1), 6: comparison("Greater"), 7: comparison("GreaterOrEqual"), 8: comparison("Less"),
    9: comparison("LessOrEqual"), 10: binary("Max"), 11: binary("Min"), 12: _mod, 13: binary("Mul"),
    14: comparison("Equal", negate=True), 15: logical("Or"), 16: binary("Pow"), 17: _squared_difference,
    18: binary("Sub"), 19: logical("Xor"),
}  # fmt: skip
NEURON_DEFAULTS = {"alpha": {0: 1.0, 2: 0.2}, "beta": {2: 0.5, 7: 1.0}}  # by operation, as the spec's table


def _neuron(b: Builder) -> list[str]:
    op = b.p.int("operation")
    alpha = b.p.float("alpha", NEURON_DEFAULTS["alpha"].get(op, 0.0))
    beta = b.p.float("beta", NEURON_DEFAULTS["beta"].get(op, 0.0))
    if op == 0:
        return [b.node("Elu", [b.input(0)], alpha=alpha)]
    if op == 2:
        return [b.node("HardSigmoid", [b.input(0)], alpha=alpha, beta=beta)]
    if op == 5:
        return clip(None, None)(b)
    if op == 7:
        return _softplus(b, beta, b.p.float("threshold", -1.0))
    simple = {1: "Gelu", 3: "HardSwish", 4: "Relu", 6: "Sigmoid", 8: "Tanh"}
    if op not in simple:
        raise Unlowerable(f"ElementWiseNeuron operation {op}")
    return [b.node(simple[op], [b.input(0)])]


def by_operation(table: dict[int, Lowering], what: str) -> Lowering:
    def lower(b: Builder) -> list[str]:
        op = b.p.int("operation")
        if op not in table:
            raise Unlowerable(f"{what} operation {op}")
        return table[op](b)

    return lower


# -- activations / normalization ---------------------------------------------------------------------
def softmax(onnx_op: str) -> Lowering:
    """QNN's beta scales the logits first; ONNX Softmax has no beta, so a Mul precedes it when beta != 1."""

    def lower(b: Builder) -> list[str]:
        x = b.input(0)
        axis = b.p.int("axis", b.rank(0) - 1)
        beta = b.p.float("beta", 1.0)
        if beta != 1.0:
            x = b.node("Mul", [x, b.like(beta, x)])
        return [b.node(onnx_op, [x], axis=axis)]

    return lower


def _batchnorm(b: Builder) -> list[str]:
    """QNN Batchnorm is already folded: x * weights + bias over the last (channel) axis."""
    x = b.input(0)
    y = b.node("Mul", [x, b.input(1)])
    if b.has(2):
        y = b.node("Add", [y, b.input(2)])
    return [y]


def _layer_norm(b: Builder) -> list[str]:
    """ONNX normalizes a suffix of axes starting at ``axis``; other axis sets have no ONNX form."""
    n = b.rank(0)
    axes = sorted(b.p.ints("axes"))
    if all(0 <= a < n for a in axes) and axes != list(range(axes[0], n)):
        raise Unlowerable(f"LayerNorm axes {axes} are not the trailing axes of a rank-{n} tensor")
    x = b.input(0)  # an axis outside [0, N) goes to ORT as it is: its refusal is the verdict
    shape = b.shape(0)[min(axes[0], n) :]
    gamma = b.input(1) if b.has(1) else b.like(np.ones(shape), x)
    ins = [x, gamma] + ([b.input(2)] if b.has(2) else [])
    return [b.node("LayerNormalization", ins, axis=axes[0], epsilon=b.p.float("epsilon", 1e-3))]


# -- data movement -----------------------------------------------------------------------------------
def _to_declared_shape(b: Builder) -> list[str]:
    """Reshape, ExpandDims, Squeeze: QNN reads the target from the output tensor, so does this."""
    return [b.move("Reshape", b.input(0), b.i64(b.case.outputs[0].shape), allowzero=1)]


def _transpose(b: Builder) -> list[str]:
    return [b.node("Transpose", [b.input(0)], perm=b.p.ints("perm"))]


def _concat(b: Builder) -> list[str]:
    xs = [b.input(i) for i in range(len(b.case.inputs)) if b.has(i)]
    return [b.node("Concat", xs, axis=b.p.int("axis", b.rank(0) - 1))]


def _tile(b: Builder) -> list[str]:
    return [b.node("Tile", [b.input(0), b.i64(b.p.ints("multiples"))])]


def _pad(b: Builder) -> list[str]:
    modes = {0: "constant", 2: "reflect", 3: "edge"}  # MIRROR_SYMMETRIC (1) has no ONNX mode
    scheme = b.p.int("scheme")
    if scheme not in modes:
        raise Unlowerable(f"Pad scheme {scheme} (MIRROR_SYMMETRIC has no ONNX mode)")
    amounts = np.asarray(b.p.ints("pad_amount")).reshape(-1, 2)
    x = b.input(0)
    ins = [x, b.i64([*amounts[:, 0], *amounts[:, 1]])]
    if scheme == 0:  # the constant is a real value (as the reference reads it), in x's element type
        ins.append(b.like(b.p.float("pad_constant_value", 0.0), x))
    return [b.node("Pad", ins, mode=modes[scheme])]


def _indices(b: Builder, i: int) -> str:
    return b.cast(b.input(i), T.INT64)


def _gather(b: Builder) -> list[str]:
    return [b.node("Gather", [b.input(0), _indices(b, 1)], axis=b.p.int("axis", 0))]


def _gather_elements(b: Builder) -> list[str]:
    return [b.node("GatherElements", [b.input(0), _indices(b, 1)], axis=b.p.int("axis", 0))]


def _gather_nd(b: Builder) -> list[str]:
    return [b.node("GatherND", [b.input(0), _indices(b, 1)], batch_dims=b.p.int("batch_dims", 0))]


def _identity(b: Builder) -> list[str]:
    """Cast/Convert/Quantize/Dequantize: the same real value in another representation; the output
    conversion (Cast, or QuantizeLinear with the output's encoding) is the whole op."""
    x = b.input(0)
    t = b.case.outputs[0]
    if b.case.inputs[0].dtype == t.dtype and not dtypes.get(t.dtype).quantized:
        return [b.node("Identity", [x])]
    return [b.converts(x)]


def _split(b: Builder) -> list[str]:
    axis = b.p.int("axis")
    dim = b.shape(0)[axis]
    cuts = [0, *b.p.ints("split_index", []), dim]
    sizes = [e - s for s, e in zip(cuts, cuts[1:], strict=False)]
    return b.node("Split", [b.input(0), b.i64(sizes)], outputs=len(sizes), axis=axis)


def _pack(b: Builder) -> list[str]:
    axis = b.p.int("axis")
    xs = [b.input(i) for i in range(len(b.case.inputs)) if b.has(i)]
    return [b.node("Concat", [b.move("Unsqueeze", x, b.i64([axis])) for x in xs], axis=axis)]


def _unpack(b: Builder) -> list[str]:
    axis = b.p.int("axis")
    n = b.shape(0)[axis]
    parts = b.node("Split", [b.input(0), b.i64([1] * n)], outputs=n, axis=axis)
    parts = [parts] if n == 1 else parts
    return [b.move("Squeeze", b.on_output_grid(p, j), b.i64([axis])) for j, p in enumerate(parts)]


def _strided_slice(b: Builder) -> list[str]:
    """Slice per axis; begin/end masks become open ends; shrunk axes keep one index (the declared
    output shape drops them). New axes have no Slice form."""
    if b.p.int("new_axes_mask", 0):
        raise Unlowerable("StridedSlice new_axes_mask")
    ranges = np.asarray(b.p.ints("ranges")).reshape(-1, 3)
    begin_mask, end_mask, shrink = b.p.int("begin_mask", 0), b.p.int("end_mask", 0), b.p.int("shrink_axes", 0)
    big = np.iinfo(np.int64).max
    starts, ends, steps = [], [], []
    for i, (s, e, st) in enumerate(ranges.tolist()):
        if shrink >> i & 1:
            s, e, st = s, (s + 1 if s != -1 else big), 1
        else:
            if begin_mask >> i & 1:
                s = 0 if st > 0 else big
            if end_mask >> i & 1:
                e = big if st > 0 else -big - 1
        starts.append(s)
        ends.append(e)
        steps.append(st)
    axes = list(range(len(starts)))
    y = b.node("Slice", [b.input(0), b.i64(starts), b.i64(ends), b.i64(axes), b.i64(steps)])
    return [b.to_declared(y) if shrink else y]


# -- reductions / indexing ---------------------------------------------------------------------------
def reduction(onnx_op: str) -> Lowering:
    def lower(b: Builder) -> list[str]:
        x = b.input(0)
        if b.rank(0) == 0:
            return [b.node("Mul", [x, x]) if onnx_op == "ReduceSumSquare" else b.node("Identity", [x])]
        axes, keep = b.p.ints("axes"), b.p.bool("keep_dims")
        y = b.node(onnx_op, [x, b.i64(axes)], keepdims=int(keep))
        onnx_rank = b.rank(0) if keep else b.rank(0) - len({a % b.rank(0) for a in axes})
        return [b.to_declared(y) if onnx_rank != len(b.case.outputs[0].shape) else y]

    return lower


def arg_reduction(onnx_op: str) -> Lowering:
    def lower(b: Builder) -> list[str]:
        keep = b.p.bool("keep_dims")
        y = b.converts(b.node(onnx_op, [b.input(0)], out_type=T.INT64, axis=b.p.int("axis"), keepdims=int(keep)))
        onnx_rank = b.rank(0) - (0 if keep else 1)
        return [b.to_declared(y) if onnx_rank != len(b.case.outputs[0].shape) else y]

    return lower


def _cumsum(b: Builder) -> list[str]:
    return [b.node("CumSum", [b.input(0), b.i64(b.p.int("axis"))], exclusive=int(b.p.bool("exclusive")),
                   reverse=int(b.p.bool("reverse")))]  # fmt: skip


def _topk(b: Builder) -> list[str]:
    values, idx = b.node("TopK", [b.input(0), b.i64([b.p.int("k")])], outputs=2, axis=-1,
                         largest=int(b.p.bool("largest", True)), sorted=1)  # fmt: skip
    b.types[idx] = T.INT64
    return [values, b.converts(idx)]


def _shape(b: Builder) -> list[str]:
    n = b.rank(0)
    return [
        b.converts(b.node("Shape", [b.input(0)], out_type=T.INT64, start=b.p.int("start", 0), end=b.p.int("end", n)))
    ]


def _one_hot(b: Builder) -> list[str]:
    t = b.case.outputs[0]
    elem = T.FLOAT if dtypes.get(t.dtype).quantized else ONNX_TYPE.get(t.dtype, T.FLOAT)
    values = b.const([b.p.float("off_value", 0.0), b.p.float("on_value", 1.0)], elem)
    axis = b.p.int("axis", b.rank(0))
    return [b.node("OneHot", [_indices(b, 0), b.i64([b.p.int("depth")]), values], out_type=elem, axis=axis)]


def scatter(onnx_op: str, reductions: dict[int, str]) -> Lowering:
    def lower(b: Builder) -> list[str]:
        r = b.p.int("reduction", 0)
        if r not in reductions:
            raise Unlowerable(f"{onnx_op} reduction {r}")
        attrs: dict[str, Any] = {"reduction": reductions[r]}
        if onnx_op == "ScatterElements":
            attrs["axis"] = b.p.int("axis", 0)
        return [b.node(onnx_op, [b.input(0), _indices(b, 1), b.input(2)], **attrs)]

    return lower


def _matmul(b: Builder) -> list[str]:
    xs = []
    for i, flag in ((0, "transpose_in0"), (1, "transpose_in1")):
        n = b.rank(i)
        perm = list(range(n - 2)) + [n - 1, n - 2] if b.p.bool(flag) and n >= 2 else None
        xs.append(b.input(i, perm))
    y = b.node("MatMul", xs)
    if b.has(2):
        y = b.node("Add", [y, b.input(2)])
    return [y]


def _fully_connected(b: Builder) -> list[str]:
    """Gemm(x as [batch, n], W^T, bias): the ONNX shape of QNN's FullyConnected; the declared output
    shape (keep_dims or not) is applied to the result."""
    m, n = b.shape(1)
    x = b.move("Reshape", b.input(0), b.i64([-1, n]))
    ins = [x, b.input(1)] + ([b.input(2)] if b.has(2) else [])
    y = b.node("Gemm", ins, transB=1)
    batch = int(np.prod(b.shape(0), dtype=np.int64)) // n if n else 0
    return [y if tuple(b.case.outputs[0].shape) == (batch, m) else b.to_declared(y)]


# -- layout ops (NHWC in QNN, NCHW in ONNX) ----------------------------------------------------------
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


def _pairs(b: Builder, spatial: int) -> tuple[list[int], list[int]]:
    amounts = np.asarray(b.p.ints("pad_amount", [0] * (2 * spatial))).reshape(spatial, 2)
    return [int(v) for v in amounts[:, 0]], [int(v) for v in amounts[:, 1]]


def conv(depthwise: bool = False) -> Lowering:
    """QNN filter [spatial..., cin/group, cout] -> ONNX [cout, cin/group, spatial...]; depthwise filters
    [spatial..., 1, cout] are a grouped conv with group = cin."""

    def inner(b: Builder, x: str, r: int) -> str:
        s = r - 2
        wr = b.rank(1)
        w = b.input(1, [wr - 1, wr - 2, *range(s)])
        before, after = _pairs(b, s)
        group = b.shape(0)[-1] if depthwise else b.p.int("group", 1)
        ins = [x, w] + ([b.input(2)] if b.has(2) else [])
        return b.node("Conv", ins, strides=b.p.ints("stride", [1] * s), pads=before + after,
                      dilations=b.p.ints("dilation", [1] * s), group=group)  # fmt: skip

    return channels_first(inner)


def pool(onnx_op: str) -> Lowering:
    def inner(b: Builder, x: str, r: int) -> str:
        s = r - 2
        before, after = _pairs(b, s)
        attrs: dict[str, Any] = dict(kernel_shape=b.p.ints("filter_size"), strides=b.p.ints("stride", [1] * s),
                                     pads=before + after, ceil_mode=b.p.int("rounding_mode", 0))  # fmt: skip
        if onnx_op == "AveragePool":
            attrs["count_include_pad"] = int(b.p.bool("count_pad_for_edges"))
        return b.node(onnx_op, [x], **attrs)

    return channels_first(inner)


def depth_space(onnx_op: str) -> Lowering:
    def inner(b: Builder, x: str, r: int) -> str:
        bh, bw = b.p.ints("block_size")
        if bh != bw:
            raise Unlowerable(f"{onnx_op} needs a square block, got {bh}x{bw}")
        mode = b.p.int("mode", 0)
        if onnx_op == "SpaceToDepth":
            if mode != 0:
                raise Unlowerable("SpaceToDepth CRD mode has no ONNX form")
            return b.node(onnx_op, [x], blocksize=bh)
        return b.node(onnx_op, [x], blocksize=bh, mode=("DCR", "CRD")[mode])

    return channels_first(inner)


def resize(kind: str) -> Lowering:
    """Output size from the declared output (QNN takes it from the output tensor), channels first."""

    def inner(b: Builder, x: str, r: int) -> str:
        out = list(b.case.outputs[0].shape)
        sizes = b.i64([out[0], out[-1], *out[1:-1]])
        attrs: dict[str, Any]
        if kind == "Resize":
            modes = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")
            nearest = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
            attrs = dict(coordinate_transformation_mode=modes[b.p.int("transformation_mode", 0)],
                         mode=("nearest", "linear", "cubic")[b.p.int("interpolation_mode", 0)],
                         nearest_mode=nearest[b.p.int("nearest_mode", 0)],
                         cubic_coeff_a=b.p.float("cubic_coeff", -0.75))  # fmt: skip
            if attrs["mode"] == "cubic":  # it weighs cubic taps only; ORT refuses it set on other modes
                attrs["exclude_outside"] = int(b.p.bool("exclude_outside"))
        else:  # the TensorFlow-style pair of flags
            align, half = b.p.bool("align_corners"), b.p.bool("half_pixel_centers")
            if align and half:
                raise Unlowerable("align_corners and half_pixel_centers together")
            ctm = "align_corners" if align else "half_pixel" if half else "asymmetric"
            if kind == "bilinear":
                attrs = dict(mode="linear", coordinate_transformation_mode=ctm, antialias=int(b.p.bool("antialias")))
            else:  # TF nearest: floor after asymmetric; round half up after half-pixel/align-corners
                attrs = dict(mode="nearest", coordinate_transformation_mode=ctm,
                             nearest_mode="floor" if ctm == "asymmetric" else "round_prefer_ceil")  # fmt: skip
        return b.node("Resize", [x, "", "", sizes], **attrs)

    return channels_first(inner)


def transpose_conv(b: Builder) -> list[str]:
    """ConvTranspose, channels first. QNN filter [spatial..., cin, cout/group] -> ONNX [cin, cout/group,
    spatial...]: the same grouping (input channel c in group c // (cin/G), filter column o writing output
    channel g * cout/G + o). pads crop the full result as pad_amount does and output_padding extends its
    end, so the output size is QNN's formula; cells past the full extent hold only the bias in both."""

    def inner(b: Builder, x: str, r: int) -> str:
        s = r - 2
        w = b.input(1, [s, s + 1, *range(s)])
        before, after = _pairs(b, s)
        ins = [x, w] + ([b.input(2)] if b.has(2) else [])
        return b.node("ConvTranspose", ins, strides=b.p.ints("stride", [1] * s), pads=before + after,
                      dilations=b.p.ints("dilation", [1] * s), group=b.p.int("group", 1),
                      output_padding=b.p.ints("output_padding", [0] * s))  # fmt: skip

    return channels_first(inner)(b)


def _zero_pad(b: Builder, i: int, value: str, pads: Sequence[int]) -> str:
    """Pad with real 0. On a quantized input the pad value is input i's zero point through
    DequantizeLinear, the QDQ form: ORT's QNN EP takes a float constant_value 0 inside a QDQ unit as
    the code 0 (real -scale * zero_point on the HTP, probed with Im2Col and Correlation1D)."""
    t = b.case.inputs[i]
    if dtypes.get(t.dtype).quantized and t.encoding is not None and not t.encoding.per_axis:
        fill = b.dequantize(b.const(-int(t.encoding.offsets[0]), ONNX_TYPE[t.dtype]), t.encoding, t.dtype)
    else:
        fill = b.like(0, value)
    return b.node("Pad", [value, b.i64(pads), fill])


def _l2_pool(b: Builder) -> list[str]:
    """LpPool(p = 2): sqrt of the sum of squares, the spec's formula (not NNAPI's mean). Pad cells are 0
    and add nothing; ORT's pools refuse a pad as large as the window, so such pads become an explicit Pad."""

    def inner(b: Builder, x: str, r: int) -> str:
        size = b.p.ints("filter_size")
        before, after = _pairs(b, 2)
        if any(p >= k for p, k in zip(before + after, size + size, strict=True)):
            x = _zero_pad(b, 0, x, [0, 0, *before, 0, 0, *after])
            before, after = [0, 0], [0, 0]
        return b.node("LpPool", [x], p=2, kernel_shape=size, strides=b.p.ints("stride", [1, 1]),
                      pads=before + after)  # fmt: skip

    return channels_first(inner)(b)


def _patch_positions(b: Builder, hw: Sequence[int]) -> tuple[list[int], list[int], list[int], list[int], list[int],
                                                               list[int]]:  # fmt: skip
    k, s = b.p.ints("kernel_size"), b.p.ints("stride")
    d = b.p.ints("dilation", [1, 1])
    before, after = _pairs(b, 2)
    if min(k + s + d) < 1:
        raise Unlowerable(f"kernel_size {k}, stride {s}, dilation {d}: every entry must be > 0")
    counts = [(hw[i] + before[i] + after[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if min(counts) < 1:
        raise Unlowerable(f"the dilated kernel does not fit the padded image ({counts} positions)")
    return k, s, d, before, after, counts


def _on_input_grid(b: Builder, i: int, value: str) -> str:
    """Q -> DQ onto input i's encoding after a pure move of its values (exact: the values, and a pad's
    0, are on that grid), so each move is a QDQ unit. Without it ORT 1.32's QDQ propagation builds an
    invalid QuantizeLinear (int8 output, uint8 zero point) for SFIXED_POINT_8 chains such as
    DQ -> Slice -> Unsqueeze -> Concat -> Q (refused at session creation)."""
    t = b.case.inputs[i]
    if not dtypes.get(t.dtype).quantized or t.encoding is None:
        return value
    return b.dequantize(b.quantize(value, t.encoding, t.dtype), t.encoding, t.dtype)


def _im2col(b: Builder) -> list[str]:
    """No ONNX Im2Col: the padded image (channels first) is cut by one strided Slice per kernel offset,
    the slabs stacked on a new axis after the channel ([N, C, kh*kw, OH, OW]) and flattened, so row
    c * kh * kw + i * kw + j and column oh * OW + ow are the reference's order. Pure data movement."""
    n, h, w, c = b.shape(0)
    k, s, d, before, after, (oh, ow) = _patch_positions(b, (h, w))
    x = b.input(0, [0, 3, 1, 2])
    if any(before + after):
        x = _zero_pad(b, 0, x, [0, 0, *before, 0, 0, *after])
    slabs = []
    for i in range(k[0]):
        for j in range(k[1]):
            y0, x0 = i * d[0], j * d[1]
            sl = b.node("Slice", [x, b.i64([y0, x0]), b.i64([y0 + (oh - 1) * s[0] + 1, x0 + (ow - 1) * s[1] + 1]),
                                  b.i64([2, 3]), b.i64(s)])  # fmt: skip
            slabs.append(_on_input_grid(b, 0, b.node("Unsqueeze", [sl, b.i64([2])])))
    stacked = _on_input_grid(b, 0, b.node("Concat", slabs, axis=2)) if len(slabs) > 1 else slabs[0]
    return [b.node("Reshape", [stacked, b.i64([n, c * k[0] * k[1], oh * ow])])]


def _col2im(b: Builder) -> list[str]:
    """ONNX Col2Im (same column layout: channel outermost, then kernel row, kernel column; positions
    row-major); the image size is the declared output's, as in QNN; the result goes back channel-last."""
    n, h, w, c = b.case.outputs[0].shape
    k, s, d, before, after, _ = _patch_positions(b, (h, w))
    y = b.node("Col2Im", [b.input(0), b.i64([h, w]), b.i64(k)], dilations=d, pads=before + after, strides=s)
    return [b.transpose(b.on_output_grid(y), [0, 2, 3, 1])]


GRID_MODES = {0: "linear", 1: "nearest"}  # GridSample mode (0 BILINEAR, 1 NEAREST)
GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _grid_sample(b: Builder) -> list[str]:
    """ONNX GridSample (opset 20 form): the image channels first, the grid already [N, ..., rank]
    with (x, y[, z]) last as in QNN; nearest rounds half to even in both."""
    mode, padding = b.p.int("mode", 0), b.p.int("padding_mode", 0)
    if mode not in GRID_MODES or padding not in GRID_PADDING:
        raise Unlowerable(f"GridSample mode {mode} / padding_mode {padding} has no ONNX value")

    def inner(b: Builder, x: str, r: int) -> str:
        return b.node("GridSample", [x, b.input(1)], mode=GRID_MODES[mode], padding_mode=GRID_PADDING[padding],
                      align_corners=int(b.p.bool("align_corners")))  # fmt: skip

    return channels_first(inner)(b)


def _roi_boxes(b: Builder) -> tuple[str, float]:
    """Boxes on the feature map: one ratio -> ONNX spatial_scale = 1 / ratio; two different ratios ->
    the boxes divided per coordinate ([w, h, w, h]) and spatial_scale 1."""
    rh, rw = (float(v) for v in np.asarray(b.p.get("img_size_ratio"), np.float64).reshape(-1))
    rois = b.input(1)
    if rh == rw:
        return rois, 1.0 / rh
    return b.node("Div", [rois, b.like([rw, rh, rw, rh], rois)]), 1.0


def _real_data(b: Builder, i: int) -> np.ndarray:
    """Input i's real values (codes dequantized), for lowerings whose node attributes depend on them."""
    t = b.case.inputs[i]
    data = np.asarray(t.data, np.float64)
    if dtypes.get(t.dtype).quantized and t.encoding is not None and not t.encoding.per_axis:
        data = (data + float(t.encoding.offsets[0])) * float(t.encoding.scales[0])
    return data


def _roi_align(b: Builder) -> list[str]:
    """ONNX RoiAlign (avg); aligned is half_pixel, not aligned output_half_pixel (extent raised to
    one cell). ONNX has one sampling_ratio for both axes; a (gh, gw) grid per bin is the same as
    RoiAlign on an output gh x gw times finer with one sample per bin, then an AveragePool of gh x gw:
    the sample points and the mean are the reference's. One node with ONNX's adaptive sampling
    (sampling_ratio 0) when both counts are adaptive and ONNX's count agrees with the reference's;
    otherwise the counts are resolved per RoI from its box (adaptive: max(1, ceil(bin size)); ONNX
    takes ceil alone, 0 for a zero or reversed aligned extent) and each RoI gets its own node. An
    invalid RoI (zero width and height) with allow_invalid_roi is all zeros."""
    ny, nx = b.p.int("num_samples_y", -1), b.p.int("num_samples_x", -1)
    aligned = b.p.bool("aligned")
    rh, rw = (float(v) for v in np.asarray(b.p.get("img_size_ratio"), np.float64).reshape(-1))
    boxes = _real_data(b, 1).reshape(-1, 4)
    _, oh, ow, c = (int(v) for v in b.case.outputs[0].shape)
    invalid = (boxes[:, 2] == boxes[:, 0]) & (boxes[:, 3] == boxes[:, 1]) & b.p.bool("allow_invalid_roi")
    shift = 0.5 if aligned else 0.0
    ext_w = boxes[:, 2] / rw - shift - (boxes[:, 0] / rw - shift)
    ext_h = boxes[:, 3] / rh - shift - (boxes[:, 1] / rh - shift)
    if not aligned:
        ext_w, ext_h = np.maximum(ext_w, 1.0), np.maximum(ext_h, 1.0)
    grids = [(ny if ny > 0 else max(1, int(np.ceil(hh / oh))), nx if nx > 0 else max(1, int(np.ceil(ww / ow))))
             for hh, ww in zip(ext_h, ext_w, strict=True)]  # fmt: skip
    native = ny <= 0 and nx <= 0 and not invalid.any() and bool(np.all((ext_w > 0) & (ext_h > 0)))
    mode = "half_pixel" if aligned else "output_half_pixel"

    def align(b: Builder, x: str, rois: str, idx: str, scale: float, grid: tuple[int, int]) -> str:
        gh, gw = grid
        y = b.node("RoiAlign", [x, rois, idx], mode="avg", output_height=oh * gh, output_width=ow * gw,
                   sampling_ratio=0 if native else 1, spatial_scale=scale,
                   coordinate_transformation_mode=mode)  # fmt: skip
        if (gh, gw) == (1, 1):
            return y
        return b.node("AveragePool", [y], kernel_shape=[gh, gw], strides=[gh, gw])

    def inner(b: Builder, x: str, r: int) -> str:
        rois, scale = _roi_boxes(b)
        idx = b.cast(b.input(2), T.INT64)
        if native:
            return align(b, x, rois, idx, scale, (1, 1))
        if not invalid.any() and len(set(grids)) == 1:
            return align(b, x, rois, idx, scale, grids[0])
        parts = []
        for k, grid in enumerate(grids):
            if invalid[k]:
                parts.append(b.const(np.zeros((1, c, oh, ow)), b.types[x]))
                continue
            one = [b.i64([k]), b.i64([k + 1]), b.i64([0])]
            parts.append(align(b, x, b.node("Slice", [rois, *one]), b.node("Slice", [idx, *one]), scale, grid))
        return b.node("Concat", parts, axis=0) if len(parts) > 1 else parts[0]

    return channels_first(inner)(b)


def _roi_pooling(b: Builder) -> list[str]:
    """ONNX MaxRoiPool: the batch index joins the box as its first column; corners rounded half away
    from zero, bins floor/ceil over whole cells and an empty bin 0, as the reference reads NNAPI."""
    out = b.case.outputs[0].shape

    def inner(b: Builder, x: str, r: int) -> str:
        rois, scale = _roi_boxes(b)
        idx = b.node("Unsqueeze", [b.cast(b.input(2), b.types[rois]), b.i64([1])])
        return b.node("MaxRoiPool", [x, b.node("Concat", [idx, rois], axis=1)],
                      pooled_shape=[int(out[1]), int(out[2])], spatial_scale=scale)  # fmt: skip

    return channels_first(inner)(b)


def _stft(b: Builder) -> list[str]:
    """ONNX STFT: the same [batch, signal_length, 1] real signal and [batch, frames, bins, 2] output;
    frame_length given explicitly, resolved as the reference does (the param, else the window's
    size, else the whole signal)."""
    signal_length = b.shape(0)[1]
    n_fft = b.p.int("frame_length", b.shape(1)[0] if b.has(1) else signal_length)
    window = b.input(1) if b.has(1) else ""
    return [b.node("STFT", [b.input(0), b.i64(b.p.int("frame_step")), window, b.i64(n_fft)],
                   onesided=int(b.p.bool("onesided", True)))]  # fmt: skip


def _argb_to_rgb(b: Builder) -> list[str]:
    """Gather on the channel axis: the colour channels after A (ARGB) or before it (RGBA), reversed on request."""
    order = b.p.int("input_order", 0)
    if order not in (0, 1):
        raise Unlowerable(f"input_order {order} is not ARGB (0) or RGBA (1)")
    picks = [1, 2, 3] if order == 0 else [0, 1, 2]
    if b.p.bool("reverse_output"):
        picks.reverse()
    return [b.node("Gather", [b.input(0), b.i64(picks)], axis=3)]


def _correlation_1d(b: Builder) -> list[str]:
    """No ONNX correlation: per displacement d, in[1] shifted along the width by d - (displacement -
    shift) (zero-padded), times in[0], averaged over the depth (ReduceMean), concatenated on the last
    axis. One Slice-Mul-ReduceMean per output channel."""
    disp, shift = b.p.int("displacement"), b.p.int("shift")
    w = b.shape(0)[2]
    offs = [d - (disp - shift) for d in range(2 * disp + 1)]
    lo, hi = max(0, -min(offs)), max(0, max(offs))
    a, other = b.input(0), b.input(1)
    if lo or hi:
        other = _zero_pad(b, 1, other, [0, 0, lo, 0, 0, 0, hi, 0])
    parts = []
    for off in offs:
        start = max(0, min(off + lo, w + lo + hi))
        sl = _on_input_grid(b, 1, b.node("Slice", [other, b.i64([start]), b.i64([start + w]), b.i64([2])]))
        # each channel on the output grid before the Concat: Q(DQ(Q(v))) = Q(v), and a QDQ form ORT accepts
        parts.append(b.on_output_grid(b.node("ReduceMean", [b.node("Mul", [a, sl]), b.i64([3])], keepdims=1)))
    return [b.node("Concat", parts, axis=3) if len(parts) > 1 else parts[0]]


def _col(b: Builder, value: str, i: int) -> str:
    """Column i of the last axis, kept as a size-1 axis (so it broadcasts against its neighbours)."""
    return b.node("Slice", [value, b.i64([i]), b.i64([i + 1]), b.i64([-1])])


def _arith(b: Builder, op: str, x: str, y: str | float) -> str:
    return b.node(op, [x, y if isinstance(y, str) else b.like(y, x)])


def _sample_grid(b: Builder, xs: str, ys: str, sizes: tuple[int, int], nearest: str | None) -> str:
    """Pixel coordinates (float64, already broadcast to the grid's shape without its last axis) -> a
    GridSample grid for align_corners 0: g = (2c + 1) / size - 1, which GridSample maps back to c. The
    coordinates stay float64 up to here so inside/outside tests and nearest rounding are the
    reference's own arithmetic; ``nearest`` 'away' rounds half away from zero (Sign * Floor(|c| + 0.5)),
    so the whole-number coordinate GridSample's nearest mode (half to even) then reads is the same."""
    parts = []
    for c, size in ((xs, sizes[1]), (ys, sizes[0])):
        if nearest == "away":
            c = _arith(b, "Mul", b.node("Sign", [c]), b.node("Floor", [_arith(b, "Add", b.node("Abs", [c]), 0.5)]))
        g = _arith(b, "Sub", _arith(b, "Div", _arith(b, "Add", _arith(b, "Mul", c, 2.0), 1.0), float(size)), 1.0)
        parts.append(b.node("Unsqueeze", [b.cast(g, T.FLOAT), b.i64([-1])]))
    return b.node("Concat", parts, axis=-1)


def _batch_index(b: Builder, i: int, batches: int) -> str:
    """Input i as Gather indices into ``batches`` images. ONNX Gather reads a negative index from the
    end and fails at run time past the end, where the reference refuses both: such cases are not
    lowered (SKIP) rather than given Gather's reading."""
    idx = _real_data(b, i).reshape(-1)
    if np.any(idx < 0) or np.any(idx > batches - 1):
        raise Unlowerable(f"in[{i}] = {idx.tolist()} holds batch indices outside [0, {batches - 1}]")
    return b.cast(b.input(i), T.INT64)  # Gather takes no unsigned indices; the values were checked above


def _crop_and_resize(b: Builder) -> list[str]:
    """No ONNX crop-and-resize (RoiAlign averages bins): each box's image by Gather, the TF sample
    coordinates (y1 * (H - 1) + i * step, the box middle for a single sample) computed in float64 as
    the reference does, GridSample (zeros padding, align_corners 0) on them, and Where puts
    extrapolation_value wherever a row or column coordinate falls outside [0, size - 1]. Nearest rounds
    the (non-negative inside) coordinates half away from zero first; outside ones are replaced anyway."""
    _, height, width, _ = b.shape(0)
    nb = b.shape(1)[0]
    crop_h, crop_w = b.p.ints("resize_dims")
    interp = b.p.int("interpolation_mode", 0)
    if interp not in (0, 1):
        raise Unlowerable(f"interpolation_mode {interp} is not BILINEAR (0) or NEAREST_NEIGHBOR (1)")
    boxes = b.cast(b.input(1), T.DOUBLE)

    def coords(k: int, size: int, n: int) -> tuple[str, str]:
        c1, c2 = _col(b, boxes, k), _col(b, boxes, k + 2)  # [nb, 1]
        if n > 1:
            step = _arith(b, "Div", _arith(b, "Mul", _arith(b, "Sub", c2, c1), float(size - 1)), float(n - 1))
            c = _arith(b, "Add", _arith(b, "Mul", c1, float(size - 1)),
                       _arith(b, "Mul", step, b.const(np.arange(n, dtype=np.float64)[None, :], T.DOUBLE)))
        else:
            c = _arith(b, "Mul", _arith(b, "Mul", _arith(b, "Add", c1, c2), 0.5), float(size - 1))
        inside = b.node("And", [b.node("GreaterOrEqual", [c, b.like(0.0, c)], out_type=T.BOOL),
                                b.node("LessOrEqual", [c, b.like(float(size - 1), c)], out_type=T.BOOL)],
                        out_type=T.BOOL)  # fmt: skip
        return c, inside

    ys, in_y = coords(0, height, crop_h)  # [nb, crop_h]
    xs, in_x = coords(1, width, crop_w)  # [nb, crop_w]
    shape = b.i64([nb, crop_h, crop_w])
    ys = b.node("Expand", [b.node("Unsqueeze", [ys, b.i64([2])]), shape])
    xs = b.node("Expand", [b.node("Unsqueeze", [xs, b.i64([1])]), shape])
    grid = _sample_grid(b, xs, ys, (height, width), "away" if interp == 1 else None)
    images = b.node("Gather", [b.input(0, [0, 3, 1, 2]), _batch_index(b, 2, b.shape(0)[0])], axis=0)  # [nb, C, H, W]
    sample = b.node("GridSample", [images, grid], mode=GRID_MODES[interp], padding_mode="zeros", align_corners=0)
    inside = b.node("And", [b.node("Unsqueeze", [in_y, b.i64([1, 3])]), b.node("Unsqueeze", [in_x, b.i64([1, 2])])],
                    out_type=T.BOOL)  # fmt: skip
    fill = b.like(b.p.float("extrapolation_value", 0.0), sample)
    out = b.node("Where", [inside, sample, fill], out_type=b.types[sample])
    return [b.transpose(b.on_output_grid(out), [0, 2, 3, 1])]


def _image_projection_transform(b: Builder) -> list[str]:
    """No projective-transform op: the source point of each output pixel ((a0 x + a1 y + a2) / k, ...,
    k = c0 x + c1 y + 1) from a constant pixel grid, in float64 as the reference computes it, clipped
    to [-2, size + 1] (NaN -> -2), as a GridSample grid (zeros padding reads out-of-image taps as 0,
    align_corners 0); a pixel with k = 0 is 0 (Where)."""
    batch, height, width, _ = b.shape(0)
    size = int(np.prod(b.shape(1)))
    if size not in (8, 8 * batch):
        raise Unlowerable(f"in[1] holds {size} values: neither 8 nor 8 per image ({8 * batch})")
    interp = b.p.int("interpolation_mode", 0)
    if interp not in (0, 1):
        raise Unlowerable(f"interpolation_mode {interp} is not BILINEAR (0) or NEAREST_NEIGHBOR (1)")
    n = size // 8
    t = b.node("Reshape", [b.cast(b.input(1), T.DOUBLE), b.i64([n, 1, 1, 8])])
    a0, a1, a2, b0, b1, b2, c0, c1 = (b.node("Squeeze", [_col(b, t, i), b.i64([-1])]) for i in range(8))
    yy, xx = np.meshgrid(np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64), indexing="ij")
    xx_, yy_ = b.const(xx[None], T.DOUBLE), b.const(yy[None], T.DOUBLE)
    k = _arith(b, "Add", _arith(b, "Add", _arith(b, "Mul", c0, xx_), _arith(b, "Mul", c1, yy_)), 1.0)
    ok = b.node("Not", [b.node("Equal", [k, b.like(0.0, k)], out_type=T.BOOL)], out_type=T.BOOL)
    ks = b.node("Where", [ok, k, b.like(1.0, k)], out_type=T.DOUBLE)

    def source(p0: str, p1: str, p2: str, limit: int) -> str:
        v = _arith(b, "Div", _arith(b, "Add", _arith(b, "Add", _arith(b, "Mul", p0, xx_), _arith(b, "Mul", p1, yy_)),
                                    p2), ks)  # fmt: skip
        clipped = b.node("Clip", [v, b.like(-2.0, v), b.like(float(limit + 1), v)])
        return b.node("Where", [b.node("IsNaN", [v], out_type=T.BOOL), b.like(-2.0, v), clipped], out_type=T.DOUBLE)

    sx, sy = source(a0, a1, a2, width), source(b0, b1, b2, height)  # [n, H, W]
    grid = _sample_grid(b, sx, sy, (height, width), "away" if interp == 1 else None)
    if n != batch:
        grid = b.node("Expand", [grid, b.i64([batch, height, width, 2])])
    x = b.input(0, [0, 3, 1, 2])
    sample = b.node("GridSample", [x, grid], mode=GRID_MODES[interp], padding_mode="zeros", align_corners=0)
    out = b.node("Where", [b.node("Unsqueeze", [ok, b.i64([1])]), sample, b.like(0.0, sample)],
                 out_type=b.types[sample])  # fmt: skip
    return [b.transpose(b.on_output_grid(out), [0, 2, 3, 1])]


def _axis_aligned_bbox_transform(b: Builder) -> list[str]:
    """No box-regression op: the NNAPI transform element-wise on [num_rois, classes, 1] columns (deltas
    divided by the weights, sizes scaled by Exp), clipped with Max/Min against the in[3] row Gathered
    by batch index; out[1] (when declared) counts each batch index: Equal against 0..batches-1, summed."""
    n, k4 = b.shape(1)
    wts = np.asarray(b.p.get("weights", [1.0, 1.0, 1.0, 1.0]), np.float64).reshape(-1)
    if wts.size != 4 or np.any(wts == 0):
        raise Unlowerable(f"weights {wts.tolist()} are not 4 non-zero values")
    # each reshape back on its input's grid (exact): a QDQ unit, which ORT's QDQ propagation needs
    boxes = _on_input_grid(b, 0, b.node("Reshape", [b.input(0), b.i64([n, 1, 4])]))
    deltas = _on_input_grid(b, 1, b.node("Reshape", [b.input(1), b.i64([n, k4 // 4, 4])]))
    deltas = b.node("Div", [deltas, b.like(wts, deltas)])
    x1, y1, x2, y2 = (_on_input_grid(b, 0, _col(b, boxes, i)) for i in range(4))
    dx, dy, dw, dh = (_col(b, deltas, i) for i in range(4))
    w, h = _arith(b, "Sub", x2, x1), _arith(b, "Sub", y2, y1)
    cx, cy = _arith(b, "Add", x1, _arith(b, "Mul", w, 0.5)), _arith(b, "Add", y1, _arith(b, "Mul", h, 0.5))
    pw, ph = _arith(b, "Mul", w, b.node("Exp", [dw])), _arith(b, "Mul", h, b.node("Exp", [dh]))
    pcx, pcy = _arith(b, "Add", cx, _arith(b, "Mul", dx, w)), _arith(b, "Add", cy, _arith(b, "Mul", dy, h))
    bidx = _batch_index(b, 2, b.shape(3)[0])
    sizes = b.node("Unsqueeze", [b.node("Gather", [b.input(3), bidx], axis=0), b.i64([1])])  # [n, 1, 2]
    sizes = _on_input_grid(b, 3, sizes)
    img_h, img_w = _on_input_grid(b, 3, _col(b, sizes, 0)), _on_input_grid(b, 3, _col(b, sizes, 1))

    def clip(v: str, hi: str) -> str:
        return b.node("Min", [b.node("Max", [v, b.like(0.0, v)]), b.cast(hi, b.types[v])])

    half_w, half_h = _arith(b, "Mul", pw, 0.5), _arith(b, "Mul", ph, 0.5)
    corners = [clip(_arith(b, "Sub", pcx, half_w), img_w), clip(_arith(b, "Sub", pcy, half_h), img_h),
               clip(_arith(b, "Add", pcx, half_w), img_w), clip(_arith(b, "Add", pcy, half_h), img_h)]  # fmt: skip
    out = [b.node("Reshape", [b.node("Concat", corners, axis=-1), b.i64([n, k4])])]
    if len(b.case.outputs) > 1:
        batches = b.shape(3)[0]
        idx = b.node("Unsqueeze", [bidx, b.i64([1])])
        hits = b.node("Equal", [idx, b.i64(np.arange(batches)[None, :].tolist())], out_type=T.BOOL)
        counts = b.node("ReduceSum", [b.cast(hits, T.INT32), b.i64([0])], keepdims=0)
        out.append(b.converts(counts))
    return out


# ---- the table ------------------------------------------------------------------------------------
LOWERINGS: dict[str, Lowering] = {
    # element-wise unary
    "ElementWiseAbs": UNARY_ENUM[0], "ElementWiseAsin": UNARY_ENUM[1], "ElementWiseAtan": UNARY_ENUM[2],
    "ElementWiseCeil": UNARY_ENUM[3], "ElementWiseCos": UNARY_ENUM[4], "ElementWiseExp": UNARY_ENUM[5],
    "ElementWiseFloor": UNARY_ENUM[6], "ElementWiseLog": UNARY_ENUM[7], "ElementWiseNeg": UNARY_ENUM[8],
    "ElementWiseNot": UNARY_ENUM[9], "ElementWiseRound": UNARY_ENUM[11], "ElementWiseRsqrt": UNARY_ENUM[12],
    "ElementWiseSign": UNARY_ENUM[13], "ElementWiseSin": UNARY_ENUM[14], "ElementWiseSquareRoot": UNARY_ENUM[15],
    "ElementWiseUnary": by_operation(UNARY_ENUM, "ElementWiseUnary"),
    "IsInf": _is_inf, "IsNan": lambda b: [b.node("IsNaN", [b.input(0)], out_type=T.BOOL)],
    # element-wise binary
    "ElementWiseAdd": BINARY_ENUM[0], "ElementWiseAnd": BINARY_ENUM[1], "ElementWiseDivide": BINARY_ENUM[2],
    "ElementWiseEqual": BINARY_ENUM[3], "ElementWiseFloorDiv": BINARY_ENUM[4], "ElementWiseFmod": BINARY_ENUM[5],
    "ElementWiseGreater": BINARY_ENUM[6], "ElementWiseGreaterEqual": BINARY_ENUM[7],
    "ElementWiseLess": BINARY_ENUM[8], "ElementWiseLessEqual": BINARY_ENUM[9], "ElementWiseMaximum": BINARY_ENUM[10],
    "ElementWiseMinimum": BINARY_ENUM[11], "ElementWiseMod": BINARY_ENUM[12], "ElementWiseMultiply": BINARY_ENUM[13],
    "ElementWiseNotEqual": BINARY_ENUM[14], "ElementWiseOr": BINARY_ENUM[15], "ElementWisePower": BINARY_ENUM[16],
    "ElementWiseSquaredDifference": BINARY_ENUM[17], "ElementWiseSubtract": BINARY_ENUM[18],
    "ElementWiseXor": BINARY_ENUM[19], "ElementWiseBinary": by_operation(BINARY_ENUM, "ElementWiseBinary"),
    "ElementWiseSelect": _select,
    # activations
    "ElementWiseNeuron": _neuron, "Elu": _elu, "Gelu": unary("Gelu"), "HardSwish": unary("HardSwish"),
    "Relu": unary("Relu"), "Relu1": clip(-1.0, 1.0), "Relu6": clip(0.0, 6.0), "ReluMinMax": clip(None, None),
    "Sigmoid": unary("Sigmoid"), "Tanh": unary("Tanh"), "ElementWiseSoftplus": _elementwise_softplus,
    "Prelu": binary("PRelu"), "Softmax": softmax("Softmax"), "LogSoftmax": softmax("LogSoftmax"),
    "Batchnorm": _batchnorm, "LayerNorm": _layer_norm,
    # data movement
    "Transpose": _transpose, "Concat": _concat, "Reshape": _to_declared_shape, "ExpandDims": _to_declared_shape,
    "Squeeze": _to_declared_shape, "Tile": _tile, "Pad": _pad, "Split": _split, "Pack": _pack, "UnPack": _unpack,
    "StridedSlice": _strided_slice, "Gather": _gather, "GatherElements": _gather_elements, "GatherNd": _gather_nd,
    "ScatterElements": scatter("ScatterElements", {0: "none", 1: "add", 2: "mul", 3: "max"}),
    "ScatterNd": scatter("ScatterND", {0: "none", 1: "add", 2: "mul"}),
    "Cast": _identity, "Convert": _identity, "Quantize": _identity, "Dequantize": _identity,
    "Shape": _shape, "OneHot": _one_hot,
    # reductions
    "ReduceMax": reduction("ReduceMax"), "ReduceMean": reduction("ReduceMean"), "ReduceMin": reduction("ReduceMin"),
    "ReduceProd": reduction("ReduceProd"), "ReduceSum": reduction("ReduceSum"),
    "ReduceSumSquare": reduction("ReduceSumSquare"), "Argmax": arg_reduction("ArgMax"),
    "Argmin": arg_reduction("ArgMin"), "CumulativeSum": _cumsum, "TopK": _topk,
    # linear algebra and layout ops
    "MatMul": _matmul, "FullyConnected": _fully_connected,
    "Conv1d": conv(), "Conv2d": conv(), "Conv3d": conv(), "DepthWiseConv1d": conv(True),
    "DepthWiseConv2d": conv(True), "PoolMax2d": pool("MaxPool"), "PoolMax3d": pool("MaxPool"),
    "PoolAvg2d": pool("AveragePool"), "PoolAvg3d": pool("AveragePool"),
    "DepthToSpace": depth_space("DepthToSpace"), "SpaceToDepth": depth_space("SpaceToDepth"),
    "Resize": resize("Resize"), "ResizeBilinear": resize("bilinear"), "ResizeNearestNeighbor": resize("nearest"),
    "TransposeConv1d": transpose_conv, "TransposeConv2d": transpose_conv, "TransposeConv3d": transpose_conv,
    "L2Pool2d": _l2_pool, "Im2Col": _im2col, "Col2Im": _col2im, "Correlation1D": _correlation_1d,
    "GridSample": _grid_sample, "RoiAlign": _roi_align, "RoiPooling": _roi_pooling, "Stft": _stft,
    "ArgbToRgb": _argb_to_rgb, "CropAndResize": _crop_and_resize,
    "ImageProjectionTransform": _image_projection_transform,
    "AxisAlignedBboxTransform": _axis_aligned_bbox_transform,
}  # fmt: skip


def supported() -> list[str]:
    return sorted(LOWERINGS)


def lower(case: Case) -> Lowered:
    """The ONNX model for ``case``; raises Unlowerable when there is none."""
    fn = LOWERINGS.get(case.op)
    if fn is None:
        raise Unlowerable(f"no ONNX lowering for {case.op}")
    b = Builder(case)
    try:
        values = fn(b)
    except Unlowerable:
        raise
    except (ValueError, IndexError, KeyError, TypeError) as e:  # a param the lowering cannot read
        raise Unlowerable(f"{case.op}: cannot lower: {type(e).__name__}: {e}") from None
    return b.finish(values)


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


@functools.cache
def coverage() -> dict[str, list[str]]:
    """QNN ops with and without a lowering, over the specs in opdefs/."""
    names = sorted(opdefs.load_all())
    return {"lowered": [n for n in names if n in LOWERINGS], "not_lowered": [n for n in names if n not in LOWERINGS]}
