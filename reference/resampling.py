"""Resampling: Resize, ResizeBilinear, ResizeNearestNeighbor, CropAndResize, GridSample, ImageProjectionTransform.

Every op samples an NHWC image at source coordinates computed from the output position. Linear and
cubic interpolation are separable, so each spatial axis is resampled on its own with a short list of
taps (index, weight) per output position; nearest modes only move values. A tap of weight 0 is not
read at all, so an infinity beside an exactly hit sample does not turn the result into NaN.

Nearest indices are computed from exact rational coordinates (numerator / denominator of integers):
the tie rules (ROUND_PREFER_FLOOR, ...) are then applied to the coordinate the spec's formula gives,
not to a float approximation of it. Where the MasterOpDef is silent the choice made here is recorded
in the op's YAML ``decisions:`` with its seed line.

Ops whose output size the spec takes from the declared output tensor (Resize, ResizeBilinear,
ResizeNearestNeighbor, and RoiAlign / RoiPooling in ``reference.roi``) raise ``OutputShapeRequired``
when ``out_shapes`` is absent. That is deliberately not a ValueError: the case is valid, only its
output size is unknown here, and the generator then falls back to the output shape the YAML's
curated dims give instead of discarding the case.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference import member, register, register_diagnosis
from reference.datamovement import param
from reference.models import register_model

# Enum members by the spec's names (their numbers live in the YAML only). Resize (seed 10983-11076):
HALF_PIXEL, PYTORCH_HALF_PIXEL = "HALF_PIXEL", "PYTORCH_HALF_PIXEL"
ALIGN_CORNERS, ASYMMETRIC = "ALIGN_CORNERS", "ASYMMETRIC"
NEAREST, LINEAR, CUBIC = "NEAREST", "LINEAR", "CUBIC"
ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, FLOOR, CEIL = "ROUND_PREFER_FLOOR", "ROUND_PREFER_CEIL", "FLOOR", "CEIL"
# CropAndResize / ImageProjectionTransform interpolation (2215-2229, 7402-7418)
BILINEAR, NEAREST_NEIGHBOR = "BILINEAR", "NEAREST_NEIGHBOR"
# GridSample (6678-6726)
GRID_BILINEAR, GRID_NEAREST = "BILINEAR", "NEAREST"
PAD_ZEROS, PAD_BORDER, PAD_REFLECTION = "ZEROS", "BORDER", "REFLECTION"


class OutputShapeRequired(LookupError):
    """The op reads its output size from the declared output tensor and ``out_shapes`` was not given."""


def declared_shape(out_shapes: Any, op: str) -> tuple[int, ...]:
    """``out_shapes[0]`` as ints; the op cannot know its output size otherwise."""
    if not out_shapes or out_shapes[0] is None:
        raise OutputShapeRequired(
            f"{op} takes its output size from the declared output tensor: pass out_shapes (the generator "
            "then uses the output shape the YAML's curated dims give)"
        )
    return tuple(int(d) for d in out_shapes[0])


def flag(params: dict[str, Any], name: str) -> bool:
    return bool(np.asarray(param(params, name, False)).reshape(()))


def real_param(params: dict[str, Any], name: str, default: float) -> float:
    return float(np.asarray(param(params, name, default)).reshape(()))


# ---------------------------------------------------------------------------------------------
# Coordinates and taps, one axis at a time


def rational_coords(n_out: int, n_in: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Source coordinate of each output index as (numerator, denominator) integer arrays.

    The spec writes each transformation forward, x_out = f(x_in) with scale = out / in (10990-11013);
    this is its inverse, the input position an output index samples."""
    o = np.arange(n_out, dtype=np.int64)
    ones = np.ones(n_out, dtype=np.int64)
    if mode == HALF_PIXEL or (mode == PYTORCH_HALF_PIXEL and n_out > 1):
        return (2 * o + 1) * n_in - n_out, 2 * n_out * ones  # (o + 0.5) * in / out - 0.5
    if mode == PYTORCH_HALF_PIXEL or (mode == ALIGN_CORNERS and n_out == 1):
        return 0 * o, ones  # the input coordinate is 0 where the output axis has one element
    if mode == ALIGN_CORNERS:
        return o * (n_in - 1), (n_out - 1) * ones
    if mode == ASYMMETRIC:
        return o * n_in, n_out * ones
    raise ValueError(f"transformation_mode {mode} is not a member")


def round_rational(num: np.ndarray, den: np.ndarray, rule: str) -> np.ndarray:
    """num / den rounded to an integer by a nearest_mode rule, exactly (ties decided on the true value)."""
    fl = num // den
    twice_rem = 2 * (num - fl * den)  # 2 * fractional part * den, in [0, 2 den)
    if rule == ROUND_PREFER_FLOOR:
        return np.where(twice_rem <= den, fl, fl + 1)
    if rule == ROUND_PREFER_CEIL:
        return np.where(twice_rem >= den, fl + 1, fl)
    if rule == FLOOR:
        return fl
    if rule == CEIL:
        return np.where(twice_rem > 0, fl + 1, fl)
    raise ValueError(f"nearest_mode {rule} is not a member")


def linear_taps(x: np.ndarray, n_in: int) -> tuple[np.ndarray, np.ndarray]:
    """Two taps per coordinate; outside the image the edge sample is repeated."""
    x = np.clip(x, 0.0, n_in - 1)
    lo = np.floor(x)
    t = x - lo
    idx = np.stack([lo, lo + 1], axis=-1).astype(np.int64)
    w = np.stack([1.0 - t, t], axis=-1)
    return np.minimum(idx, n_in - 1), w


def cubic_kernel(d: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with coefficient a (the spec's cubic_coeff)."""
    d = np.abs(d)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def cubic_taps(x: np.ndarray, n_in: int, a: float, exclude_outside: bool) -> tuple[np.ndarray, np.ndarray]:
    """Four taps floor(x)-1 .. floor(x)+2. Outside taps read the edge sample, or with exclude_outside
    get weight 0 and the rest are renormalised to sum 1 (10973)."""
    base = np.floor(x)[:, None] + np.arange(-1, 3)[None, :]
    w = cubic_kernel(x[:, None] - base, a)
    inside = (base >= 0) & (base <= n_in - 1)
    if exclude_outside:
        w = np.where(inside, w, 0.0)
        w = w / np.sum(w, axis=1, keepdims=True)
    return np.clip(base, 0, n_in - 1).astype(np.int64), w


# Where an antialiasing filter's taps fall past the input's edge (the spec does not say, 11163):
EDGE_TAPS = "edge"  # read the edge sample (ONNX Resize-18, onnxruntime, onnx.reference)
DROPPED_TAPS = "dropped"  # weigh nothing, the rest renormalised (TensorFlow's scale_and_translate, Pillow)


def antialias_taps(x: np.ndarray, n_in: int, scale: float, outside: str = EDGE_TAPS) -> tuple[np.ndarray, np.ndarray]:
    """Triangle filter stretched by 1/scale (scale = out / in < 1), renormalised to sum 1; taps past the
    edge read the edge sample or are dropped (``outside``: the two readings, EDGE_TAPS and DROPPED_TAPS)."""
    support = 1.0 / scale
    width = int(np.ceil(support)) * 2 + 2
    base = np.floor(x - support)[:, None] + np.arange(width)[None, :]
    w = np.maximum(0.0, 1.0 - np.abs(base - x[:, None]) * scale)
    if outside == DROPPED_TAPS:
        w = np.where((base >= 0) & (base <= n_in - 1), w, 0.0)
    elif outside != EDGE_TAPS:
        raise ValueError(f"antialias taps past the edge: {outside!r} is neither {EDGE_TAPS!r} nor {DROPPED_TAPS!r}")
    w = w / np.sum(w, axis=1, keepdims=True)
    return np.clip(base, 0, n_in - 1).astype(np.int64), w


def apply_taps(x: np.ndarray, axis: int, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
    """out[..., o, ...] = sum_t w[o, t] * x[..., idx[o, t], ...] along ``axis``; weight-0 taps are not read."""
    taken = np.take(x, idx, axis=axis)  # axis becomes (n_out, taps)
    shape = [1] * (x.ndim + 1)
    shape[axis], shape[axis + 1] = w.shape
    wb = w.reshape(shape)
    with np.errstate(invalid="ignore"):
        terms = np.where(wb != 0, taken * wb, 0.0)
    return np.sum(terms, axis=axis + 1)


# ---------------------------------------------------------------------------------------------
# Resize family


def resize_axes(x: np.ndarray, out_shape: tuple[int, ...], mode: str, interp: str,
                nearest_rule: str = ROUND_PREFER_FLOOR, cubic_a: float = -0.75, exclude_outside: bool = False,
                antialias: bool = False, antialias_outside: str = EDGE_TAPS) -> np.ndarray:  # fmt: skip
    """Resample the spatial axes (1 .. rank-2) of ``x`` to the sizes in ``out_shape``."""
    y = x
    for axis in range(1, x.ndim - 1):
        n_in, n_out = x.shape[axis], out_shape[axis]
        num, den = rational_coords(n_out, n_in, mode)
        if interp == NEAREST:
            idx = np.clip(round_rational(num, den, nearest_rule), 0, n_in - 1)
            y = np.take(y, idx, axis=axis)
            continue
        coord = num / den
        if interp == LINEAR and antialias and n_out < n_in:
            idx, w = antialias_taps(coord, n_in, n_out / n_in, antialias_outside)
        elif interp == LINEAR:
            idx, w = linear_taps(coord, n_in)
        elif interp == CUBIC:
            idx, w = cubic_taps(coord, n_in, cubic_a, exclude_outside)
        else:
            raise ValueError(f"interpolation_mode {interp} is not a member")
        y = apply_taps(y, axis, idx, w)
    return y


def _check_kept_axes(x: np.ndarray, out: tuple[int, ...], op: str) -> None:
    if len(out) != x.ndim:
        raise ValueError(f"{op}: out[0] has rank {len(out)}, in[0] rank {x.ndim}")
    if x.ndim and (out[0] != x.shape[0] or out[-1] != x.shape[-1]):
        raise ValueError(f"{op}: batch and channel keep their sizes, got {x.shape} -> {out}")
    if any(d <= 0 for d in out):
        raise ValueError(f"{op}: out[0] shape {out} has an empty axis")


@register("Resize", verified_by="onnxruntime")
def resize(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0], dtype=np.float64)
    if x.ndim < 1:
        raise ValueError("Resize needs rank > 0")
    out = declared_shape(out_shapes, op)
    _check_kept_axes(x, out, op)
    interp = member(op, params, "interpolation_mode")
    y = resize_axes(
        x,
        out,
        member(op, params, "transformation_mode"),
        interp,
        nearest_rule=member(op, params, "nearest_mode"),
        cubic_a=real_param(params, "cubic_coeff", -0.75),
        exclude_outside=flag(params, "exclude_outside"),
    )
    return [y]


def _tf_mode(params: dict[str, Any], op: str) -> tuple[bool, bool]:
    align, half = flag(params, "align_corners"), flag(params, "half_pixel_centers")
    if align and half:
        raise ValueError(f"{op}: align_corners and half_pixel_centers cannot both be true")
    return align, half


def _nhwc_resize_input(inputs: list, out_shapes: Any, op: str) -> tuple[np.ndarray, tuple[int, ...]]:
    x = np.asarray(inputs[0], dtype=np.float64)
    if x.ndim != 4:
        raise ValueError(f"{op} takes a 4-D [batch, height, width, depth] input, got shape {x.shape}")
    out = declared_shape(out_shapes, op)
    _check_kept_axes(x, out, op)
    return x, out


@register("ResizeBilinear", verified_by="onnxruntime")
def resize_bilinear(inputs, params, out_shapes, out_dtypes, *, op):
    """Antialiased taps past the edge are dropped (opdefs/ResizeBilinear.yaml decisions): TensorFlow's reading,
    the op the spec cites, and what the HTP simulator computes."""
    return [_resize_bilinear(inputs, params, out_shapes, op, DROPPED_TAPS)]


def _resize_bilinear(inputs, params, out_shapes, op: str, outside: str) -> np.ndarray:
    x, out = _nhwc_resize_input(inputs, out_shapes, op)
    align, half = _tf_mode(params, op)
    # TF's three coordinate conventions are Resize's ALIGN_CORNERS, HALF_PIXEL and ASYMMETRIC.
    mode = ALIGN_CORNERS if align else HALF_PIXEL if half else ASYMMETRIC
    return resize_axes(x, out, mode, LINEAR, antialias=flag(params, "antialias"), antialias_outside=outside)


@register_diagnosis("ResizeBilinear")
def resize_bilinear_reading(inputs, params, actual, *, op) -> dict[str, Any]:
    """Which antialias reading a backend's output follows (only an antialiased downsampling has two): the one
    closest to it, with each reading's largest error in real units."""
    if not flag(params, "antialias") or not actual:
        return {}
    got = np.asarray(actual[0], dtype=np.float64)
    errors = {outside: float(np.max(np.abs(_resize_bilinear(inputs, params, [got.shape], op, outside) - got)))
              for outside in (DROPPED_TAPS, EDGE_TAPS)}  # fmt: skip
    if errors[DROPPED_TAPS] == errors[EDGE_TAPS]:  # no tap past an edge: nothing tells the readings apart
        return {}
    return {"reading": min(errors, key=errors.get), "reading_errors": {k: round(v, 6) for k, v in errors.items()}}


@register("ResizeNearestNeighbor", verified_by="onnxruntime")
def resize_nearest_neighbor(inputs, params, out_shapes, out_dtypes, *, op):
    x, out = _nhwc_resize_input(inputs, out_shapes, op)
    align, half = _tf_mode(params, op)
    y = x
    for axis in (1, 2):
        n_in, n_out = x.shape[axis], out[axis]
        o = np.arange(n_out, dtype=np.int64)
        if align:  # round(o * (in-1)/(out-1)), halves away from zero (TF, NNAPI)
            num, den = rational_coords(n_out, n_in, ALIGN_CORNERS)
            idx = round_rational(num, den, ROUND_PREFER_CEIL)
        elif half:  # floor((o + 0.5) * in / out) (TF's half-pixel scaler for nearest)
            idx = ((2 * o + 1) * n_in) // (2 * n_out)
        else:  # floor(o * in / out) (TF legacy, NNAPI)
            idx = (o * n_in) // n_out
        y = np.take(y, np.clip(idx, 0, n_in - 1), axis=axis)
    return [y]


# ---------------------------------------------------------------------------------------------
# CropAndResize (TensorFlow crop_and_resize conventions, 2151-2254)


@register("CropAndResize", verified_by="hand")
def crop_and_resize(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0], dtype=np.float64)
    boxes = np.asarray(inputs[1], dtype=np.float64).reshape(-1, 4)
    box_index = np.asarray(inputs[2]).reshape(-1)
    if x.ndim != 4:
        raise ValueError(f"CropAndResize takes a 4-D input, got shape {x.shape}")
    if box_index.shape[0] != boxes.shape[0]:
        raise ValueError(f"in[2] has {box_index.shape[0]} entries for {boxes.shape[0]} boxes")
    if np.any(box_index != np.round(box_index)) or np.any(box_index < 0) or np.any(box_index > x.shape[0] - 1):
        raise ValueError(f"in[2] = {box_index.tolist()} must hold batch indices in [0, {x.shape[0] - 1}]")
    dims = np.asarray(param(params, "resize_dims")).reshape(-1).astype(np.int64)
    if dims.size != 2 or np.any(dims < 1):
        raise ValueError(f"resize_dims {dims.tolist()} must be two positive sizes")
    crop_h, crop_w = int(dims[0]), int(dims[1])
    if out_shapes and out_shapes[0] is not None and tuple(out_shapes[0])[1:3] != (crop_h, crop_w):
        raise ValueError(f"declared out[0] {tuple(out_shapes[0])} disagrees with resize_dims {dims.tolist()}")
    interp = member(op, params, "interpolation_mode")
    extrapolation = real_param(params, "extrapolation_value", 0.0)
    _, height, width, channels = x.shape
    out = np.empty((boxes.shape[0], crop_h, crop_w, channels))
    for b, (y1, x1, y2, x2) in enumerate(boxes):
        img = x[int(box_index[b])]
        ys = _crop_coords(y1, y2, height, crop_h)
        xs = _crop_coords(x1, x2, width, crop_w)
        out[b] = _sample_2d(img, ys, xs, interp, extrapolation)
    return [out]


def _crop_coords(c1: float, c2: float, size: int, n: int) -> np.ndarray:
    """Image coordinates of the n samples between normalised c1 and c2 (both ends included); a single
    sample sits at the middle of the box (TF)."""
    if n > 1:
        step = (c2 - c1) * (size - 1) / (n - 1)
        return c1 * (size - 1) + np.arange(n) * step
    return np.array([0.5 * (c1 + c2) * (size - 1)])


def _sample_2d(img: np.ndarray, ys: np.ndarray, xs: np.ndarray, interp: str, fill: float) -> np.ndarray:
    """Sample an [H, W, C] image on the grid ys x xs; a row or column outside [0, size-1] is ``fill``."""
    height, width, channels = img.shape
    out = np.full((ys.size, xs.size, channels), fill, dtype=np.float64)
    vy = (ys >= 0) & (ys <= height - 1)
    vx = (xs >= 0) & (xs <= width - 1)
    yv, xv = ys[vy], xs[vx]
    if interp == NEAREST_NEIGHBOR:
        # round half away from zero; valid coordinates are >= 0
        iy, ix = np.floor(yv + 0.5).astype(np.int64), np.floor(xv + 0.5).astype(np.int64)
        block = img[np.ix_(iy, ix)]
    elif interp == BILINEAR:
        block = apply_taps(apply_taps(img, 0, *linear_taps(yv, height)), 1, *linear_taps(xv, width))
    else:
        raise ValueError(f"interpolation_mode {interp} is not a member")
    out[np.ix_(vy, vx)] = block
    return out


# ---------------------------------------------------------------------------------------------
# GridSample (ONNX / PyTorch grid_sample conventions, 6620-6740)


def grid_unnormalize(g: np.ndarray, size: int, align_corners: bool) -> np.ndarray:
    """Normalised [-1, 1] -> pixel index space: corner pixel centres (align_corners) or outer edges."""
    if align_corners:
        return (g + 1) / 2 * (size - 1)
    return ((g + 1) * size - 1) / 2


def reflect(c: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Fold c into [lo, hi] by repeated reflection at both ends (6707-6712)."""
    span = hi - lo
    if span <= 0:
        return np.zeros_like(c)
    d = np.abs(c - lo)
    flips = np.floor(d / span)
    extra = d - flips * span
    return np.where(flips % 2 == 0, lo + extra, hi - extra)


def _grid_coords(g: np.ndarray, size: int, align: bool, padding: str) -> np.ndarray:
    c = grid_unnormalize(g, size, align)
    if padding == PAD_BORDER:
        return np.clip(c, 0, size - 1)
    if padding == PAD_REFLECTION:
        # reflection happens in normalised space about -1 and 1 (6707): pixel centres 0 and size-1 with
        # align_corners, outer edges -0.5 and size-0.5 without; then clipped onto the pixel centres
        c = reflect(c, 0, size - 1) if align else reflect(c, -0.5, size - 0.5)
        return np.clip(c, 0, size - 1)
    if padding == PAD_ZEROS:
        return np.clip(c, -2, size + 1)  # far-off samples stay outside without overflowing an index
    raise ValueError(f"padding_mode {padding} is not a member")


@register("GridSample", verified_by="onnxruntime")
def grid_sample(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0], dtype=np.float64)
    grid = np.asarray(inputs[1], dtype=np.float64)
    if x.ndim not in (4, 5) or grid.ndim != x.ndim:
        raise ValueError(f"GridSample takes 4-D or 5-D in[0] and a grid of the same rank, got {x.shape}, {grid.shape}")
    n_sp = x.ndim - 2
    if grid.shape[0] != x.shape[0] or grid.shape[-1] != n_sp:
        raise ValueError(f"grid shape {grid.shape} must be [batch, ..., {n_sp}] for input {x.shape}")
    align = flag(params, "align_corners")
    mode = member(op, params, "mode")
    padding = member(op, params, "padding_mode")
    sizes = x.shape[1:-1]  # (H, W) or (D, H, W)
    # grid components are (x, y[, z]): x runs along width, the last spatial axis (6624)
    coords = [_grid_coords(grid[..., n_sp - 1 - a], sizes[a], align, padding) for a in range(n_sp)]
    b = np.arange(x.shape[0]).reshape((-1,) + (1,) * n_sp)
    if mode == GRID_NEAREST:
        idx = [np.rint(c).astype(np.int64) for c in coords]  # ties to even (PyTorch, ONNX)
        return [_gather(x, b, idx, sizes, np.ones(idx[0].shape))]
    if mode != GRID_BILINEAR:
        raise ValueError(f"mode {mode} is not a member")
    lows = [np.floor(c) for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows, strict=True)]
    out = np.zeros(grid.shape[:-1] + (x.shape[-1],))
    for corner in range(2**n_sp):
        bits = [(corner >> (n_sp - 1 - a)) & 1 for a in range(n_sp)]
        idx = [(lo + bit).astype(np.int64) for lo, bit in zip(lows, bits, strict=True)]
        w = np.ones(grid.shape[:-1])
        for f, bit in zip(fracs, bits, strict=True):
            w = w * (f if bit else 1 - f)
        out = out + _gather(x, b, idx, sizes, w)
    return [out]


def _gather(x: np.ndarray, b: np.ndarray, idx: list[np.ndarray], sizes: tuple[int, ...], w: np.ndarray) -> np.ndarray:
    """w * x[b, idx...] with samples outside the input (or of weight 0) contributing 0."""
    inside = np.ones(w.shape, dtype=bool)
    for i, n in zip(idx, sizes, strict=True):
        inside &= (i >= 0) & (i <= n - 1)
    clipped = [np.clip(i, 0, n - 1) for i, n in zip(idx, sizes, strict=True)]
    vals = x[(b, *clipped)]
    keep = (inside & (w != 0))[..., None]
    with np.errstate(invalid="ignore"):
        return np.where(keep, vals * w[..., None], 0.0)


# ---------------------------------------------------------------------------------------------
# ImageProjectionTransform (TensorFlow Addons image.transform conventions, 7364-7427)


@register("ImageProjectionTransform", verified_by="hand")
def image_projection_transform(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0], dtype=np.float64)
    if x.ndim != 4:
        raise ValueError(f"ImageProjectionTransform takes a 4-D input, got shape {x.shape}")
    batch, height, width, _ = x.shape
    # in[1] is [batch, 8], one row per image (the spec's decision, after TensorFlow's ImageProjectiveTransform
    # kernel); 8 values alone, or one row, serve every image, as TensorFlow Addons' transform reads a vector of 8
    t = np.asarray(inputs[1], dtype=np.float64)
    if t.size == 8:
        t = np.broadcast_to(t.reshape(1, 8), (batch, 8))
    elif t.size == 8 * batch:
        t = t.reshape(batch, 8)
    else:
        raise ValueError(f"in[1] must be [batch, 8] ({batch} rows of 8 non-unity matrix elements), got {t.shape}")
    interp = member(op, params, "interpolation_mode")
    if interp not in (BILINEAR, NEAREST_NEIGHBOR):
        raise ValueError(f"interpolation_mode {interp} is not a member")
    # output point (x, y) = (column, row)
    yy, xx = np.meshgrid(np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64), indexing="ij")
    out = np.zeros(x.shape)
    for n in range(batch):
        a0, a1, a2, b0, b1, b2, c0, c1 = t[n]
        k = c0 * xx + c1 * yy + 1
        ok = k != 0  # a point mapped to infinity reads the fill value 0
        ks = np.where(ok, k, 1.0)
        # far-off (or non-finite) points stay outside the image without overflowing an index
        sx = np.nan_to_num(np.clip((a0 * xx + a1 * yy + a2) / ks, -2, width + 1), nan=-2.0)
        sy = np.nan_to_num(np.clip((b0 * xx + b1 * yy + b2) / ks, -2, height + 1), nan=-2.0)
        b = np.zeros((1, 1), dtype=np.int64)
        img = x[n : n + 1]
        if interp == NEAREST_NEIGHBOR:
            # round half away from zero (std::round in TF's kernel)
            idx = [(np.sign(c) * np.floor(np.abs(c) + 0.5)).astype(np.int64) for c in (sy, sx)]
            val = _gather(img, b, idx, (height, width), ok.astype(np.float64))
        else:
            ly, lx = np.floor(sy), np.floor(sx)
            fy, fx = sy - ly, sx - lx
            val = np.zeros((height, width, x.shape[-1]))
            for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
                w = (fy if dy else 1 - fy) * (fx if dx else 1 - fx) * ok
                idx = [(ly + dy).astype(np.int64), (lx + dx).astype(np.int64)]
                val = val + _gather(img, b, idx, (height, width), w)
        out[n] = val
    return [out]


# The HTP simulator's deviations (findings/qnn-htp.yaml), as named models (reference.models).


@register_model("GridSample", name="nearest-near-ties-open")
def grid_sample_nearest_near_ties_open(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_8 GridSample NEAREST (finding gridsample-u8-nearest-near-tie): a sampling
    coordinate within 2^-16 of a half-way point between two pixels (4.50000012 from grid code 212 at scale 0.0094118)
    may take either neighbour (the lower one there, where the exact value rounds up), as a coordinate computed on a
    coarser grid than float32 would. Those output pixels are left open (NaN); every other one is the reference's."""
    from reference.expected import arguments, expected

    inputs, params = arguments(case)
    y = expected(case)[0]
    if member("GridSample", params, "mode") != GRID_NEAREST:
        return [y]
    x = np.asarray(inputs[0], dtype=np.float64)
    grid = np.asarray(inputs[1], dtype=np.float64)
    n_sp = x.ndim - 2
    align = flag(params, "align_corners")
    padding = member("GridSample", params, "padding_mode")
    near = np.zeros(grid.shape[:-1], dtype=bool)
    for a in range(n_sp):
        c = _grid_coords(grid[..., n_sp - 1 - a], x.shape[1 + a], align, padding)
        near |= np.abs(c - np.floor(c) - 0.5) < 2.0**-16
    y = y.astype(np.float64).copy()
    y[near] = np.nan
    return [y]
