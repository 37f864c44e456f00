"""Converter-standard forms of a case: what the probe of a refused cell tries before calling it unsupported.

Why: a cell whose every typical case a backend refuses reads "REJ", and a converter or execution provider
reads that as "do not offload this op in these datatypes". But a case may be refused for the form the
suite built it in rather than for the op and datatypes: 16-bit weights where converters emit 8-bit ones, a
bias in the activations' type where converters emit a 32-bit one scaled in_scale x w_scale, a 4-bit weight in
the plain 4-bit datatype where ONNX Runtime's QNN EP hands it over in an 8-bit container with a bit-width
encoding, an output grid the backend fixes for a bounded function. Each form here is one such convention,
applied to a drawn case as one change (the same values, requantized); ``variants`` gives every form that
changes the case, then all of them together (the converter's whole form). Which inputs are weights and which
a bias comes from the spec (``static``, ``encoding_from``), a fixed output grid from ``fixed_encoding``.

Sources of the conventions (facts, not code): ONNX Runtime's QNN EP (onnxruntime/core/providers/qnn/:
qnn_quant_params_wrapper.cc for the bit-width encodings of INT4 weights, simple_op_builder.cc for the
fixed 16-bit Sigmoid/Tanh output grids) and its tests (onnxruntime/test/providers/qnn/: 16-bit activations
with 8-bit weights, gamma and scale; 32-bit biases); QNN's public QnnTypes.h for the bit-width encodings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from cases import quant
from cases.case import Case, Encoding, Tensor, encoding_for_range
from cases.generate import configs, first_index, is_weight
from cases.quant import code_range
from opdefs import OpDef, TensorSpec, dtypes

Infer = Callable[[OpDef, Case], "list[np.ndarray] | None"]


@dataclass(frozen=True)
class Form:
    """One convention: ``name`` is what the matrix says a converter must emit; ``change`` turns a case into
    that form (or returns None where the convention does not apply or changes nothing)."""

    name: str
    change: Callable[[OpDef, Case], Case | None]
    why: str


def requantized(t: Tensor, dtype: str, enc: Encoding) -> Tensor:
    """``t``'s real values on another datatype and grid, rounded to nearest and saturated to its codes."""
    return replace(t, dtype=dtype, data=quant.quantize(quant.real_value(t), enc, dtype), encoding=enc)


def symmetric_grid(real: np.ndarray, dtype: str, axis: int | None) -> Encoding:
    """A signed grid symmetric about zero (offset 0), per axis when ``axis`` is given, as converters quantize
    weights: each channel's largest magnitude on the largest code."""
    _, qmax = code_range(dtype)
    if axis is None:
        top = float(np.max(np.abs(real))) if real.size else 1.0
        return Encoding((float(np.float32(max(top, 1e-6) / qmax)),), (0,))
    moved = np.moveaxis(np.abs(real), axis, 0).reshape(real.shape[axis], -1)
    tops = moved.max(axis=1) if moved.size else np.ones(real.shape[axis])
    return Encoding(tuple(float(np.float32(max(x, 1e-6) / qmax)) for x in tops), (0,) * len(tops), axis)


def _inputs(op: OpDef, case: Case, wanted: Callable[[TensorSpec], bool]) -> list[int]:
    """Positions of the present quantized inputs whose declaration ``wanted`` selects."""
    out = []
    for k, t in enumerate(case.inputs):
        decl = _decl(op, k)
        if t is not None and decl is not None and wanted(decl) and dtypes.get(t.dtype).quantized and t.encoding:
            out.append(k)
    return out


def _decl(op: OpDef, k: int) -> TensorSpec | None:
    """The declaration input ``k`` falls under (a repeated one covers a range)."""
    found = None
    for d in op.input_specs:
        if d.first_index <= k:
            found = d
    return found


def _with_inputs(case: Case, changed: dict[int, Tensor]) -> Case:
    return replace(case, inputs=[changed.get(k, t) for k, t in enumerate(case.inputs)], steps=list(case.steps))


def _bits(t: Tensor) -> int:
    return t.encoding.bitwidth or dtypes.get(t.dtype).bits


def weights_8bit(op: OpDef, case: Case) -> Case | None:
    """Weights, gamma, beta and scales of another width at 8 bits (unsigned ones asymmetric, as the QNN
    converters' default quantizer does; signed ones symmetric), the activations left as they are."""
    changed = {}
    for k in _inputs(op, case, is_weight):
        t = case.inputs[k]
        if _bits(t) in (8, 4):
            continue
        real = quant.real_value(t)
        if dtypes.get(t.dtype).kind == "sfixed":
            changed[k] = requantized(t, "SFIXED_POINT_8", symmetric_grid(real, "SFIXED_POINT_8", t.encoding.axis))
        else:
            enc = encoding_for_range(float(real.min(initial=0.0)), float(real.max(initial=0.0)), "UFIXED_POINT_8")
            changed[k] = requantized(t, "UFIXED_POINT_8", enc)
    return _with_weights(op, case, changed)


def signed_8bit_weights(op: OpDef, case: Case) -> Case | None:
    """Weights, gamma, beta and scales as signed symmetric 8-bit values (offset 0), per axis where they were."""
    changed = {}
    for k in _inputs(op, case, is_weight):
        t = case.inputs[k]
        if _bits(t) == 4 or (t.dtype == "SFIXED_POINT_8" and all(o == 0 for o in t.encoding.offsets)):
            continue
        real = quant.real_value(t)
        changed[k] = requantized(t, "SFIXED_POINT_8", symmetric_grid(real, "SFIXED_POINT_8", t.encoding.axis))
    return _with_weights(op, case, changed)


def symmetric_weights(op: OpDef, case: Case) -> Case | None:
    """Weights of the same width, signed and symmetric (offset 0): a converter's symmetric weight quantizer."""
    changed = {}
    for k in _inputs(op, case, is_weight):
        t = case.inputs[k]
        d = dtypes.get(t.dtype)
        if t.encoding.bitwidth or d.bits == 4 or (d.kind == "sfixed" and all(o == 0 for o in t.encoding.offsets)):
            continue
        signed = t.dtype.replace("UFIXED", "SFIXED")
        changed[k] = requantized(t, signed, symmetric_grid(quant.real_value(t), signed, t.encoding.axis))
    return _with_weights(op, case, changed)


def bias_32bit(op: OpDef, case: Case) -> Case | None:
    """A bias as converters encode it: SFIXED_POINT_32, scale in_scale x w_scale (per output channel when the
    weights are per axis), offset 0, so it adds straight into the accumulator; a bias the spec marks ``role:
    bias`` without ``encoding_from`` (a normalisation's beta, a gate's bias) on a fine 32-bit grid, offset 0."""
    changed = {}
    for k in _inputs(op, case, lambda decl: decl.role == "bias" and not decl.encoding_from):
        t = case.inputs[k]  # a bias no product of scales gives (a beta, a gate's bias): a fine grid, offset 0
        real = quant.real_value(t)
        top = float(np.max(np.abs(real))) if real.size else 1.0
        enc = Encoding((float(np.float32(max(top, 1e-6) / (1 << 24))),), (0,))
        if t.dtype != "SFIXED_POINT_32" or any(o != 0 for o in t.encoding.offsets):
            changed[k] = requantized(t, "SFIXED_POINT_32", enc)
    changed.update(_scaled_biases(op, case))
    return _with_inputs(case, changed) if changed else None


def _scaled_biases(op: OpDef, case: Case, only_32bit: bool = False) -> dict[int, Tensor]:
    """The biases the spec scales by in[0] and the weights (``encoding_from``), on SFIXED_POINT_32 at in_scale x
    w_scale with offset 0; ``only_32bit``: only those already 32-bit (re-scaled after the weights changed)."""
    changed = {}
    for k in _inputs(op, case, lambda decl: bool(decl.encoding_from)):
        t = case.inputs[k]
        refs = [first_index(r) for r in _decl(op, k).encoding_from]
        if any(r >= len(case.inputs) or case.inputs[r] is None or case.inputs[r].encoding is None for r in refs):
            continue
        if only_32bit and t.dtype != "SFIXED_POINT_32":
            continue
        x, w = case.inputs[refs[0]], case.inputs[refs[1]]
        s_in = x.encoding.scales[0]
        if w.encoding.per_axis and len(w.encoding.scales) == t.shape[0] and len(t.shape) == 1:
            enc = Encoding(tuple(float(np.float32(s_in * s)) for s in w.encoding.scales), (0,) * t.shape[0], 0)
        else:
            enc = Encoding((float(np.float32(s_in * w.encoding.scales[0])),), (0,))
        if t.dtype == "SFIXED_POINT_32" and t.encoding == enc:
            continue
        changed[k] = requantized(t, "SFIXED_POINT_32", enc)
    return changed


def _with_weights(op: OpDef, case: Case, changed: dict[int, Tensor]) -> Case | None:
    """``case`` with its weights changed, and a 32-bit bias the spec scales by the weights re-scaled to follow
    them: a converter derives it from the weights it emits (an 8-bit-weights form that kept the bias scaled for
    the 16-bit weights handed the backend a bias 256 times too coarse or fine)."""
    if not changed:
        return None
    out = _with_inputs(case, changed)
    rescaled = _scaled_biases(op, out, only_32bit=True)
    return _with_inputs(out, rescaled) if rescaled else out


def bitwidth_4bit_weights(op: OpDef, case: Case) -> Case | None:
    """4-bit weights as ONNX Runtime's QNN EP hands them to QNN: the same codes in an 8-bit container of the same
    signedness, with a bit-width-4 encoding (per axis where they were)."""
    changed = {}
    for k in _inputs(op, case, is_weight):
        t = case.inputs[k]
        if dtypes.get(t.dtype).bits != 4:
            continue
        container = t.dtype.replace("_4", "_8")
        enc = replace(t.encoding, bitwidth=4)
        changed[k] = replace(t, dtype=container, data=np.asarray(t.data).astype(dtypes.get(container).storage),
                             encoding=enc)  # fmt: skip
    return _with_inputs(case, changed) if changed else None


def fixed_output_encoding(op: OpDef, case: Case) -> Case | None:
    """An output of a bounded function on the grid the spec says converters fix and the backend requires."""
    outs = list(case.outputs)
    changed = False
    for i, t in enumerate(outs):
        fixed = op.fixed_encoding(i, t.dtype)
        if fixed is not None and t.encoding != Encoding((fixed[0],), (fixed[1],)):
            outs[i] = replace(t, encoding=Encoding((fixed[0],), (fixed[1],)))
            changed = True
    return replace(case, outputs=outs, steps=list(case.steps)) if changed else None


def weights_16bit_bias_32bit(op: OpDef, case: Case) -> Case | None:
    """16a16w as converters that choose it emit it: beside 16-bit activations, 16-bit weights signed and symmetric
    (offset 0, per axis where they were) and a 32-bit bias. Why a form of its own: the symmetric-weights form keeps a
    16-bit bias, which the HTP refuses for these datatypes, so a probe never showed where 16a16w runs."""
    x = case.inputs[0] if case.inputs else None
    if x is None or x.encoding is None or dtypes.get(x.dtype).bits != 16:
        return None
    changed = {}
    for k in _inputs(op, case, is_weight):
        t = case.inputs[k]
        if _bits(t) != 16:
            return None
        if t.dtype == "SFIXED_POINT_16" and all(o == 0 for o in t.encoding.offsets):
            continue
        changed[k] = requantized(t, "SFIXED_POINT_16",
                                 symmetric_grid(quant.real_value(t), "SFIXED_POINT_16", t.encoding.axis))  # fmt: skip
    if not _inputs(op, case, is_weight):
        return None
    base = _with_inputs(case, changed) if changed else case
    return bias_32bit(op, base) or (base if changed else None)


FORMS: tuple[Form, ...] = (
    Form("8-bit weights", weights_8bit, "weights, gamma and scale at 8 bits beside wider activations"),
    Form("signed symmetric 8-bit weights", signed_8bit_weights, "per-channel and per-tensor symmetric int8 weights"),
    Form("symmetric weights", symmetric_weights, "signed weights of the same width with offset 0"),
    Form("32-bit bias", bias_32bit, "a 32-bit bias with offset 0, scaled in_scale x w_scale where the spec says so"),
    Form("4-bit weights in an 8-bit container (bit-width encoding)", bitwidth_4bit_weights,
         "INT4 weights as ONNX Runtime's QNN EP hands them over"),
    Form("fixed output encoding", fixed_output_encoding, "the output grid a bounded function's backend requires"),
    Form("16a16w: symmetric 16-bit weights, 32-bit bias", weights_16bit_bias_32bit,
         "16-bit activations and weights, as converters emit them where they choose 16-bit weights"),
)
CONVERTER_FORM = "converter form (all conventions together)"
# the forms a converter applies together: 8-bit weights (as the weights' own signedness gives, or signed
# symmetric; 4-bit ones in the bit-width encoding), a 32-bit bias, the fixed output grid
_TOGETHER = ((bitwidth_4bit_weights, weights_8bit, bias_32bit, fixed_output_encoding),
             (bitwidth_4bit_weights, signed_8bit_weights, bias_32bit, fixed_output_encoding))


def _changes(before: Case, after: Case) -> str:
    """What a form changed, as a converter would read it: "in[1] SFIXED_POINT_8 symmetric, in[2] SFIXED_POINT_32"."""
    parts = []
    for k, (a, b) in enumerate(zip(before.inputs, after.inputs, strict=True)):
        if a is not None and b is not None and (a.dtype != b.dtype or a.encoding != b.encoding):
            parts.append(f"in[{k}] {_describe(b)}")
    for i, (a, b) in enumerate(zip(before.outputs, after.outputs, strict=True)):
        if a.encoding != b.encoding or a.dtype != b.dtype:
            enc = b.encoding
            parts.append(f"out[{i}] {b.dtype} scale {enc.scales[0]:.6g} offset {enc.offsets[0]}")
    return ", ".join(parts)


def _describe(t: Tensor) -> str:
    enc = t.encoding
    marks = []
    if enc is not None and enc.bitwidth:
        marks.append(f"bit-width {enc.bitwidth}")
    d = dtypes.get(t.dtype)
    if enc is not None and all(o == 0 for o in enc.offsets) and d.kind == "sfixed" and d.bits < 32:
        marks.append("symmetric")
    if enc is not None and enc.per_axis:
        marks.append("per axis")
    return t.dtype + (f" ({', '.join(marks)})" if marks else "")


def _recalibrated(op: OpDef, case: Case, infer: Infer | None) -> Case:
    """The outputs' grids calibrated again on what the changed case produces (as a QDQ flow does), except a grid
    the spec fixes: requantized weights move the results a little, and an output grid calibrated on the old
    values would cut them at its ends."""
    if infer is None or not any(dtypes.get(t.dtype).quantized for t in case.outputs):
        return case
    try:
        real = infer(op, case)
    except Exception:  # noqa: BLE001 - the reference cannot say: the drawn grids stay
        return case
    if real is None or len(real) < len(case.outputs):
        return case
    outs = []
    for i, t in enumerate(case.outputs):
        keep = not dtypes.get(t.dtype).quantized or op.fixed_encoding(i, t.dtype) is not None or t.encoding is None \
            or t.encoding.per_axis  # fmt: skip
        values = np.asarray(real[i], dtype=np.float64)
        values = values[np.isfinite(values)]
        if keep or not values.size:
            outs.append(t)
            continue
        outs.append(replace(t, encoding=encoding_for_range(float(values.min()), float(values.max()), t.dtype)))
    return replace(case, outputs=outs, steps=list(case.steps))


def variants(op: OpDef, case: Case, infer: Infer | None = None) -> list[tuple[str, Case]]:
    """Every standard form that changes ``case``, one change at a time, then all of them together where that
    differs from each alone: ``(name, case)`` pairs, the name saying what changed ("32-bit bias: in[2]
    SFIXED_POINT_32"). The variants keep the case's configuration label (the probe belongs to the
    cell) and say which form they are in ``strategy``."""
    out: list[tuple[str, Case]] = []
    for form in FORMS:
        changed = form.change(op, case)
        if changed is not None:
            out.append((f"{form.name}: {_changes(case, changed)}", changed))
    for changes in _TOGETHER:
        together: Case = case
        for change in changes:
            together = change(op, together) or together
        if together is not case and all(_changes(case, together) != _changes(case, c) for _, c in out):
            out.append((f"{CONVERTER_FORM}: {_changes(case, together)}", together))
    return [(name, replace(_recalibrated(op, c, infer), strategy=f"probe:{name.split(':')[0]}")) for name, c in out]


# ---- beyond the spec: datatypes the MasterOpDef does not list for an op ----------------------------------------------
BEYOND_SPEC = "beyond the spec"
# The activation datatypes HTP kernels take across its op set (the six the backend's refusals list as supported sets).
# An op the MasterOpDef lists in fewer (ElementWiseRsqrt: float only) may still run in the others, and a converter
# that read only the spec would never offload it: the probe asks once per op, and the capability envelope says so.
HTP_DATATYPES = ("FLOAT_32", "FLOAT_16", "UFIXED_POINT_8", "SFIXED_POINT_8", "UFIXED_POINT_16", "SFIXED_POINT_16")


def listed_datatypes(op: OpDef) -> set[str]:
    """The datatypes the op's configurations give in[0] (the spec's lists, as the generator reads them); none for an op
    whose out[0] takes another datatype than in[0] in some configuration (Dequantize, IsNan): its datatypes are the
    op's meaning, and another one for in[0] alone asks a different question."""
    if not op.input_specs or not op.output_specs:
        return set()
    first, out = op.input_specs[0].name, op.output_specs[0].name
    listed = [(c.dtype_of(first), c.dtype_of(out)) for c in configs(op)]
    return {a for a, _ in listed} if all(a == b for a, b in listed) else set()


def beyond_spec(op: OpDef, case: Case, infer: Infer | None = None) -> list[tuple[str, Case]]:
    """``case`` with in[0] and every tensor of its datatype (inputs with data, and outputs) in each HTP datatype the
    spec does not list for in[0]: ``(name, case)`` pairs, the name "beyond the spec: in[0], out[0] UFIXED_POINT_8".
    Same real values, requantized onto a grid covering them; quantized outputs on a grid covering what the reference
    says they hold. Nothing for a case with several executions or an in[0] of another kind (indices, booleans)."""
    first = case.inputs[0] if case.inputs else None
    if first is None or first.data is None or first.dtype not in HTP_DATATYPES or case.steps:
        return []
    listed = listed_datatypes(op)
    if not listed:
        return []
    out = []
    for dtype in HTP_DATATYPES:
        if dtype in listed:
            continue
        changed = _retyped(op, case, first.dtype, dtype, infer)
        if changed is not None:
            names = [f"in[{k}]" for k, t in enumerate(case.inputs) if t is not None and t.dtype == first.dtype]
            names += [f"out[{i}]" for i, t in enumerate(case.outputs) if t.dtype == first.dtype]
            name = f"{BEYOND_SPEC}: {', '.join(names)} {dtype}"
            out.append((name, replace(changed, strategy=f"probe:{BEYOND_SPEC}")))
    return out


def _retyped(op: OpDef, case: Case, old: str, new: str, infer: Infer | None) -> Case | None:
    quantized = dtypes.get(new).quantized
    storage = dtypes.get(new).storage
    inputs: list[Tensor | None] = []
    for t in case.inputs:
        if t is None or t.dtype != old or t.data is None:
            inputs.append(t)
            continue
        real = quant.real_value(t)
        if quantized:
            finite = real[np.isfinite(real)]
            lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            inputs.append(requantized(t, new, encoding_for_range(lo, hi, new)))
        else:
            inputs.append(replace(t, dtype=new, data=real.astype(storage), encoding=None))
    outputs = [replace(t, dtype=new, encoding=None) if t.dtype == old else t for t in case.outputs]
    changed = replace(case, inputs=inputs, outputs=outputs, steps=[])
    if not quantized:
        return changed
    real_out = None
    if infer is not None:
        try:
            real_out = infer(op, changed)
        except Exception:  # noqa: BLE001 - the reference cannot say: no grid to put the outputs on
            real_out = None
    if real_out is None or len(real_out) < len(outputs):
        return None
    for i, t in enumerate(outputs):
        if t.dtype == new:
            values = np.asarray(real_out[i], dtype=np.float64)
            values = values[np.isfinite(values)]
            lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
            outputs[i] = replace(t, encoding=encoding_for_range(lo, hi, new))
    return replace(changed, outputs=outputs)


def beyond_spec_config(op: OpDef) -> str | None:
    """The configuration whose first typical case the probe retypes beyond the spec (once per op): the op's first
    whose in[0] takes an HTP datatype, when the spec leaves some HTP datatype out; None otherwise."""
    listed = listed_datatypes(op)
    if not listed or set(HTP_DATATYPES) <= listed:
        return None
    first = op.input_specs[0].name
    return next((c.label for c in configs(op) if c.dtype_of(first) in HTP_DATATYPES), None)
