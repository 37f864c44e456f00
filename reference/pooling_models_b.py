"""Models of the HTP simulator's pooling deviations found at deployed sizes (``reference.models``); the kernel's other
models live in ``reference.pooling``."""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import register_model
from reference.pooling import _ceil, _cropped, _mean_over_full_filter, _pool_case


@register_model("PoolAvg3d", name="one-depth-slice-count-pad-ignored")
def pool_avg3d_one_depth_slice_count_pad_ignored(case: Any) -> list[np.ndarray]:
    """The HTP simulator's PoolAvg3d without count_pad_for_edges where the output has one depth slice (finding
    poolavg3d-one-depth-slice-count-pad-false-ignored): every window divides by its full filter size, the padded
    cells (and a CEIL overhang) counted as zeros, as with count_pad_for_edges, and the width before-pad is added after
    the row instead, as htp-count-pad-average does; unlike that model the depth window is the one filter_size and
    stride give and, in fixed point, no plane is clipped on the way (measured: UFIXED_POINT_8
    variants of the seed-0 case whose planes pass out[0]'s range match the unclipped average). A [1, 2, 3, 4, C]
    input, filter [2, 3, 2], stride 2, height pad [1, 0]: each output is its window's sum over 12 where its 8 input
    cells belong. SFIXED_POINT_8 computes such cases right (measured on five variants): the model refuses it."""
    x, size, stride, pads, params, shape = _pool_case(case)
    if params.get("count_pad_for_edges", False) or shape[1] != 1:
        raise ValueError("count_pad_for_edges, or more than one output depth slice: another model")
    if case.inputs[0].dtype == "SFIXED_POINT_8":
        raise ValueError("SFIXED_POINT_8 is right here")
    (d0, d1), (h0, h1), (w0, w1) = pads
    moved = ((d0, d1), (h0, h1), (0, w0 + w1))
    return [_cropped(_mean_over_full_filter(x, size, stride, moved, _ceil(case.op, params)), shape)]
