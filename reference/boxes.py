"""Box helpers shared by the detection references: layouts, overlap, delta decoding, greedy NMS.

Box layouts differ from op to op in the MasterOpDef ((y1,x1,y2,x2) for the ONNX/TF-derived NMS ops,
(x1,y1,x2,y2) for the NNAPI/Caffe2-derived ones, centre form for SSD anchors), so every helper here
takes corners as separate arrays or says which order it wants; the ops translate at their edges.

Overlap reads a box by its corner extent (min/max of the two coordinates on each axis): several
specs call the corners "a diagonal pair" without an order, and the generator draws corners
independently, so an inverted box is a box, not an error. Two boxes with no area between them have
IoU 0 (never NaN).

It registers no op (it is imported as a family module all the same, harmlessly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# Detectron's BBOX_XFORM_CLIP, which GenerateProposals' bbox_xform_clip names (MasterOpDef 6482).
BBOX_XFORM_CLIP = float(np.log(1000.0 / 16.0))


def scalar(params: dict[str, Any], name: str, default: Any = None) -> Any:
    """A scalar parameter as a python value (bool/int/float as stored); ``default`` when absent."""
    v = params.get(name, default)
    if v is None:
        return None
    return np.asarray(v).reshape(()).item()


def vector(params: dict[str, Any], name: str, n: int, default: Any = None) -> np.ndarray:
    v = params.get(name, default)
    if v is None:
        raise ValueError(f"parameter {name!r} is mandatory")
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    if a.size != n:
        raise ValueError(f"parameter {name!r} must hold {n} values, got {a.size}")
    return a


def indices(a: Any) -> np.ndarray:
    """An index tensor (batch ids, ...) as int64, whether it arrives as integers or as real values."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ValueError("index tensor holds non-integer values")
    return a.astype(np.int64)


def out_dtype(out_dtypes: Any, i: int, default: Any) -> np.dtype:
    """The requested dtype of integer output ``i``, else the spec's."""
    if out_dtypes is not None and i < len(out_dtypes) and out_dtypes[i] is not None:
        return np.dtype(out_dtypes[i])
    return np.dtype(default)


def as_index_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Integer values in an integer output dtype; -1 in an unsigned type is its all-ones pattern."""
    v = np.asarray(values, dtype=np.int64)
    if dtype.kind == "u":
        return (v % (1 << (8 * dtype.itemsize))).astype(dtype)
    if dtype.kind == "f":
        return v.astype(np.float64)
    return v.astype(dtype)


def capacity(out_shapes: Any, i: int, axis: int, fallback: int) -> int:
    """The size of axis ``axis`` of the declared output ``i`` (a capacity the caller chose), else ``fallback``."""
    if out_shapes is not None and i < len(out_shapes) and out_shapes[i] is not None:
        return int(out_shapes[i][axis])
    return int(fallback)


# ---------------------------------------------------------------------------------------------
# Layouts


def center_to_corners(cx: np.ndarray, cy: np.ndarray, w: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, ...]:
    """(x1, y1, x2, y2) of a box given by centre and size; no "+1" pixel convention anywhere here."""
    return cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h


def corners_to_center(x1: np.ndarray, y1: np.ndarray, x2: np.ndarray, y2: np.ndarray) -> tuple[np.ndarray, ...]:
    """(cx, cy, w, h) of a box given by its corners (NNAPI's toBoxEncodingCenter: w = x2 - x1)."""
    return 0.5 * (x1 + x2), 0.5 * (y1 + y2), x2 - x1, y2 - y1


# ---------------------------------------------------------------------------------------------
# Overlap


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box in ``a`` [N, 4] with every box in ``b`` [M, 4]; both in the same corner order
    (either (x1,y1,x2,y2) or (y1,x1,y2,x2): IoU is symmetric in the axes)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    a_lo, a_hi = np.minimum(a[:, :2], a[:, 2:]), np.maximum(a[:, :2], a[:, 2:])
    b_lo, b_hi = np.minimum(b[:, :2], b[:, 2:]), np.maximum(b[:, :2], b[:, 2:])
    lo = np.maximum(a_lo[:, None, :], b_lo[None, :, :])
    hi = np.minimum(a_hi[:, None, :], b_hi[None, :, :])
    inter = np.prod(np.clip(hi - lo, 0.0, None), axis=-1)
    area_a = np.prod(a_hi - a_lo, axis=-1)
    area_b = np.prod(b_hi - b_lo, axis=-1)
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    return out


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return float(iou_matrix(a, b)[0, 0])


# ---------------------------------------------------------------------------------------------
# Delta decoding


def decode_deltas(
    cx: np.ndarray, cy: np.ndarray, w: np.ndarray, h: np.ndarray,
    dx: np.ndarray, dy: np.ndarray, dw: np.ndarray, dh: np.ndarray,
    weights: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0),
    clip_log_scale: float | None = None,
) -> tuple[np.ndarray, ...]:  # fmt: skip
    """The R-CNN box parameterisation: centre shifted by (dx/wx)·w, size scaled by exp(dw/ww).

    ``weights`` divide the deltas (Detectron / torchvision BoxCoder, NNAPI uses 1); SSD's
    multiplicative "variances" are the reciprocal weights. ``clip_log_scale`` caps dw and dh before
    the exponential (Detectron's BBOX_XFORM_CLIP). Returns the decoded (cx, cy, w, h)."""
    wx, wy, ww, wh = (float(v) for v in weights)
    dx, dy, dw, dh = dx / wx, dy / wy, dw / ww, dh / wh
    if clip_log_scale is not None:
        dw = np.minimum(dw, clip_log_scale)
        dh = np.minimum(dh, clip_log_scale)
    with np.errstate(over="ignore"):
        return cx + dx * w, cy + dy * h, np.exp(dw) * w, np.exp(dh) * h


def clip_to(v: np.ndarray, hi: np.ndarray | float) -> np.ndarray:
    """min(max(v, 0), hi), in that order (NNAPI's clip), so a negative image size gives ``hi``."""
    return np.minimum(np.maximum(v, 0.0), hi)


# ---------------------------------------------------------------------------------------------
# Greedy NMS

# A decay maps the IoU with the box just selected to the factor applied to a pending box's score,
# or to None when that box is suppressed outright.
Decay = Callable[[float], float | None]


def hard_decay(iou_threshold: float, suppress_equal: bool) -> Decay:
    """Hard NMS: suppressed when IoU > threshold (ONNX, TF, Caffe) or IoU >= threshold (NNAPI)."""
    if suppress_equal:
        return lambda v: None if v >= iou_threshold else 1.0
    return lambda v: None if v > iou_threshold else 1.0


def greedy_nms(
    boxes: np.ndarray,
    scores: np.ndarray,
    decay: Decay,
    max_output: int | None = None,
    min_score: float | None = None,
) -> tuple[list[int], list[float]]:
    """Greedy (soft-)NMS over candidates ``boxes`` [N, 4] with ``scores`` [N].

    Each round selects the pending box with the highest current score (ties: the lowest index, the
    "stable by index" order every op here records as its decision), then decays the other pending
    scores by ``decay(IoU with it)``; a pending box whose score falls below ``min_score`` leaves the
    pending set. Stops after ``max_output`` selections. Returns the selected indices in selection
    order and their scores at selection (the decayed scores soft-NMS outputs)."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    current = np.asarray(scores, dtype=np.float64).reshape(-1).copy()
    pending = list(range(len(current)))
    overlap = iou_matrix(boxes, boxes) if len(pending) else np.zeros((0, 0))
    chosen: list[int] = []
    chosen_scores: list[float] = []
    limit = len(pending) if max_output is None or max_output < 0 else max_output
    while pending and len(chosen) < limit:
        best = max(pending, key=lambda i: (current[i], -i))
        pending.remove(best)
        chosen.append(best)
        chosen_scores.append(float(current[best]))
        keep = []
        for i in pending:
            f = decay(float(overlap[best, i]))
            if f is None:
                continue
            current[i] *= f
            if min_score is not None and current[i] < min_score:
                continue
            keep.append(i)
        pending = keep
    return chosen, chosen_scores
