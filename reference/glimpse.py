"""ExtractGlimpse (MasterOpDef 5760-5872): windows cut from an NHWC image at per-batch offsets.

Placement follows TensorFlow's ExtractGlimpseV2 (the op the spec cites, 5764), from its offset
conventions: the [y, x] offset becomes a pixel position (scaled by the image size if normalized;
moved by half the image if centered; and, if both, the window's own half size is removed so the
offset names the window's centre), and the window's top-left pixel is that position truncated
toward zero. Window cells inside the image copy it exactly.

Cells outside the image are noise. With noise = Zeroes (2) they are 0 and exact. With Uniform (0)
or Gaussian (1) they are random: the reference returns NaN there, meaning "any value in the noise
range is acceptable", and ``noise_mask`` / ``check_noise`` give a comparator the positions and the
range TensorFlow's noise is confined to (Uniform: the batch's minimum to maximum over all channels;
Gaussian: clipped to each channel's minimum and maximum).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from reference import member, register, resolved

NOISE_UNIFORM, NOISE_GAUSSIAN, NOISE_ZEROES = "Uniform", "Gaussian", "Zeroes"  # noise members, as the spec names them


def window_origin(offset_yx: np.ndarray, image_hw: tuple[int, int], glimpse_hw: tuple[int, int], centered: bool,
                  normalized: bool) -> tuple[int, int]:  # fmt: skip
    """Top-left pixel (row, column) of one glimpse, possibly outside the image."""
    origin = []
    for pos, size, g in zip((float(offset_yx[0]), float(offset_yx[1])), image_hw, glimpse_hw, strict=True):
        if normalized:
            pos *= size
            if centered:
                pos = pos / 2.0 + size / 2.0 - g / 2.0
        elif centered:
            pos += size / 2.0
        origin.append(int(math.trunc(pos)))
    return origin[0], origin[1]


def extract(image: np.ndarray, offsets: np.ndarray, glimpse_hw: tuple[int, int], centered: bool, normalized: bool,
            noise: str) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(glimpses [b, gh, gw, c], noise mask [b, gh, gw, c]); noise cells are 0 for Zeroes, NaN otherwise."""
    b, h, w, c = image.shape
    gh, gw = glimpse_hw
    out = np.zeros((b, gh, gw, c))
    mask = np.ones((b, gh, gw, c), dtype=bool)
    for n in range(b):
        oy, ox = window_origin(offsets[n], (h, w), glimpse_hw, centered, normalized)
        rows, cols = np.arange(oy, oy + gh), np.arange(ox, ox + gw)
        r_in, c_in = (rows >= 0) & (rows < h), (cols >= 0) & (cols < w)
        inside = np.ix_(np.flatnonzero(r_in), np.flatnonzero(c_in))
        out[n][inside] = image[n][np.ix_(rows[r_in], cols[c_in])]
        mask[n][inside] = False
    if noise != NOISE_ZEROES:
        out[mask] = np.nan
    return out, mask


def _noise(params: dict[str, Any]) -> str:
    """The noise member; a comparator may pass the case's params without the spec's defaults."""
    return member("ExtractGlimpse", resolved("ExtractGlimpse", params, []), "noise")


def _params(params: dict[str, Any]) -> tuple[tuple[int, int], bool, bool, str]:
    size = np.asarray(params["size"]).reshape(-1)
    if size.size != 2 or np.any(size < 1):
        raise ValueError(f"size must be [glimpse_height, glimpse_width] >= 1, got {size.tolist()}")
    noise = _noise(params)
    return (int(size[0]), int(size[1])), bool(params.get("centered", True)), bool(params.get("normalized", True)), noise


@register("ExtractGlimpse", verified_by="hand")
def extract_glimpse(inputs, params, out_shapes, out_dtypes, *, op):
    image, offsets = np.asarray(inputs[0], dtype=np.float64), np.asarray(inputs[1], dtype=np.float64)
    if image.ndim != 4 or offsets.shape != (image.shape[0], 2):
        raise ValueError(f"in[0] must be [b, h, w, c] and in[1] [b, 2], got {image.shape} and {offsets.shape}")
    glimpse_hw, centered, normalized, noise = _params(params)
    out, _ = extract(image, offsets, glimpse_hw, centered, normalized, noise)
    return [out]


def noise_mask(inputs: list[np.ndarray], params: dict[str, Any]) -> np.ndarray:
    """True where the output is noise (outside the image), whatever the noise kind."""
    glimpse_hw, centered, normalized, noise = _params(params)
    _, mask = extract(np.asarray(inputs[0], dtype=np.float64), np.asarray(inputs[1], dtype=np.float64), glimpse_hw,
                      centered, normalized, noise)  # fmt: skip
    return mask


def check_noise(actual: np.ndarray, inputs: list[np.ndarray], params: dict[str, Any], slack: float = 0.0) -> bool:
    """Whether a backend's noise cells lie in TensorFlow's noise range (``slack``: an output step)."""
    image = np.asarray(inputs[0], dtype=np.float64)
    mask = noise_mask(inputs, params)
    noise = _noise(params)
    actual = np.asarray(actual, dtype=np.float64)
    if noise == NOISE_UNIFORM:
        lo = image.min(axis=(1, 2, 3), keepdims=True)
        hi = image.max(axis=(1, 2, 3), keepdims=True)
    else:
        lo = image.min(axis=(1, 2), keepdims=True)
        hi = image.max(axis=(1, 2), keepdims=True)
    ok = (actual >= lo - slack) & (actual <= hi + slack)
    return bool(np.all(ok | ~mask))
