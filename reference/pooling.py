"""Pools: PoolAvg2d/3d, PoolMax2d/3d, L2Pool2d, on channel-last tensors [batch, spatial..., channel].

A window's cells fall in one of three places: the input, the pad_amount border ("pad") or, with
CEIL rounding, past the after-pad ("overhang": the last window may run off the padded input).
Each pool says which of those it reads; the choices and their reasons are the op YAML's
``decisions:``. In short: max and L2 read input cells only, average reads input cells and divides
by the input cells (count_pad_for_edges = 0) or by the input and pad cells (otherwise), and a
window with nothing to read gives 0.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from reference import member, register
from reference.convolution import _pads, _per_axis


def pool_nd(
    x: np.ndarray,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    ceil: bool,
    kind: str,
    count_pad: bool = False,
) -> np.ndarray:
    """Pool every window of ``x`` ([batch, spatial..., channel]); kind is "max", "avg" or "l2"."""
    n = x.ndim - 2
    if any(f < 1 for f in size) or any(s < 1 for s in stride):
        raise ValueError("filter_size and stride must be > 0")
    round_ = math.ceil if ceil else math.floor
    padded = [pads[i][0] + x.shape[1 + i] + pads[i][1] for i in range(n)]
    out_sz = [round_((padded[i] - size[i]) / stride[i] + 1) for i in range(n)]
    if any(o < 1 for o in out_sz):
        raise ValueError(f"filter {size} does not fit the padded input {padded}")
    # Allocate the padded input plus the CEIL overhang, with one mask per cell class.
    extent = [max(padded[i], (out_sz[i] - 1) * stride[i] + size[i]) for i in range(n)]
    vals = np.zeros((x.shape[0], *extent, x.shape[-1]))
    is_input = np.zeros(extent, dtype=bool)
    is_counted = np.zeros(extent, dtype=bool)  # input or pad (the count_pad_for_edges divisor)
    inner = tuple(slice(pads[i][0], pads[i][0] + x.shape[1 + i]) for i in range(n))
    vals[(slice(None), *inner)] = x
    is_input[inner] = True
    is_counted[tuple(slice(0, p) for p in padded)] = True

    acc = np.full((x.shape[0], *out_sz, x.shape[-1]), -np.inf if kind == "max" else 0.0)
    n_input = np.zeros(out_sz)
    n_counted = np.zeros(out_sz)
    for tap in itertools.product(*(range(f) for f in size)):
        sl = tuple(slice(tap[i], tap[i] + (out_sz[i] - 1) * stride[i] + 1, stride[i]) for i in range(n))
        v, m = vals[(slice(None), *sl)], is_input[sl]
        mb = m[None, ..., None]
        if kind == "max":
            acc = np.where(mb, np.maximum(acc, v), acc)
        elif kind == "l2":
            acc += np.where(mb, v * v, 0.0)
        else:
            acc += np.where(mb, v, 0.0)
        n_input += m
        n_counted += is_counted[sl]
    empty = (n_input == 0)[None, ..., None]
    if kind == "max":
        return np.where(empty, 0.0, acc)
    if kind == "l2":
        return np.sqrt(acc)
    divisor = (n_counted if count_pad else n_input)[None, ..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(divisor == 0, 0.0, acc / np.where(divisor == 0, 1.0, divisor))


def _common(inputs: list[np.ndarray | None], params: dict[str, Any]) -> tuple[np.ndarray, Any, Any, Any]:
    x = np.asarray(inputs[0], dtype=np.float64)
    n = x.ndim - 2
    if n < 1:
        raise ValueError(f"input rank {x.ndim}: needs [batch, spatial..., channel]")
    return (
        x,
        _per_axis(params["filter_size"], n, "filter_size"),
        _per_axis(params["stride"], n, "stride"),
        _pads(params["pad_amount"], n),
    )


def _ceil(op: str, params: dict[str, Any]) -> bool:
    """rounding_mode (seed 9747, 9853, 9948, 10045): FLOOR or CEIL of the window count."""
    return member(op, params, "rounding_mode") == "CEIL"


@register("PoolAvg2d", "PoolAvg3d", verified_by="onnxruntime")
def pool_avg(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x, size, stride, pads = _common(inputs, params)
    count_pad = bool(params.get("count_pad_for_edges", False))
    return [pool_nd(x, size, stride, pads, _ceil(op, params), "avg", count_pad)]


@register("PoolMax2d", "PoolMax3d", verified_by="onnxruntime")
def pool_max(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x, size, stride, pads = _common(inputs, params)
    return [pool_nd(x, size, stride, pads, _ceil(op, params), "max")]


@register("L2Pool2d", verified_by="onnxruntime")
def l2_pool(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """sqrt of the SUM of squares (seed 7766), as ONNX LpPool(p=2); NNAPI/TFLite take the mean."""
    x, size, stride, pads = _common(inputs, params)
    return [pool_nd(x, size, stride, pads, False, "l2")]
