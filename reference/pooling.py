"""Pools: PoolAvg2d/3d, PoolMax2d/3d, L2Pool2d, on channel-last tensors [batch, spatial..., channel].

A window's cells fall in one of three places: the input, the pad_amount border ("pad") or, with
CEIL rounding, past the after-pad ("overhang": the last window may run off the padded input).
Each pool says which of those it reads; the choices and their reasons are the op YAML's
``decisions:``. In short: max and L2 read input cells only, average reads input cells and divides
by the input cells (count_pad_for_edges = 0) or by the whole filter (otherwise: input, pad and overhang cells). A window
with nothing to divide by averages to 0 / 0, left open (NaN, the op's tolerance nan_means_any), and a window with no
input cell has the maximum -inf (the maximum over no cell: PoolMax2d.yaml).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from reference import member, register
from reference.convolution import _pads, _per_axis
from reference.models import register_model


def pool_nd(
    x: np.ndarray,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    ceil: bool,
    kind: str,
    count_pad: bool = False,
    open_empty: bool = False,
) -> np.ndarray:
    """Pool every window of ``x`` ([batch, spatial..., channel]); kind is "max", "avg" or "l2". ``open_empty``: an
    average with no cell to divide by is NaN (the reference: open) rather than 0 (what the backend models assume)."""
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
        return np.where(empty, -np.inf, acc)
    if kind == "l2":
        return np.sqrt(acc)
    # count_pad_for_edges: every window that reads an input or pad cell averages the whole filter ("Number of elements
    # to average = filter_size[0] * ...", seed 9682 / 9788), a CEIL overhang counted like pad (PoolAvg3d.yaml)
    full = np.where(n_counted > 0, float(math.prod(size)), 0.0)
    divisor = (full if count_pad else n_input)[None, ..., None]
    with np.errstate(invalid="ignore", divide="ignore"):  # no cell to divide by: 0 / 0, open (PoolAvg2d.yaml)
        return np.where(divisor == 0, np.nan if open_empty else 0.0, acc / np.where(divisor == 0, 1.0, divisor))


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
    return [pool_nd(x, size, stride, pads, _ceil(op, params), "avg", count_pad, open_empty=True)]


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


# --- models of deviations (reference.models): what a backend with a known bug returns --------------


def _pool_case(case: Any) -> tuple[np.ndarray, Any, Any, Any, dict[str, Any], tuple[int, ...]]:
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, size, stride, pads = _common(inputs, params)
    return x, size, stride, pads, params, tuple(case.outputs[0].shape)


def _cropped(y: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The first windows of a pool computed over a wider padded input, as many as the declared output holds."""
    return y[tuple(slice(0, n) for n in shape)]


def _before_pads_moved_after(case: Any, axes: Any) -> list[np.ndarray]:
    x, size, stride, pads, params, shape = _pool_case(case)
    moved = tuple((0, b + a) if i in axes else (b, a) for i, (b, a) in enumerate(pads))
    count_pad = bool(params.get("count_pad_for_edges", False))
    return [_cropped(pool_nd(x, size, stride, moved, _ceil(case.op, params), "avg", count_pad), shape)]


@register_model("PoolAvg2d", name="before-pad-moved-after")
def pool_avg_before_pad_moved_after(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 PoolAvg2d on one channel with stride 2 (finding poolavg2d-f16-padded-window-average-
    wrong): the before-pad of each spatial axis is added after the input instead, so the first window starts at the
    first input cell ([[1, 2], [3, 4]], a 2 x 2 window, height pad [1, 1] -> [2.5, 0] where [1.5, 3.5] belongs)."""
    return _before_pads_moved_after(case, range(2))


@register_model("PoolAvg2d", name="before-pad-moved-after-column-past-row")
def pool_avg_before_pad_moved_after_column_past_row(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 PoolAvg2d with stride 2, a 2 x 2 window and a width of 4k + 2 (finding
    poolavg2d-f16-width-4k2-column-past-row): ``before-pad-moved-after``'s windows, and the column just past each row
    counts as an input cell holding the pixel that follows the row in memory (the next row's first, row-major NHWC).
    Past an image's last row (that column, and the rows below) the kernel reads memory past the input: left open (NaN).
    A [1, 4, 6, 1] ramp 0 .. 23, pads [1, 1] on both axes: output (0, 3) averages cells 6 and 12 (9), where the window
    lies wholly in the pad."""
    x, size, stride, pads, params, shape = _pool_case(case)
    n, h, w, c = x.shape
    past = np.full((n, h, 1, c), np.nan)
    past[:, :-1, 0] = x[:, 1:, 0]
    wide = np.concatenate([x, past], axis=2)
    wide = np.concatenate([wide, np.full((n, size[0], w + 1, c), np.nan)], axis=1)
    (_, _), (left, right) = pads
    moved = ((0, 0), (0, max(0, left + right - 1)))
    count_pad = bool(params.get("count_pad_for_edges", False))
    return [_cropped(pool_nd(wide, size, stride, moved, _ceil(case.op, params), "avg", count_pad), shape)]


@register_model("PoolAvg3d", name="width-before-pad-moved-after")
def pool_avg_width_before_pad_moved_after(case: Any) -> list[np.ndarray]:
    """The HTP simulator's PoolAvg3d with count_pad_for_edges (finding poolavg3d-width-before-pad-ignored): the width
    before-pad is added after the row instead ([0.5, -1, -2], window 2, pad [1, 0] -> [-0.25, -1.5, -1]); the depth
    and height pads are where pad_amount puts them."""
    return _before_pads_moved_after(case, (2,))


@register_model("PoolAvg2d", name="count-pad-width-before-pad-as-4")
def pool_avg_count_pad_width_before_pad_as_4(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 PoolAvg2d with count_pad_for_edges, stride 1 and a width before-pad (finding
    poolavg2d-count-pad-stride1-shifted): the width before-pad is read as 4 cells whatever pad_amount says, so the
    output is the reference shifted right with leading zeros ([0, 0, 0, 0.25, -0.25, -1.5] for [0.25, -0.25, -1.5,
    -1.75, -0.25, 0.625] with a before-pad of 1 and a window 2 wide)."""
    x, size, stride, pads, params, shape = _pool_case(case)
    (top, bottom), (_, right) = pads
    wide = ((top, bottom + 8), (4, right + 8))
    return [_cropped(pool_nd(x, size, stride, wide, _ceil(case.op, params), "avg", True), shape)]


@register_model("PoolAvg2d", name="last-input-column-dropped")
def pool_avg_last_input_column_dropped(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point PoolAvg2d without count_pad_for_edges, a 3-wide window, a left pad and no right
    pad (finding poolavg2d-fixed-no-count-pad-column-repeated): the last input column is left out of every window, as
    if it were padding, so the last output column averages one column fewer (with a 3 x 3 input it repeats the column
    before it)."""
    x, size, stride, pads, params, shape = _pool_case(case)
    (top, bottom), (left, right) = pads
    return [pool_nd(x[:, :, :-1], size, stride, ((top, bottom), (left, right + 1)), _ceil(case.op, params), "avg",
                    False)]  # fmt: skip


@register_model("L2Pool2d", name="root-mean-square")
def l2_pool_root_mean_square(case: Any) -> list[np.ndarray]:
    """The QNN CPU backend's L2Pool2d (finding l2pool2d-root-mean-square): the root of the MEAN of the squares over the
    window's cells inside the input (NNAPI's and TFLite's L2_POOL_2D, padded cells counted out), not the root of their
    sum (line 7766): a 2 x 2 window of ones gives 1, not 2."""
    x, size, stride, pads, params, shape = _pool_case(case)
    return [np.sqrt(pool_nd(np.square(x), size, stride, pads, False, "avg", False))]


@register_model("L2Pool2d", name="ep-average-with-before-pads-moved-after")
def l2_pool_ep_average_with_before_pads_moved_after(case: Any) -> list[np.ndarray]:
    """The ONNX Runtime QNN EP's FLOAT_16 L2Pool2d (ONNX LpPool p=2; finding ep-l2pool2d-f16-padded-average): the EP
    lowers it to x * x -> PoolAvg2d (count_pad_for_edges 0) -> square root -> times the square root of each window's
    number of input cells, and the HTP's FLOAT_16 PoolAvg2d adds the before-pads after the input instead (qnn-htp's
    poolavg2d-f16-padded-window-average-wrong, model before-pad-moved-after), so each output is the root mean square
    of the window shifted by the before-pads, rescaled by the count of the window where it belongs (a window past the
    input gives 0)."""
    x, size, stride, pads, params, shape = _pool_case(case)
    moved = tuple((0, b + a) for b, a in pads)
    mean = _cropped(pool_nd(np.square(x), size, stride, moved, False, "avg", False), shape)
    count = np.square(pool_nd(np.ones_like(x[:1, ..., :1]), size, stride, pads, False, "l2"))
    return [np.sqrt(mean) * np.sqrt(count)]


@register_model("PoolMax2d", "PoolMax3d", name="pad-cells-as-zero")
def pool_max_pad_cells_as_zero(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_32 PoolMax2d (finding poolmax2d-f32-pad-as-zero): padded cells take part in the
    maximum as 0, line 9915's 'Pad value = 0' read literally, so a negative maximum next to the padding becomes 0. The
    cells a CEIL window reaches past the after-pad are read as 0 too (seed 2's edge case: a [2, 4, 3, 2] input, 2 x 2
    window, width stride 2, no pad: the last column's -3 comes back as 0)."""
    x, size, stride, pads, params, shape = _pool_case(case)
    ends = [(shape[1 + i] - 1) * stride[i] + size[i] for i in range(len(pads))]  # the last window's end
    over = [max(0, e - (b + x.shape[1 + i] + a)) for i, (e, (b, a)) in enumerate(zip(ends, pads, strict=True))]
    padded = np.pad(x, [(0, 0), *((b, a + o) for (b, a), o in zip(pads, over, strict=True)), (0, 0)])
    return [_cropped(pool_nd(padded, size, stride, tuple((0, 0) for _ in pads), False, "max"), shape)]


@register_model("PoolAvg3d", name="depth-average-of-clipped-planes")
def pool_avg3d_depth_average_of_clipped_planes(case: Any) -> list[np.ndarray]:
    """The HTP's fixed-point PoolAvg3d, through the ONNX Runtime QNN EP and natively alike (ort-qnn's finding
    ep-poolavg3d-width-before-pad-ignored, measured on an unpadded case): each depth slice is pooled over height and
    width first, that plane held on out[0]'s grid (clipped to its range), and the depth windows then average those
    planes; the reference averages the whole 3D window at once, so a window whose planes pass out[0]'s range comes out
    wrong. Only without depth padding (the model raises otherwise: it does not state padded depth windows)."""

    from cases.quant import real_range

    x, size, stride, pads, params, shape = _pool_case(case)
    if pads[0] != (0, 0):
        raise ValueError("a depth pad: not modelled")
    count_pad = bool(params.get("count_pad_for_edges", False))
    ceil = _ceil(case.op, params)
    planes = pool_nd(x, (1, *size[1:]), (1, *stride[1:]), ((0, 0), *pads[1:]), ceil, "avg", count_pad)
    out = case.outputs[0]
    lo, hi = real_range(out.encoding, out.dtype)
    planes = np.clip(planes, float(np.min(lo)), float(np.max(hi)))
    return [_cropped(pool_nd(planes, (size[0], 1, 1), (stride[0], 1, 1), ((0, 0),) * 3, ceil, "avg"), shape)]



def _mean_over_full_filter(
    x: np.ndarray, size: tuple[int, ...], stride: tuple[int, ...], pads: tuple[tuple[int, int], ...], ceil: bool
) -> np.ndarray:
    """Every window's sum over its input cells divided by the full filter size: pad and CEIL-overhang cells count as
    zeros in the divisor ([batch, spatial..., channel])."""
    n = x.ndim - 2
    round_ = math.ceil if ceil else math.floor
    out_sz = [round_((pads[i][0] + x.shape[1 + i] + pads[i][1] - size[i]) / stride[i] + 1) for i in range(n)]
    extent = [max(pads[i][0] + x.shape[1 + i] + pads[i][1], (out_sz[i] - 1) * stride[i] + size[i]) for i in range(n)]
    vals = np.zeros((x.shape[0], *extent, x.shape[-1]))
    vals[(slice(None), *(slice(pads[i][0], pads[i][0] + x.shape[1 + i]) for i in range(n)))] = x
    acc = np.zeros((x.shape[0], *out_sz, x.shape[-1]))
    for tap in itertools.product(*(range(f) for f in size)):
        taps = (slice(tap[i], tap[i] + (out_sz[i] - 1) * stride[i] + 1, stride[i]) for i in range(n))
        acc += vals[(slice(None), *taps)]
    return acc / math.prod(size)


@register_model("PoolAvg3d", name="htp-count-pad-average")
def pool_avg3d_htp_count_pad_average(case: Any) -> list[np.ndarray]:
    """The HTP's PoolAvg3d with count_pad_for_edges, as measured on qnn-htp (one-hot probes along each axis in
    FLOAT_16, FLOAT_32 and UFIXED_POINT_8, and the seed-0 typical cases): the width before-pad is added after the row
    instead (finding poolavg3d-width-before-pad-ignored); every window divides by its full filter size, the CEIL
    overhang counted like padding ([x0, x1, x2], window 2, stride 2, CEIL: [(x0 + x1) / 2, x2 / 2] where x2 belongs
    last); each depth slice is pooled over height and width first and, in fixed point, held on out[0]'s grid (clipped
    to its range) before the depth windows average those planes (depth-average-of-clipped-planes); and where the output
    has one depth slice, it averages every plane of the padded depth whatever filter_size and stride say (depth 3,
    window 2, stride 2: (x0 + x1 + x2) / 3 where (x0 + x1) / 2 belongs). Without count_pad_for_edges the model refuses
    the case (not measured)."""
    from cases.quant import real_range

    x, size, stride, pads, params, shape = _pool_case(case)
    if not params.get("count_pad_for_edges", False):
        raise ValueError("count_pad_for_edges false: not measured")
    (d0, d1), (h0, h1), (w0, w1) = pads
    if case.inputs[0].dtype != "SFIXED_POINT_8":  # the signed 8-bit kernel puts the width before-pad right
        w0, w1 = 0, w0 + w1
    ceil = _ceil(case.op, params)
    planes = _mean_over_full_filter(x, (1, *size[1:]), (1, *stride[1:]), ((0, 0), (h0, h1), (w0, w1)), ceil)
    out = case.outputs[0]
    if out.encoding is not None:
        lo, hi = real_range(out.encoding, out.dtype)
        planes = np.clip(planes, float(np.min(lo)), float(np.max(hi)))
    if shape[1] == 1:
        return [_cropped(planes.sum(axis=1, keepdims=True) / (d0 + x.shape[1] + d1), shape)]
    return [_cropped(_mean_over_full_filter(planes, (size[0], 1, 1), (stride[0], 1, 1), ((d0, d1), (0, 0), (0, 0)),
                                            ceil), shape)]  # fmt: skip
