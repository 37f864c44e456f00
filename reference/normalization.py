"""Normalizations: Batchnorm, GroupNorm, InstanceNorm, L2Norm, LayerNorm, Lrn, RmsNorm.

QNN tensors are channel-last ([..., channel]); every per-channel vector here therefore broadcasts
against the last axis without reshaping. Variances are centred population variances (divide by the
count) unless the spec's formula says otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference import member, register
from reference.models import register_model, register_symptom

# InstanceNorm RMS mode: the spec's RMS (7464, 7472) is a plain sum of squares plus epsilon, with no
# division by the element count. Kept literal; flip this if a QNN backend shows a mean is meant.
INSTANCE_NORM_RMS_DIVIDES_BY_COUNT = False



def _per_channel(v: np.ndarray | None, default: float, channels: int) -> np.ndarray:
    """A [channel] vector (or the spec's {c,..,c} default) that broadcasts against the last axis."""
    if v is None:
        return np.full(channels, default)
    return np.asarray(v, dtype=np.float64)


def _optional(inputs: list[np.ndarray | None], i: int) -> np.ndarray | None:
    return inputs[i] if len(inputs) > i and inputs[i] is not None else None


def _along_axes(v: np.ndarray | None, axes: list[int], ndim: int, default: float) -> np.ndarray | float:
    """Place a gamma/beta whose dim i belongs to input axis axes[-M + i] into a broadcastable rank-ndim
    shape (LayerNorm/RmsNorm decision, seed 7893): trailing alignment, transposed into axis order."""
    if v is None:
        return default
    v = np.asarray(v, dtype=np.float64)
    m = v.ndim
    if m == 0:
        return v
    if m > len(axes) or any(not 0 <= a < ndim for a in axes):
        raise ValueError(f"gamma/beta of rank {m} does not fit axes {axes} of a rank-{ndim} input")
    owners = axes[len(axes) - m :]
    order = np.argsort(owners)
    v = np.transpose(v, order)
    shape = [1] * ndim
    for ax, d in zip(sorted(owners), v.shape, strict=True):
        shape[ax] = d
    return v.reshape(shape)


def _axes_list(value: Any) -> list[int]:
    return [int(a) for a in np.asarray(value, dtype=np.int64).reshape(-1)]


@register("Batchnorm", verified_by="onnxruntime")
def batchnorm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    c = x.shape[-1]
    return [x * _per_channel(inputs[1], 1.0, c) + _per_channel(_optional(inputs, 2), 0.0, c)]


@register("GroupNorm", verified_by="onnxruntime")
def group_norm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    c = x.shape[-1]
    g = int(params["group"])
    if g <= 0 or c % g:
        raise ValueError(f"GroupNorm: channel {c} is not divisible by group {g}")
    xg = x.reshape(x.shape[:-1] + (g, c // g))  # [..., group, channel-in-group]
    lead = 1 if x.ndim >= 2 else 0
    axes = tuple(range(lead, x.ndim - 1)) + (x.ndim,)
    mean = xg.mean(axis=axes, keepdims=True)
    var = ((xg - mean) ** 2).mean(axis=axes, keepdims=True)
    y = ((xg - mean) / np.sqrt(var + float(params["epsilon"]))).reshape(x.shape)
    return [y * _per_channel(_optional(inputs, 1), 1.0, c) + _per_channel(_optional(inputs, 2), 0.0, c)]


@register_model("GroupNorm", name="leading-axes-as-one-batch")
def group_norm_leading_axes_as_one_batch(case: Any) -> list[np.ndarray]:
    """The HTP simulator's GroupNorm on a rank-2 or rank-3 input (finding groupnorm-rank-below-4-one-batch): axis 0 is
    not a batch; every axis before the channel is a spatial axis of one sample, so a group's statistics run over all
    rows ([4, 2] with two groups: four values per group, where the reference's batch reading has one)."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    one = group_norm([x[None, ...], *inputs[1:]], params, None, None, op=case.op)[0]
    return [one.reshape(x.shape)]


def _instance_region_axes(region: str, ndim: int) -> tuple[int, ...]:
    """InstanceNorm ``region`` (7548-7560) -> the axes its statistics are taken over."""
    spatial = tuple(range(1, ndim - 1))
    return {"ACROSS_SPATIAL": spatial, "ACROSS_CHANNEL": (ndim - 1,), "ACROSS_ALL": spatial + (ndim - 1,)}[region]


@register("InstanceNorm", verified_by="onnxruntime")
def instance_norm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """Mode chooses the statistic, region the axes it is taken over (see the op's YAML decisions for the
    combinations the spec leaves undefined)."""
    x = np.asarray(inputs[0], dtype=np.float64)
    c = x.shape[-1]
    gamma = _per_channel(inputs[1], 1.0, c)
    beta = _per_channel(_optional(inputs, 2), 0.0, c)
    eps = float(params.get("epsilon", 1e-12))
    axes = _instance_region_axes(member(op, params, "region"), x.ndim)
    if member(op, params, "mode") == "RMS":  # mode: 7528-7540
        reduce_sq = np.mean if INSTANCE_NORM_RMS_DIVIDES_BY_COUNT else np.sum
        rms = reduce_sq(x * x, axis=axes, keepdims=True) + eps
        return [x * gamma / np.sqrt(rms) + beta]
    mean = x.mean(axis=axes, keepdims=True)
    if not bool(params.get("normalize_variance", True)):
        return [x - mean]
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return [(x - mean) * gamma / np.sqrt(var + eps) + beta]


def _l2_axes(params: dict[str, Any]) -> list[int]:
    """axes, or where it is empty or the all-zero default {0,..,0} (two or more zeros, which axes' own uniqueness
    rule forbids as a real value), the scalar axis. A single explicit [0] is axes (L2Norm decisions)."""
    given = params.get("axes")
    raw = [int(a) for a in np.asarray(given).reshape(-1)] if given is not None else []
    if not raw or (len(raw) > 1 and not any(raw)):
        return [int(params.get("axis", 0))]
    return sorted(set(raw))


@register("L2Norm", verified_by="onnxruntime")
def l2_norm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    norm = np.sqrt(np.sum(x * x, axis=tuple(_l2_axes(params)), keepdims=True))
    return [x / np.maximum(norm, float(params.get("epsilon", 1e-12)))]


@register_model("L2Norm", name="epsilon-bounds-squared-norm")
def l2_norm_epsilon_bounds_squared_norm(case: Any) -> list[np.ndarray]:
    """The HTP simulator's L2Norm (finding l2norm-epsilon-bounds-squared-norm): epsilon bounds the sum of squares
    before the square root, x / sqrt(max(sum x^2, eps)), where line 7673 bounds the norm itself."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    sq = np.sum(x * x, axis=tuple(_l2_axes(params)), keepdims=True)
    return [x / np.sqrt(np.maximum(sq, float(params.get("epsilon", 1e-12))))]


@register("LayerNorm", verified_by="onnxruntime")
def layer_norm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    axes = _axes_list(params["axes"])
    gamma = _along_axes(_optional(inputs, 1), axes, x.ndim, 1.0)
    beta = _along_axes(_optional(inputs, 2), axes, x.ndim, 0.0)
    red = tuple(sorted(set(axes)))
    mean = x.mean(axis=red, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=red, keepdims=True)
    return [(x - mean) * gamma / np.sqrt(var + float(params.get("epsilon", 0.001))) + beta]


@register_model("LayerNorm", name="centred-in-float16")
def layer_norm_centred_in_float16(case: Any) -> list[np.ndarray]:
    """LayerNorm computed step by step in binary16, as the HTP computes a FLOAT_32 graph (its documented float16
    arithmetic) and as the ONNX Runtime QNN EP hands a 16-bit LayerNorm (Dequantize -> FLOAT_32 LayerNorm ->
    Quantize: finding ep-layernorm-16bit-as-float16-graph): in[0] rounded to binary16, its mean, x - mean, the
    variance, 1 / sqrt(variance + epsilon), then times gamma plus beta, each rounded to binary16. x - mean cancels where
    x lies near its mean, so a 16-bit output loses what binary16 cannot hold of x (2^-9 at |x| near 2.5)."""
    from reference.expected import arguments

    h = np.float16
    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64).astype(h)
    axes = _axes_list(params["axes"])
    gamma = _along_axes(_optional(inputs, 1), axes, x.ndim, 1.0).astype(h)
    beta = _along_axes(_optional(inputs, 2), axes, x.ndim, 0.0).astype(h)
    red = tuple(sorted(set(axes)))
    mean = x.astype(np.float32).mean(axis=red, keepdims=True).astype(h)
    d = (x - mean).astype(h)
    var = (d * d).astype(h).astype(np.float32).mean(axis=red, keepdims=True).astype(h)
    r = (1.0 / np.sqrt((var + h(float(params.get("epsilon", 0.001)))).astype(h).astype(np.float32))).astype(h)
    return [((d * r).astype(h) * gamma + beta).astype(h).astype(np.float64)]


@register("RmsNorm", verified_by="onnxruntime")
def rms_norm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    axes = _axes_list(params["axes"])
    gamma = _along_axes(_optional(inputs, 1), axes, x.ndim, 1.0)
    beta = _along_axes(_optional(inputs, 2), axes, x.ndim, 0.0)
    ms = (x * x).mean(axis=tuple(sorted(set(axes))), keepdims=True)
    return [x * gamma / np.sqrt(ms + float(params.get("epsilon", 1e-6))) + beta]


def _window_sum(a: np.ndarray, axis: int, radius: int) -> np.ndarray:
    """Sum over the centred window [i-R, i+R] clipped to the axis (the Lrn decision, seed 8084)."""
    a = np.moveaxis(a, axis, -1)
    n = a.shape[-1]
    csum = np.concatenate([np.zeros(a.shape[:-1] + (1,)), np.cumsum(a, axis=-1)], axis=-1)
    i = np.arange(n)
    lo = np.maximum(0, i - radius)
    hi = np.minimum(n - 1, i + radius) + 1
    return np.moveaxis(csum[..., hi] - csum[..., lo], -1, axis)


@register("Lrn", verified_by="onnxruntime")
def lrn(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    r = int(params["radius"])
    sq = x * x
    if member(op, params, "region") == "WITHIN_CHANNEL":  # region: 8163-8177
        if x.ndim != 4:
            raise ValueError(f"Lrn: within-channel LRN needs a rank-4 input, got rank {x.ndim}")
        s = _window_sum(_window_sum(sq, 1, r), 2, r)  # the 2-D box is separable
    else:
        s = _window_sum(sq, x.ndim - 1, r)
    alpha, beta, bias = float(params.get("alpha", 1.0)), float(params.get("beta", 0.5)), float(params.get("bias", 1.0))
    return [x / (bias + alpha * s) ** beta]


@register_symptom("Lrn", name="window-sums-between-none-and-all")
def lrn_window_sums_short(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The ONNX Runtime QNN EP's FLOAT_16 within-channel Lrn with a window larger than the input (finding
    ep-lrn-f16-within-channel-window-past-input): the window sums S come from the HTP's FLOAT_16 PoolAvg2d of in[0]^2,
    which holds fewer of the window's cells than the spec's (some rows, or none), so every output is in[0] /
    (bias + alpha S')^beta with S' between 0 and the spec's S: between the spec's out[0] and in[0] / bias^beta. The
    symptom holds every element to the case's budget around that interval; a sign flip, a larger sum, a NaN or raw
    codes fall outside it. Which cells the HTP keeps follows no rule found (two cases: the rows up to the output's
    own, and none), so it is a symptom, not a model."""
    from reference.expected import arguments, expected

    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    beta, bias = float(params.get("beta", 0.5)), float(params.get("bias", 1.0))
    spec, none = expected(case)[0], x / bias**beta
    got = np.asarray(stored[0], dtype=np.float64)
    inside = np.clip(got, np.minimum(spec, none), np.maximum(spec, none))
    j = judged([inside])
    return None if j.passed else f"outside the interval between the spec's out[0] and in[0] / bias^beta: {j.message}"


# The gamma the HTP's FLOAT_16 RmsNorm uses when in[1] is absent: the spec's {1,..,1} (line 11305) stored as float32
# ones and read as float16 halves, 0x3F800000 -> 0x0000 (0) and 0x3F80 (1.875) (finding rmsnorm-f16-default-gamma-as-
# float16-halves).
def default_gamma_as_float16_halves(n: int) -> np.ndarray:
    """The first n float16 values of n float32 ones' bytes (little-endian): 0, 1.875, 0, 1.875, ..."""
    return np.ones(n, dtype=np.float32).view(np.float16)[:n].astype(np.float64)


@register_model("RmsNorm", name="default-gamma-float32-ones-as-float16-halves")
def rmsnorm_default_gamma_as_float16_halves(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 RmsNorm without gamma (finding rmsnorm-f16-default-gamma-as-float16-halves): the
    default gamma {1,..,1} is float32 ones read as float16, so along the normalized axes (flattened) gamma is 0 at even
    positions and 1.875 at odd ones: out[0] = 0 there, and 1.875 in[0] / rms at odd positions. A case with gamma given
    is not this bug's: the model refuses it."""
    from dataclasses import replace

    from cases.case import Tensor
    from reference.expected import expected

    if len(case.inputs) > 1 and case.inputs[1] is not None:
        raise ValueError("gamma (in[1]) is given: the default gamma is not used")
    x = case.inputs[0]
    axes = _axes_list(case.params["axes"].value)
    shape = tuple(int(x.shape[a]) for a in axes)
    gamma = default_gamma_as_float16_halves(int(np.prod(shape))).reshape(shape)
    g = Tensor("in[1]", "FLOAT_16", shape, data=gamma.astype(np.float16), static=True)
    return expected(replace(case, inputs=[x, g]))


@register_symptom("RmsNorm", name="whole-pixels-normalized-wrong")
def rmsnorm_whole_pixels_normalized_wrong(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP simulator's FLOAT_16 and UFIXED_POINT_8 RmsNorm of a rank-4 input over its channels, 9 rows high or more
    (finding rmsnorm-rank4-taller-than-8-pixels-wrong): some pixels (b, h, w) come out wrong as a whole, every channel
    of them (zeros, saturated codes, a scale not their own, values up to 45664 from inputs of -5..5), and every other
    pixel is right: the spec's value in UFIXED_POINT_8, the spec's without beta in FLOAT_16 (finding
    rmsnorm-beta-ignored, every FLOAT_16 case). Which pixels follows the HTP's 8-row tiles with no rule found: with 9-16
    rows, rows 8 on of the first 4 (FLOAT_16, 32 channels or fewer) or 8 columns; with more rows or columns, blocks
    elsewhere too (rows 0-7 of column 8 of 9); the pixels are the same whatever the data (measured on 3 draws of 4
    shapes; with a batch of 8, every pixel of batches 4 to 7 and a number of the others that changes from run to
    run: seed 3's [8, 11, 11, 16] had 105 of 968 pixels right in one run, more than a quarter in another). The
    symptom: at least a sixteenth of the pixels within the case's budget of that value, each other pixel off
    in at least half its channels or in[0] * gamma (+ beta) at a scale not its own (one measured pixel came out with a
    normalizer 3% off); a bug of every pixel (beta or gamma dropped, the wrong axes) or of single elements (a
    rounding) does not show it."""
    from dataclasses import replace

    from cases.quant import dequantize, real_value
    from reference.compare import allowed_difference
    from reference.expected import expected
    from reference.tolerance import budget_for

    out = case.outputs[0]
    if out.dtype == "FLOAT_16":
        base = expected(replace(case, inputs=list(case.inputs[:2])))[0]
    else:
        base = expected(case)[0]
    got = np.asarray(stored[0], dtype=np.float64)
    allowed = allowed_difference(base, out, budget_for(out.dtype))
    if out.encoding is not None:
        got = dequantize(stored[0], out.encoding)
        allowed = allowed * abs(float(out.encoding.scales[0]))
    if base.ndim < 2:
        return "no pixels: a rank-1 output"
    with np.errstate(invalid="ignore", over="ignore"):  # garbage pixels hold inf and NaN
        off = ~(np.abs(got - base) <= allowed)
    allowed = np.broadcast_to(allowed, base.shape)
    pixels = off.reshape(-1, off.shape[-1])
    wrong = pixels.any(axis=1)
    if not wrong.any():
        return "every pixel right"
    if (~wrong).sum() < wrong.size / 16:  # the wrong pixels vary between runs: a quarter of them right was too many
        return f"{int(wrong.sum())} of {wrong.size} pixels off: more than fifteen sixteenths, a bug of every pixel"
    partial = np.nonzero(wrong & (pixels.mean(axis=1) < 0.5))[0]
    if partial.size:  # off in few channels: a normalizer near its own, or single elements (another bug)
        x = real_value(case.inputs[0])
        gamma = real_value(case.inputs[1]) if len(case.inputs) > 1 and case.inputs[1] is not None else 1.0
        beta = base - expected(replace(case, inputs=list(case.inputs[:2])))[0]
        xg = np.broadcast_to(x * gamma, base.shape).reshape(pixels.shape)[partial]
        y = (got - beta).reshape(pixels.shape)[partial]
        k = (xg * y).sum(axis=1, keepdims=True) / np.maximum((xg * xg).sum(axis=1, keepdims=True), 1e-30)
        if not (np.abs(y - k * xg) <= allowed.reshape(pixels.shape)[partial]).all():
            return (f"{partial.size} pixels off in fewer than half their channels and not in[0] * gamma at one scale: "
                    "single elements, not whole pixels")
    rest = np.where(off.any(axis=-1, keepdims=True), got, base)  # the wrong pixels as given; the others judged
    j = judged([rest])
    return None if j.passed else f"the pixels not off are outside the case's budget: {j.message}"


@register_symptom("Lrn", name="square-sum-past-float32-as-zero")
def lrn_square_sum_past_float32(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """Finding lrn-f32-square-sum-overflows: FLOAT_32 Lrn where the window's sum of squares is past float32's range
    (an element near 3.4e38) gives a zero (of in[0]'s sign), as x / inf^beta does in float32, where the spec's
    x / (bias + alpha S)^beta is a float32 value (-6.7e30 for -3.4e38, beta 0.1); every other element is held to the
    reference within the case's budget."""
    from reference.expected import arguments, expected

    if case.outputs[0].dtype != "FLOAT_32":
        return "not a FLOAT_32 output"
    inputs, params = arguments(case)
    x = np.asarray(inputs[0], dtype=np.float64)
    r = int(params["radius"])
    with np.errstate(all="ignore"):
        sq = x * x
        if member(case.op, params, "region") == "WITHIN_CHANNEL":
            s = _window_sum(_window_sum(sq, 1, r), 2, r)
        else:
            s = _window_sum(sq, x.ndim - 1, r)
        ref = np.asarray(expected(case)[0], dtype=np.float64)
    alpha = float(params.get("alpha", 1.0))
    over = np.isfinite(s) & (np.abs(alpha * s) > float(np.finfo(np.float32).max)) & np.isfinite(ref) & (ref != 0)
    if not over.any():
        return "no window's sum of squares is past float32's range"
    got = np.asarray(stored[0], dtype=np.float64)
    if got.shape != ref.shape:
        return f"out[0] has shape {got.shape}, not {ref.shape}"
    if not (got[over] == 0).all():
        return "an element whose sum of squares is past float32's range is not 0"
    j = judged([np.where(over, got, ref)])
    return None if j.passed else f"an element whose sum of squares is in range is wrong too: {j.message}"
