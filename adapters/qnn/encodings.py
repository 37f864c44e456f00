"""QNN's bit-width quantization encodings, written for this project from the public QnnTypes.h layout.

Why a module of its own: ``bindings.py`` holds the structures every case uses and is being extended for
older API releases; the bit-width encodings are needed only by cases whose values use fewer bits than
their datatype (4-bit weights in an 8-bit container, the form ONNX Runtime's QNN EP hands INT4 weights
over in). They live in the 32-byte union of ``Qnn_QuantizeParams_t`` beside the scale-offset encodings,
so they are written into that union's memory rather than added to the shared structure.

Layouts (x86_64, natural alignment), from the public QnnTypes.h (Qnn_BwScaleOffset_t,
Qnn_BwAxisScaleOffset_t):
- bit-width scale-offset, encoding 2 (12 B): u32 bitwidth @0, float scale @4, i32 offset @8;
- bit-width axis-scale-offset, encoding 3 (32 B): u32 bitwidth @0, i32 axis @4, u32 numElements @8,
  float* scales @16, i32* offsets @24 (offsets may be NULL for symmetric values).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from ctypes import POINTER, Structure, c_float, c_int32, c_uint32
from typing import Any

QUANT_BW_SCALE_OFFSET, QUANT_BW_AXIS_SCALE_OFFSET = 2, 3


class BwScaleOffset(Structure):
    _fields_ = [("bitwidth", c_uint32), ("scale", c_float), ("offset", c_int32)]


class BwAxisScaleOffset(Structure):
    _fields_ = [("bitwidth", c_uint32), ("axis", c_int32), ("numElements", c_uint32),
                ("scales", POINTER(c_float)), ("offsets", POINTER(c_int32))]  # fmt: skip


assert ctypes.sizeof(BwScaleOffset) == 12 and ctypes.sizeof(BwAxisScaleOffset) == 32


def write_bitwidth(q: Any, enc: Any, pin: Callable[[Any], Any]) -> None:
    """Fill the quantize params ``q`` (a ``bindings.QuantizeParams``) with the bit-width encoding of ``enc``
    (a ``cases.case.Encoding`` whose ``bitwidth`` is set). ``pin`` keeps the scale and offset arrays alive
    as long as the case's other buffers."""
    union_address = ctypes.addressof(q) + type(q).u.offset
    if enc.per_axis:
        n = len(enc.scales)
        scales = pin((c_float * n)(*enc.scales))
        offsets = pin((c_int32 * n)(*enc.offsets))
        q.quantizationEncoding = QUANT_BW_AXIS_SCALE_OFFSET
        body = BwAxisScaleOffset.from_address(union_address)
        body.bitwidth, body.axis, body.numElements = int(enc.bitwidth), int(enc.axis), n
        body.scales = ctypes.cast(scales, POINTER(c_float))
        body.offsets = ctypes.cast(offsets, POINTER(c_int32))
    else:
        q.quantizationEncoding = QUANT_BW_SCALE_OFFSET
        body = BwScaleOffset.from_address(union_address)
        body.bitwidth, body.scale, body.offset = int(enc.bitwidth), float(enc.scales[0]), int(enc.offsets[0])
