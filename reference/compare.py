"""Judge a backend's outputs against the reference's real-valued expectation, with tolerance as data.

Expected values are real (float64). For a fixed-point output they are quantized with the output's
encoding and compared in quantization steps; for float outputs the error is measured both
absolutely and in ULPs of the output type; integer and bool outputs must match exactly. A
per-op ``tolerance`` block in the YAML overrides the class defaults; its ``accumulation``
expression (K) scales ULP budgets for long dot products.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cases.case import Case, Tensor
from opdefs import dtypes
from reference.quant import dequantize, quantize

# class -> (kind, budget). float: ULPs *and* an absolute floor (ops near zero); fixed point: steps.
DEFAULTS: dict[str, dict[str, float]] = {
    "FLOAT_32": {"ulp": 64, "atol": 1e-6},
    "FLOAT_64": {"ulp": 64, "atol": 1e-12},
    "FLOAT_16": {"ulp": 4, "atol": 1e-3},  # HTP fp16 carries ~11 significant bits (facts sheet)
    "BFLOAT_16": {"ulp": 4, "atol": 1e-2},
    "fixed_point": {"steps": 1},
    "integer": {"atol": 0},
}


@dataclass
class Judgement:
    passed: bool
    message: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)


def _tolerance(op_tol: dict[str, Any] | None, dtype: str) -> dict[str, float]:
    d = dtypes.get(dtype)
    key = dtype if d.kind == "float" else ("fixed_point" if d.quantized else "integer")
    tol = dict(DEFAULTS.get(key, {"atol": 0}))
    if op_tol:
        override = op_tol.get({"FLOAT_32": "float32", "FLOAT_16": "float16"}.get(dtype, key)) or {}
        tol.update({k: float(v) for k, v in override.items() if isinstance(v, int | float)})
        if op_tol.get("exact"):
            tol = {"atol": 0.0}
    return tol


def _ulp(values: np.ndarray, dtype: str) -> np.ndarray:
    storage = dtypes.get(dtype).storage
    v = np.abs(values).astype(storage)
    return np.spacing(np.maximum(v, np.finfo(storage).tiny)).astype(np.float64)


def judge_output(expected: np.ndarray, actual: np.ndarray, out: Tensor, op_tol: dict | None = None) -> Judgement:
    d = dtypes.get(out.dtype)
    if tuple(actual.shape) != tuple(out.shape):
        return Judgement(False, f"{out.name}: shape {tuple(actual.shape)} != declared {tuple(out.shape)}")
    exp = np.asarray(expected)
    if exp.shape != actual.shape:
        return Judgement(False, f"{out.name}: reference shape {exp.shape} != declared {tuple(out.shape)}")
    tol = _tolerance(op_tol, out.dtype)
    metrics: dict[str, Any] = {}
    if d.quantized:
        exp_q = quantize(exp, out.encoding, out.dtype).astype(np.int64)
        steps = np.abs(actual.astype(np.int64) - exp_q)
        bad = steps > tol.get("steps", 1)
        real_err = np.abs(dequantize(actual, out.encoding) - dequantize(exp_q, out.encoding))
        metrics.update(max_steps=int(steps.max(initial=0)), max_abs_err=float(real_err.max(initial=0.0)),
                       tolerance=f"{tol.get('steps', 1):g} steps")  # fmt: skip
    elif d.kind == "float":
        a = actual.astype(np.float64)
        # the best a backend can return is the real result rounded to the output type (65504 -> inf in fp16)
        with np.errstate(over="ignore", invalid="ignore"):
            e = exp.astype(np.float64).astype(d.storage).astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(e)
        same_inf = np.isinf(a) & np.isinf(e) & (np.sign(a) == np.sign(e))
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.where(both_nan | same_inf, 0.0, np.abs(a - e))
            ulps = err / _ulp(e, out.dtype)
        err = np.nan_to_num(err, nan=np.inf)
        ulps = np.nan_to_num(ulps, nan=np.inf)
        bad = (err > tol.get("atol", 0.0)) & (ulps > tol.get("ulp", 0.0))
        metrics.update(max_abs_err=float(err.max(initial=0.0)), max_ulp=float(ulps.max(initial=0.0)),
                       tolerance=f"{tol.get('ulp', 0):g} ulp or atol {tol.get('atol', 0):g}")  # fmt: skip
    else:
        if d.kind == "bool":
            bad = actual.astype(bool) != exp.astype(bool)
        else:
            bad = actual.astype(np.float64) != np.round(exp.astype(np.float64))
        metrics.update(tolerance="exact")
    n_bad = int(np.count_nonzero(bad))
    metrics["mismatches"] = n_bad
    if n_bad:
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return Judgement(False, f"{out.name}: {n_bad}/{bad.size} elements outside tolerance; first at {idx}: "
                                f"expected {exp[idx]!r}, got {actual[idx]!r}", metrics)  # fmt: skip
    return Judgement(True, "", metrics)


def judge(case: Case, expected: list[np.ndarray], actual: list[np.ndarray], op_tol: dict | None = None) -> Judgement:
    if len(actual) != len(case.outputs):
        return Judgement(False, f"backend returned {len(actual)} outputs, case declares {len(case.outputs)}")
    if len(expected) < len(case.outputs):
        return Judgement(False, f"reference gives {len(expected)} outputs, case declares {len(case.outputs)}")
    merged: dict[str, Any] = {"mismatches": 0}
    messages = []
    for e, a, out in zip(expected, actual, case.outputs, strict=False):
        j = judge_output(e, a, out, op_tol)
        for k, v in j.metrics.items():
            if k == "mismatches":
                merged[k] += v
            elif isinstance(v, float | int):
                merged[k] = max(merged.get(k, v), v)
            else:
                merged.setdefault(k, v)
        if not j.passed:
            messages.append(j.message)
    return Judgement(not messages, "; ".join(messages), merged)


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
