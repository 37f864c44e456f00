"""HeatMapMaxKeyPoint: keypoint location and score from per-box heatmaps (Mask R-CNN keypoint head).

The MasterOpDef gives only the idea (7180: "approximates the maximum after bicubic upscaling by a
Taylor expansion up to the quadratic term") and cites NNAPI's HEATMAP_MAX_KEYPOINT, so the algorithm
is NNAPI's, generalised from its square heatmap to height x width (decisions in the YAML):

1. the arg-max cell of each keypoint's heatmap (first in row-major order on ties);
2. its 3x3 neighbourhood, an index past an edge mirrored to the cell one step inside (-1 -> 1,
   size -> size - 2), hence the heatmap needs at least 2 cells per side;
3. a second-order Taylor fit around the centre: gradient b = -(central differences), Hessian A;
   the offset solves A·delta = b, is skipped (left 0) when A is near-singular
   (|det A| < 1e-5 + 1e-5·A00·A11, NNAPI's float tolerances), and is scaled back so that neither
   component exceeds 1.5 cells; the score is the fit's value at the offset;
4. the location maps cell centres onto the box: x = x1 + (col + dx + 0.5) / width · (x2 - x1).
"""

from __future__ import annotations

import numpy as np

from reference import HAND, register

_ATOL = 1e-5
_RTOL = 1e-5
_MAX_SHIFT = 1.5


def _mirror(i: int, n: int) -> int:
    return 1 if i < 0 else (n - 2 if i >= n else i)


def taylor_refine(grid: np.ndarray) -> tuple[float, float, float]:
    """(dx, dy, score) of the quadratic fit to a 3x3 grid centred on the maximum."""
    g = np.asarray(grid, dtype=np.float64)
    b0 = -(g[1, 2] - g[1, 0]) / 2.0
    b1 = -(g[2, 1] - g[0, 1]) / 2.0
    a00 = g[1, 0] - 2.0 * g[1, 1] + g[1, 2]
    a01 = (g[2, 2] - g[2, 0] - g[0, 2] + g[0, 0]) / 4.0
    a11 = g[0, 1] - 2.0 * g[1, 1] + g[2, 1]
    det = a00 * a11 - a01 * a01
    if abs(det) < _ATOL + _RTOL * a00 * a11:
        return 0.0, 0.0, float(g[1, 1])
    dx = (a11 * b0 - a01 * b1) / det
    dy = (a00 * b1 - a01 * b0) / det
    biggest = max(abs(dx), abs(dy))
    if biggest > _MAX_SHIFT:
        dx, dy = dx * _MAX_SHIFT / biggest, dy * _MAX_SHIFT / biggest
    score = g[1, 1] - b0 * dx - b1 * dy + ((a00 * dx + a01 * dy) * dx + (a01 * dx + a11 * dy) * dy) / 2.0
    return float(dx), float(dy), float(score)


@register("HeatMapMaxKeyPoint", verified_by=HAND)
def heatmap_max_keypoint(inputs, params, out_shapes, out_dtypes, *, op):
    heat = np.asarray(inputs[0], dtype=np.float64)
    boxes = np.asarray(inputs[1], dtype=np.float64)
    if heat.ndim != 4 or boxes.shape != (heat.shape[0], 4):
        raise ValueError("HeatMapMaxKeyPoint wants heatmaps [num_boxes, h, w, num_keypoints] and boxes [num_boxes, 4]")
    n, hh, ww, k = heat.shape
    if hh < 2 or ww < 2:
        raise ValueError("the 3x3 mirrored neighbourhood needs heatmaps of at least 2 x 2")
    scores = np.zeros((n, k))
    points = np.zeros((n, k, 2))
    for i in range(n):
        x1, y1, x2, y2 = boxes[i]
        for j in range(k):
            plane = heat[i, :, :, j]
            flat = int(np.argmax(plane))  # first maximum in row-major order
            row, col = divmod(flat, ww)
            grid = np.array([[plane[_mirror(row + dr, hh), _mirror(col + dc, ww)] for dc in (-1, 0, 1)]
                             for dr in (-1, 0, 1)])  # fmt: skip
            dx, dy, s = taylor_refine(grid)
            scores[i, j] = s
            points[i, j, 0] = x1 + (col + dx + 0.5) / ww * (x2 - x1)
            points[i, j, 1] = y1 + (row + dy + 0.5) / hh * (y2 - y1)
    return [scores, points]
