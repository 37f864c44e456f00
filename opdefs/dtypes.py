"""QNN data types: the one table every room reads (names, API codes, numpy storage, ranges).

The MasterOpDef names types as ``QNN_DATATYPE_<NAME>``; specs, cases and results use the bare
``<NAME>`` (``UFIXED_POINT_8``). The API codes are the values the QNN C API expects in
``Qnn_DataType_t`` (measured, see shared/qnn-c-api-facts.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

try:  # bfloat16 storage comes with onnx's ml_dtypes; without it BFLOAT_16 cases are not generated
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _BF16 = None


@dataclass(frozen=True)
class QnnDtype:
    name: str
    code: int
    storage: np.dtype | None  # how case data and backend buffers hold one element
    kind: str  # "float", "int", "uint", "bool", "sfixed", "ufixed", "string"
    bits: int

    @property
    def quantized(self) -> bool:
        return self.kind in ("sfixed", "ufixed")

    @property
    def qmin(self) -> int:
        """Smallest stored integer code (fixed-point and integer types)."""
        if self.kind in ("sfixed", "int"):
            return -(1 << (self.bits - 1))
        return 0

    @property
    def qmax(self) -> int:
        if self.kind in ("sfixed", "int"):
            return (1 << (self.bits - 1)) - 1
        if self.kind == "bool":
            return 1
        return (1 << self.bits) - 1


def _d(name: str, code: int, storage, kind: str, bits: int) -> QnnDtype:
    return QnnDtype(name, code, None if storage is None else np.dtype(storage), kind, bits)


# 4-bit fixed point is stored one code per byte on the Python side (as the API's client buffers do).
DTYPES: dict[str, QnnDtype] = {
    d.name: d
    for d in [
        _d("INT_8", 0x0008, np.int8, "int", 8),
        _d("INT_16", 0x0016, np.int16, "int", 16),
        _d("INT_32", 0x0032, np.int32, "int", 32),
        _d("INT_64", 0x0064, np.int64, "int", 64),
        _d("UINT_8", 0x0108, np.uint8, "uint", 8),
        _d("UINT_16", 0x0116, np.uint16, "uint", 16),
        _d("UINT_32", 0x0132, np.uint32, "uint", 32),
        _d("UINT_64", 0x0164, np.uint64, "uint", 64),
        _d("FLOAT_16", 0x0216, np.float16, "float", 16),
        _d("BFLOAT_16", 0x0226, _BF16, "float", 16),
        _d("FLOAT_32", 0x0232, np.float32, "float", 32),
        _d("FLOAT_64", 0x0264, np.float64, "float", 64),
        _d("SFIXED_POINT_4", 0x0304, np.int8, "sfixed", 4),
        _d("SFIXED_POINT_8", 0x0308, np.int8, "sfixed", 8),
        _d("SFIXED_POINT_16", 0x0316, np.int16, "sfixed", 16),
        _d("SFIXED_POINT_32", 0x0332, np.int32, "sfixed", 32),
        _d("UFIXED_POINT_4", 0x0404, np.uint8, "ufixed", 4),
        _d("UFIXED_POINT_8", 0x0408, np.uint8, "ufixed", 8),
        _d("UFIXED_POINT_16", 0x0416, np.uint16, "ufixed", 16),
        _d("UFIXED_POINT_32", 0x0432, np.uint32, "ufixed", 32),
        _d("BOOL_8", 0x0508, np.bool_, "bool", 8),
        _d("STRING", 0x0608, None, "string", 8),
    ]
}

# The set a "backend specific" tensor is tried with unless an op or backend narrows it.
BACKEND_SPECIFIC_DEFAULT = (
    "FLOAT_32", "FLOAT_16", "UFIXED_POINT_8", "UFIXED_POINT_16", "SFIXED_POINT_8", "SFIXED_POINT_16",
)


def get(name: str) -> QnnDtype:
    """Look a type up by bare name or by the MasterOpDef's ``QNN_DATATYPE_`` spelling."""
    key = name.removeprefix("QNN_DATATYPE_")
    try:
        return DTYPES[key]
    except KeyError:
        raise KeyError(f"unknown QNN datatype {name!r}") from None


def by_code(code: int) -> QnnDtype:
    for d in DTYPES.values():
        if d.code == code:
            return d
    raise KeyError(f"unknown QNN datatype code {code:#x}")
