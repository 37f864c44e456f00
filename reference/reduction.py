"""Reductions: Reduce*, Moments, Argmax/Argmin, CumulativeSum, TopK.

Everything here reduces or scans along UINT_32 axes (no negative axes in QNN; Moments' INT_32 axes
are wrapped Python-style because the type allows them). The output-rank rules differ between ops
and are the spec's, not numpy's: see ``_REDUCE_MIN_RANK``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from reference import register

# Spec readings this module depends on (seed: seeds/004_b46271055e0d5186.txt). Mirrored into the
# `decisions:` lists of opdefs/<Op>.yaml once those exist.
DECISIONS: dict[str, list[dict[str, Any]]] = {
    "Argmax": [
        {
            "about": "ties",
            "line": 64,
            "choice": "the smallest index among equal maxima",
            "why": "the spec is silent; it cites ONNX ArgMax, whose default select_last_index=0 picks the first",
        },
        {
            "about": "output rank when n == 1 and keep_dims is false",
            "line": 117,
            "choice": "rank 0 (m = n - 1 literally)",
            "why": "the output shape rule m = n - 1 has no max(1, .) clamp, unlike the Reduce* ops",
        },
    ],
    "Argmin": [
        {
            "about": "ties",
            "line": 119,
            "choice": "the smallest index among equal minima",
            "why": "the spec is silent; it cites ONNX ArgMin, whose default select_last_index=0 picks the first",
        },
    ],
    "CumulativeSum": [
        {
            "about": "exclusive sum length",
            "line": 2320,
            "choice": "out[i] = in[0] + ... + in[i-1] (the first i elements), out[0] = 0",
            "why": "the prose says 'the first (i - 1) elements' but the formula (2323-2325) and the example "
            "([1,2,3] -> [0,1,3], 2272-2273) both sum i elements; ONNX CumSum exclusive agrees",
        },
        {
            "about": "reverse exclusive formula",
            "line": 2344,
            "choice": "out[i] = in[i+1] + ... + in[K], out[K] = 0",
            "why": "the formula lacks a '+' between input[i + 2] and input[i + 1]; the example "
            "([1,2,3] -> [5,3,0], 2278-2279) and ONNX CumSum(exclusive=1, reverse=1) fix the reading",
        },
    ],
    "Moments": [
        {
            "about": "variance estimator",
            "line": 8961,
            "choice": "population variance mean((x - mean)^2) over axes (divide by the count)",
            "why": "no formula; the cited tf.nn.moments computes the population (biased) variance",
        },
        {
            "about": "output rank when every axis is reduced and keep_dims is false",
            "line": 9012,
            "choice": "shape [1]",
            "why": "'specified axes are omitted' would give rank 0, but both outputs are constrained to "
            "rank > 0 (9017, 9030); the Reduce* rule K = max(1, N - M) is the consistent completion",
        },
    ],
    "ReduceSumSquare": [
        {
            "about": "output rank when every axis is reduced and keep_dims is false",
            "line": 10658,
            "choice": "rank 0 (K = max(0, N - M)), while ReduceMax/Mean/Min/Prod/Sum give shape [1]",
            "why": "the spec states max(0, N - M) for ReduceSumSquare and max(1, N - M) for the other "
            "reductions (10312, 10384, 10454, 10522, 10593); each op follows its own text",
        },
    ],
    "TopK": [
        {
            "about": "ties",
            "line": 12745,
            "choice": "equal values: the larger input index comes first (for largest and smallest alike)",
            "why": "the spec says so explicitly; note that this is the OPPOSITE of ONNX TopK and of "
            "numpy/std stable sorts, which put the smaller index first",
        },
    ],
}
for _op in ("ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum"):
    DECISIONS[_op] = [
        {
            "about": "output rank when every axis is reduced and keep_dims is false",
            "line": 10312,
            "choice": "shape [1] (K = max(1, N - M))",
            "why": "stated by the spec for every reduction but ReduceSumSquare (which says max(0, N - M), 10658)",
        }
    ]


def _axes(value: Any, ndim: int) -> tuple[int, ...]:
    """Axis list as Python ints, wrapped into [0, ndim) (only INT_32 axes can be negative)."""
    axes = np.asarray(value, dtype=np.int64).reshape(-1)
    if ndim == 0:
        return ()
    return tuple(sorted({int(a) % ndim for a in axes}))


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keep_dims: bool, min_rank: int) -> tuple[int, ...]:
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    return kept if len(kept) >= min_rank else (1,) * min_rank


def _sum_square(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    return np.sum(x * x, axis=axis)


# op -> (reduction over a tuple of axes, least output rank without keep_dims)
_REDUCERS: dict[str, Callable[[np.ndarray, tuple[int, ...]], np.ndarray]] = {
    "ReduceMax": lambda x, axis: np.max(x, axis=axis),
    "ReduceMean": lambda x, axis: np.mean(x, axis=axis),
    "ReduceMin": lambda x, axis: np.min(x, axis=axis),
    "ReduceProd": lambda x, axis: np.prod(x, axis=axis),
    "ReduceSum": lambda x, axis: np.sum(x, axis=axis),
    "ReduceSumSquare": _sum_square,
}
_REDUCE_MIN_RANK = {"ReduceSumSquare": 0}  # every other reduction: 1


@register(*_REDUCERS)
def reduce(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """The spec's shape rule is applied after the numpy reduction, so the [1]-vs-scalar difference
    between ReduceSumSquare and the others lives in one table."""
    x = np.asarray(inputs[0], dtype=np.float64)
    if x.ndim == 0:  # ReduceSumSquare of a scalar: "the output is simply in[0] squared" (10607)
        return [np.asarray(_REDUCERS[op](x, ()))]
    axes = _axes(params["axes"], x.ndim)
    keep = bool(params.get("keep_dims", False))
    out = _REDUCERS[op](x, axes)
    return [np.asarray(out, dtype=np.float64).reshape(_reduced_shape(x.shape, axes, keep, _REDUCE_MIN_RANK.get(op, 1)))]


@register("Moments")
def moments(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    axes = _axes(params["axes"], x.ndim)
    shape = _reduced_shape(x.shape, axes, bool(params.get("keep_dims", False)), 1)
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    return [mean.reshape(shape), var.reshape(shape)]


def _index_dtype(out_dtypes: list[Any] | None, i: int) -> np.dtype:
    """Index outputs take the declared type (INT_32 / UINT_32 / backend specific); int32 if unknown."""
    if out_dtypes is not None and len(out_dtypes) > i and out_dtypes[i] is not None:
        return np.dtype(out_dtypes[i])
    return np.dtype(np.int32)


_ARG = {"Argmax": np.argmax, "Argmin": np.argmin}  # numpy returns the first index of a tie


@register(*_ARG)
def arg_reduce(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    axis = int(params["axis"])
    idx = _ARG[op](x, axis=axis, keepdims=bool(params.get("keep_dims", False)))
    return [np.asarray(idx).astype(_index_dtype(out_dtypes, 0))]


@register("CumulativeSum")
def cumulative_sum(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """Reverse is a flip around an inclusive/exclusive forward scan, which is how the example reads."""
    x = np.asarray(inputs[0], dtype=np.float64)
    axis = int(params["axis"])
    reverse = bool(params.get("reverse", False))
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis)
    if bool(params.get("exclusive", False)):  # shift by one rather than subtract: no cancellation
        out = np.moveaxis(out, axis, -1)
        out = np.concatenate([np.zeros(out.shape[:-1] + (1,)), out[..., :-1]], axis=-1)
        out = np.moveaxis(out, -1, axis)
    if reverse:
        out = np.flip(out, axis)
    return [np.ascontiguousarray(out)]


@register("TopK")
def top_k(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """A stable sort of the reversed last axis puts the larger original index first among equal
    values, which is the spec's tie rule (12745)."""
    x = np.asarray(inputs[0], dtype=np.float64)
    k = int(params["k"])
    n = x.shape[-1]
    rev = x[..., ::-1]
    key = -rev if bool(params.get("largest", True)) else rev
    order = np.argsort(key, axis=-1, kind="stable")[..., :k]
    idx = (n - 1) - order
    values = np.take_along_axis(x, idx, axis=-1)
    return [values, idx.astype(_index_dtype(out_dtypes, 1))]
