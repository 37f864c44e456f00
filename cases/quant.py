"""QNN fixed-point encodings: the one place that says what an encoding is and turns stored codes into real values
and back, for the generator (codes of drawn reals), the reference (real values of codes, codes of its results) and
the ONNX builder (zero points).

Convention (the QNN C API's, measured on the HTP simulator; see tests/test_qnn_offset_convention.py):
``real = scale * (q + offset)``, so ``offset`` is minus the zero point. The MasterOpDef's Quantize
and Dequantize text (lines 2670, 10125) writes the offset as the zero point, ``(q - offset) * scale``;
Encoding objects in cases always hold the API's value, and only this module interprets it.

Rounding: the MasterOpDef states no tie rule. Quantization here rounds half to even (numpy ``rint``);
comparisons against backends allow whole quantization steps (tolerances are in steps), so a
backend that rounds half away from zero differs by at most one step on exact ties.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from opdefs import dtypes

if TYPE_CHECKING:  # a Tensor carries an Encoding: the type only, or the two modules would import each other
    from cases.case import Tensor


@dataclass(frozen=True)
class Encoding:
    """QNN scale/offset encoding in the C API's convention: real = scale * (q + offset).

    ``offset`` is therefore minus the zero point. ``axis`` is None for per-tensor encodings;
    otherwise ``scales``/``offsets`` hold one entry per index along ``axis``.
    """

    scales: tuple[float, ...]
    offsets: tuple[int, ...]
    axis: int | None = None
    # the bits the values use inside the datatype (QNN's bit-width encodings: 4-bit weights held in an 8-bit
    # container, each value in the low bits of its byte); None: the datatype's own width
    bitwidth: int | None = None

    @property
    def per_axis(self) -> bool:
        return self.axis is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scales": [float(s) for s in self.scales], "offsets": [int(o) for o in self.offsets],
                               "axis": self.axis}  # fmt: skip
        if self.bitwidth is not None:  # absent otherwise: the JSON and case_id of other cases stay as they were
            out["bitwidth"] = int(self.bitwidth)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> Encoding | None:
        if d is None:
            return None
        bits = d.get("bitwidth")
        return cls(tuple(float(s) for s in d["scales"]), tuple(int(o) for o in d["offsets"]), d.get("axis"),
                   None if bits is None else int(bits))  # fmt: skip


# Qnn_ScaleOffset_t stores the offset (= -zero point) as an int32 (shared/qnn-c-api-facts.md).
_API_OFFSET_MIN, _API_OFFSET_MAX = -(2**31), 2**31 - 1


def _float32_up(x: float) -> float:
    """``x`` rounded up to a float32, the C type of an encoding's scale."""
    s = np.float32(x)
    return float(s) if float(s) >= x else float(np.nextafter(s, np.float32(np.inf)))


def encoding_for_range(lo: float, hi: float, dtype: str) -> Encoding:
    """A per-tensor encoding whose grid holds ``[lo, hi]`` and represents 0 exactly.

    The scale is rounded up to float32 before the zero point is chosen, so the stored scale still
    spans the range (for 32-bit types, rounding to nearest afterwards missed the ends by hundreds of
    steps). The zero point is kept where the API's int32 offset can express it, which only binds for
    32-bit types (SFIXED_POINT_32 with lo = 0, UFIXED_POINT_32 with hi near 0); the scale then widens.
    """
    d = dtypes.get(dtype)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < 1e-12:
        hi = lo + 1.0
    zp_min, zp_max = max(d.qmin, -_API_OFFSET_MAX), min(d.qmax, -_API_OFFSET_MIN)
    scale = _float32_up((hi - lo) / (d.qmax - d.qmin))
    zero_point = int(round(d.qmin - lo / scale))
    if not zp_min <= zero_point <= zp_max:
        zero_point = max(zp_min, min(zp_max, zero_point))
        below = -lo / (zero_point - d.qmin) if lo < 0 else 0.0
        above = hi / (d.qmax - zero_point) if hi > 0 else 0.0
        scale = _float32_up(max(below, above))
    return Encoding((scale,), (-zero_point,))


def code_range(dtype: str, bits: int | None = None) -> tuple[int, int]:
    """The codes a tensor of ``dtype`` may hold: the datatype's, or with a bit-width encoding the ``bits``-wide
    range inside it (a signed 4-bit value in an 8-bit container: [-8, 7])."""
    d = dtypes.get(dtype)
    if not bits or bits >= d.bits:
        return d.qmin, d.qmax
    if d.kind == "sfixed":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _broadcast(values: tuple, enc: Encoding, ndim: int) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if enc.axis is None:
        return arr.reshape(()) if arr.size == 1 else arr
    shape = [1] * ndim
    shape[enc.axis] = arr.size
    return arr.reshape(shape)


def dequantize(codes: np.ndarray, enc: Encoding) -> np.ndarray:
    codes = np.asarray(codes).astype(np.float64)
    scale = _broadcast(enc.scales, enc, codes.ndim)
    offset = _broadcast(enc.offsets, enc, codes.ndim)
    return scale * (codes + offset)


def quantize(real: np.ndarray, enc: Encoding, dtype: str) -> np.ndarray:
    """Real values -> stored codes of ``dtype``, saturating to the type's range, or the bit-width encoding's
    (NaN -> 0 code)."""
    d = dtypes.get(dtype)
    real = np.asarray(real, dtype=np.float64)
    scale = _broadcast(enc.scales, enc, real.ndim)
    offset = _broadcast(enc.offsets, enc, real.ndim)
    with np.errstate(invalid="ignore", over="ignore"):
        q = np.rint(real / scale) - offset
    qmin, qmax = code_range(dtype, enc.bitwidth)  # a bit-width encoding saturates inside its container
    q = np.nan_to_num(q, nan=0.0, posinf=qmax, neginf=qmin)
    return np.clip(q, qmin, qmax).astype(d.storage)


def real_range(enc: Encoding, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The representable real interval per channel (or per tensor)."""
    d = dtypes.get(dtype)
    s = np.asarray(enc.scales, dtype=np.float64)
    o = np.asarray(enc.offsets, dtype=np.float64)
    return s * (d.qmin + o), s * (d.qmax + o)


def real_value(t: Tensor) -> np.ndarray:
    """The real (float64) values a tensor stands for: codes through the encoding, else a cast."""
    if t.data is None:
        raise ValueError(f"{t.name} has no data")
    d = dtypes.get(t.dtype)
    if d.quantized:
        if t.encoding is None:
            raise ValueError(f"{t.name} is {t.dtype} but has no encoding")
        return dequantize(t.data, t.encoding)
    if d.kind == "bool":
        return t.data.astype(bool)
    return t.data.astype(np.float64)


def zero_points(enc: Encoding) -> list[int]:
    """The zero points an encoding stands for (ONNX's QuantizeLinear/DequantizeLinear take these): minus the API's
    offsets."""
    return [-int(o) for o in enc.offsets]


def float16_ties_away(v: Any) -> np.ndarray:
    """``v`` (float64) rounded to float16 with ties away from zero, where IEEE rounds them to even: 23.73 + 3.898 =
    27.6328125, halfway between float16 27.625 and 27.640625, gives 27.640625. The HTP's float16 arithmetic rounds so
    (findings ep-bbox-transform-f16-ties-away, cumulativesum-float-float16-scan)."""
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        near = v.astype(np.float16)
        other = np.nextafter(near, np.where(v > near, np.float16(np.inf), np.float16(-np.inf))).astype(np.float16)
        tie = np.abs(other.astype(np.float64) - v) == np.abs(near.astype(np.float64) - v)
    away = np.where(np.abs(other.astype(np.float64)) > np.abs(near.astype(np.float64)), other, near)
    return np.where(tie & (other != near), away, near).astype(np.float64)
