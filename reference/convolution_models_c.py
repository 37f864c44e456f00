"""FullyConnected with per-axis 8-bit weights given at run time (in[1] not static) on the HTP simulator, as a model
(finding fullyconnected-per-axis-dynamic-weights-byte-channels).

Measured on hand-made FullyConnected cases (in[0] an identity of codes so that out[0] shows each weight the kernel
uses, single weights at every code, unit in[0] codes at every position, offsets swept one at a time) and on random
ones (1-3 rows, 2-11 inputs, 2-8 units, weight scales 1e-4 to 2, every offset): the HTP takes the weight codes ``w``
(SFIXED_POINT_8, offsets 0) as if they were real values and requantizes them onto a 16-bit grid whose step is the
largest of the per-axis scales, ``s_max``, in binary32 arithmetic (offset binary, ``u = w x (1 / s_max) + 32768``
rounded to binary32 at each step, then to the nearest integer, halves to even, clipped to [0, 65535]; ``w16 = u -
32768``). Each unit's 16-bit weights are split into a signed low byte and a signed high byte (``w16 = 256 hi + lo``,
``lo`` in [-128, 127]; past 32639 both saturate at 127), and the kernel's 2m channels, in the order ``lo(unit 0),
hi(unit 0), lo(unit 1), hi(unit 1), ...``, are not combined again: their first m come out as out[0]'s m units, unit j
requantized with its own scale ``m_j = in[0].scale x s_j / out[0].scale``. So with every scale 1 and small positive
weights, unit 2k shows row k and unit 2k+1 is 0 (the high byte); rows past m/2 are never read.

The offsets go in divided by 256 (as if for the high byte's channel): with ``x`` in[0]'s stored codes (not minus
their offset), ``E_j`` channel j's bytes and ``S_j`` the sum of unit j's own 16-bit weights ``256 hi + lo``:

- UFIXED_POINT_8 in[0] and out[0]: code = round half up of ``m_j (x . E_j + in[0].offset x sum(E_j) / 256 +
  floor(-out[0].offset / (256 m_j)))``, clipped to [0, 255];
- UFIXED_POINT_16: ``x . E_j`` floored to a multiple of 256, in[0]'s offset share ``256 round(in[0].offset x S_j /
  65536)``, out[0]'s ``256 floor(-out[0].offset / (65536 m_j))``, their sum times ``m_j`` rounded to binary16, rounded
  half up, clipped to [0, 65535].

Within a step of every measured case, 8 and 16 bits, at v68 (the simulator's default target) and v69. At v73 and later
the 8-bit kernel is the same with out[0]'s offset then added exactly (``v73``), and 16-bit activations take another
kernel (the dot product floored to a multiple of 65536), not modelled. The same weights given static, or per-tensor
weights given at run time, are right; a bias (in[2]) with dynamic per-axis weights is refused at validation, and 4-bit
per-axis weights (bit width 4, SFIXED_POINT_4) are another finding's: the model refuses all of these (it raises, so it
covers nothing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import register_model

NAME = "htp-per-axis-dynamic-weights-byte-channels"
ACTIVATIONS = ("UFIXED_POINT_8", "UFIXED_POINT_16")


def _applies(case: Any) -> None:
    """ValueError unless the case is what the model was measured on."""
    if case.op != "FullyConnected" or len(case.inputs) < 2:
        raise ValueError(f"{NAME}: FullyConnected only")
    x, w, out = case.inputs[0], case.inputs[1], case.outputs[0]
    if len(case.inputs) > 2 and case.inputs[2] is not None:
        raise ValueError(f"{NAME}: measured without a bias (one is refused at validation)")
    if x.dtype not in ACTIVATIONS or out.dtype != x.dtype or x.data is None:
        raise ValueError(f"{NAME}: UFIXED_POINT_8 or UFIXED_POINT_16 in[0] and out[0] only")
    enc = w.encoding
    if (w.static or w.dtype != "SFIXED_POINT_8" or w.data is None or enc is None or enc.axis is None
            or enc.bitwidth not in (None, 8) or any(int(o) != 0 for o in enc.offsets)):  # fmt: skip
        raise ValueError(f"{NAME}: per-axis 8-bit weights with offsets 0, given at run time (not static), only")


def weight_bytes(case: Any) -> tuple[np.ndarray, np.ndarray]:
    """The HTP's 16-bit weights ``256 hi + lo`` of each unit ([m, n]) and the kernel's 2m byte channels ``lo(0),
    hi(0), lo(1), ...`` of which the first m are used ([m, n]; module docstring)."""
    w = case.inputs[1]
    f32 = np.float32
    s_max = f32(max(float(s) for s in w.encoding.scales))
    u = w.data.astype(f32) * (f32(1) / s_max) + f32(32768)  # binary32 at each step, as measured
    w16 = np.clip(np.round(u.astype(np.float64)), 0, 65535).astype(np.int64) - 32768
    lo = (w16 + 128) % 256 - 128
    hi = (w16 - lo) // 256
    saturated = hi > 127  # 32640..32767: the high byte cannot hold 128, both bytes stop at 127
    hi, lo = np.where(saturated, 127, hi), np.where(saturated, 127, lo)
    m = w16.shape[0]
    channels = np.empty((2 * m, w16.shape[1]), np.int64)
    channels[0::2], channels[1::2] = lo, hi
    return 256 * hi + lo, channels[:m]


def htp_per_axis_dynamic_codes(case: Any, v73: bool = False) -> np.ndarray:
    """out[0]'s codes as the HTP simulator computes FullyConnected with per-axis 8-bit weights given at run time
    (module docstring; ``v73``: the kernel of v73 and later, UFIXED_POINT_8 only); ValueError where it does not
    apply."""
    _applies(case)
    if v73 and case.inputs[0].dtype != "UFIXED_POINT_8":
        raise ValueError(f"{NAME_V73}: UFIXED_POINT_8 only (16 bits at v73 and later: not modelled)")
    x, w, out = case.inputs[0], case.inputs[1], case.outputs[0]
    w16, e = weight_bytes(case)
    n = w16.shape[1]
    xs, xoff = float(x.encoding.scales[0]), int(x.encoding.offsets[0])
    os_, ooff = float(out.encoding.scales[0]), int(out.encoding.offsets[0])
    s = np.broadcast_to(np.asarray(w.encoding.scales, np.float64), (w16.shape[0],))
    m = xs * s / os_
    dot = x.data.astype(np.float64).reshape(-1, n) @ e.T.astype(np.float64)
    if x.dtype == "UFIXED_POINT_8":
        k = xoff * e.sum(axis=1) / 256 + np.floor(-ooff / (256 * m))
        v, top = m * (dot + k) - (ooff if v73 else 0), 255
    else:
        m = m.astype(np.float16).astype(np.float64)
        k = 256 * np.round(xoff * w16.sum(axis=1) / 65536) + 256 * np.floor(-ooff / (65536 * m))
        v, top = m * (np.floor(dot / 256) * 256 + k), 65535
    return np.clip(np.floor(v + 0.5), 0, top).reshape(out.shape)


@register_model("FullyConnected", name=NAME)
def htp_per_axis_dynamic_weights_byte_channels(case: Any) -> list[np.ndarray]:
    """FullyConnected with per-axis 8-bit weights given at run time on the HTP simulator (finding
    fullyconnected-per-axis-dynamic-weights-byte-channels): the weights' codes requantized as real values onto a
    16-bit grid of the largest scale, split into low and high bytes whose first m channels come out as the m units,
    the offsets divided by 256 (module docstring)."""
    from cases.quant import dequantize

    return [dequantize(htp_per_axis_dynamic_codes(case), case.outputs[0].encoding)]


NAME_V73 = NAME + "-v73"


@register_model("FullyConnected", name=NAME_V73)
def htp_per_axis_dynamic_weights_byte_channels_v73(case: Any) -> list[np.ndarray]:
    """The same at HTP v73 and later, UFIXED_POINT_8 (finding
    fullyconnected-per-axis-dynamic-weights-byte-channels-v73): the same weight bytes, channels and offset terms as at
    v68, and out[0]'s offset then added exactly, where v68 drops it. Measured at SoC 43, 57, 69 and 87 (v73, v75,
    v79, v81) on random hand-made cases (10-15 each, within a step). 16-bit activations at v73 are another kernel
    (the dot product floored to a multiple of 65536): not modelled."""
    from cases.quant import dequantize

    return [dequantize(htp_per_axis_dynamic_codes(case, v73=True), case.outputs[0].encoding)]


def _register_fully_connected_near_half() -> None:
    """FullyConnected takes htp-16x8-weights-requantized-near-half-codes-either-way as Conv2d, Conv3d, MatMul and
    TransposeConv2d do (reference/convolution_models_b.py; finding fullyconnected-16x8-zero-point-below-128-near-half-
    codes): the same 16x8 kernel's requantized weight codes near a half going to either neighbour."""
    from reference.convolution_models_b import NEAR_HALF, htp_16x8_near_half_codes_either_way
    from reference.models import register_symptom

    register_symptom("FullyConnected", name=NEAR_HALF)(htp_16x8_near_half_codes_either_way)


_register_fully_connected_near_half()
