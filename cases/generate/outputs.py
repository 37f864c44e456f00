"""Output tensors (shapes, datatypes and encodings, from the reference where it is asked) and execution steps."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from cases import check
from cases.case import TYPICAL, Case, Encoding, Tensor, encoding_for_range
from cases.generate.configurations import Config, Settings
from cases.generate.draws import _elements, _ints
from cases.generate.evaluate import _eval_dim
from cases.generate.values import encoding_covering
from opdefs import OpDef, dtypes


def _output_encoding(case: Case, real: np.ndarray | None, dtype: str, moves_values: bool = False) -> Encoding:
    """Calibrate the output grid on the expected values (as QDQ flows do), except for ops that only
    move values: when every expected value is one of in[0]'s values and in[0] has the same type, the
    output keeps in[0]'s encoding. The spec never says whether Transpose or ReduceMax requantize, so
    cases must not depend on it (spec-ambiguities.md: prefer cases that do not depend on a reading).

    ``moves_values`` (typical data movement): out[0] also keeps in[0]'s grid when a value the op fills in
    rather than moves (the zeros SpaceToBatch pads with, Pad's constant) lies inside that grid's range, as
    converters keep a data movement op's grid (``_share_encoding`` does the same for its inputs). Why:
    without it a padded SpaceToBatch case got a grid calibrated afresh, 1% wider than in[0]'s; the HTP
    simulator refused half of those cases and, for SFIXED_POINT_8, copied the codes of the others
    unchanged (2 steps off at the ends of the range): typical verdicts about a grid no converter emits.
    The edge tier keeps the calibrated grid, where a backend that ignores out[0]'s own encoding is judged
    (as Pack's inputs are, finding ``pack-s8-raw-codes``)."""
    if real is None:
        return Encoding((8.0 / 255,), (-128,))
    first = case.inputs[0] if case.inputs else None
    if first is not None and first.dtype == dtype and first.encoding is not None and not first.encoding.per_axis:
        scale, offset = first.encoding.scales[0], first.encoding.offsets[0]
        same_grid = [t for t in case.inputs if t is not None and t.data is not None and t.encoding == first.encoding]
        values = np.asarray(real, dtype=np.float64).ravel()
        if values.size and _all_input_values(values, same_grid, scale, offset):
            return first.encoding
        if values.size and moves_values and _within_grid(values, scale, offset, dtype):
            return first.encoding
    return encoding_covering(real, dtype)


def _all_input_values(values: np.ndarray, same_grid: list[Tensor], scale: float, offset: int) -> bool:
    """Whether every value is one an input on the grid ``(scale, offset)`` holds (``scale * (code + offset)``,
    exactly). Compared as codes: a value's only candidate is its nearest code, and a table of the codes present
    answers for all of them at once (a sort of every input and output value cost deployed-size data movement
    cases 5 ms each)."""
    codes = np.concatenate([np.asarray(t.data).ravel() for t in same_grid]) if same_grid else np.zeros(0)
    if not codes.size or not np.all(np.isfinite(values)):
        return False
    nearest = np.rint(values / scale - offset)
    if not np.array_equal(scale * (nearest + offset), values):  # between two codes: not a moved value
        return False
    held = codes.astype(np.int64)
    if not np.array_equal(held, codes):
        return False
    span = int(held.max()) - int(held.min()) if held.size else 0
    return bool(np.all(np.isin(nearest.astype(np.int64), held, kind="table" if span < 1 << 20 else None)))


def _within_grid(values: np.ndarray, scale: float, offset: int, dtype: str) -> bool:
    """Whether every value lies inside the range the grid ``(scale, offset)`` of ``dtype`` represents (within half
    a step of its ends): it keeps its place when quantized there, at most half a step away."""
    d = dtypes.get(dtype)
    with np.errstate(all="ignore"):
        codes = values / scale - offset
    return bool(np.all(np.isfinite(codes)) and np.all((codes >= d.qmin - 0.5) & (codes <= d.qmax + 0.5)))


def _infer(settings: Settings, op: OpDef, case: Case) -> tuple[bool, list[np.ndarray] | None]:
    """(valid, real outputs): a ValueError is the reference refusing the case on purpose (a relation
    the spec states only in prose, e.g. gamma's length = channels): not a valid case; any other error
    means the reference cannot compute it this way (None)."""
    if settings.infer is None:
        return True, None
    try:
        return True, settings.infer(op, case)
    except ValueError:
        return False, None
    except Exception:
        return True, None


def _outputs(op: OpDef, config: Config, case: Case, env, shapes, same_shape,
             settings) -> tuple[list[Tensor], list[np.ndarray] | None] | None:  # fmt: skip
    """The declared outputs and the reference's real-valued result (None without a reference)."""
    valid, real = _infer(settings, op, case)
    if not valid:
        return None
    if real is None and settings.infer is not None:
        provisional = _outputs(op, config, case, env, shapes, same_shape, replace(settings, infer=None))
        if provisional is not None:  # sizes the spec takes from the declared output: ask again with them
            probe = Case(case.op, case.inputs, case.params, [Tensor(t.name, t.dtype, t.shape) for t in provisional[0]],
                         config=case.config)  # fmt: skip
            valid, real = _infer(settings, op, probe)
            if not valid:
                return None
            if real is not None and [tuple(np.shape(r)) for r in real] != [t.shape for t in provisional[0]]:
                real = None  # the reference sized them otherwise: keep the spec's shapes, uncalibrated
    outs: list[Tensor] = []
    decls = op.output_specs
    # without a reference: the curated number of outputs (generate.outputs_count), else one per declaration
    n = len(real) if real is not None else op.generation.get("outputs_count", [len(decls)])[0]
    for i in range(n):
        decl = next((d for d in reversed(decls) if d.first_index <= i), decls[-1] if decls else None)
        if decl is None:
            return None
        ref = f"out[{i}]"
        dtype = config.dtype_of(decl.name)
        if real is not None:
            shape = declared_rows(op, i, tuple(np.shape(real[i])), case, env)
        elif ref in same_shape and same_shape[ref] in shapes:
            shape = shapes[same_shape[ref]]
        else:
            dims = decl.dims
            shape = tuple(_eval_dim(d, env) for d in dims) if dims else None
            if shape is None or any(s is None for s in shape):
                return None
        if _elements(shape) > settings.max_elements or 0 in shape:
            return None  # too big for the simulator, or empty (a QNN dimension is never 0)
        enc = None
        if dtypes.get(dtype).quantized:
            enc = _output_encoding(case, real[i] if real is not None else None, dtype,
                                   settings.tier == TYPICAL and op.family == "data movement")  # fmt: skip
            fixed = op.fixed_encoding(i, dtype) if settings.tier == TYPICAL else None
            if fixed is not None:  # a bounded function's grid that converters fix and the backend requires
                enc = Encoding((fixed[0],), (fixed[1],))
            dist = op.tolerance.get("distribution")
            if dist:  # a random op's grid holds its declared range (there is no expected value to calibrate on)
                bounds = [float(case.params[k].value) if k in case.params else float(env.get(k, 0.0))
                          for k in (dist["low"], dist["high"])]  # fmt: skip
                enc = encoding_for_range(min(bounds), max(bounds), dtype)
        outs.append(Tensor(ref, dtype, shape, None, enc))
    return outs, real


def declared_rows(op: OpDef, i: int, shape: tuple[int, ...], case: Case, env: dict[str, Any]) -> tuple[int, ...]:
    """The shape to declare for output ``i``: the reference's, except that an output whose valid length the
    backend reports (``valid_rows.capacity``) is declared at its maximum, as a converter sizes it, so a
    case may hold fewer valid rows than declared - none at all included."""
    rows = op.valid_rows(i + 1).get(i) or {}
    if "capacity" not in rows:
        return shape
    axis = int(rows.get("axis", 0))
    cap = _eval_dim(rows["capacity"], {**env, **check.environment(op, case)})
    if cap is None or axis >= len(shape) or cap < shape[axis]:
        return shape
    return shape[:axis] + (cap,) + shape[axis + 1 :]


def draw_steps(draw: st.DrawFn, op: OpDef, case: Case, settings: Settings) -> list[list[np.ndarray | None]]:
    """Further executions of the graph for an op that keeps state between them (``generate.executions``:
    [lo, hi], the number of executions in all). Each step gives every non-static input new data of the same
    shape, type and encoding, drawn inside the range execution 0's data spans (a bool, such as a reset
    input, either way), so each step stays in the tier and the domain the first was drawn for."""
    lo, hi = op.generation.get("executions") or (1, 1)
    runs = draw(_ints(lo, hi), label="executions")
    if runs <= 1:
        return []
    rng = np.random.default_rng(draw(_ints(0, 2**32 - 1), label="steps seed"))
    steps = [[None if t is None or t.static or t.data is None else _like(rng, t) for t in case.inputs]
             for _ in range(runs - 1)]  # fmt: skip
    if settings.infer is not None:  # every execution must be one the reference accepts (a ValueError refuses it)
        probe = replace(case, steps=steps)
        valid, _ = _infer(settings, op, probe)
        assume(valid)
    return steps


def _like(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    d = dtypes.get(t.dtype)
    data = np.asarray(t.data)
    if d.kind == "bool":
        return rng.integers(0, 2, data.shape).astype(bool)
    if d.kind == "float":
        finite = data[np.isfinite(data)].astype(np.float64)
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
        return rng.uniform(lo, hi, data.shape).astype(data.dtype)
    return rng.integers(int(data.min()), int(data.max()), data.shape, endpoint=True).astype(data.dtype)
