"""Nv12ToRgb and Nv21ToRgb (MasterOpDef 9325-9408): semi-planar YUV 4:2:0 frames to RGB or BGR.

The spec gives neither the colour matrix nor the range. The conversions a backend may implement are
kept side by side as named variants (ITU-R BT.601 and BT.709, each full and limited range, and
the Android NV21 routine that hexagon_nn's Nv21ToRgb_8 points to through Wikipedia's YUV article);
the registered op uses ``DEFAULT_VARIANT`` (a recorded decision in the YAML), and
``best_matching_variant`` tells a report which variant a backend's output is closest to.

Layout (the NV12 / NV21 definitions): a frame of h*w*3/2 samples is the h x w luma plane, row-major,
then h/2 rows of w interleaved chroma samples, U then V for NV12 and V then U for NV21; one chroma
pair serves a 2 x 2 block of pixels (nearest-neighbour upsampling). Sample values are the 8-bit
values 0..255 (chroma centred on 128), and outputs are real values clamped to [0, 255], not rounded:
rounding belongs to quantizing with the output encoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from reference import member, register, register_diagnosis

OUTPUT_ORDER_RGB, OUTPUT_ORDER_BGR = "RGB", "BGR"  # output_order members, as the spec names them
CHROMA_ORDER = {"Nv12ToRgb": "uv", "Nv21ToRgb": "vu"}


@dataclass(frozen=True)
class YuvVariant:
    """R, G, B = m @ (scale_y * (Y - y0), U - 128, V - 128) for one colour standard and range."""

    name: str
    matrix: tuple[tuple[float, float, float], ...]
    y_offset: float
    y_scale: float

    def to_rgb(self, y: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """[..., 3] RGB clamped to [0, 255] from luma and chroma sample values of the same shape."""
        yuv = np.stack([self.y_scale * (y - self.y_offset), u - 128.0, v - 128.0], axis=-1)
        return np.clip(yuv @ np.asarray(self.matrix).T, 0.0, 255.0)


def _from_kr_kb(name: str, kr: float, kb: float, full_range: bool) -> YuvVariant:
    """The matrix of a standard from its luma weights Kr, Kb (Kg = 1 - Kr - Kb): R = Y + 2(1-Kr) Cr,
    B = Y + 2(1-Kb) Cb, G = (Y - Kr R - Kb B) / Kg. Limited range stretches Y from [16, 235] and the
    chroma from 128 +- 112 to the full scale; full range (JFIF) uses the samples as they are."""
    kg = 1.0 - kr - kb
    cr_r, cb_b = 2.0 * (1.0 - kr), 2.0 * (1.0 - kb)
    c = 255.0 / 224.0 if not full_range else 1.0
    matrix = (
        (1.0, 0.0, cr_r * c),
        (1.0, -kb * cb_b / kg * c, -kr * cr_r / kg * c),
        (1.0, cb_b * c, 0.0),
    )
    return YuvVariant(name, matrix, 0.0 if full_range else 16.0, 1.0 if full_range else 255.0 / 219.0)


VARIANTS: dict[str, YuvVariant] = {
    v.name: v
    for v in (
        _from_kr_kb("bt601_full", 0.299, 0.114, True),
        _from_kr_kb("bt601_limited", 0.299, 0.114, False),
        _from_kr_kb("bt709_full", 0.2126, 0.0722, True),
        _from_kr_kb("bt709_limited", 0.2126, 0.0722, False),
        # The Android camera routine (full-range luma, chroma gains about 2% below BT.601 full range)
        # that Wikipedia's "Y'UV420sp (NV21) to RGB conversion (Android)" section gives; hexagon_nn's
        # Nv21ToRgb_8 (seed 000, line 2093) names that section as its definition.
        YuvVariant("android_nv21", ((1.0, 0.0, 1.370705), (1.0, -0.337633, -0.698001), (1.0, 1.732446, 0.0)), 0.0, 1.0),
    )
}
DEFAULT_VARIANT = "bt601_full"


def image_size(out_shapes: list[tuple[int, ...]] | None, frame_len: int) -> tuple[int, int]:
    """(h, w) from the declared output [b, h, w, 3]: the input's length h*w*3/2 cannot tell h from w."""
    if not out_shapes:
        raise LookupError("Nv12ToRgb / Nv21ToRgb need the declared output shape [b, h, w, 3] (out_shapes)")
    shape = tuple(out_shapes[0])
    if len(shape) != 4 or shape[3] != 3:
        raise ValueError(f"out[0] must be [b, h, w, 3], got {list(shape)}")
    h, w = int(shape[1]), int(shape[2])
    if h % 2 or w % 2:
        raise ValueError(f"a 4:2:0 frame needs even height and width, got {h} x {w}")
    if frame_len != h * w * 3 // 2:
        raise ValueError(f"in[0] frames hold {frame_len} samples, a {h} x {w} frame has {h * w * 3 // 2}")
    return h, w


def split_planes(frames: np.ndarray, h: int, w: int, chroma_order: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full-resolution Y, U, V planes [b, h, w] from semi-planar frames [b, h*w*3/2]."""
    b = frames.shape[0]
    y = frames[:, : h * w].reshape(b, h, w)
    chroma = frames[:, h * w :].reshape(b, h // 2, w // 2, 2)
    first, second = chroma[..., 0], chroma[..., 1]
    u, v = (first, second) if chroma_order == "uv" else (second, first)
    up = lambda p: np.repeat(np.repeat(p, 2, axis=1), 2, axis=2)  # noqa: E731
    return y, up(u), up(v)


def nv_to_rgb(frames: np.ndarray, h: int, w: int, chroma_order: str, output_order: str = OUTPUT_ORDER_RGB,
              variant: str = DEFAULT_VARIANT) -> np.ndarray:  # fmt: skip
    """[b, h, w, 3] in the requested channel order."""
    if output_order not in (OUTPUT_ORDER_RGB, OUTPUT_ORDER_BGR):
        raise ValueError(f"output_order {output_order} is neither RGB nor BGR")
    rgb = VARIANTS[variant].to_rgb(*split_planes(np.asarray(frames, dtype=np.float64), h, w, chroma_order))
    return rgb[..., ::-1] if output_order == OUTPUT_ORDER_BGR else rgb


@register("Nv12ToRgb", "Nv21ToRgb", verified_by="hand")
def nv_to_rgb_op(inputs, params, out_shapes, out_dtypes, *, op):
    frames = np.asarray(inputs[0], dtype=np.float64)
    if frames.ndim != 2:
        raise ValueError(f"in[0] must be [b, w*h*3/2], got rank {frames.ndim}")
    h, w = image_size(out_shapes, frames.shape[1])
    return [nv_to_rgb(frames, h, w, CHROMA_ORDER[op], member(op, params, "output_order"))]


def best_matching_variant(op: str, frames: np.ndarray, params: dict[str, Any], actual: np.ndarray,
                          ) -> list[tuple[str, float]]:  # fmt: skip
    """Every variant with the largest absolute difference between its expectation and a backend's
    real-valued output ``actual`` [b, h, w, 3], closest first: a report says which colour matrix and
    range the backend implements (an error under one step means that variant, up to rounding)."""
    actual = np.asarray(actual, dtype=np.float64)
    frames = np.asarray(frames, dtype=np.float64)
    h, w = image_size([actual.shape], frames.shape[1])
    order = OUTPUT_ORDER_RGB if params.get("output_order") is None else member(op, params, "output_order")
    errors = [(name, float(np.max(np.abs(nv_to_rgb(frames, h, w, CHROMA_ORDER[op], order, name) - actual))))
              for name in VARIANTS]  # fmt: skip
    return sorted(errors, key=lambda e: e[1])


@register_diagnosis("Nv12ToRgb", "Nv21ToRgb")
def nv_reading(inputs, params, actual, *, op) -> dict[str, Any]:
    """The colour matrix and range a backend implements (the spec names none): the variant closest to
    its output, with every variant's largest error in 8-bit steps."""
    errors = best_matching_variant(op, inputs[0], params, actual[0])
    return {"reading": errors[0][0], "reading_errors": {name: round(err, 3) for name, err in errors}}
