"""Colour-layout ops on NHWC images: ArgbToRgb (seed lines 5-63).

Only channels move, so the result keeps the input's values exactly.
"""

from __future__ import annotations

import numpy as np

from reference import member, register
from reference.resampling import flag


@register("ArgbToRgb", verified_by="hand")
def argb_to_rgb(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0])
    if x.ndim != 4 or x.shape[-1] != 4:
        raise ValueError(f"ArgbToRgb takes [b, h, w, 4], got shape {x.shape}")
    order = member(op, params, "input_order")  # 22-37
    if params.get("reverse_output") is None:
        raise ValueError("reverse_output is mandatory")
    # the three colour channels: after A in ARGB, before A in RGBA
    rgb = x[..., 1:4] if order == "ARGB" else x[..., 0:3]
    return [rgb[..., ::-1].copy() if flag(params, "reverse_output") else rgb.copy()]
