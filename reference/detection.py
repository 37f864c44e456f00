"""Detection ops: the NMS family, SSD post-processing, RPN proposals, FPN level routing, box refinement.

These ops descend from four frameworks (ONNX / TF NMS, NNAPI's detection ops, Caffe SSD, Caffe2
Detectron), and each keeps its ancestor's conventions. Every convention the MasterOpDef leaves open
is a ``decisions:`` entry in the op's YAML with its seed line; the common ones:

* Greedy selection takes the highest current score; equal scores go to the lower index (stable by
  index). Where results are merged across classes, equal scores keep class-major order.
* "Scores lower than the threshold are filtered" keeps a score equal to the threshold (>=),
  whatever the ancestor does.
* Suppression at IoU == threshold follows the ancestor: ONNX, TF and Caffe suppress above the
  threshold, NNAPI (BoxWithNmsLimit's own formula, GenerateProposals) at or above it.
* Outputs with a count output (NonMaxSuppression, MultiClassNms, CombinedNms, DetectionOutput) are
  computed over the whole declared tensor, capacity from ``out_shapes`` where the spec sizes it by
  the declared tensor; rows past the count hold zeros unless the spec names a fill.
* Outputs whose dimension "will be updated by the backend" (BoxWithNmsLimit, GenerateProposals,
  DistributeFpnProposals) are returned at their current (valid) size: that is the tensor the spec
  describes; the declared size is only a maximum.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from reference import HAND, member, register
from reference.boxes import (
    BBOX_XFORM_CLIP,
    as_index_dtype,
    capacity,
    center_to_corners,
    clip_to,
    corners_to_center,
    decode_deltas,
    greedy_nms,
    hard_decay,
    indices,
    iou_matrix,
    out_dtype,
    scalar,
    vector,
)


def _f64(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def _trim(outs: list[np.ndarray], out_shapes: Any) -> list[np.ndarray]:
    """Only as many outputs as the case declares (optional trailing outputs may be left out)."""
    if out_shapes is not None and 0 < len(out_shapes) < len(outs):
        return outs[: len(out_shapes)]
    return outs


def _merge_by_score(dets: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    """(score, class, box) detections in descending score; Python's sort is stable, so equal
    scores keep the class-major order they were produced in."""
    return sorted(dets, key=lambda d: -d[0])


# ---------------------------------------------------------------------------------------------
# NonMaxSuppression (ONNX NonMaxSuppression, center_point_box = 0)


@register("NonMaxSuppression", verified_by="onnxruntime")
def non_max_suppression(inputs, params, out_shapes, out_dtypes, *, op):
    boxes, scores = _f64(inputs[0]), _f64(inputs[1])
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3:
        raise ValueError("NonMaxSuppression wants boxes [batch, boxes, 4] and scores [batch, classes, boxes]")
    batch, num_classes, num_boxes = scores.shape
    if boxes.shape[:2] != (batch, num_boxes):
        raise ValueError(f"boxes {boxes.shape} do not match scores {scores.shape}")
    iou_thr = float(scalar(params, "iou_threshold"))
    score_thr = float(scalar(params, "score_threshold", 0.0))
    mbs = int(scalar(params, "max_boxes_selected", 0))
    per_class = min(mbs, num_boxes)
    rows = capacity(out_shapes, 0, 0, batch * num_classes * mbs)
    decay = hard_decay(iou_thr, suppress_equal=False)

    picked: list[tuple[int, int, int, float]] = []  # (batch, class, box, score)
    for b in range(batch):
        for c in range(num_classes):
            cand = np.flatnonzero(scores[b, c] >= score_thr)
            sel, sc = greedy_nms(boxes[b, cand], scores[b, c, cand], decay, max_output=per_class)
            picked += [(b, c, int(cand[i]), s) for i, s in zip(sel, sc, strict=True)]
    picked = picked[:rows]
    out = np.zeros((rows, 3), dtype=np.int64)
    for k, (b, c, i, _) in enumerate(picked):
        out[k] = (b, c, i)
    if picked and len(picked) < rows:
        low = min(range(len(picked)), key=lambda k: (picked[k][3], -k))  # lowest score, the later on ties
        out[len(picked) :] = out[low]
    # nothing selected: the padding is "the indices to the first box", (0, 0, 0): the zeros already there
    counts = np.bincount(np.array([p[0] for p in picked], dtype=np.int64), minlength=batch)[:batch]
    return _trim([as_index_dtype(out, out_dtype(out_dtypes, 0, np.int32)),
                  as_index_dtype(counts, out_dtype(out_dtypes, 1, np.uint32))], out_shapes)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# MultiClassNms (TF NonMaxSuppressionV5 per class, merged across classes)


@register("MultiClassNms", verified_by=HAND)
def multi_class_nms(inputs, params, out_shapes, out_dtypes, *, op):
    boxes, scores = _f64(inputs[0]), _f64(inputs[1])
    features = [_f64(f) for f in inputs[2:] if f is not None]
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or scores.shape[:2] != boxes.shape[:2]:
        raise ValueError("MultiClassNms wants boxes [batch, num_boxes, 4] and scores [batch, num_boxes, num_classes]")
    batch, num_boxes, num_classes = scores.shape
    for f in features:
        if f.ndim < 2 or f.shape[:2] != (batch, num_boxes):
            raise ValueError(f"feature {f.shape}: dims 0 and 1 must be [batch, num_boxes]")
    iou_thr = float(scalar(params, "iou_threshold"))
    score_thr = float(scalar(params, "score_threshold", 0.0))
    sigma = float(scalar(params, "soft_nms_sigma", 0.0))
    if sigma < 0:
        raise ValueError("soft_nms_sigma must not be negative")
    cap = capacity(out_shapes, 0, 1, num_boxes * num_classes)
    if sigma == 0:
        decay, min_score = hard_decay(iou_thr, suppress_equal=False), None
    else:
        # TF's soft-NMS weight: exp(-IoU^2 / (2 sigma)) up to the IoU threshold, suppressed above it
        def decay(v: float) -> float | None:
            return None if v > iou_thr else math.exp(-0.5 * v * v / sigma)

        min_score = score_thr

    out_boxes = np.zeros((batch, cap, 4))
    out_scores = np.zeros((batch, cap))
    out_classes = np.zeros((batch, cap), dtype=np.int64)
    counts = np.zeros(batch, dtype=np.int64)
    out_feats = [np.zeros((batch, cap, *f.shape[2:])) for f in features]
    for b in range(batch):
        dets: list[tuple[float, int, int]] = []
        for c in range(num_classes):
            cand = np.flatnonzero(scores[b, :, c] >= score_thr)
            sel, sc = greedy_nms(boxes[b, cand], scores[b, cand, c], decay, min_score=min_score)
            dets += [(s, c, int(cand[i])) for i, s in zip(sel, sc, strict=True)]
        dets = _merge_by_score(dets)[:cap]
        counts[b] = len(dets)
        for k, (s, c, i) in enumerate(dets):
            out_boxes[b, k], out_scores[b, k], out_classes[b, k] = boxes[b, i], s, c
            for f, of in zip(features, out_feats, strict=True):
                of[b, k] = f[b, i]
    outs = [out_boxes, out_scores, as_index_dtype(out_classes, out_dtype(out_dtypes, 2, np.int32)),
            as_index_dtype(counts, out_dtype(out_dtypes, 3, np.uint32)), *out_feats]  # fmt: skip
    return outs


# ---------------------------------------------------------------------------------------------
# CombinedNms (TF combined_non_max_suppression)


@register("CombinedNms", verified_by=HAND)
def combined_nms(inputs, params, out_shapes, out_dtypes, *, op):
    boxes, scores = _f64(inputs[0]), _f64(inputs[1])
    if boxes.ndim != 4 or boxes.shape[3] != 4 or scores.ndim != 3:
        raise ValueError("CombinedNms wants boxes [batch, num_boxes, q, 4] and scores [batch, num_boxes, num_classes]")
    batch, num_boxes, num_classes = scores.shape
    q = boxes.shape[2]
    if boxes.shape[:2] != (batch, num_boxes) or q not in (1, num_classes):
        raise ValueError(f"boxes {boxes.shape} do not match scores {scores.shape} (q must be 1 or num_classes)")
    per_class = int(scalar(params, "max_boxes_per_class"))
    total = int(scalar(params, "max_total_boxes"))
    iou_thr = float(scalar(params, "iou_threshold"))
    score_thr = float(scalar(params, "score_threshold", 0.0))
    pad_per_class = bool(scalar(params, "pad_per_class", False))
    clip = bool(scalar(params, "clip_boxes", False))
    cap = capacity(out_shapes, 0, 1, min(per_class * num_classes, total) if pad_per_class else total)
    decay = hard_decay(iou_thr, suppress_equal=False)

    out_boxes = np.zeros((batch, cap, 4))
    out_scores = np.zeros((batch, cap))
    out_classes = np.zeros((batch, cap))
    counts = np.zeros(batch, dtype=np.int64)
    for b in range(batch):
        dets: list[tuple[float, int, int]] = []
        for c in range(num_classes):
            cls_boxes = boxes[b, :, c if q > 1 else 0]
            cand = np.flatnonzero(scores[b, :, c] >= score_thr)
            sel, sc = greedy_nms(cls_boxes[cand], scores[b, cand, c], decay, max_output=per_class)
            dets += [(s, c, int(cand[i])) for i, s in zip(sel, sc, strict=True)]
        dets = _merge_by_score(dets)[: min(total, cap)]
        counts[b] = len(dets)
        for k, (s, c, i) in enumerate(dets):
            box = boxes[b, i, c if q > 1 else 0]
            out_boxes[b, k] = np.clip(box, 0.0, 1.0) if clip else box
            out_scores[b, k], out_classes[b, k] = s, c
    return [out_boxes, out_scores, out_classes, as_index_dtype(counts, out_dtype(out_dtypes, 3, np.uint32))]


# ---------------------------------------------------------------------------------------------
# BoxWithNmsLimit (NNAPI BOX_WITH_NMS_LIMIT / Caffe2 BoxWithNMSLimit)

def _nnapi_kernel(method: str, iou_thr: float, sigma: float):
    """The three kernels as the MasterOpDef writes them (616-618): factors, never outright removal."""
    if method == "hard":  # nms_kernel_method members, as the spec names them
        return lambda v: 1.0 if v < iou_thr else 0.0
    if method == "linear":
        return lambda v: 1.0 if v < iou_thr else 1.0 - v
    if method == "gaussian":
        if sigma <= 0:
            raise ValueError("gaussian NMS needs sigma > 0")
        return lambda v: math.exp(-v * v / sigma)
    raise ValueError(f"nms_kernel_method {method} is not hard, linear or gaussian")


def _image_runs(batch_idx: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(batch index, rows) for each run of equal consecutive batch indices; an index that comes back
    after another breaks "grouped consecutively" and is refused."""
    runs: list[tuple[int, np.ndarray]] = []
    start = 0
    for i in range(1, len(batch_idx) + 1):
        if i == len(batch_idx) or batch_idx[i] != batch_idx[start]:
            runs.append((int(batch_idx[start]), np.arange(start, i)))
            start = i
    seen = [b for b, _ in runs]
    if len(set(seen)) != len(seen):
        raise ValueError("boxes of one batch element are not grouped consecutively")
    return runs


@register("BoxWithNmsLimit", verified_by=HAND)
def box_with_nms_limit(inputs, params, out_shapes, out_dtypes, *, op):
    boxes, scores = _f64(inputs[0]), _f64(inputs[1])
    batch_idx = indices(inputs[2])
    splits = indices(inputs[3]) if len(inputs) > 3 and inputs[3] is not None else None
    num_rois, num_classes = scores.shape
    if boxes.shape != (num_rois, num_classes * 4) or batch_idx.shape != (num_rois,):
        raise ValueError(f"boxes {boxes.shape} / batch indices {batch_idx.shape} do not match scores {scores.shape}")
    if np.any(batch_idx < 0):
        raise ValueError("negative batch index")
    if splits is not None:
        if int(splits.sum()) != num_rois or np.any(splits < 0):
            raise ValueError("batch splits must be non-negative and add up to num_rois")
        n_batch = len(splits)
        if np.any(batch_idx >= n_batch):
            raise ValueError("batch index outside the batch splits")
    else:
        n_batch = int(batch_idx.max()) + 1 if num_rois else 0
    method = member(op, params, "nms_kernel_method")
    iou_thr = float(scalar(params, "iou_threshold"))
    sigma = float(scalar(params, "sigma"))
    nms_score_thr = float(scalar(params, "nms_score_threshold"))
    score_thr = float(scalar(params, "score_threshold", 0.0))
    pre_limit = int(scalar(params, "pre_nms_limit", -1))
    kernel = _nnapi_kernel(method, iou_thr, sigma)
    per_class_boxes = boxes.reshape(num_rois, num_classes, 4)

    rows: list[tuple[int, int, float, int]] = []  # (roi, class, score, batch)
    for b, image_rows in _image_runs(batch_idx):
        cands = [(int(r), c) for r in image_rows for c in range(num_classes) if scores[r, c] >= score_thr]
        if pre_limit >= 0:
            cands = sorted(cands, key=lambda rc: -scores[rc])[:pre_limit]
        for c in range(num_classes):
            rs = np.array(sorted(r for r, cc in cands if cc == c), dtype=np.int64)
            sel, sc = greedy_nms(per_class_boxes[rs, c], scores[rs, c], kernel, min_score=nms_score_thr)
            rows += [(int(rs[i]), c, s, b) for i, s in zip(sel, sc, strict=True)]
    k = len(rows)
    out_boxes = np.array([per_class_boxes[r, c] for r, c, _, _ in rows]).reshape(k, 4)
    out_scores = np.array([s for _, _, s, _ in rows], dtype=np.float64)
    classes = np.array([c for _, c, _, _ in rows], dtype=np.int64)
    batches = np.array([b for _, _, _, b in rows], dtype=np.int64)
    keeps = np.array([r for r, _, _, _ in rows], dtype=np.int64)
    out_splits = np.bincount(batches, minlength=n_batch)[:n_batch] if k else np.zeros(n_batch, dtype=np.int64)
    keeps_size = np.bincount(classes, minlength=num_classes) if k else np.zeros(num_classes, dtype=np.int64)
    i32 = [as_index_dtype(a, out_dtype(out_dtypes, i, np.int32))
           for i, a in ((2, classes), (3, batches), (4, out_splits), (5, keeps), (6, keeps_size))]  # fmt: skip
    return _trim([out_boxes, out_scores, *i32], out_shapes)


# ---------------------------------------------------------------------------------------------
# DetectionOutput (SSD: Caffe DetectionOutput / NNAPI DETECTION_POSTPROCESSING)



def decode_ssd(loc: np.ndarray, anchors: np.ndarray, factors: np.ndarray) -> np.ndarray:
    """SSD box decoding: loc (dy, dx, dh, dw) against anchors (cy, cx, h, w), each delta divided by its
    scaling factor, as TFLite's and NNAPI's scale_y, scale_x, scale_h, scale_w (opdefs/DetectionOutput.yaml
    decisions: the HTP simulator's reading); returns (y1, x1, y2, x2)."""
    fy, fx, fh, fw = factors
    cx, cy, w, h = decode_deltas(anchors[..., 1], anchors[..., 0], anchors[..., 3], anchors[..., 2],
                                 loc[..., 1], loc[..., 0], loc[..., 3], loc[..., 2],
                                 weights=(fx, fy, fw, fh))  # fmt: skip
    x1, y1, x2, y2 = center_to_corners(cx, cy, w, h)
    return np.stack([y1, x1, y2, x2], axis=-1)


def _caffe_nms(boxes: np.ndarray, scores: np.ndarray, iou_thr: float, eta: float, limit: int | None) -> list[int]:
    """Caffe's ApplyNMSFast: candidates in descending score (ties: lower index), each kept when its
    IoU with every kept box is <= the adaptive threshold, which shrinks by eta after a keep while > 0.5."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    overlap = iou_matrix(boxes, boxes)
    kept: list[int] = []
    thr = iou_thr
    for i in order:
        if limit is not None and len(kept) >= limit:
            break
        if all(overlap[i, k] <= thr for k in kept):
            kept.append(i)
            if eta < 1 and thr > 0.5:
                thr *= eta
    return kept


def _fast_rows_per_anchor(s: np.ndarray, decoded: np.ndarray, params: dict[str, Any], num_classes: int,
                          cap: int) -> tuple[list[tuple[float, int, int]], int, int]:
    """The HTP simulator's fixed-point FAST NMS over one batch's scores ``s`` [num_anchors, num_classes] (finding
    detectionoutput-fast-count-anchors): each anchor ranks every class with output_background true (the background
    too, whatever use_bg_in_nms), only the classes after the background with output_background false (those before it
    are never output); NMS keeps anchors by their best ranked score (at least confidence_threshold) as the reference's
    FAST does; each kept anchor then writes its top detection_limit ranked classes (all of them with the default -1),
    in descending score, whether or not they pass confidence_threshold; out[3] counts the anchors kept, not the rows
    written. Returns the rows (score, class, anchor), the count and what the labels are short of the classes: 0 with
    output_background true; with false background_class_idx + 1 for one row per anchor, twice that for several."""
    bg = int(scalar(params, "background_class_idx", 0))
    output_bg = bool(scalar(params, "output_background", True))
    limit = int(scalar(params, "detection_limit", -1))
    ranked_set = [c for c in range(num_classes) if output_bg or c > bg]
    if not ranked_set:
        return [], 0, 0
    k = min(limit if limit > 0 else len(ranked_set), len(ranked_set))
    ranked = [sorted(ranked_set, key=lambda c, a=a: (-s[a, c], c))[:k] for a in range(s.shape[0])]
    best = np.array([s[a, r[0]] for a, r in enumerate(ranked)])
    cand = np.flatnonzero(best >= float(scalar(params, "confidence_threshold")))
    nms_boxes = np.array([decoded[a, ranked[a][0]] for a in cand]).reshape(-1, 4)
    sel, _ = greedy_nms(nms_boxes, best[cand], hard_decay(float(scalar(params, "iou_threshold")), suppress_equal=False))
    dets = [(float(s[int(cand[i]), c]), c, int(cand[i])) for i in sel for c in ranked[int(cand[i])]]
    if len(dets) > cap:
        raise ValueError("FAST rows per anchor past out[0]'s capacity: not measured")
    return dets, len(sel), 0 if output_bg else (bg + 1) * (2 if k > 1 else 1)


@register("DetectionOutput", verified_by=HAND)
def detection_output(inputs, params, out_shapes, out_dtypes, *, op):
    return _detection_output(inputs, params, out_shapes, out_dtypes, op)


def _detection_output(inputs, params, out_shapes, out_dtypes, op, *, anchor_rows=None, background_kept=False,
                      labels_past_background=False, fast_rows_per_anchor=False):
    """``anchor_rows(b, num_anchors, num_classes)``: the rows of in[2] that batch b's boxes are decoded against,
    [num_anchors, num_classes] (a model of a backend that reads other rows; NaN where it reads past in[2]);
    ``background_kept``: a model's output_background false that keeps the background's detections, every detection
    labelled class - background_class_idx - 1 (the reference drops them and numbers the others past it);
    ``labels_past_background``: a model's output_background false that labels every detection class -
    background_class_idx - 1 (the background's own detections dropped, as the reference does)."""
    scores, loc, anchors = _f64(inputs[0]), _f64(inputs[1]), _f64(inputs[2])
    if scores.ndim != 3:
        raise ValueError("scores must be [batch, num_anchors, num_classes]")
    batch, num_anchors, num_classes = scores.shape
    share = bool(scalar(params, "share_location", True))
    num_boxes = num_anchors if share else num_anchors * num_classes
    if loc.shape != (batch, num_boxes, 4) or anchors.shape != (num_anchors * batch, 4):
        raise ValueError(f"box locations {loc.shape} / anchors {anchors.shape} do not match scores {scores.shape}")
    factors = vector(params, "delta_scaling_factors", 4)
    if np.any(factors == 0):
        raise ValueError("delta_scaling_factors must be non-zero")
    conf = float(scalar(params, "confidence_threshold"))
    iou_thr = float(scalar(params, "iou_threshold"))
    nms_type = member(op, params, "nms_type")
    bg = int(scalar(params, "background_class_idx", 0))
    use_bg = bool(scalar(params, "use_bg_in_nms", False))
    output_bg = bool(scalar(params, "output_background", True))
    eta = float(scalar(params, "nms_eta", 1.0))
    limit = int(scalar(params, "detection_limit", -1))
    if not 0 <= bg < num_classes:
        raise ValueError(f"background_class_idx {bg} outside [0, num_classes)")
    cap = capacity(out_shapes, 0, 1, num_anchors * num_classes)
    classes = [c for c in range(num_classes) if c != bg or use_bg]

    out_scores = np.zeros((batch, cap))
    out_boxes = np.zeros((batch, cap, 4))
    out_labels = np.zeros((batch, cap), dtype=np.int64)
    counts = np.zeros(batch, dtype=np.int64)
    label_short = 0  # the FAST rows' label shift (_fast_rows_per_anchor); 0 on every other path
    for b in range(batch):
        anc = anchors[b * num_anchors : (b + 1) * num_anchors]
        if anchor_rows is not None:
            rows = anchor_rows(b, num_anchors, num_classes)
            inside = rows < len(anchors)
            anc_ac = np.where(inside[..., None], anchors[np.where(inside, rows, 0)], np.nan)
            boxes = loc[b][:, None, :] if share else loc[b].reshape(num_anchors, num_classes, 4)
            decoded = decode_ssd(np.broadcast_to(boxes, anc_ac.shape), anc_ac, factors)
        elif share:
            decoded = np.repeat(decode_ssd(loc[b], anc, factors)[:, None, :], num_classes, axis=1)
        else:  # anchor-major, class-minor: row a * num_classes + c
            decoded = decode_ssd(loc[b].reshape(num_anchors, num_classes, 4), anc[:, None, :], factors)
        s = scores[b]
        dets: list[tuple[float, int, int]] = []
        if nms_type == "REGULAR":
            for c in classes:
                cand = np.flatnonzero(s[:, c] >= conf)
                kept = _caffe_nms(decoded[cand, c], s[cand, c], iou_thr, eta, limit if limit > 0 else None)
                dets += [(float(s[cand[i], c]), c, int(cand[i])) for i in kept]
            dets = _merge_by_score(dets)
        elif fast_rows_per_anchor:
            dets, counts[b], label_short = _fast_rows_per_anchor(s, decoded, params, num_classes, cap)
        elif classes:
            k = limit if limit > 0 else 1
            ranked = [sorted(classes, key=lambda c, a=a: (-s[a, c], c))[:k] for a in range(num_anchors)]
            best = np.array([s[a, ranked[a][0]] for a in range(num_anchors)])
            cand = np.flatnonzero(best >= conf)
            nms_boxes = np.array([decoded[a, ranked[a][0]] for a in cand]).reshape(-1, 4)
            sel, _ = greedy_nms(nms_boxes, best[cand], hard_decay(iou_thr, suppress_equal=False))
            for i in sel:
                a = int(cand[i])
                dets += [(float(s[a, c]), c, a) for c in ranked[a] if s[a, c] >= conf]
        if not output_bg and not background_kept and not fast_rows_per_anchor:
            dets = [d for d in dets if d[1] != bg]
        dets = dets[:cap]
        if not fast_rows_per_anchor:
            counts[b] = len(dets)
        for j, (sc, c, a) in enumerate(dets):
            out_scores[b, j] = sc
            out_boxes[b, j] = decoded[a, c]
            shifted = background_kept or labels_past_background
            out_labels[b, j] = c if output_bg else c - bg - 1 if shifted else c if c < bg else c - 1
            if fast_rows_per_anchor:
                out_labels[b, j] = c - label_short
    return [out_scores, out_boxes, as_index_dtype(out_labels, out_dtype(out_dtypes, 2, np.int32)),
            as_index_dtype(counts, out_dtype(out_dtypes, 3, np.uint32))]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# GenerateProposals (NNAPI GENERATE_PROPOSALS, Detectron's RPN proposal step)


def _limit(params: dict[str, Any], name: str) -> int | None:
    """pre/post NMS limits: absent ("No limit is applied") or 0 mean no limit."""
    v = scalar(params, name)
    if v is None or int(v) <= 0:
        return None
    return int(v)


@register("GenerateProposals", verified_by=HAND)
def generate_proposals(inputs, params, out_shapes, out_dtypes, *, op):
    scores, deltas, anchors, sizes = (_f64(a) for a in inputs[:4])
    if scores.ndim != 4:
        raise ValueError("scores must be [batch, height, width, num_anchors]")
    batch, height, width, num_anchors = scores.shape
    if deltas.shape != (batch, height, width, num_anchors * 4) or anchors.shape != (num_anchors, 4) \
            or sizes.shape != (batch, 2):  # fmt: skip
        raise ValueError("deltas / anchors / image sizes do not match the scores' shape")
    ratio_h, ratio_w = vector(params, "img_size_ratio", 2)
    min_size = float(scalar(params, "min_size", 0.0))
    pre, post = _limit(params, "pre_nms_limit"), _limit(params, "post_nms_limit")
    iou_thr = float(scalar(params, "iou_threshold"))
    clip_log = BBOX_XFORM_CLIP if bool(scalar(params, "bbox_xform_clip", False)) else None

    # anchors shifted to every feature-map cell, flattened in (h, w, anchor) order
    hs, ws = np.meshgrid(np.arange(height) * ratio_h, np.arange(width) * ratio_w, indexing="ij")
    shift = np.stack([ws, hs, ws, hs], axis=-1)[:, :, None, :]
    cells = (anchors[None, None, :, :] + shift).reshape(-1, 4)
    acx, acy, aw, ah = corners_to_center(cells[:, 0], cells[:, 1], cells[:, 2], cells[:, 3])
    out_s: list[float] = []
    out_b: list[np.ndarray] = []
    out_i: list[int] = []
    for b in range(batch):
        d = deltas[b].reshape(-1, 4)
        cx, cy, w, h = decode_deltas(acx, acy, aw, ah, d[:, 0], d[:, 1], d[:, 2], d[:, 3], clip_log_scale=clip_log)
        x1, y1, x2, y2 = center_to_corners(cx, cy, w, h)
        img_h, img_w = sizes[b]
        box = np.stack([clip_to(x1, img_w), clip_to(y1, img_h), clip_to(x2, img_w), clip_to(y2, img_h)], axis=-1)
        s = scores[b].reshape(-1)
        order = np.argsort(-s, kind="stable")
        if pre is not None:
            order = order[:pre]
        big = (box[order, 2] - box[order, 0] >= min_size) & (box[order, 3] - box[order, 1] >= min_size)
        cand = np.sort(order[big])
        sel, _ = greedy_nms(box[cand], s[cand], hard_decay(iou_thr, suppress_equal=True), max_output=post)
        for i in sel:
            out_s.append(float(s[cand[i]]))
            out_b.append(box[cand[i]])
            out_i.append(b)
    k = len(out_s)
    return [np.array(out_s, dtype=np.float64), np.array(out_b, dtype=np.float64).reshape(k, 4),
            as_index_dtype(np.array(out_i, dtype=np.int64), out_dtype(out_dtypes, 2, np.int32))]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# CollectRpnProposals / DistributeFpnProposals (Detectron FPN RPN plumbing)


def _levels(params: dict[str, Any], lo_name: str, hi_name: str, lo_default: int, hi_default: int,
            top: int) -> tuple[int, int]:  # fmt: skip
    lo = int(scalar(params, lo_name, lo_default))
    hi = int(scalar(params, hi_name, hi_default))
    if not 2 <= lo <= hi <= top:
        raise ValueError(f"levels must satisfy 2 <= {lo_name} <= {hi_name} <= {top}, got {lo}, {hi}")
    return lo, hi


@register("CollectRpnProposals", verified_by=HAND)
def collect_rpn_proposals(inputs, params, out_shapes, out_dtypes, *, op):
    lo, hi = _levels(params, "rpn_min_level", "rpn_max_level", 2, 6, 6)
    n = hi - lo + 1
    if len(inputs) == 2 * n:  # repeated inputs packed: RoIs of every level, then scores of every level
        rois_in, scores_in = inputs[:n], inputs[n:]
    elif len(inputs) == 10:  # fixed positions: in[0..4] RoIs, in[5..9] scores
        rois_in, scores_in = inputs[:n], inputs[5 : 5 + n]
    else:
        raise ValueError(f"{len(inputs)} inputs for {n} FPN levels (want RoIs and scores for each)")
    if any(a is None for a in [*rois_in, *scores_in]):
        raise ValueError("a level's RoIs or scores are missing")
    rois = [_f64(r).reshape(-1, 5) for r in rois_in]
    scores = [_f64(s).reshape(-1) for s in scores_in]
    for r, s in zip(rois, scores, strict=True):
        if len(r) != len(s):
            raise ValueError("a level's RoIs and scores differ in length")
    all_rois, all_scores = np.concatenate(rois), np.concatenate(scores)
    top = int(scalar(params, "post_nms_top", 2000))
    order = np.argsort(-all_scores, kind="stable")[: min(len(all_scores), top)]
    return [all_rois[order]]


@register("DistributeFpnProposals", verified_by=HAND)
def distribute_fpn_proposals(inputs, params, out_shapes, out_dtypes, *, op):
    rois = _f64(inputs[0])
    if rois.ndim != 2 or rois.shape[1] not in (4, 5):
        raise ValueError("RoIs must be [num_proposals, 5] or [num_proposals, 4]")
    lo, hi = _levels(params, "roi_min_level", "roi_max_level", 2, 5, 5)
    scale = float(scalar(params, "roi_canonical_scale", 224))
    level0 = float(scalar(params, "roi_canonical_level", 4))
    if scale <= 0:
        raise ValueError("roi_canonical_scale must be positive")
    x1, y1, x2, y2 = (rois[:, -4 + i] for i in range(4))
    w, h = x2 - x1, y2 - y1
    invalid = (w == 0) & (h == 0)
    size = np.sqrt(np.maximum(w, 0.0) * np.maximum(h, 0.0))
    with np.errstate(divide="ignore"):
        level = np.clip(np.floor(level0 + np.log2(size / scale + 1e-6)), lo, hi).astype(np.int64)
    restore = np.full(len(rois), -1, dtype=np.int64)
    outs: list[np.ndarray] = []
    pos = 0
    for lvl in range(lo, hi + 1):
        members = np.flatnonzero((level == lvl) & ~invalid)
        restore[members] = pos + np.arange(len(members))
        pos += len(members)
        outs.append(rois[members])
    return _trim([as_index_dtype(restore, out_dtype(out_dtypes, 0, np.int32)), *outs], out_shapes)


# ---------------------------------------------------------------------------------------------
# BboxTransform (Caffe2 BBoxTransform, rotated boxes)


def _wrap_angle(a: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Angles outside [lo, hi] moved by whole periods (hi - lo) into [lo, hi)."""
    period = hi - lo
    out = np.asarray(a, dtype=np.float64).copy()
    bad = (out < lo) | (out > hi)
    out[bad] = lo + np.mod(out[bad] - lo, period)
    return out


@register("BboxTransform", verified_by=HAND)
def bbox_transform(inputs, params, out_shapes, out_dtypes, *, op):
    rois, deltas, info = _f64(inputs[0]), _f64(inputs[1]), _f64(inputs[2])
    if rois.ndim != 2 or rois.shape[1] != 5 or info.ndim != 2 or info.shape[1] != 3:
        raise ValueError("BboxTransform wants RoIs [num_rois, 5] and image info [batches, 3]")
    num_rois = rois.shape[0]
    if deltas.ndim != 2 or deltas.shape[0] != num_rois or deltas.shape[1] % 5:
        raise ValueError(f"deltas {deltas.shape} are not [num_rois, num_classes * 5]")
    num_classes = deltas.shape[1] // 5
    batches = info.shape[0]
    bidx = indices(inputs[3]) if len(inputs) > 3 and inputs[3] is not None else np.zeros(num_rois, dtype=np.int64)
    if bidx.shape != (num_rois,) or np.any(bidx < 0) or np.any(bidx >= batches):
        raise ValueError(f"batch indices must be [num_rois] values in [0, {batches})")
    weights = vector(params, "weights", 4)
    if np.any(weights == 0):
        raise ValueError("weights must be non-zero")
    apply_scale = bool(scalar(params, "apply_scale", True))
    bounds = params.get("angle_bounds")
    if bounds is not None:
        lo, hi = (float(v) for v in np.asarray(bounds, dtype=np.float64).reshape(-1)[:2])
        if hi <= lo:
            raise ValueError("angle_bounds must have angle_bound_low < angle_bound_high")
    clip_thr = float(scalar(params, "angle_clip_threshold", -1.0))

    scale = info[bidx, 2]
    if np.any(scale == 0) or not np.all(np.isfinite(scale)):
        raise ValueError("image_scale must be finite and non-zero")
    img_h, img_w = info[bidx, 0] / scale, info[bidx, 1] / scale
    cx, cy, w, h = (rois[:, i] / scale for i in range(4))
    out = np.zeros((num_rois, num_classes, 5))
    d = deltas.reshape(num_rois, num_classes, 5)
    for k in range(num_classes):
        ncx, ncy, nw, nh = decode_deltas(cx, cy, w, h, d[:, k, 0], d[:, k, 1], d[:, k, 2], d[:, k, 3],
                                         weights=tuple(weights))  # fmt: skip
        angle = rois[:, 4] + np.degrees(d[:, k, 4])
        if bounds is not None:
            angle = _wrap_angle(angle, lo, hi)
        if clip_thr >= 0:
            upright = np.abs(angle) <= clip_thr
            x1, y1, x2, y2 = center_to_corners(ncx, ncy, nw, nh)
            x1, x2 = clip_to(x1, img_w), clip_to(x2, img_w)
            y1, y2 = clip_to(y1, img_h), clip_to(y2, img_h)
            ccx, ccy, cw, ch = corners_to_center(x1, y1, x2, y2)
            ncx, ncy = np.where(upright, ccx, ncx), np.where(upright, ccy, ncy)
            nw, nh = np.where(upright, cw, nw), np.where(upright, ch, nh)
        after = scale if apply_scale else np.ones_like(scale)
        out[:, k] = np.stack([ncx * after, ncy * after, nw * after, nh * after, angle], axis=-1)
    counts = np.bincount(bidx, minlength=batches).astype(np.float64)
    return [out.reshape(num_rois, num_classes * 5), counts]
