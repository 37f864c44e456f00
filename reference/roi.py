"""Region-of-interest ops on NHWC feature maps: AxisAlignedBboxTransform, RoiAlign, RoiPooling.

The MasterOpDef gives these ops no formulas; it cites NNAPI (AXIS_ALIGNED_BBOX_TRANSFORM, ROI_ALIGN,
ROI_POOLING), whose conventions are followed here: boxes are (x1, y1, x2, y2) in original-image
coordinates, divided by img_size_ratio to reach the feature map. Every reading the text does not
settle is recorded in the op's YAML ``decisions:`` with its seed line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cases.quant import float16_ties_away
from reference import register
from reference.datamovement import int_param, param
from reference.models import real_outputs, register_model, register_symptom
from reference.resampling import apply_taps, declared_shape, flag


def _batch_indices(values: Any, n_rois: int, batches: int, name: str = "in[2]") -> np.ndarray:
    idx = np.asarray(values, dtype=np.float64).reshape(-1)
    if idx.size != n_rois:
        raise ValueError(f"{name} has {idx.size} entries for {n_rois} boxes")
    if np.any(idx != np.round(idx)) or np.any(idx < 0) or np.any(idx > batches - 1):
        raise ValueError(f"{name} = {idx.tolist()} must hold batch indices in [0, {batches - 1}]")
    return idx.astype(np.int64)


def _ratios(params: dict[str, Any]) -> tuple[float, float]:
    r = np.asarray(param(params, "img_size_ratio"), dtype=np.float64).reshape(-1)
    if r.size != 2 or np.any(r <= 0):
        raise ValueError(f"img_size_ratio {r.tolist()} must be two positive ratios [height, width]")
    return float(r[0]), float(r[1])


def _roi_inputs(inputs: list, out_shapes: Any, op: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    x = np.asarray(inputs[0], dtype=np.float64)
    if x.ndim != 4:
        raise ValueError(f"{op} takes a 4-D [batch, height, width, num_features] map, got shape {x.shape}")
    rois = np.asarray(inputs[1], dtype=np.float64)
    if rois.ndim != 2 or rois.shape[1] != 4:
        raise ValueError(f"{op}: in[1] must be [num_rois, 4], got shape {rois.shape}")
    bidx = _batch_indices(inputs[2], rois.shape[0], x.shape[0])
    out = declared_shape(out_shapes, op)
    if len(out) != 4 or out[0] != rois.shape[0] or out[3] != x.shape[3] or out[1] < 1 or out[2] < 1:
        raise ValueError(f"{op}: out[0] {out} must be [num_rois={rois.shape[0]}, h, w, {x.shape[3]}]")
    return x, rois, bidx, (out[1], out[2])


# ---------------------------------------------------------------------------------------------
# RoiAlign (11374-11478)


def _sample_taps(c: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Bilinear taps of the RoIAlign sampler (NNAPI, Caffe2, ONNX): a sample more than one pixel
    outside the map contributes 0; otherwise the coordinate is clamped onto the map."""
    outside = (c < -1.0) | (c > size)
    c = np.maximum(c, 0.0)
    lo = np.floor(c)
    edge = lo >= size - 1
    lo = np.where(edge, size - 1, lo)
    c = np.where(edge, lo, c)
    t = c - lo
    idx = np.stack([lo, np.where(edge, lo, lo + 1)], axis=-1).astype(np.int64)
    w = np.stack([1.0 - t, t], axis=-1) * ~outside[:, None]
    return idx, w


def _grid_count(requested: int, bin_size: float) -> int:
    """num_samples <= 0 (the default -1) is adaptive: ceil(bin size) samples, at least one."""
    return requested if requested > 0 else max(1, int(np.ceil(bin_size)))


def _sample_centres(roi: Any, params: dict[str, Any], oh: int, ow: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Where RoiAlign samples one RoI (11430-11460): the sample centres' rows [oh, gh] and columns [ow, gw] on the
    map, and the samples per bin along each (gh, gw). A box under one pixel is widened to one when not aligned
    (NNAPI, ONNX output_half_pixel)."""
    x1, y1, x2, y2 = roi
    ratio_h, ratio_w = _ratios(params)
    shift = 0.5 if flag(params, "aligned") else 0.0
    xs, ys = x1 / ratio_w - shift, y1 / ratio_h - shift
    rw, rh = x2 / ratio_w - shift - xs, y2 / ratio_h - shift - ys
    if not flag(params, "aligned"):
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    bin_w, bin_h = rw / ow, rh / oh
    gw = _grid_count(int_param(params, "num_samples_x", -1), bin_w)
    gh = _grid_count(int_param(params, "num_samples_y", -1), bin_h)
    cy = ys + (np.arange(oh)[:, None] * gh + np.arange(gh)[None, :] + 0.5) * (bin_h / gh)
    cx = xs + (np.arange(ow)[:, None] * gw + np.arange(gw)[None, :] + 0.5) * (bin_w / gw)
    return cy, cx, gh, gw


@register("RoiAlign", verified_by="onnxruntime")
def roi_align(inputs, params, out_shapes, out_dtypes, *, op):
    x, rois, bidx, (oh, ow) = _roi_inputs(inputs, out_shapes, op)
    allow_invalid = flag(params, "allow_invalid_roi")
    height, width = x.shape[1:3]
    out = np.zeros((rois.shape[0], oh, ow, x.shape[3]))
    for r, (x1, y1, x2, y2) in enumerate(rois):
        if x2 - x1 == 0 and y2 - y1 == 0:  # "invalid RoI" (11455)
            if not allow_invalid:
                raise ValueError(f"RoI {r} {[x1, y1, x2, y2]} has zero width and height; allow_invalid_roi is false")
            continue  # all zeros (11457)
        cy, cx, gh, gw = _sample_centres((x1, y1, x2, y2), params, oh, ow)
        cy, cx = cy.reshape(-1), cx.reshape(-1)
        rows = apply_taps(x[bidx[r]], 0, *_sample_taps(cy, height))  # [oh*gh, W, C]
        samples = apply_taps(rows, 1, *_sample_taps(cx, width))  # [oh*gh, ow*gw, C]
        out[r] = samples.reshape(oh, gh, ow, gw, -1).mean(axis=(1, 3))
    return [out]


# ---------------------------------------------------------------------------------------------
# RoiPooling (11479-11542)


def _round_half_away(v: float) -> int:
    return int(np.sign(v) * np.floor(abs(v) + 0.5))


@register("RoiPooling", verified_by="onnxruntime")
def roi_pooling(inputs, params, out_shapes, out_dtypes, *, op):
    x, rois, bidx, (oh, ow) = _roi_inputs(inputs, out_shapes, op)
    ratio_h, ratio_w = _ratios(params)
    height, width = x.shape[1:3]
    out = np.zeros((rois.shape[0], oh, ow, x.shape[3]))
    for r, (x1, y1, x2, y2) in enumerate(rois):
        # corners rounded to whole feature-map cells; a box under one cell is one cell (NNAPI ROI_POOLING)
        xs, ys = _round_half_away(x1 / ratio_w), _round_half_away(y1 / ratio_h)
        xe, ye = _round_half_away(x2 / ratio_w), _round_half_away(y2 / ratio_h)
        bin_w, bin_h = max(xe - xs + 1, 1) / ow, max(ye - ys + 1, 1) / oh
        img = x[bidx[r]]
        for i in range(oh):
            h0 = min(max(int(np.floor(i * bin_h)) + ys, 0), height)
            h1 = min(max(int(np.ceil((i + 1) * bin_h)) + ys, 0), height)
            for j in range(ow):
                w0 = min(max(int(np.floor(j * bin_w)) + xs, 0), width)
                w1 = min(max(int(np.ceil((j + 1) * bin_w)) + xs, 0), width)
                if h1 > h0 and w1 > w0:  # an empty bin (entirely off the map) is 0
                    out[r, i, j] = img[h0:h1, w0:w1].max(axis=(0, 1))
    return [out]


# ---------------------------------------------------------------------------------------------
# AxisAlignedBboxTransform (174-269)


@register("AxisAlignedBboxTransform", verified_by="hand")
def axis_aligned_bbox_transform(inputs, params, out_shapes, out_dtypes, *, op):
    boxes = np.asarray(inputs[0], dtype=np.float64)
    deltas = np.asarray(inputs[1], dtype=np.float64)
    sizes = np.asarray(inputs[3], dtype=np.float64)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"in[0] must be [num_rois, 4], got shape {boxes.shape}")
    n = boxes.shape[0]
    if deltas.ndim != 2 or deltas.shape[0] != n or deltas.shape[1] % 4 or deltas.shape[1] == 0:
        raise ValueError(f"in[1] must be [num_rois={n}, num_classes * 4], got shape {deltas.shape}")
    if sizes.ndim != 2 or sizes.shape[1] != 2:
        raise ValueError(f"in[3] must be [batches, 2], got shape {sizes.shape}")
    if np.any(sizes <= 0):
        raise ValueError(f"in[3] image sizes {sizes.tolist()} must be positive")
    bidx = _batch_indices(inputs[2], n, sizes.shape[0])
    wts = np.asarray(param(params, "weights", [1.0, 1.0, 1.0, 1.0]), dtype=np.float64).reshape(-1)
    if wts.size != 4 or np.any(wts == 0):
        raise ValueError(f"weights {wts.tolist()} must be 4 non-zero values [wx, wy, ww, wh]")
    d = deltas.reshape(n, -1, 4) / wts  # deltas divided by their weights (Caffe2 BBoxTransform, Detectron)
    w = (boxes[:, 2] - boxes[:, 0])[:, None]
    h = (boxes[:, 3] - boxes[:, 1])[:, None]
    cx = boxes[:, 0][:, None] + 0.5 * w
    cy = boxes[:, 1][:, None] + 0.5 * h
    with np.errstate(over="ignore"):
        pw, ph = w * np.exp(d[..., 2]), h * np.exp(d[..., 3])
    pcx, pcy = cx + d[..., 0] * w, cy + d[..., 1] * h
    img_h, img_w = sizes[bidx, 0][:, None], sizes[bidx, 1][:, None]
    out = np.stack(
        [
            np.clip(pcx - 0.5 * pw, 0, img_w),
            np.clip(pcy - 0.5 * ph, 0, img_h),
            np.clip(pcx + 0.5 * pw, 0, img_w),
            np.clip(pcy + 0.5 * ph, 0, img_h),
        ],
        axis=-1,
    ).reshape(n, -1)
    result = [out]
    if not out_shapes or len(out_shapes) > 1:  # out[1] is optional: produced when declared
        result.append(np.bincount(bidx, minlength=sizes.shape[0]).astype(np.int32))
    return result


@register_model("RoiAlign", name="boundary-samples-open")
def roi_align_boundary_samples_open(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_8 RoiAlign (finding roialign-u8-boundary-sample): a sample within 2^-16 of the
    map's outer limit (coordinate -1 or size, where a sample stops counting as on the map) may count either way: y =
    2.00000004 on a map 2 high (RoI corners 76 and 220 on a 2/85 grid) is taken as on its last row, where the exact
    value lies outside. The output bins holding such a sample are left open (NaN); every other one is the
    reference's."""
    from reference.expected import arguments, expected

    inputs, params = arguments(case)
    y = expected(case)[0].astype(np.float64).copy()
    x, rois, _, (oh, ow) = _roi_inputs(inputs, [t.shape for t in case.outputs], "RoiAlign")
    height, width = x.shape[1:3]
    eps = 2.0**-16

    def near(c: np.ndarray, size: int) -> np.ndarray:
        return (np.abs(c + 1.0) < eps) | (np.abs(c - size) < eps)

    for r, roi in enumerate(rois):
        if roi[2] - roi[0] == 0 and roi[3] - roi[1] == 0:
            continue
        cy, cx, _, _ = _sample_centres(roi, params, oh, ow)  # [oh, gh], [ow, gw]
        y[r, near(cy, height).any(axis=1)] = np.nan
        y[r, :, near(cx, width).any(axis=1)] = np.nan
    return [y]


# The HTP simulator's UFIXED_POINT_16 RoiAlign weights each tap of a bilinear sample to within 2^-11 of the spec's
# weight, not exactly (finding roialign-u16-inaccurate): measured on ramps (a map whose values are the column or row
# index, so that a sample returns the coordinate it used), a 1-D sample comes back on a 1/512 grid of the coordinate
# and a 2-D one on a 1/1024 grid with the four weights' sum 1-3 1024ths short or over, no rounding rule found (round,
# floor or ceiling of the coordinate, the fraction or the products to 1/256 .. 1/4096 all leave 2 1024ths or more).
ROI_ALIGN_TAP_WEIGHT_ERROR = 2.0**-11


def _tap_abs_means(inputs: list, params: dict[str, Any], out_shapes: Any) -> np.ndarray:
    """Per output element of RoiAlign: the mean over its samples of the sum of |in[0]| over the taps each sample reads
    (the two rows by the two columns of its bilinear taps on the map; none for a sample off the map)."""
    x, rois, bidx, (oh, ow) = _roi_inputs(inputs, out_shapes, "RoiAlign")
    height, width = x.shape[1:3]
    out = np.zeros((rois.shape[0], oh, ow, x.shape[3]))
    for r, roi in enumerate(rois):
        if roi[2] - roi[0] == 0 and roi[3] - roi[1] == 0:
            continue
        cy, cx, gh, gw = _sample_centres(roi, params, oh, ow)
        iy, wy = _sample_taps(cy.reshape(-1), height)
        ix, wx = _sample_taps(cx.reshape(-1), width)
        read_y = np.broadcast_to(np.where(wy.sum(axis=1, keepdims=True) > 0, 1.0, 0.0), wy.shape)
        read_x = np.broadcast_to(np.where(wx.sum(axis=1, keepdims=True) > 0, 1.0, 0.0), wx.shape)
        rows = apply_taps(np.abs(x[bidx[r]]), 0, iy, read_y)
        sums = apply_taps(rows, 1, ix, read_x)
        out[r] = sums.reshape(oh, gh, ow, gw, -1).mean(axis=(1, 3))
    return out


@register_symptom("RoiAlign", name="tap-weights-within-a-2048th")
def roi_align_tap_weights_within_a_2048th(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP simulator's UFIXED_POINT_16 RoiAlign (finding roialign-u16-inaccurate, ``ROI_ALIGN_TAP_WEIGHT_ERROR``):
    every element is the reference's within the case's budget plus 2^-11 times the mean sum of |in[0]| over the taps
    its samples read, the most that weights each within 2^-11 of the spec's can move it; an element further off (a
    wrong tap, a wrong bin, a lost byte) is not this finding's."""
    from reference.expected import arguments, expected

    inputs, params = arguments(case)
    ref = np.asarray(expected(case)[0], dtype=np.float64)
    actual = np.asarray(real_outputs(case, stored)[0], dtype=np.float64)
    if actual.shape != ref.shape:
        return f"out[0] has shape {actual.shape}, the reference {ref.shape}"
    slack = ROI_ALIGN_TAP_WEIGHT_ERROR * _tap_abs_means(inputs, params, [t.shape for t in case.outputs])
    j = judged([ref + np.clip(actual - ref, -slack, slack)])
    if not j.passed:
        return f"an element is further off than 2^-11 of its taps' magnitudes allows: {j.message}"
    return None


@register_model("AxisAlignedBboxTransform", name="float16-steps-ties-away-from-zero")
def bbox_transform_float16_ties_away(case: Any) -> list[np.ndarray]:
    """The ONNX Runtime QNN EP's FLOAT_16 AxisAlignedBboxTransform (finding ep-bbox-transform-f16-ties-away): there is
    no ONNX node for it, so the model is the NNAPI transform step by step (Div, Sub, Mul, Add, Exp, Max, Min), each
    step a float16 result; the HTP rounds a sum, difference or product that falls exactly halfway between two
    float16 values away from zero where IEEE rounds it to even, and the transform's differences of near corners
    carry that one unit in the last place of a large coordinate into a small output. out[1] is the reference's."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    r = float16_ties_away
    boxes, deltas = r(inputs[0]), r(inputs[1])
    n = boxes.shape[0]
    sizes = r(inputs[3])
    bidx = _batch_indices(inputs[2], n, sizes.shape[0])
    wts = np.asarray(param(params, "weights", [1.0, 1.0, 1.0, 1.0]), dtype=np.float64).reshape(-1)
    d = r(deltas.reshape(n, -1, 4) / r(wts))
    x1, y1, x2, y2 = (boxes[:, i][:, None] for i in range(4))
    w, h = r(x2 - x1), r(y2 - y1)
    cx, cy = r(x1 + r(w * 0.5)), r(y1 + r(h * 0.5))
    with np.errstate(over="ignore"):
        pw, ph = r(w * r(np.exp(d[..., 2]))), r(h * r(np.exp(d[..., 3])))
    pcx, pcy = r(cx + r(d[..., 0] * w)), r(cy + r(d[..., 1] * h))
    half_w, half_h = r(pw * 0.5), r(ph * 0.5)
    img_h, img_w = sizes[bidx, 0][:, None], sizes[bidx, 1][:, None]
    out = np.stack([np.clip(r(pcx - half_w), 0, img_w), np.clip(r(pcy - half_h), 0, img_h),
                    np.clip(r(pcx + half_w), 0, img_w), np.clip(r(pcy + half_h), 0, img_h)], axis=-1)  # fmt: skip
    rest = axis_aligned_bbox_transform(inputs, params, [t.shape for t in case.outputs], None, op=case.op)[1:]
    return [out.reshape(n, -1), *rest]
