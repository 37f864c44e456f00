"""RandomUniformLike (MasterOpDef 10174-10252): no element has an expected value, only properties.

The registered implementation returns the output's shape filled with NaN, the reference's mark for
"any value is acceptable here" (see reference/glimpse.py for the same convention); the properties a
backend's output must have are separate checks a comparator calls, each returning a ``Check``:

- ``check_shape`` / ``check_dtype``: the declared output (from in[0] when out[0] is dynamic);
- ``check_range``: every value in [low, high];
- ``check_uniform``: a one-sample Kolmogorov-Smirnov test against uniform(low, high) whose false-alarm
  rate is ``alpha`` (1e-3 by default): a correct backend fails it on one case in a thousand;
- ``check_reproducible``: two executions with the same seed agree. The spec does not promise it
  ("values ... may vary across backends", 10180), so its verdict is informational, never a FAIL.

The module is not named ``random`` so that it can never shadow the standard library's module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from reference import register

DEFAULT_ALPHA = 1e-3


@dataclass
class Check:
    passed: bool
    message: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)


def output_shape(inputs: list[np.ndarray | None], out_shapes: list[tuple[int, ...]] | None) -> tuple[int, ...]:
    """The declared static shape wins (in[0] 'is not used unless out[0] is of dynamic shape', 10188);
    without one, the values of in[0]."""
    if out_shapes:
        return tuple(int(d) for d in out_shapes[0])
    if inputs and inputs[0] is not None:
        dims = np.asarray(inputs[0]).reshape(-1)
        if np.any(dims < 1) or np.any(dims != np.round(dims)):
            raise ValueError(f"in[0] must hold positive integer dimensions, got {dims.tolist()}")
        return tuple(int(d) for d in dims)
    raise LookupError("RandomUniformLike needs the declared output shape or in[0]")


@register("RandomUniformLike", verified_by="hand")
def random_uniform_like(inputs, params, out_shapes, out_dtypes, *, op):
    if not float(params["low"]) < float(params["high"]):
        raise ValueError(f"low {params['low']} must be less than high {params['high']}")
    return [np.full(output_shape(inputs, out_shapes), np.nan)]


def check_shape(actual: np.ndarray, inputs: list[np.ndarray | None], out_shapes: list[tuple[int, ...]] | None) -> Check:
    want = output_shape(inputs, out_shapes)
    ok = tuple(np.shape(actual)) == want
    return Check(ok, "" if ok else f"shape {list(np.shape(actual))} != {list(want)}")


def check_dtype(actual: np.ndarray, storage: np.dtype) -> Check:
    ok = np.asarray(actual).dtype == np.dtype(storage)
    return Check(ok, "" if ok else f"dtype {np.asarray(actual).dtype} != {np.dtype(storage)}")


def check_range(values: np.ndarray, low: float, high: float) -> Check:
    """Real values within [low, high]. Closed at high: a draw in [low, high) can round up to high in
    the output type (float16, a fixed-point step), so high itself is not evidence of a fault."""
    v = np.asarray(values, dtype=np.float64)
    bad = ~((v >= low) & (v <= high))
    n_bad = int(bad.sum())
    metrics = {"min": float(v.min(initial=np.inf)), "max": float(v.max(initial=-np.inf)), "outside": n_bad}
    return Check(n_bad == 0, "" if n_bad == 0 else f"{n_bad} value(s) outside [{low}, {high}]", metrics)


def check_uniform(values: np.ndarray, low: float, high: float, alpha: float = DEFAULT_ALPHA,
                  step: float = 0.0) -> Check:  # fmt: skip
    """One-sample Kolmogorov-Smirnov test of ``values`` against uniform(low, high) at level ``alpha``.

    ``step`` is the spacing of representable outputs (a fixed-point scale; 0 for float32): rounding
    to a grid moves the empirical CDF by up to step / (high - low) from any continuous one, so that
    much is added to the critical distance; without it a correct quantized backend would fail."""
    from scipy import stats

    v = np.asarray(values, dtype=np.float64).reshape(-1)
    n = v.size
    if n == 0:
        return Check(True, "no values: nothing to test", {"n": 0})
    d = float(stats.kstest(v, stats.uniform(loc=low, scale=high - low).cdf).statistic)
    critical = ks_critical_distance(n, alpha) + max(0.0, step) / (high - low)
    ok = d <= critical
    metrics = {"n": n, "ks_statistic": d, "critical": critical, "alpha": alpha}
    return Check(ok, "" if ok else f"KS distance {d:.4g} > {critical:.4g} (n={n}, alpha={alpha:g})", metrics)


@lru_cache(maxsize=256)
def ks_critical_distance(n: int, alpha: float) -> float:
    """The distance a correct sample of n exceeds with probability alpha (exact distribution)."""
    from scipy import stats

    return float(stats.kstwo.ppf(1.0 - alpha, n))


def check_reproducible(first: np.ndarray, second: np.ndarray) -> Check:
    """Same seed, same output: informational (the spec does not require it)."""
    a, b = np.asarray(first), np.asarray(second)
    ok = a.shape == b.shape and bool(np.array_equal(a, b))
    return Check(ok, "" if ok else "two executions with the same seed differ")
