"""The kinds of bug real backends have, as small builders: each gives a ``Mutant`` that says what it changes.

A mutant changes a backend in one of three places, whichever the bug lives in:
- ``rewrite``: what the base backend is handed (a parameter ignored is the case with the parameter at its
  default; a bias dropped is the case with a zero bias). The base computes it with its own kernels, so its
  own precision and quirks stay.
- ``recompute``: the numbers, where the base cannot be handed the bug's form (an HTP that runs Softmax only
  on the last axis refuses the case whose axis a bug reads from the other end). The base still runs the real
  case and its status stands (a refusal stays a refusal); its outputs are replaced by the reference's outputs
  of the bug's case, stored in the declared output types.
- ``alter``: what the base says (a crash, a finalize error, codes a few steps off, float16 rounding, a
  vector loop's tail).
Every mutant applies only where its ``when`` holds and the change makes a difference there (a parameter
"ignored" where it already holds its default is no bug).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from adapters.base import CRASH, ERROR, OK, Outcome
from cases.case import Case, Param, Tensor
from opdefs import dtypes

# The kinds the issue lists, as the report names them.
PARAM_IGNORED = "parameter ignored"
AXIS_REVERSED = "axis read from the other end"
ENUM_AS_OTHER = "enum member computed as another"
INPUT_DROPPED = "bias or optional input dropped"
TAIL = "rank-, parity- or size-dependent tail"
LAYOUT = "layout mix-up"
SIGN_S8 = "signed 8-bit sign or zero point"
FP16 = "float32 rounded to float16"
REQUANT = "requantization off by a few steps"
FAULT = "crash or finalize error for one value"
PRECISION = "arithmetic precision (a dropped low byte, a short table, a rounding mode, a narrow accumulator)"
SIZE = "size-dependent (a vector loop's tail, a tile boundary, a long accumulation)"
KINDS = (PARAM_IGNORED, AXIS_REVERSED, ENUM_AS_OTHER, INPUT_DROPPED, TAIL, LAYOUT, SIGN_S8, FP16, REQUANT, FAULT,
         PRECISION, SIZE)
# where a precision mutant is planted: a cell an accuracy finding covers (its band or model must not hide the bug)
# or a clean one (the budget alone must catch it); the headline counts both (issue 40)
FINDING_GROUND, CLEAN_GROUND = "finding cells", "clean cells"

CaseTest = Callable[[Case], bool]


@dataclass(frozen=True)
class Mutant:
    name: str  # a Python identifier: it is the last part of the factory reference --backend takes
    ops: tuple[str, ...]
    kind: str
    what: str  # one sentence: what the bug does, for the report
    when: CaseTest
    rewrite: Callable[[Case], Case] | None = None
    recompute: Callable[[Case], Case] | None = None
    alter: Callable[[Case, Outcome], Outcome] | None = None
    reproduces: str = ""  # the id of the finding whose bug this is exactly: its swallowing is expected
    ground: str = ""  # FINDING_GROUND or CLEAN_GROUND for the precision family, "" for the others

    def applies(self, case: Case) -> bool:
        if case.op not in self.ops:
            return False
        try:
            return bool(self.when(case))
        except (KeyError, IndexError, TypeError, ValueError):  # a case the condition cannot read is not the bug's
            return False

    def before(self, case: Case) -> Case:
        return self.rewrite(copy.deepcopy(case)) if self.rewrite else case

    def after(self, case: Case, outcome: Outcome) -> Outcome:
        if self.recompute is not None and outcome.status == OK:
            outcome = replace(outcome, outputs=reference_outputs(self.recompute(copy.deepcopy(case))))
        if self.alter is not None:
            outcome = self.alter(case, outcome)
        return outcome


# ---- reading a case ----------------------------------------------------------------------------------
@functools.cache
def _defaults(op: str) -> dict[str, Any]:
    import opdefs

    return opdefs.load(op).param_defaults()


def value(case: Case, name: str) -> Any:
    """A parameter's value as plain Python (a vector as a list); left out, the spec's default."""
    p = case.params.get(name)
    if p is None:
        return _defaults(case.op).get(name)
    return p.value.tolist() if isinstance(p.value, np.ndarray) else p.value


def rank(case: Case, i: int = 0) -> int:
    return len(case.inputs[i].shape)


def dtype(case: Case, i: int = 0) -> str:
    return case.inputs[i].dtype


def out_dtype(case: Case, i: int = 0) -> str:
    return case.outputs[i].dtype


def present(case: Case, i: int) -> bool:
    return i < len(case.inputs) and case.inputs[i] is not None


# ---- changing a case -----------------------------------------------------------------------------------
def with_params(case: Case, **values: Any) -> Case:
    """``case`` with these parameter values (None: the parameter left out); types as the spec declares them."""
    import opdefs

    spec = opdefs.load(case.op)
    for name, v in values.items():
        if v is None:
            case.params.pop(name, None)
            continue
        old = case.params.get(name)
        kind = old.dtype if old is not None else spec.params[name]["dtype"]
        if isinstance(v, list | tuple) or (old is not None and isinstance(old.value, np.ndarray)):
            storage = dtypes.get(kind).storage
            v = np.asarray(v, dtype=storage).reshape(np.shape(old.value) if old is not None else np.shape(v))
        case.params[name] = Param(name, kind, v)
    return case


def zero_data(t: Tensor) -> np.ndarray:
    """Stored values whose real value is 0 (a fixed-point tensor's zero point, per axis where it has axes)."""
    d = dtypes.get(t.dtype)
    if not d.quantized:
        return np.zeros(t.shape, dtype=t.data.dtype)
    offsets = np.asarray(t.encoding.offsets, dtype=np.int64)
    if t.encoding.axis is not None:
        shape = [1] * len(t.shape)
        shape[t.encoding.axis] = offsets.size
        offsets = offsets.reshape(shape)
    return np.broadcast_to(np.clip(-offsets, d.qmin, d.qmax), t.shape).astype(d.storage)


def without_input(case: Case, i: int) -> Case:
    """The case with input ``i`` left out (the reference then computes the op without it)."""
    case.inputs[i] = None
    while case.inputs and case.inputs[-1] is None:
        case.inputs.pop()
    return case


# ---- what a bug does to the outputs ---------------------------------------------------------------------
def reference_outputs(case: Case) -> list[np.ndarray]:
    from reference.compare import encode_outputs
    from reference.expected import expected

    return encode_outputs(case, expected(case))


def budget_steps(case: Case, i: int = 0) -> float:
    """How many quantization steps output ``i``'s budget allows at most (the 16-bit budget's share of full
    scale counted at the grid's largest magnitude): a shift one step past it is just outside."""
    import opdefs
    from cases.quant import real_range
    from reference.tolerance import budget_for

    t = case.outputs[i]
    b = budget_for(t.dtype, opdefs.load(case.op).tolerance)
    lo, hi = real_range(t.encoding, t.dtype)
    scale = float(np.min(t.encoding.scales))
    return b.steps + b.range_rtol * float(np.max(np.abs(np.concatenate([np.ravel(lo), np.ravel(hi)])))) / scale


def shifted(steps: Callable[[Case, int], float], i: int = 0) -> Callable[[Case, Outcome], Outcome]:
    """Output ``i``'s codes moved up by ``steps`` (saturating at the type's top): a requantization off."""

    def alter(case: Case, outcome: Outcome) -> Outcome:
        if outcome.status != OK:
            return outcome
        d = dtypes.get(case.outputs[i].dtype)
        n = int(math.floor(steps(case, i))) + 1
        outs = list(outcome.outputs)
        codes = outs[i].astype(np.int64) + n
        # where the top of the grid would swallow the shift, the codes move down instead: every element is off
        codes = np.where(codes > d.qmax, outs[i].astype(np.int64) - n, codes)
        outs[i] = np.clip(codes, d.qmin, d.qmax).astype(outs[i].dtype)
        return replace(outcome, outputs=outs)

    return alter


def rounded_to_float16(case: Case, outcome: Outcome) -> Outcome:
    if outcome.status != OK:
        return outcome
    outs = [o.astype(np.float16).astype(o.dtype) if o.dtype == np.float32 else o for o in outcome.outputs]
    return replace(outcome, outputs=outs)


def tail_repeated(axis: int = -1, i: int = 0) -> Callable[[Case, Outcome], Outcome]:
    """A vector loop whose remainder lane is never written: the last element along ``axis`` repeats the one
    before it (where the axis has an odd length of 3 or more)."""

    def alter(case: Case, outcome: Outcome) -> Outcome:
        if outcome.status != OK:
            return outcome
        outs = list(outcome.outputs)
        o = np.array(outs[i], copy=True)
        last, before = [slice(None)] * o.ndim, [slice(None)] * o.ndim
        last[axis], before[axis] = -1, -2
        o[tuple(last)] = o[tuple(before)]
        outs[i] = o
        return replace(outcome, outputs=outs)

    return alter


def odd_tail(axis: int = -1, i: int = 0) -> CaseTest:
    return lambda case: case.outputs[i].shape[axis] % 2 == 1 and case.outputs[i].shape[axis] >= 3


def crashed(case: Case, outcome: Outcome) -> Outcome:
    """The worker dies executing a case the backend accepted (SIGSEGV), as a native kernel's crash does."""
    if outcome.status != OK:
        return outcome
    return Outcome(CRASH, message="the backend worker died with SIGSEGV while executing the case (planted)",
                   details={"stage": "execute", "signal": 11, "signal_name": "SIGSEGV"})  # fmt: skip


def finalize_failed(case: Case, outcome: Outcome) -> Outcome:
    """Validation accepted the case, graphFinalize then fails: the backend contradicts itself."""
    if outcome.status != OK:
        return outcome
    return Outcome(ERROR, message="graphFinalize failed: error 1002 (planted: no kernel for this value)",
                   details={"stage": "finalize", "call": "graphFinalize", "code": 1002})  # fmt: skip


# ---- builders ------------------------------------------------------------------------------------------
def param_as(name: str, op: str, param: str, to: Any, what: str, *, kind: str = PARAM_IGNORED,
             when: CaseTest | None = None, recompute: bool = False, reproduces: str = "") -> Mutant:  # fmt: skip
    """``param`` computed as ``to`` (a value, or a function of the case): its default, another member, the other
    end of the axes. Applies where the case's value differs from what the bug uses."""
    target = to if callable(to) else (lambda case: to)

    def differs(case: Case) -> bool:
        return value(case, param) != target(case) and (when is None or when(case))

    def bug(case: Case) -> Case:
        return with_params(case, **{param: target(case)})

    return Mutant(name, (op,), kind, what, differs, rewrite=None if recompute else bug,
                  recompute=bug if recompute else None, reproduces=reproduces)  # fmt: skip


def other_end(param: str) -> Callable[[Case], Any]:
    """The axis (or axes) a bug counting from the other end reads: k becomes rank - 1 - k."""

    def target(case: Case) -> Any:
        n = rank(case)
        v = value(case, param)
        flip = lambda k: n - 1 - (k % n)  # noqa: E731
        return [flip(k) for k in v] if isinstance(v, list) else flip(v)

    return target


def input_zeroed(name: str, op: str, i: int, what: str, *, when: CaseTest | None = None,
                 kind: str = INPUT_DROPPED) -> Mutant:  # fmt: skip
    """Input ``i`` (a bias) read as zeros: the base computes the op without it."""

    def nonzero(case: Case) -> bool:
        t = case.inputs[i] if present(case, i) else None
        return t is not None and not np.array_equal(t.data, zero_data(t)) and (when is None or when(case))

    def bug(case: Case) -> Case:
        t = case.inputs[i]
        case.inputs[i] = replace(t, data=zero_data(t))
        return case

    return Mutant(name, (op,), kind, what, nonzero, rewrite=bug)


def input_dropped(name: str, op: str, i: int, what: str, *, when: CaseTest | None = None) -> Mutant:
    """Optional input ``i`` ignored (gamma as if absent): the reference computes the op without it."""
    return Mutant(name, (op,), INPUT_DROPPED, what, lambda c: present(c, i) and (when is None or when(c)),
                  recompute=lambda case: without_input(case, i))  # fmt: skip


def outputs_altered(name: str, op: str, kind: str, what: str, alter: Callable[[Case, Outcome], Outcome],
                    when: CaseTest, reproduces: str = "") -> Mutant:  # fmt: skip
    return Mutant(name, (op,), kind, what, when, alter=alter, reproduces=reproduces)


def sign_bit_flipped(name: str, op: str, what: str, inputs: tuple[int, ...] = (0,)) -> Mutant:
    """Signed 8-bit codes read as offset binary (the sign bit flipped, as a kernel written for unsigned data
    reads them): only SFIXED_POINT_8 inputs, which every other type leaves alone."""

    def s8(case: Case) -> bool:
        return any(present(case, i) and case.inputs[i].dtype == "SFIXED_POINT_8" for i in inputs)

    def bug(case: Case) -> Case:
        for i in inputs:
            t = case.inputs[i] if present(case, i) else None
            if t is not None and t.dtype == "SFIXED_POINT_8":
                case.inputs[i] = replace(t, data=(t.data.view(np.uint8) ^ 0x80).view(np.int8))
        return case

    return Mutant(name, (op,), SIGN_S8, what, s8, rewrite=bug)


def axes_swapped(name: str, op: str, i: int, axes: tuple[int, int], what: str) -> Mutant:
    """Input ``i`` read with two of its axes exchanged (NHWC read as NWHC, a filter's height as its width),
    where the two have the same length, so the shapes still agree and only the numbers tell."""
    a, b = axes

    def square(case: Case) -> bool:
        t = case.inputs[i] if present(case, i) else None
        return (t is not None and len(t.shape) > max(a, b) and t.shape[a] == t.shape[b] > 1
                and not np.array_equal(t.data, np.swapaxes(t.data, a, b)))  # fmt: skip

    def bug(case: Case) -> Case:
        t = case.inputs[i]
        case.inputs[i] = replace(t, data=np.ascontiguousarray(np.swapaxes(t.data, a, b)))
        return case

    return Mutant(name, (op,), LAYOUT, what, square, rewrite=bug)


def fault_when(name: str, op: str, what: str, when: CaseTest, crash: bool, reproduces: str = "") -> Mutant:
    return Mutant(name, (op,), FAULT, what, when, alter=crashed if crash else finalize_failed, reproduces=reproduces)


def is_type(*names: str, i: int = 0, output: bool = False) -> CaseTest:
    return lambda case: (case.outputs[i] if output else case.inputs[i]).dtype in names


# ---- precision and size (issues 40 and 43): bugs of a kernel's arithmetic, and bugs only deployed sizes reach -------
def low_byte_dropped(case: Case, outcome: Outcome) -> Outcome:
    """A 16-bit path that keeps only the high byte of each result code (the low 8 bits cleared, toward the grid's
    bottom): up to 255 steps off, at most a 256th of the range: an 8-bit kernel's result in a 16-bit container."""
    if outcome.status != OK:
        return outcome
    outs = list(outcome.outputs)
    d = dtypes.get(case.outputs[0].dtype)
    outs[0] = np.clip((outs[0].astype(np.int64) >> 8) << 8, d.qmin, d.qmax).astype(outs[0].dtype)
    return replace(outcome, outputs=outs)


def short_table(bits: int, i: int = 0) -> Callable[[Case], Case]:
    """A function read from a table of 2**bits entries indexed by the input's top bits: the input codes with
    their low bits cleared (a lookup of Sigmoid, Exp or Log on a 16-bit input from a 256-entry table)."""

    def bug(case: Case) -> Case:
        t = case.inputs[i]
        d = dtypes.get(t.dtype)
        drop = max(0, d.bits - bits)
        codes = (np.asarray(t.data).astype(np.int64) >> drop) << drop
        case.inputs[i] = replace(t, data=np.clip(codes, d.qmin, d.qmax).astype(np.asarray(t.data).dtype))
        return case

    return bug


def truncated_to_bfloat16(case: Case, outcome: Outcome) -> Outcome:
    """FLOAT_32 results rounded toward zero to bfloat16's 8 significant bits (a rounding mode and a width at once):
    a relative error up to 2^-7, far outside binary32's budget and inside none of the accuracy bands."""
    if outcome.status != OK:
        return outcome
    outs = []
    for o in outcome.outputs:
        if o.dtype == np.float32:
            o = (np.ascontiguousarray(o).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
        outs.append(o)
    return replace(outcome, outputs=outs)


def _vector(case: Case, i: int) -> int:
    """Elements of output ``i``'s type in one 128-byte HTP vector (32 FLOAT_32, 64 16-bit, 128 8-bit)."""
    return 128 // max(1, dtypes.get(case.outputs[i].dtype).bits // 8)


def vector_tail_unwritten(i: int = 0) -> Callable[[Case, Outcome], Outcome]:
    """A vector loop over the innermost axis in 128-byte vectors whose remainder lanes are never written: past the last
    whole vector the output holds zero (the grid's zero code). Only an innermost axis longer than one vector and not a
    whole number of them reaches it (40 FLOAT_32 channels, 136 8-bit ones): the typical tier's 2-6 never did."""

    def alter(case: Case, outcome: Outcome) -> Outcome:
        if outcome.status != OK:
            return outcome
        outs = list(outcome.outputs)
        o = np.array(outs[i], copy=True)
        width = _vector(case, i)
        enc = case.outputs[i].encoding
        o[..., (o.shape[-1] // width) * width :] = -enc.offsets[0] if enc is not None else 0
        outs[i] = o
        return replace(outcome, outputs=outs)

    return alter


def vector_tail(i: int = 0) -> CaseTest:
    def test(case: Case) -> bool:
        n, width = case.outputs[i].shape[-1], _vector(case, i)
        return n > width and n % width != 0

    return test


def tile_seam(tile: int, axis: int, i: int = 0) -> Callable[[Case, Outcome], Outcome]:
    """Spatial tiles of ``tile`` along ``axis`` whose first row or column is computed with the previous tile's (a
    halo not exchanged): every element at a tile boundary repeats the one before it."""

    def alter(case: Case, outcome: Outcome) -> Outcome:
        if outcome.status != OK:
            return outcome
        outs = list(outcome.outputs)
        o = np.array(outs[i], copy=True)
        seams = np.arange(tile, o.shape[axis], tile)
        np.put_along_axis(o, seams.reshape([-1 if k == axis % o.ndim else 1 for k in range(o.ndim)]),
                          np.take(o, seams - 1, axis=axis), axis=axis)  # fmt: skip
        outs[i] = o
        return replace(outcome, outputs=outs)

    return alter


def tile_seams(tile: int, axis: int, i: int = 0) -> CaseTest:
    return lambda case: case.outputs[i].shape[axis] > tile


def accumulated_in_float16(reduce: Callable[[np.ndarray], np.ndarray]) -> Callable[[Case, Outcome], Outcome]:
    """A FLOAT_32 result accumulated in float16 (a narrow accumulator): ``reduce`` gives the float16 result from the
    case's real inputs; the error grows with the accumulation's length, so long rows show it and short ones hide."""

    def alter(case: Case, outcome: Outcome) -> Outcome:
        if outcome.status != OK:
            return outcome
        from cases.quant import real_value

        y = reduce(*[real_value(t) for t in case.inputs[:2] if t is not None])
        outs = list(outcome.outputs)
        outs[0] = np.asarray(y, dtype=np.float32).reshape(outs[0].shape)
        return replace(outcome, outputs=outs)

    return alter


def matmul_float16_accumulator(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A @ B with every partial sum rounded to float16, k in order (what a float16 accumulator keeps)."""
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    acc = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]), dtype=np.float16)
    for k in range(a.shape[-1]):
        acc = (acc + a16[..., :, k : k + 1] * b16[..., k : k + 1, :]).astype(np.float16)
    return acc
