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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cases.case import Case, Tensor
from opdefs import dtypes
from reference.quant import dequantize, quantize, real_range
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


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def judge_output(expected: np.ndarray, actual: np.ndarray, out: Tensor, budget: Budget | None = None,
                 nan_means_any: bool = False) -> Judgement:  # fmt: skip
    d = dtypes.get(out.dtype)
    budget = budget or budget_for(out.dtype)
    if tuple(actual.shape) != tuple(out.shape):
        return Judgement(False, f"{out.name}: shape {tuple(actual.shape)} != declared {tuple(out.shape)}")
    exp = np.asarray(expected)
    if exp.shape != actual.shape:
        return Judgement(False, f"{out.name}: reference shape {exp.shape} != declared {tuple(out.shape)}")
    metrics: dict[str, Any] = {"tolerance": budget.text(), "budget": budget.as_dict()}
    exp_f = exp.astype(np.float64) if exp.dtype != bool else exp.astype(np.float64)
    if d.kind == "float" or d.kind == "bool":
        checkable = np.ones(exp.shape, dtype=bool)
    else:  # no fixed-point or integer value stands for NaN or infinity, and the spec names none
        checkable = np.isfinite(exp_f)
    not_checkable = int(exp.size - np.count_nonzero(checkable))
    if not_checkable:
        metrics["not_checkable"] = not_checkable
    if nan_means_any:
        free = np.isnan(exp_f)
        if free.any():
            metrics["unconstrained"] = int(np.count_nonzero(free))
        checkable &= ~free
    if d.quantized:
        exp_q = quantize(np.where(checkable, exp_f, 0.0), out.encoding, out.dtype).astype(np.int64)
        steps = np.abs(actual.astype(np.int64) - exp_q).astype(np.float64)
        scale = _scale_per_element(out, exp.shape)
        allowed = budget.steps + budget.rtol * np.abs(np.where(checkable, exp_f, 0.0)) / scale
        if budget.range_rtol:
            lo, hi = real_range(out.encoding, out.dtype)
            full = np.maximum(np.abs(np.atleast_1d(lo)), np.abs(np.atleast_1d(hi)))
            if out.encoding.per_axis:
                view = [1] * exp.ndim
                view[out.encoding.axis] = -1
                full = np.broadcast_to(full.reshape(view), exp.shape)
            else:
                full = float(full[0])  # a rank-0 output too
            allowed = allowed + budget.range_rtol * full / scale
        bad = checkable & (steps > allowed + 1e-9)
        got_real = dequantize(actual, out.encoding)
        real_err = np.where(checkable, np.abs(got_real - np.where(checkable, exp_f, 0.0)), 0.0)
        metrics.update(max_steps=int(np.where(checkable, steps, 0).max(initial=0)),
                       max_abs_err=float(real_err.max(initial=0.0)))  # fmt: skip

        def describe(i: tuple[int, ...]) -> str:
            return (f"expected {_fmt(exp_f[i])} (code {exp_q[i]}), got code {actual[i]} (= {_fmt(got_real[i])}), "
                    f"{steps[i]:g} steps > {allowed[i]:.3g}")  # fmt: skip
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
        err = np.nan_to_num(err, nan=np.inf)
        ulps = np.nan_to_num(ulps, nan=np.inf)
        rel = np.nan_to_num(rel, nan=np.inf)
        with np.errstate(invalid="ignore"):
            within = (err <= budget.atol + budget.rtol * np.abs(np.nan_to_num(e, nan=0.0))) | (ulps <= budget.ulp)
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
    n_bad = int(np.count_nonzero(bad))
    metrics["mismatches"] = n_bad
    checked = int(np.count_nonzero(checkable))
    if n_bad:
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return Judgement(False, f"{out.name}: {n_bad}/{checked} elements outside {budget.text()}; first at {idx}: "
                                f"{describe(idx)}", metrics, checked)  # fmt: skip
    return Judgement(True, "", metrics, checked)


def judge(case: Case, expected: list[np.ndarray], actual: list[np.ndarray], op_tol: dict | None = None,
          accumulation: float | None = None) -> Judgement:  # fmt: skip
    """All outputs of one case; metrics are the worst over outputs, ``checked`` their sum."""
    if len(actual) != len(case.outputs):
        return Judgement(False, f"backend returned {len(actual)} outputs, case declares {len(case.outputs)}")
    if len(expected) < len(case.outputs):
        return Judgement(False, f"reference gives {len(expected)} outputs, case declares {len(case.outputs)}")
    merged: dict[str, Any] = {"mismatches": 0}
    messages = []
    checked = 0
    for e, a, out in zip(expected, actual, case.outputs, strict=False):
        any_value = bool((op_tol or {}).get("nan_means_any"))
        j = judge_output(e, a, out, budget_for(out.dtype, op_tol, accumulation), any_value)
        checked += j.checked
        for k, v in j.metrics.items():
            if k in ("mismatches", "not_checkable", "unconstrained"):
                merged[k] = merged.get(k, 0) + v
            elif isinstance(v, float | int) and not isinstance(v, bool):
                merged[k] = max(merged.get(k, v), v)
            else:
                merged.setdefault(k, v)
        if not j.passed:
            messages.append(j.message)
    dist = (op_tol or {}).get("distribution")
    if dist and case.outputs and len(actual) >= 1:
        d = _judge_distribution(case, actual[0], case.outputs[0], dist)
        merged.update(d.metrics)
        checked += d.checked
        if not d.passed:
            messages.append(d.message)
    return Judgement(not messages, "; ".join(messages), merged, checked)


def _judge_distribution(case: Case, actual: np.ndarray, out: Tensor, dist: dict[str, Any]) -> Judgement:
    """A random op's output judged as a sample: inside [low, high] and, by a Kolmogorov-Smirnov test
    at the spec'd false-alarm rate ``alpha``, drawn from the declared distribution. ``low``/``high``
    name the case's parameters (their spec defaults when the case leaves them out)."""
    from reference import random_ops
    from reference.quant import real_value

    if dist.get("kind") != "uniform":
        return Judgement(False, f"unknown distribution {dist.get('kind')!r} in the op's tolerance")
    import opdefs

    defaults = opdefs.load(case.op).param_defaults()

    def param(name: str) -> float:
        p = case.params.get(name)
        return float(p.value if p is not None else defaults[name])

    low, high = param(dist["low"]), param(dist["high"])
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
    for r, t in zip(real, case.outputs, strict=False):
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
