"""QNN fixed-point encodings: the one place that turns stored codes into real values and back.

Convention (the QNN C API's, measured on the HTP simulator; see tests/test_qnn_offset_convention.py):
``real = scale * (q + offset)``, so ``offset`` is minus the zero point. The MasterOpDef's Quantize
and Dequantize text (lines 2670, 10125) writes the offset as the zero point, ``(q - offset) * scale``;
Encoding objects in cases always hold the API's value, and only this module interprets it.

Rounding: the MasterOpDef states no tie rule. Quantization here rounds half to even (numpy ``rint``);
comparisons against backends allow whole quantization steps (tolerances are in steps), so a
backend that rounds half away from zero differs by at most one step on exact ties.
"""

from __future__ import annotations

import numpy as np

from cases.case import Encoding, Tensor
from opdefs import dtypes


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
    """Real values -> stored codes of ``dtype``, saturating to the type's range (NaN -> 0 code)."""
    d = dtypes.get(dtype)
    real = np.asarray(real, dtype=np.float64)
    scale = _broadcast(enc.scales, enc, real.ndim)
    offset = _broadcast(enc.offsets, enc, real.ndim)
    with np.errstate(invalid="ignore", over="ignore"):
        q = np.rint(real / scale) - offset
    q = np.nan_to_num(q, nan=0.0, posinf=d.qmax, neginf=d.qmin)
    return np.clip(q, d.qmin, d.qmax).astype(d.storage)


def real_range(enc: Encoding, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The representable real interval per channel (or per tensor)."""
    d = dtypes.get(dtype)
    s = np.asarray(enc.scales, dtype=np.float64)
    o = np.asarray(enc.offsets, dtype=np.float64)
    return s * (d.qmin + o), s * (d.qmax + o)


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
