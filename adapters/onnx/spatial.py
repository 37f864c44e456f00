"""Lowerings of the convolution, pooling, resampling, spectral, image and detection families.

QNN lays images out NHWC, ONNX NCHW: ``channels_first`` wraps the ONNX node in Transposes (a static
weight is transposed in numpy instead). Ops with no ONNX node (crop-and-resize, projective transform,
box regression, 1-D correlation) are composites computed in float64 where the reference's own
arithmetic decides which side of a boundary a sample falls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import TensorProto as T

from adapters.onnx.builder import (
    Builder,
    Lowering,
    Unlowerable,
    arith,
    batch_index,
    channels_first,
    col,
    on_input_grid,
    pairs,
    real_data,
    sample_grid,
    zero_pad,
)

FAMILIES = frozenset({"convolution", "pooling", "resampling", "spectral", "image", "detection"})


def conv(depthwise: bool = False) -> Lowering:
    """QNN filter [spatial..., cin/group, cout] -> ONNX [cout, cin/group, spatial...]; depthwise filters
    [spatial..., 1, cout] are a grouped conv with group = cin."""

    def inner(b: Builder, x: str, r: int) -> str:
        s = r - 2
        wr = b.rank(1)
        w = b.input(1, [wr - 1, wr - 2, *range(s)])
        before, after = pairs(b, s)
        group = b.shape(0)[-1] if depthwise else b.p.int("group")
        ins = [x, w] + ([b.input(2)] if b.has(2) else [])
        return b.node("Conv", ins, strides=b.p.ints("stride", [1] * s), pads=before + after,
                      dilations=b.p.ints("dilation"), group=group)  # fmt: skip

    return channels_first(inner)


def pool(onnx_op: str) -> Lowering:
    def inner(b: Builder, x: str, r: int) -> str:
        s = r - 2
        before, after = pairs(b, s)
        ceil = int(b.p.member("rounding_mode") == "CEIL")
        attrs: dict[str, Any] = dict(kernel_shape=b.p.ints("filter_size"), strides=b.p.ints("stride", [1] * s),
                                     pads=before + after, ceil_mode=ceil)  # fmt: skip
        if onnx_op == "AveragePool":
            attrs["count_include_pad"] = int(b.p.bool("count_pad_for_edges"))
        return b.node(onnx_op, [x], **attrs)

    return channels_first(inner)


def resize(kind: str) -> Lowering:
    """Output size from the declared output (QNN takes it from the output tensor), channels first."""

    def inner(b: Builder, x: str, r: int) -> str:
        out = list(b.case.outputs[0].shape)
        sizes = b.i64([out[0], out[-1], *out[1:-1]])
        attrs: dict[str, Any]
        if kind == "Resize":
            # the spec's member names of the three modes are ONNX's attribute values, upper-cased
            attrs = dict(coordinate_transformation_mode=b.p.member("transformation_mode").lower(),
                         mode=b.p.member("interpolation_mode").lower(),
                         nearest_mode=b.p.member("nearest_mode").lower(),
                         cubic_coeff_a=b.p.float("cubic_coeff"))  # fmt: skip
            if attrs["mode"] == "cubic":  # it weighs cubic taps only; ORT refuses it set on other modes
                attrs["exclude_outside"] = int(b.p.bool("exclude_outside"))
        else:  # the TensorFlow-style pair of flags
            align, half = b.p.bool("align_corners"), b.p.bool("half_pixel_centers")
            if align and half:
                raise Unlowerable("align_corners and half_pixel_centers together")
            ctm = "align_corners" if align else "half_pixel" if half else "asymmetric"
            if kind == "bilinear":
                antialias = b.p.bool("antialias")
                if antialias and any(o < i for o, i in zip(out[1:-1], b.case.inputs[0].shape[1:-1], strict=True)):
                    # every downsampled axis has filter taps past the input's edge (the first output's, at least)
                    raise Unlowerable("antialias when downsampling: ONNX Resize reads the edge sample for a filter tap "
                                      "past the edge, ResizeBilinear's reading drops it (opdefs/ResizeBilinear.yaml)")
                attrs = dict(mode="linear", coordinate_transformation_mode=ctm, antialias=int(antialias))
            else:  # TF nearest: floor after asymmetric; round half up after half-pixel/align-corners
                attrs = dict(mode="nearest", coordinate_transformation_mode=ctm,
                             nearest_mode="floor" if ctm == "asymmetric" else "round_prefer_ceil")  # fmt: skip
        return b.node("Resize", [x, "", "", sizes], **attrs)

    return channels_first(inner)


def transpose_conv(b: Builder) -> list[str]:
    """ConvTranspose, channels first. QNN filter [spatial..., cin, cout/group] -> ONNX [cin, cout/group,
    spatial...]: the same grouping (input channel c in group c // (cin/G), filter column o writing output
    channel g * cout/G + o). pads crop the full result as pad_amount does and output_padding extends its
    end, so the output size is QNN's formula; cells past the full extent hold only the bias in both."""

    def inner(b: Builder, x: str, r: int) -> str:
        s = r - 2
        w = b.input(1, [s, s + 1, *range(s)])
        before, after = pairs(b, s)
        ins = [x, w] + ([b.input(2)] if b.has(2) else [])
        return b.node("ConvTranspose", ins, strides=b.p.ints("stride", [1] * s), pads=before + after,
                      dilations=b.p.ints("dilation", [1] * s), group=b.p.int("group"),
                      output_padding=b.p.ints("output_padding"))  # fmt: skip

    return channels_first(inner)(b)


def _l2_pool(b: Builder) -> list[str]:
    """LpPool(p = 2): sqrt of the sum of squares, the spec's formula (not NNAPI's mean). Pad cells are 0
    and add nothing; ORT's pools refuse a pad as large as the window, so such pads become an explicit Pad."""

    def inner(b: Builder, x: str, r: int) -> str:
        size = b.p.ints("filter_size")
        before, after = pairs(b, 2)
        if any(p >= k for p, k in zip(before + after, size + size, strict=True)):
            x = zero_pad(b, 0, x, [0, 0, *before, 0, 0, *after])
            before, after = [0, 0], [0, 0]
        return b.node("LpPool", [x], p=2, kernel_shape=size, strides=b.p.ints("stride", [1, 1]),
                      pads=before + after)  # fmt: skip

    return channels_first(inner)(b)


# GridSample's and the image ops' interpolation members -> GridSample's mode; padding_mode members.
GRID_MODES = {"BILINEAR": "linear", "NEAREST": "nearest", "NEAREST_NEIGHBOR": "nearest"}


GRID_PADDING = {"ZEROS": "zeros", "BORDER": "border", "REFLECTION": "reflection"}


def _grid_sample(b: Builder) -> list[str]:
    """ONNX GridSample (opset 20 form): the image channels first, the grid already [N, ..., rank]
    with (x, y[, z]) last as in QNN; nearest rounds half to even in both."""
    mode, padding = b.p.member("mode"), b.p.member("padding_mode")
    if mode not in GRID_MODES or padding not in GRID_PADDING:
        raise Unlowerable(f"GridSample mode {mode} / padding_mode {padding} has no ONNX value")

    def inner(b: Builder, x: str, r: int) -> str:
        return b.node("GridSample", [x, b.input(1)], mode=GRID_MODES[mode], padding_mode=GRID_PADDING[padding],
                      align_corners=int(b.p.bool("align_corners")))  # fmt: skip

    return channels_first(inner)(b)


def _roi_boxes(b: Builder) -> tuple[str, float]:
    """Boxes on the feature map: one ratio -> ONNX spatial_scale = 1 / ratio; two different ratios ->
    the boxes divided per coordinate ([w, h, w, h]) and spatial_scale 1."""
    rh, rw = (float(v) for v in np.asarray(b.p.get("img_size_ratio"), np.float64).reshape(-1))
    rois = b.input(1)
    if rh == rw:
        return rois, 1.0 / rh
    return b.node("Div", [rois, b.like([rw, rh, rw, rh], rois)]), 1.0


def _roi_align(b: Builder) -> list[str]:
    """ONNX RoiAlign (avg); aligned is half_pixel, not aligned output_half_pixel (extent raised to
    one cell). ONNX has one sampling_ratio for both axes; a (gh, gw) grid per bin is the same as
    RoiAlign on an output gh x gw times finer with one sample per bin, then an AveragePool of gh x gw:
    the sample points and the mean are the reference's. One node with ONNX's adaptive sampling
    (sampling_ratio 0) when both counts are adaptive and ONNX's count agrees with the reference's;
    otherwise the counts are resolved per RoI from its box (adaptive: max(1, ceil(bin size)); ONNX
    takes ceil alone, 0 for a zero or reversed aligned extent) and each RoI gets its own node. An
    invalid RoI (zero width and height) with allow_invalid_roi is all zeros."""
    ny, nx = b.p.int("num_samples_y"), b.p.int("num_samples_x")
    aligned = b.p.bool("aligned")
    rh, rw = (float(v) for v in np.asarray(b.p.get("img_size_ratio"), np.float64).reshape(-1))
    boxes = real_data(b, 1).reshape(-1, 4)
    _, oh, ow, c = (int(v) for v in b.case.outputs[0].shape)
    invalid = (boxes[:, 2] == boxes[:, 0]) & (boxes[:, 3] == boxes[:, 1]) & b.p.bool("allow_invalid_roi")
    shift = 0.5 if aligned else 0.0
    ext_w = boxes[:, 2] / rw - shift - (boxes[:, 0] / rw - shift)
    ext_h = boxes[:, 3] / rh - shift - (boxes[:, 1] / rh - shift)
    if not aligned:
        ext_w, ext_h = np.maximum(ext_w, 1.0), np.maximum(ext_h, 1.0)
    grids = [(ny if ny > 0 else max(1, int(np.ceil(hh / oh))), nx if nx > 0 else max(1, int(np.ceil(ww / ow))))
             for hh, ww in zip(ext_h, ext_w, strict=True)]  # fmt: skip
    native = ny <= 0 and nx <= 0 and not invalid.any() and bool(np.all((ext_w > 0) & (ext_h > 0)))
    mode = "half_pixel" if aligned else "output_half_pixel"

    def align(b: Builder, x: str, rois: str, idx: str, scale: float, grid: tuple[int, int]) -> str:
        gh, gw = grid
        y = b.node("RoiAlign", [x, rois, idx], mode="avg", output_height=oh * gh, output_width=ow * gw,
                   sampling_ratio=0 if native else 1, spatial_scale=scale,
                   coordinate_transformation_mode=mode)  # fmt: skip
        if (gh, gw) == (1, 1):
            return y
        return b.node("AveragePool", [y], kernel_shape=[gh, gw], strides=[gh, gw])

    def inner(b: Builder, x: str, r: int) -> str:
        rois, scale = _roi_boxes(b)
        idx = b.cast(b.input(2), T.INT64)
        if native:
            return align(b, x, rois, idx, scale, (1, 1))
        if not invalid.any() and len(set(grids)) == 1:
            return align(b, x, rois, idx, scale, grids[0])
        parts = []
        for k, grid in enumerate(grids):
            if invalid[k]:
                parts.append(b.const(np.zeros((1, c, oh, ow)), b.types[x]))
                continue
            one = [b.i64([k]), b.i64([k + 1]), b.i64([0])]
            parts.append(align(b, x, b.node("Slice", [rois, *one]), b.node("Slice", [idx, *one]), scale, grid))
        return b.node("Concat", parts, axis=0) if len(parts) > 1 else parts[0]

    return channels_first(inner)(b)


def _roi_pooling(b: Builder) -> list[str]:
    """ONNX MaxRoiPool: the batch index joins the box as its first column; corners rounded half away
    from zero, bins floor/ceil over whole cells and an empty bin 0, as the reference reads NNAPI."""
    out = b.case.outputs[0].shape

    def inner(b: Builder, x: str, r: int) -> str:
        rois, scale = _roi_boxes(b)
        idx = b.node("Unsqueeze", [b.cast(b.input(2), b.types[rois]), b.i64([1])])
        return b.node("MaxRoiPool", [x, b.node("Concat", [idx, rois], axis=1)],
                      pooled_shape=[int(out[1]), int(out[2])], spatial_scale=scale)  # fmt: skip

    return channels_first(inner)(b)


def _stft(b: Builder) -> list[str]:
    """ONNX STFT: the same [batch, signal_length, 1] real signal and [batch, frames, bins, 2] output;
    frame_length given explicitly, resolved as the reference does (the param, else the window's
    size, else the whole signal)."""
    signal_length = b.shape(0)[1]
    n_fft = b.p.int("frame_length", b.shape(1)[0] if b.has(1) else signal_length)
    window = b.input(1) if b.has(1) else ""
    return [b.node("STFT", [b.input(0), b.i64(b.p.int("frame_step")), window, b.i64(n_fft)],
                   onesided=int(b.p.bool("onesided")))]  # fmt: skip


def _argb_to_rgb(b: Builder) -> list[str]:
    """Gather on the channel axis: the colour channels after A (ARGB) or before it (RGBA), reversed on request."""
    picks = [1, 2, 3] if b.p.member("input_order") == "ARGB" else [0, 1, 2]
    if b.p.bool("reverse_output"):
        picks.reverse()
    return [b.node("Gather", [b.input(0), b.i64(picks)], axis=3)]


def _correlation_1d(b: Builder) -> list[str]:
    """No ONNX correlation: per displacement d, in[1] shifted along the width by d - (displacement -
    shift) (zero-padded), times in[0], averaged over the depth (ReduceMean), concatenated on the last
    axis. One Slice-Mul-ReduceMean per output channel."""
    disp, shift = b.p.int("displacement"), b.p.int("shift")
    w = b.shape(0)[2]
    offs = [d - (disp - shift) for d in range(2 * disp + 1)]
    lo, hi = max(0, -min(offs)), max(0, max(offs))
    a, other = b.input(0), b.input(1)
    if lo or hi:
        other = zero_pad(b, 1, other, [0, 0, lo, 0, 0, 0, hi, 0])
    parts = []
    for off in offs:
        start = max(0, min(off + lo, w + lo + hi))
        sl = on_input_grid(b, 1, b.node("Slice", [other, b.i64([start]), b.i64([start + w]), b.i64([2])]))
        # each channel on the output grid before the Concat: Q(DQ(Q(v))) = Q(v), and a QDQ form ORT accepts
        parts.append(b.on_output_grid(b.node("ReduceMean", [b.node("Mul", [a, sl]), b.i64([3])], keepdims=1)))
    return [b.node("Concat", parts, axis=3) if len(parts) > 1 else parts[0]]


def _crop_and_resize(b: Builder) -> list[str]:
    """No ONNX crop-and-resize (RoiAlign averages bins): each box's image by Gather, the TF sample
    coordinates (y1 * (H - 1) + i * step, the box middle for a single sample) computed in float64 as
    the reference does, GridSample (zeros padding, align_corners 0) on them, and Where puts
    extrapolation_value wherever a row or column coordinate falls outside [0, size - 1]. Nearest rounds
    the (non-negative inside) coordinates half away from zero first; outside ones are replaced anyway."""
    _, height, width, _ = b.shape(0)
    nb = b.shape(1)[0]
    crop_h, crop_w = b.p.ints("resize_dims")
    interp = b.p.member("interpolation_mode")
    boxes = b.cast(b.input(1), T.DOUBLE)

    def coords(k: int, size: int, n: int) -> tuple[str, str]:
        c1, c2 = col(b, boxes, k), col(b, boxes, k + 2)  # [nb, 1]
        if n > 1:
            step = arith(b, "Div", arith(b, "Mul", arith(b, "Sub", c2, c1), float(size - 1)), float(n - 1))
            c = arith(b, "Add", arith(b, "Mul", c1, float(size - 1)),
                       arith(b, "Mul", step, b.const(np.arange(n, dtype=np.float64)[None, :], T.DOUBLE)))
        else:
            c = arith(b, "Mul", arith(b, "Mul", arith(b, "Add", c1, c2), 0.5), float(size - 1))
        inside = b.node("And", [b.node("GreaterOrEqual", [c, b.like(0.0, c)], out_type=T.BOOL),
                                b.node("LessOrEqual", [c, b.like(float(size - 1), c)], out_type=T.BOOL)],
                        out_type=T.BOOL)  # fmt: skip
        return c, inside

    ys, in_y = coords(0, height, crop_h)  # [nb, crop_h]
    xs, in_x = coords(1, width, crop_w)  # [nb, crop_w]
    shape = b.i64([nb, crop_h, crop_w])
    ys = b.node("Expand", [b.node("Unsqueeze", [ys, b.i64([2])]), shape])
    xs = b.node("Expand", [b.node("Unsqueeze", [xs, b.i64([1])]), shape])
    grid = sample_grid(b, xs, ys, (height, width), "away" if interp == "NEAREST_NEIGHBOR" else None)
    images = b.node("Gather", [b.input(0, [0, 3, 1, 2]), batch_index(b, 2, b.shape(0)[0])], axis=0)  # [nb, C, H, W]
    sample = b.node("GridSample", [images, grid], mode=GRID_MODES[interp], padding_mode="zeros", align_corners=0)
    inside = b.node("And", [b.node("Unsqueeze", [in_y, b.i64([1, 3])]), b.node("Unsqueeze", [in_x, b.i64([1, 2])])],
                    out_type=T.BOOL)  # fmt: skip
    fill = b.like(b.p.float("extrapolation_value"), sample)
    out = b.node("Where", [inside, sample, fill], out_type=b.types[sample])
    return [b.transpose(b.on_output_grid(out), [0, 2, 3, 1])]


def _image_projection_transform(b: Builder) -> list[str]:
    """No projective-transform op: the source point of each output pixel ((a0 x + a1 y + a2) / k, ...,
    k = c0 x + c1 y + 1) from a constant pixel grid, in float64 as the reference computes it, clipped
    to [-2, size + 1] (NaN -> -2), as a GridSample grid (zeros padding reads out-of-image taps as 0,
    align_corners 0); a pixel with k = 0 is 0 (Where)."""
    batch, height, width, _ = b.shape(0)
    size = int(np.prod(b.shape(1)))
    if size not in (8, 8 * batch):
        raise Unlowerable(f"in[1] holds {size} values: neither 8 nor 8 per image ({8 * batch})")
    interp = b.p.member("interpolation_mode")
    n = size // 8
    t = b.node("Reshape", [b.cast(b.input(1), T.DOUBLE), b.i64([n, 1, 1, 8])])
    a0, a1, a2, b0, b1, b2, c0, c1 = (b.node("Squeeze", [col(b, t, i), b.i64([-1])]) for i in range(8))
    yy, xx = np.meshgrid(np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64), indexing="ij")
    xx_, yy_ = b.const(xx[None], T.DOUBLE), b.const(yy[None], T.DOUBLE)
    k = arith(b, "Add", arith(b, "Add", arith(b, "Mul", c0, xx_), arith(b, "Mul", c1, yy_)), 1.0)
    ok = b.node("Not", [b.node("Equal", [k, b.like(0.0, k)], out_type=T.BOOL)], out_type=T.BOOL)
    ks = b.node("Where", [ok, k, b.like(1.0, k)], out_type=T.DOUBLE)

    def source(p0: str, p1: str, p2: str, limit: int) -> str:
        v = arith(b, "Div", arith(b, "Add", arith(b, "Add", arith(b, "Mul", p0, xx_), arith(b, "Mul", p1, yy_)),
                                    p2), ks)  # fmt: skip
        clipped = b.node("Clip", [v, b.like(-2.0, v), b.like(float(limit + 1), v)])
        return b.node("Where", [b.node("IsNaN", [v], out_type=T.BOOL), b.like(-2.0, v), clipped], out_type=T.DOUBLE)

    sx, sy = source(a0, a1, a2, width), source(b0, b1, b2, height)  # [n, H, W]
    grid = sample_grid(b, sx, sy, (height, width), "away" if interp == "NEAREST_NEIGHBOR" else None)
    if n != batch:
        grid = b.node("Expand", [grid, b.i64([batch, height, width, 2])])
    x = b.input(0, [0, 3, 1, 2])
    sample = b.node("GridSample", [x, grid], mode=GRID_MODES[interp], padding_mode="zeros", align_corners=0)
    out = b.node("Where", [b.node("Unsqueeze", [ok, b.i64([1])]), sample, b.like(0.0, sample)],
                 out_type=b.types[sample])  # fmt: skip
    return [b.transpose(b.on_output_grid(out), [0, 2, 3, 1])]


def _axis_aligned_bbox_transform(b: Builder) -> list[str]:
    """No box-regression op: the NNAPI transform element-wise on [num_rois, classes, 1] columns (deltas
    divided by the weights, sizes scaled by Exp), clipped with Max/Min against the in[3] row Gathered
    by batch index; out[1] (when declared) counts each batch index: Equal against 0..batches-1, summed."""
    n, k4 = b.shape(1)
    wts = np.asarray(b.p.get("weights"), np.float64).reshape(-1)
    if wts.size != 4 or np.any(wts == 0):
        raise Unlowerable(f"weights {wts.tolist()} are not 4 non-zero values")
    # each reshape back on its input's grid (exact): a QDQ unit, which ORT's QDQ propagation needs
    boxes = on_input_grid(b, 0, b.node("Reshape", [b.input(0), b.i64([n, 1, 4])]))
    deltas = on_input_grid(b, 1, b.node("Reshape", [b.input(1), b.i64([n, k4 // 4, 4])]))
    deltas = b.node("Div", [deltas, b.like(wts, deltas)])
    x1, y1, x2, y2 = (on_input_grid(b, 0, col(b, boxes, i)) for i in range(4))
    dx, dy, dw, dh = (col(b, deltas, i) for i in range(4))
    w, h = arith(b, "Sub", x2, x1), arith(b, "Sub", y2, y1)
    cx, cy = arith(b, "Add", x1, arith(b, "Mul", w, 0.5)), arith(b, "Add", y1, arith(b, "Mul", h, 0.5))
    pw, ph = arith(b, "Mul", w, b.node("Exp", [dw])), arith(b, "Mul", h, b.node("Exp", [dh]))
    pcx, pcy = arith(b, "Add", cx, arith(b, "Mul", dx, w)), arith(b, "Add", cy, arith(b, "Mul", dy, h))
    bidx = batch_index(b, 2, b.shape(3)[0])
    sizes = b.node("Unsqueeze", [b.node("Gather", [b.input(3), bidx], axis=0), b.i64([1])])  # [n, 1, 2]
    sizes = on_input_grid(b, 3, sizes)
    img_h, img_w = on_input_grid(b, 3, col(b, sizes, 0)), on_input_grid(b, 3, col(b, sizes, 1))

    def clip(v: str, hi: str) -> str:
        return b.node("Min", [b.node("Max", [v, b.like(0.0, v)]), b.cast(hi, b.types[v])])

    half_w, half_h = arith(b, "Mul", pw, 0.5), arith(b, "Mul", ph, 0.5)
    corners = [clip(arith(b, "Sub", pcx, half_w), img_w), clip(arith(b, "Sub", pcy, half_h), img_h),
               clip(arith(b, "Add", pcx, half_w), img_w), clip(arith(b, "Add", pcy, half_h), img_h)]  # fmt: skip
    out = [b.node("Reshape", [b.node("Concat", corners, axis=-1), b.i64([n, k4])])]
    if len(b.case.outputs) > 1:
        batches = b.shape(3)[0]
        idx = b.node("Unsqueeze", [bidx, b.i64([1])])
        hits = b.node("Equal", [idx, b.i64(np.arange(batches)[None, :].tolist())], out_type=T.BOOL)
        counts = b.node("ReduceSum", [b.cast(hits, T.INT32), b.i64([0])], keepdims=0)
        out.append(b.converts(counts))
    return out


LOWERINGS: dict[str, Lowering] = {
    "Conv1d": conv(), "Conv2d": conv(), "Conv3d": conv(), "DepthWiseConv1d": conv(True),
    "DepthWiseConv2d": conv(True), "TransposeConv1d": transpose_conv, "TransposeConv2d": transpose_conv,
    "TransposeConv3d": transpose_conv, "Correlation1D": _correlation_1d,
    "PoolMax2d": pool("MaxPool"), "PoolMax3d": pool("MaxPool"), "PoolAvg2d": pool("AveragePool"),
    "PoolAvg3d": pool("AveragePool"), "L2Pool2d": _l2_pool,
    "Resize": resize("Resize"), "ResizeBilinear": resize("bilinear"), "ResizeNearestNeighbor": resize("nearest"),
    "GridSample": _grid_sample, "RoiAlign": _roi_align, "RoiPooling": _roi_pooling, "CropAndResize": _crop_and_resize,
    "ImageProjectionTransform": _image_projection_transform,
    "Stft": _stft, "ArgbToRgb": _argb_to_rgb, "AxisAlignedBboxTransform": _axis_aligned_bbox_transform,
}  # fmt: skip
