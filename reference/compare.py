"""Judge a backend's outputs against the reference's real-valued expectation, with the budget of ``tolerance``.

Expected values are real (float64). For a fixed-point output they are quantized with the output's
encoding and compared in quantization steps; for float outputs the error is measured absolutely,
relatively and in ULPs of the output type; integer and bool outputs must match exactly. The budget
(``reference.tolerance.budget_for``) is recorded with the errors measured, PASS or FAIL.

Where the MasterOpDef says nothing about an element, it is *not checkable*, never failed: a NaN or
infinite real result has no value on a fixed-point or integer grid (Log of a negative input, an
integer divide by zero), and the spec names no saturation or sentinel for it. Such elements are
counted (``not_checkable``) and left out; a case with nothing left to check is UNCHECKED. An op
whose ``tolerance.nan_means_any`` is set uses NaN in its reference output for "any value": the
noise cells of ExtractGlimpse, a blocked Buffer, RandomUniformLike's draws (``unconstrained``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cases.case import Case, Tensor
from cases.quant import dequantize, quantize, real_range
from opdefs import dtypes
from reference.tolerance import Budget, budget_for


@dataclass
class Judgement:
    passed: bool
    message: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    checked: int = 0  # elements compared (0 with a pass: nothing the spec defines was produced)


def _ulp(values: np.ndarray, dtype: str) -> np.ndarray:
    storage = dtypes.get(dtype).storage
    v = np.abs(values).astype(storage)
    return np.spacing(np.maximum(v, np.finfo(storage).tiny)).astype(np.float64)


def _scale_per_element(out: Tensor, shape: tuple[int, ...]) -> np.ndarray:
    enc = out.encoding
    s = np.asarray(enc.scales, dtype=np.float64)
    if not enc.per_axis:
        return np.full(shape, s[0])
    view = [1] * len(shape)
    view[enc.axis] = -1
    return np.broadcast_to(s.reshape(view), shape)


def _budget_text(x: float) -> str:
    """A budget as it decided: "65" only when it is 65, "64.999" when it is a hair under (a 65-step error then
    fails, and "65 steps > 65" would read as a bug of the comparator)."""
    text = f"{x:.3g}"
    return text if float(text) == x else f"{x:.6g}"


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _checkable(exp_f: np.ndarray, out: Tensor, nan_means_any: bool, metrics: dict[str, Any]) -> np.ndarray:
    """Elements the spec defines a value for (see the module docstring), counting the others in ``metrics``."""
    d = dtypes.get(out.dtype)
    if d.kind == "float" or d.kind == "bool":
        checkable = np.ones(exp_f.shape, dtype=bool)
    else:  # no fixed-point or integer value stands for NaN or infinity, and the spec names none
        checkable = np.isfinite(exp_f)
    not_checkable = int(exp_f.size - np.count_nonzero(checkable))
    if not_checkable:
        metrics["not_checkable"] = not_checkable
    if nan_means_any:
        free = np.isnan(exp_f)
        if free.any():
            metrics["unconstrained"] = int(np.count_nonzero(free))
        checkable &= ~free
    return checkable


def _nan_to_num(x: np.ndarray, nan: float) -> np.ndarray:
    """``np.nan_to_num`` where there is something to replace: numpy's own re-imports its limits module on
    every call (40 us, three calls a case: a tenth of the harness's time per qnn-htp case beyond drawing)."""
    return x if np.isfinite(x).all() else np.nan_to_num(x, nan=nan)


def _mismatches(exp: np.ndarray, actual: np.ndarray, out: Tensor, budget: Budget, checkable: np.ndarray,
                metrics: dict[str, Any], magnitude: np.ndarray | None = None,
                ) -> tuple[np.ndarray, Callable[[tuple[int, ...]], str]]:  # fmt: skip
    """Which checkable elements are outside the budget, and how to describe one of them. ``magnitude``: a float
    output's per-element scale of the relative budget where it exceeds |expected| (``operand_magnitudes``)."""
    d = dtypes.get(out.dtype)
    exp_f = exp.astype(np.float64)
    if d.quantized:
        exp_q = quantize(np.where(checkable, exp_f, 0.0), out.encoding, out.dtype).astype(np.int64)
        steps = np.abs(actual.astype(np.int64) - exp_q).astype(np.float64)
        allowed = _allowed_steps(np.where(checkable, exp_f, 0.0), out, budget)
        bad = checkable & (steps > allowed + 1e-9)
        got_real = dequantize(actual, out.encoding)
        real_err = np.where(checkable, np.abs(got_real - np.where(checkable, exp_f, 0.0)), 0.0)
        metrics.update(max_steps=int(np.where(checkable, steps, 0).max(initial=0)),
                       max_abs_err=float(real_err.max(initial=0.0)))  # fmt: skip

        def describe(i: tuple[int, ...]) -> str:
            return (f"expected {_fmt(exp_f[i])} (code {exp_q[i]}), got code {actual[i]} (= {_fmt(got_real[i])}), "
                    f"{steps[i]:g} steps > {_budget_text(float(allowed[i]))}")  # fmt: skip
    elif d.kind == "float":
        a = actual.astype(np.float64)
        # the best a backend can return is the real result rounded to the output type (65504 -> inf in fp16)
        with np.errstate(over="ignore", invalid="ignore"):
            e = exp_f.astype(d.storage).astype(np.float64)
        both_nan = (np.isnan(a) & np.isnan(e)) | ~checkable
        same_inf = np.isinf(a) & np.isinf(e) & (np.sign(a) == np.sign(e))
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.where(both_nan | same_inf, 0.0, np.abs(a - e))
            ulps = err / _ulp(e, out.dtype)
            rel = np.where(err == 0, 0.0, err / np.maximum(np.abs(e), np.finfo(np.float64).tiny))
        err = _nan_to_num(err, nan=np.inf)
        ulps = _nan_to_num(ulps, nan=np.inf)
        rel = _nan_to_num(rel, nan=np.inf)
        scale = np.abs(_nan_to_num(e, nan=0.0))
        if magnitude is not None:
            scale = np.maximum(scale, _nan_to_num(np.asarray(magnitude, np.float64), nan=0.0))
        with np.errstate(invalid="ignore"):
            within = (err <= budget.atol + budget.rtol * scale) | (ulps <= budget.ulp)
        bad = ~within & checkable
        metrics.update(max_abs_err=float(err.max(initial=0.0)), max_rel_err=float(rel.max(initial=0.0)),
                       max_ulp=float(ulps.max(initial=0.0)))  # fmt: skip

        def describe(i: tuple[int, ...]) -> str:
            return f"expected {_fmt(e[i])}, got {_fmt(a[i])} (abs {err[i]:.3g}, {ulps[i]:.3g} ulp)"
    else:
        if d.kind == "bool":
            bad = checkable & (actual.astype(bool) != exp.astype(bool))
        else:
            bad = checkable & (actual.astype(np.float64) != np.round(np.where(checkable, exp_f, 0.0)))

        def describe(i: tuple[int, ...]) -> str:
            return f"expected {exp[i]!r}, got {actual[i]!r}"
    return bad, describe


def _allowed_steps(exp_f: np.ndarray, out: Tensor, budget: Budget) -> np.ndarray:
    """Per element, how many quantization steps of ``out`` a result may be from the expected real value."""
    scale = _scale_per_element(out, exp_f.shape)
    allowed = budget.steps + budget.rtol * np.abs(exp_f) / scale
    if budget.range_rtol:
        lo, hi = real_range(out.encoding, out.dtype)
        full = np.maximum(np.abs(np.atleast_1d(lo)), np.abs(np.atleast_1d(hi)))
        if out.encoding.per_axis:
            view = [1] * exp_f.ndim
            view[out.encoding.axis] = -1
            full = np.broadcast_to(full.reshape(view), exp_f.shape)
        else:
            full = float(full[0])  # a rank-0 output too
        allowed = allowed + budget.range_rtol * full / scale
    return allowed


def allowed_difference(expected: np.ndarray, out: Tensor, budget: Budget) -> np.ndarray:
    """Per element, the largest difference from the expected value stored as ``out`` (``encode_outputs``) that
    ``budget`` accepts, in the stored units: quantization steps for a fixed-point output, an absolute value for
    a float one (its ulp allowance aside), 0 for integers; infinite where the expected value is not finite (the
    spec does not say what such an element holds). What a repro outside the suite judges with
    (findings/cases/ort-qnn/repro.py)."""
    exp_f = np.asarray(expected, np.float64)
    finite = np.isfinite(exp_f)
    d = dtypes.get(out.dtype)
    if d.quantized:
        allowed = _allowed_steps(np.where(finite, exp_f, 0.0), out, budget)
    elif d.kind == "float":
        allowed = budget.atol + budget.rtol * np.abs(np.where(finite, exp_f, 0.0))
    else:
        allowed = np.zeros(exp_f.shape)
    return np.where(finite, np.broadcast_to(allowed, exp_f.shape), np.inf)


def judge_output(expected: np.ndarray, actual: np.ndarray, out: Tensor, budget: Budget | None = None,
                 nan_means_any: bool = False, mask: np.ndarray | None = None,
                 magnitude: np.ndarray | None = None) -> Judgement:  # fmt: skip
    """One output. ``mask``, where given, is False on elements the spec leaves unspecified (rows past a valid
    count): they are not checked and are counted as ``past_count``. ``magnitude``: see ``operand_magnitudes``."""
    budget = budget or budget_for(out.dtype)
    if tuple(actual.shape) != tuple(out.shape):
        return Judgement(False, f"{out.name}: shape {tuple(actual.shape)} != declared {tuple(out.shape)}")
    exp = np.asarray(expected)
    if exp.shape != actual.shape:
        return Judgement(False, f"{out.name}: reference shape {exp.shape} != declared {tuple(out.shape)}")
    metrics: dict[str, Any] = {"tolerance": budget.text(), "budget": budget.as_dict()}
    checkable = _checkable(exp.astype(np.float64), out, nan_means_any, metrics)
    if mask is not None:
        past = int(np.count_nonzero(~mask))
        if past:
            metrics["past_count"] = past
        checkable &= mask
    bad, describe = _mismatches(exp, actual, out, budget, checkable, metrics, magnitude)
    if magnitude is not None:
        metrics["magnitude"] = "relative budget on the sum of the operands' absolute values (cancellation)"
    n_bad = int(np.count_nonzero(bad))
    metrics["mismatches"] = n_bad
    checked = int(np.count_nonzero(checkable))
    if n_bad:
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return Judgement(False, f"{out.name}: {n_bad}/{checked} elements outside {budget.text()}; first at {idx}: "
                                f"{describe(idx)}", metrics, checked)  # fmt: skip
    return Judgement(True, "", metrics, checked)


_SUMMED = ("mismatches", "not_checkable", "unconstrained", "past_count", "not_compared")


def _merge(merged: dict[str, Any], metrics: dict[str, Any]) -> None:
    for k, v in metrics.items():
        if k in _SUMMED:
            merged[k] = merged.get(k, 0) + v
        elif isinstance(v, float | int) and not isinstance(v, bool):
            merged[k] = max(merged.get(k, v), v)
        else:
            merged.setdefault(k, v)


def judge(case: Case, expected: list[np.ndarray], actual: list[np.ndarray], op_tol: dict | None = None,
          accumulation: float | None = None, rows: dict[int, dict[str, Any]] | None = None,
          precision: str | None = None) -> Judgement:  # fmt: skip
    """All outputs of one case; metrics are the worst over outputs, ``checked`` their sum.

    ``rows`` maps an output index to its ``valid_rows`` declaration (data-dependent length, see the op
    schema); None reads them from the op's spec. ``precision`` is the float arithmetic the backend reports
    it ran the case in (``tolerance.budget_for``). A case with ``steps`` is judged execution by execution:
    ``expected`` and ``actual`` hold every execution's outputs one after another (adapters/base.py)."""
    if rows is None:
        rows = _spec_rows(case)
    if not case.steps:
        return _judge_execution(case, expected, actual, op_tol, accumulation, rows, precision)
    n, runs = len(case.outputs), case.executions
    if len(actual) != n * runs:
        return Judgement(False, f"backend returned {len(actual)} outputs for {runs} executions of {n} outputs")
    if len(expected) < n * runs:
        return Judgement(False, f"reference gives {len(expected)} outputs for {runs} executions of {n} outputs")
    merged: dict[str, Any] = {"mismatches": 0, "executions": runs}
    messages = []
    checked = 0
    for k in range(runs):
        j = _judge_execution(case, expected[k * n : (k + 1) * n], actual[k * n : (k + 1) * n], op_tol, accumulation,
                             rows, precision)  # fmt: skip
        checked += j.checked
        _merge(merged, j.metrics)
        if not j.passed:
            messages.append(f"execution {k + 1} of {runs}: {j.message}")
    return Judgement(not messages, "; ".join(messages), merged, checked)


def _spec_rows(case: Case) -> dict[int, dict[str, Any]]:
    import opdefs

    try:
        return opdefs.load(case.op).valid_rows(len(case.outputs))
    except (KeyError, opdefs.SpecError):  # a hand-made case of an op without a spec: every row is checked
        return {}


def _judge_execution(case: Case, expected: list[np.ndarray], actual: list[np.ndarray], op_tol: dict | None,
                     accumulation: float | None, rows: dict[int, dict[str, Any]],
                     precision: str | None = None) -> Judgement:  # fmt: skip
    if len(actual) != len(case.outputs):
        return Judgement(False, f"backend returned {len(actual)} outputs, case declares {len(case.outputs)}")
    if len(expected) < len(case.outputs):
        return Judgement(False, f"reference gives {len(expected)} outputs, case declares {len(case.outputs)}")
    merged: dict[str, Any] = {"mismatches": 0}
    messages = []
    checked = 0
    any_value = bool((op_tol or {}).get("nan_means_any"))
    budgets = [budget_for(out.dtype, op_tol, accumulation, precision) for out in case.outputs]
    magnitudes: list | None = [] if (op_tol or {}).get("magnitude") == "absolute-operands" else None
    prepared, count_messages = _valid_rows(case, expected, actual, rows, budgets, any_value, merged, messages)
    for i, (e, a, out) in enumerate(zip(expected, actual, case.outputs, strict=False)):
        mask = None
        if i in prepared:
            if prepared[i] is None:  # its count is wrong: nothing to line its rows up with
                continue
            e, a, mask = prepared[i]
        j = judge_output(e, a, out, budgets[i], any_value, mask)
        # rows lined up anew (``prepared``) would not pair with the operands' magnitudes: those keep their own budget
        if not j.passed and magnitudes is not None and dtypes.get(out.dtype).kind == "float" and i not in prepared:
            if not magnitudes:  # computed once, where a float output first fails its budget
                magnitudes.extend(operand_magnitudes(case) or [None] * len(case.outputs))
            if magnitudes[i] is not None:
                j = judge_output(e, a, out, budgets[i], any_value, mask, magnitude=magnitudes[i])
        checked += j.checked
        _merge(merged, j.metrics)
        if not j.passed:
            messages.append(count_messages.get(i, j.message))
    dist = (op_tol or {}).get("distribution")
    if dist and case.outputs and len(actual) >= 1:
        d = _judge_distribution(case, actual[0], case.outputs[0], dist)
        merged.update(d.metrics)
        checked += d.checked
        if not d.passed:
            messages.append(d.message)
    return Judgement(not messages, "; ".join(messages), merged, checked)


def operand_magnitudes(case: Case) -> list[np.ndarray] | None:
    """The op's outputs computed on the absolute values of its float operands: for a sum of products (a convolution,
    a matrix product, an average; the op's ``tolerance.magnitude: absolute-operands``) the sum of the terms'
    magnitudes, which bounds the rounding error of a K-term float sum (K roundings, each relative to a partial sum
    no larger than it). Where the terms cancel, |expected| is far below it and a budget relative to the result alone
    fails the correct float32 arithmetic of any backend (an edge case's -86.724 from terms of 3e4: 19 ulps). None
    where an operand is not float (a fixed-point case accumulates exactly)."""
    from dataclasses import replace

    from reference.expected import expected

    if any(t is not None and dtypes.get(t.dtype).kind != "float" for t in case.inputs):
        return None
    inputs = [t if t is None or t.data is None else replace(t, data=np.abs(np.asarray(t.data)))
              for t in case.inputs]  # fmt: skip
    try:
        with np.errstate(all="ignore"):
            return [np.abs(np.asarray(m, np.float64)) for m in expected(replace(case, inputs=inputs))]
    except Exception:  # noqa: BLE001 - no bound from the operands: the result's own budget stands
        return None


# ---- data-dependent output lengths ---------------------------------------------------------------
Prepared = tuple[np.ndarray, np.ndarray, np.ndarray] | None


def _valid_rows(case: Case, expected: list[np.ndarray], actual: list[np.ndarray], rows: dict[int, dict[str, Any]],
                budgets: list[Budget], any_value: bool, merged: dict[str, Any],
                messages: list[str]) -> tuple[dict[int, Prepared], dict[int, str]]:  # fmt: skip
    """Outputs whose valid length depends on the data, made comparable: for each, (expected, actual, mask)
    at the declared shape with the actual rows put in the expected order where the spec leaves the order
    free, or None when the count itself is wrong. Count outputs get a message naming the count."""
    prepared: dict[int, Prepared] = {}
    count_messages: dict[int, str] = {}
    groups: dict[tuple[str, int], list[int]] = {}
    for i, spec in sorted(rows.items()):
        count_absent = spec["count"] != "current" and int(spec["count"][4:-1]) >= len(case.outputs)
        if i < len(case.outputs) and not count_absent:  # without its count output every row is compared
            key = (spec["count"], int(spec.get("axis", 0)))
            if spec["count"] == "current" and spec.get("order") != "free":  # its own length, nothing to pair with
                key += (i,)
            groups.setdefault(key, []).append(i)
    for (count, axis, *_), members in groups.items():
        outs = [case.outputs[i] for i in members]
        problem = None
        for i, out in zip(members, outs, strict=True):
            a, e = np.asarray(actual[i]), np.asarray(expected[i])
            for what, arr in (("shape", a), ("reference shape", e)):
                if not _fits(arr.shape, out.shape, axis):
                    problem = (f"{out.name}: {what} {tuple(arr.shape)} does not fit declared {tuple(out.shape)} "
                               f"(rows along axis {axis} at most {out.shape[axis]})")  # fmt: skip
        if problem:
            messages.append(problem)
            prepared.update(dict.fromkeys(members))
            continue
        if count == "current":  # the backend's current dimension is the count
            n_exp, n_act = expected[members[0]].shape[axis], actual[members[0]].shape[axis]
            if any(actual[i].shape[axis] != n_act or expected[i].shape[axis] != n_exp for i in members):
                messages.append(f"{', '.join(o.name for o in outs)}: the outputs of one valid count differ in length")
                prepared.update(dict.fromkeys(members))
                continue
            if n_exp != n_act:
                messages.append(f"{outs[0].name}: valid count (current dim {axis}) expected {n_exp}, got {n_act}")
                merged["not_compared"] = merged.get("not_compared", 0) + sum(int(np.prod(o.shape)) for o in outs)
                prepared.update(dict.fromkeys(members))
                continue
            counts = np.array([n_exp])
        else:
            k = int(count[4:-1])
            a_cnt = np.asarray(actual[k]).astype(np.int64).reshape(-1)
            e_cnt, at_least = _expected_counts(np.asarray(expected[k], dtype=np.float64).reshape(-1), a_cnt,
                                               np.asarray(expected[members[0]], dtype=np.float64), axis, any_value)
            if at_least is not None:
                # the count output itself is open (NaN), so its own judgement passes: the shortfall is said here
                messages.append(f"{count}: valid count expected at least {at_least.tolist()}, got {a_cnt.tolist()}")
                merged["not_compared"] = merged.get("not_compared", 0) + sum(int(np.prod(o.shape)) for o in outs)
                prepared.update(dict.fromkeys(members))
                continue
            if e_cnt.shape != a_cnt.shape or np.any(e_cnt != a_cnt):
                count_messages[k] = f"{count}: valid count expected {e_cnt.tolist()}, got {a_cnt.tolist()}"
                merged["not_compared"] = merged.get("not_compared", 0) + sum(int(np.prod(o.shape)) for o in outs)
                prepared.update(dict.fromkeys(members))
                continue
            counts = e_cnt
        segments = _segments(counts, axis)
        fits = all(start + n <= min(np.shape(expected[i])[axis], np.shape(actual[i])[axis])
                   for i in members for _, start, n in segments)  # fmt: skip
        if axis == 1 and any(len(counts) != o.shape[0] for o in outs):
            fits = False
        if not fits:
            names = ", ".join(o.name for o in outs)
            messages.append(f"{names}: valid count {counts.tolist()} exceeds the rows produced")
            prepared.update(dict.fromkeys(members))
            continue
        key = rows[members[0]].get("sorted_by")
        if key is not None and int(key[4:-1]) in members:
            # the spec's order, where the expected rows keep it: a model of a backend that lays rows out otherwise
            # (reference.models) is held to its own rows instead, which the free order then pairs up
            unsorted = _descending(actual[int(key[4:-1])], axis, segments)
            if unsorted and not _descending(expected[int(key[4:-1])], axis, segments):
                messages.append(f"{key}: valid rows not in descending order ({unsorted})")
        arrays = {i: _at_declared(expected[i], actual[i], case.outputs[i], axis, segments,
                                  rows[i].get("beyond") == "checked") for i in members}  # fmt: skip
        if rows[members[0]].get("order") == "free":
            for seg in segments:
                _match_rows(seg, axis, [(arrays[i], case.outputs[i], budgets[i]) for i in members], any_value)
        prepared.update(arrays)
    return prepared, count_messages


def _expected_counts(e_raw: np.ndarray, a_cnt: np.ndarray, first: np.ndarray, axis: int,
                     any_value: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The counts to judge with, and None or the least counts the backend fell short of. A NaN count where NaN means
    any value is open (a model of a backend that reads past a buffer and may add rows of its own): the backend's count
    stands, provided it has room for the rows the model knows, those of the first output that are not all NaN, before
    its NaN rows (the rows in each batch when counted along axis 1, else all of them); those rows are then found among
    the backend's, the NaN ones match any."""
    e_cnt = np.round(np.nan_to_num(e_raw, nan=-1.0)).astype(np.int64)
    open_ = np.isnan(e_raw)
    if not (any_value and open_.any()) or e_raw.shape != a_cnt.shape:
        return e_cnt, None
    flat = first.reshape(first.shape[0], first.shape[1], -1) if axis == 1 and first.ndim >= 2 else \
        first.reshape(1, first.shape[0], -1)  # fmt: skip
    known = np.array([int(np.count_nonzero(~np.isnan(rows).all(axis=-1))) for rows in flat])
    if len(known) != len(e_raw):
        known = np.full(len(e_raw), int(known.sum()))
    short = open_ & (a_cnt < known)
    if short.any():
        return e_cnt, np.where(open_, known, e_cnt)
    return np.where(open_, a_cnt, e_cnt), None


def _fits(shape: tuple[int, ...], declared: tuple[int, ...], axis: int) -> bool:
    """The declared shape, except at most the declared number of rows along ``axis``."""
    if len(shape) != len(declared) or axis >= len(shape):
        return False
    same = all(x == y for j, (x, y) in enumerate(zip(shape, declared, strict=True)) if j != axis)
    return same and shape[axis] <= declared[axis]


def _descending(values: np.ndarray, axis: int, segments: list[tuple[int | None, int, int]]) -> str:
    """Where the valid rows of a score output rise, or "" where each run is non-increasing."""
    values = np.asarray(values)
    for seg in segments:
        v = values[_rows(values, axis, seg)].astype(np.float64).reshape(seg[2], -1)[:, 0]
        rises = np.flatnonzero(np.diff(v) > 0)
        if rises.size:
            where = f"batch {seg[0]}, " if seg[0] is not None else ""
            r = int(rises[0]) + seg[1]
            return f"{where}row {r + 1}: {_fmt(v[rises[0] + 1])} after {_fmt(v[rises[0]])}"
    return ""


def _segments(counts: np.ndarray, axis: int) -> list[tuple[int | None, int, int]]:
    """(batch, first row, rows) runs of valid rows: along axis 1, row block b of batch b; along axis 0,
    consecutive runs, one per entry of the count (rows of batch b follow those of batch b - 1)."""
    if axis == 1:
        return [(b, 0, int(n)) for b, n in enumerate(counts)]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else []
    return [(None, int(s), int(n)) for s, n in zip(starts, counts, strict=True)]


def _rows(arr: np.ndarray, axis: int, seg: tuple[int | None, int, int]) -> tuple:
    b, start, n = seg
    return (slice(start, start + n),) if axis == 0 else (b, slice(start, start + n))


def _at_declared(expected: np.ndarray, actual: np.ndarray, out: Tensor, axis: int,
                 segments: list[tuple[int | None, int, int]], beyond_checked: bool) -> tuple[np.ndarray, ...]:
    """Expected and actual padded to the declared shape along ``axis`` (a backend may report fewer rows, the
    reference may give the current size), with the mask of rows to check."""
    storage = dtypes.get(out.dtype).storage or np.asarray(actual).dtype
    e = np.zeros(out.shape, dtype=np.float64)
    a = np.zeros(out.shape, dtype=storage)
    exp, act = np.asarray(expected, dtype=np.float64), np.asarray(actual)
    e[(slice(None),) * axis + (slice(0, exp.shape[axis]),)] = exp
    a[(slice(None),) * axis + (slice(0, act.shape[axis]),)] = act
    mask = np.zeros(out.shape, dtype=bool)
    if beyond_checked:  # the spec names the fill past the count (zero padding): every row the reference gave
        mask[(slice(None),) * axis + (slice(0, min(exp.shape[axis], act.shape[axis])),)] = True
    for seg in segments:
        mask[_rows(mask, axis, seg)] = True
    return e, a, mask


def _match_rows(seg: tuple[int | None, int, int], axis: int,
                group: list[tuple[tuple[np.ndarray, ...], Tensor, Budget]], any_value: bool) -> None:  # fmt: skip
    """Reorder the actual valid rows of one segment to the expected order: each expected row is paired with
    an actual row so that the number of elements outside the budget, over every output of the group, is
    the least (an assignment problem; equal rows - ties - pair either way at no cost)."""
    from scipy.optimize import linear_sum_assignment

    n = seg[2]
    if n < 2:
        return
    cost = np.zeros((n, n))
    for (e, a, _), out, budget in group:
        if out.encoding is not None and out.encoding.per_axis:
            return  # a per-axis grid is not row-shaped here: keep the order the backend gave
        sl = _rows(e, axis, seg)
        er, ar = e[sl], a[sl]
        rest = er.shape[1:]
        e2 = np.broadcast_to(er[:, None], (n, n, *rest))
        a2 = np.broadcast_to(ar[None, :], (n, n, *rest))
        pair = Tensor(out.name, out.dtype, (n, n, *rest), None, out.encoding)
        checkable = _checkable(e2, pair, any_value, {})
        bad, _ = _mismatches(e2, a2, pair, budget, checkable, {})
        cost += bad.reshape(n, n, -1).sum(axis=2)
    _, cols = linear_sum_assignment(cost)
    for (_, a, _), _, _ in group:
        sl = _rows(a, axis, seg)
        a[sl] = a[sl][cols]


def _judge_distribution(case: Case, actual: np.ndarray, out: Tensor, dist: dict[str, Any]) -> Judgement:
    """A random op's output judged as a sample: inside [low, high] and, by a Kolmogorov-Smirnov test
    at the spec'd false-alarm rate ``alpha``, drawn from the declared distribution. ``low``/``high``
    name the case's parameters (their spec defaults when the case leaves them out)."""
    from cases.quant import real_value
    from reference import random_ops

    if dist.get("kind") != "uniform":
        return Judgement(False, f"unknown distribution {dist.get('kind')!r} in the op's tolerance")
    import opdefs

    params = opdefs.load(case.op).resolved_params({k: p.value for k, p in case.params.items()},
                                                  [None if t is None else len(t.shape) for t in case.inputs])
    low, high = float(params[dist["low"]]), float(params[dist["high"]])
    values = real_value(Tensor(out.name, out.dtype, out.shape, actual, out.encoding))
    step = float(max(out.encoding.scales)) if out.encoding is not None else 0.0
    in_range = random_ops.check_range(values, low - step, high + step)  # a grid need not hold low and high
    uniform = random_ops.check_uniform(values, low, high, float(dist.get("alpha", random_ops.DEFAULT_ALPHA)), step)
    metrics = {**{f"sample_{k}": v for k, v in in_range.metrics.items()}, **uniform.metrics}
    problems = [c.message for c in (in_range, uniform) if not c.passed]
    return Judgement(not problems, f"{out.name}: " + "; ".join(problems) if problems else "", metrics, int(values.size))


def encode_outputs(case: Case, real: list[np.ndarray]) -> list[np.ndarray]:
    """The reference's real outputs stored as the declared output types (what a perfect backend returns)."""
    out = []
    for r, t in zip(real, case.outputs_per_execution, strict=False):
        d = dtypes.get(t.dtype)
        r = np.asarray(r)
        if d.quantized:
            out.append(quantize(r, t.encoding, t.dtype))
        elif d.kind in ("int", "uint"):
            out.append(np.clip(np.round(np.nan_to_num(r.astype(np.float64))), d.qmin, d.qmax).astype(d.storage))
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                out.append(r.astype(d.storage))
    return out


# ---- what a run's outputs define -------------------------------------------------------------------
def defined_masks(case: Case, actual: list[np.ndarray], expected: list[np.ndarray] | None = None,
                  op_tol: dict | None = None,
                  rows: dict[int, dict[str, Any]] | None = None) -> list[np.ndarray | None]:  # fmt: skip
    """Per output, the elements the spec defines on this run (None: all of them). Left out: rows past the valid count
    the backend's own count output gives where the spec leaves them unspecified (DetectionOutput's rows past the
    count hold heap contents: three digests in three runs of one case), and elements the reference leaves open (NaN
    where the op's tolerance says NaN means any value). Why the backend's count rather than the reference's: a
    record's digest and a second run's comparison must mean the same on a failing case, whose counts differ.
    A count that does not fit the output (more rows than it has) leaves every row defined."""
    if rows is None:
        rows = _spec_rows(case)
    masks: list[np.ndarray | None] = [None] * len(actual)
    for i, spec in rows.items():
        count = spec.get("count")
        if i >= len(actual) or spec.get("beyond") == "checked" or not isinstance(count, str) or count == "current":
            continue
        k = int(count[4:-1])
        if k >= len(actual):
            continue
        a = np.asarray(actual[i])
        axis = int(spec.get("axis", 0))
        counts = np.asarray(actual[k]).astype(np.int64).reshape(-1)
        if a.ndim <= axis or (axis == 1 and len(counts) != a.shape[0]):
            continue
        segments = _segments(counts, axis)
        if any(n < 0 or start + n > a.shape[axis] for _, start, n in segments):
            continue
        mask = np.zeros(a.shape, dtype=bool)
        for seg in segments:
            mask[_rows(mask, axis, seg)] = True
        masks[i] = mask
    if expected is not None and (op_tol or {}).get("nan_means_any"):
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            e = np.asarray(e, dtype=np.float64)
            if e.shape == np.shape(a) and np.isnan(e).any():
                masks[i] = ~np.isnan(e) if masks[i] is None else masks[i] & ~np.isnan(e)
    return masks


def defined_values(actual: list[np.ndarray], masks: list[np.ndarray | None]) -> list[np.ndarray]:
    """The outputs with the elements the spec leaves open set to zero: what a digest of a run is taken over."""
    out = []
    for a, m in zip(actual, masks, strict=True):
        a = np.asarray(a)
        out.append(a if m is None else np.where(m, a, np.zeros((), dtype=a.dtype)))
    return out


def differing(first: list[np.ndarray], second: list[np.ndarray], masks: list[np.ndarray | None],
              names: list[str]) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Two runs' outputs element by element (bits, so NaN equals NaN) over the elements both define: per output that
    differs, how many elements, of how many, and the first few flat indices."""
    out: dict[str, dict[str, Any]] = {}
    for name, a, b, m in zip(names, first, second, masks, strict=False):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            out[name] = {"shape": [list(a.shape), list(b.shape)], "dtype": [str(a.dtype), str(b.dtype)]}
            continue
        diff = np.zeros(a.shape, dtype=bool)
        if a.size:
            raw_a = np.ascontiguousarray(a).view(np.uint8).reshape(a.size, -1)
            raw_b = np.ascontiguousarray(b).view(np.uint8).reshape(b.size, -1)
            diff = (raw_a != raw_b).any(axis=1).reshape(a.shape)
        if m is not None:
            diff &= m
        n = int(np.count_nonzero(diff))
        if n:
            out[name] = {"elements": n, "of": int(a.size if m is None else np.count_nonzero(m)),
                         "first": np.flatnonzero(diff)[:8].tolist()}  # fmt: skip
    return out
