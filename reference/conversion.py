"""Type conversions: Cast, Convert, Quantize, Dequantize.

In the reference's real-valued world three of these are identities: the caller has already turned
input codes into real values (``cases.quant.dequantize``) and the comparator turns the returned
real values into output codes with the output encoding. Only Cast has semantics of its own, because
its target type changes the values (truncation, saturation, booleans).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference import register
from reference.models import register_model


def _target(out_dtypes: list[Any] | None) -> np.dtype:
    if out_dtypes and out_dtypes[0] is not None:
        return np.dtype(out_dtypes[0])
    return np.dtype(np.float64)


def _to_integer(x: np.ndarray, target: np.dtype) -> np.ndarray:
    info = np.iinfo(target)
    if x.dtype.kind in "iub":
        return np.clip(x.astype(np.int64) if x.dtype.kind == "b" else x, info.min, info.max).astype(target)
    hi = float(info.max)
    if int(hi) > info.max:  # 2**63 - 1 and 2**64 - 1 round up in float64
        hi = float(np.nextafter(hi, 0.0))
    t = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0, posinf=hi, neginf=float(info.min))
    return np.clip(t, float(info.min), hi).astype(target)


@register("Cast", verified_by="onnxruntime")
def cast(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """Float targets return float64 values unrounded: narrowing to FLOAT_16/FLOAT_32 is the
    comparator's cast with the output type, as for every other op."""
    x = np.asarray(inputs[0])
    target = _target(out_dtypes)
    if target.kind == "b":
        return [x != 0]
    if target.kind in "iu":
        return [_to_integer(x, target)]
    return [x.astype(np.float64)]


@register_model("Cast", name="bool-via-unsigned-integer")
def cast_bool_via_unsigned_integer(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_32 -> BOOL_8 Cast (finding cast-f32-bool-negative-false): the value is first cast to
    an unsigned integer (truncated toward zero, negatives saturating at 0), then tested for nonzero, so everything
    below 1 is false where ONNX's Cast, which line 967 cites, makes every nonzero value true. A NaN converts as the
    infinity of its sign bit (measured: NaN true, -NaN false, as +inf and -inf)."""
    from reference.expected import arguments

    inputs, _ = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    x = np.where(np.isnan(x), np.copysign(np.inf, x), x)
    return [_to_integer(x, np.dtype(np.uint32)) != 0]


@register_model("Cast", name="unsigned-8-as-bool")
def cast_unsigned_8_as_bool(case: Any) -> list[np.ndarray]:
    """The HTP's UINT_8 -> FLOAT_32 Cast on the generations after v68 (finding cast-u8-f32-nonzero-is-one): every
    nonzero input comes out as 1 (bit pattern 0x3f800001, 1 + 2^-23) and 0 as 0, as a BOOL_8 input would, where the
    Cast line 959 defines keeps the value (37 -> 37.0)."""
    from reference.expected import arguments

    inputs, _ = arguments(case)
    return [(np.asarray(inputs[0]) != 0).astype(np.float64)]


@register("Convert", "Quantize", "Dequantize", verified_by="onnxruntime")
def identity(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """Real value in, same real value out. Convert requantizes, Quantize encodes and Dequantize
    decodes; all three move between representations of one real number, and the representations
    are the caller's (input) and the comparator's (output encoding) business."""
    return [np.array(inputs[0], dtype=np.float64)]
