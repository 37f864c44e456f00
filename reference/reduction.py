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
from reference.models import register_model


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


@register(*_REDUCERS, verified_by="onnxruntime")
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


@register("Moments", verified_by="onnxruntime")
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


@register(*_ARG, verified_by="onnxruntime")
def arg_reduce(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    axis = int(params["axis"])
    idx = _ARG[op](x, axis=axis, keepdims=bool(params.get("keep_dims", False)))
    return [np.asarray(idx).astype(_index_dtype(out_dtypes, 0))]


@register("CumulativeSum", verified_by="onnxruntime")
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


@register_model("ReduceSum", name="first-listed-axis-only")
def reduce_sum_first_listed_axis_only(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 ReduceSum with axes out of order and keep_dims false (finding
    reducesum-f16-unsorted-axes): it sums along the first listed axis only and reads the other listed axes at index 0
    ([1, 2, 3] = [[1, 2, 4], [8, 16, 32]] with axes [2, 1] gives 7, the first row's sum, for 63)."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    axes = [int(a) for a in np.asarray(params["axes"]).reshape(-1)]
    y = np.sum(x, axis=axes[0], keepdims=True)
    y = y[tuple(slice(0, 1) if i in axes else slice(None) for i in range(x.ndim))]
    return [y.reshape(case.outputs[0].shape)]


@register_model("CumulativeSum", name="first-slice-unset")
def cumulative_sum_first_slice_unset(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_8 inclusive CumulativeSum along an axis that lands on the height or width of
    its 4-D layout (axis rank - 2 or rank - 3; finding cumulativesum-u8-first-slice-lowest-code): slice 0 along the
    axis comes out as the lowest code or other values from run to run, slice 1 is right, and the slices after it carry
    an offset (a multiple of one amount: 69, 138 codes), as if the running sum started from an unset accumulator that
    slice 1 happens to overwrite. Only slice 1 is held to the reference; the rest is left open."""
    from reference.expected import arguments, expected

    _, params = arguments(case)
    y = expected(case)[0]
    axis = int(np.asarray(params["axis"]).reshape(-1)[0]) % y.ndim
    open_ = np.full_like(y, np.nan)
    held = tuple(slice(1, 2) if i == axis else slice(None) for i in range(y.ndim))
    open_[held] = y[held]
    return [open_]


@register("TopK", verified_by="onnxruntime")
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
