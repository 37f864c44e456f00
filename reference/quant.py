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

from cases.case import Encoding, Tensor, encoding_for_range  # noqa: F401  (re-exported)
from opdefs import dtypes


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


# Qnn_ScaleOffset_t stores the offset (= -zero point) as an int32 (shared/qnn-c-api-facts.md).
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
