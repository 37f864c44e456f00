"""Normalizations: Batchnorm, GroupNorm, InstanceNorm, L2Norm, LayerNorm, Lrn, RmsNorm.

QNN tensors are channel-last ([..., channel]); every per-channel vector here therefore broadcasts
against the last axis without reshaping. Variances are centred population variances (divide by the
count) unless the spec's formula says otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference import register

# InstanceNorm "mode" values (seed lines 7528-7540)
INSTANCE_NORM_MODE_MU_SIGMA = 0
INSTANCE_NORM_MODE_RMS = 1
# InstanceNorm "region" values (7548-7560)
INSTANCE_NORM_REGION_ACROSS_SPATIAL = 0
INSTANCE_NORM_REGION_ACROSS_CHANNEL = 1
INSTANCE_NORM_REGION_ACROSS_ALL = 2
# Lrn "region" values (8163-8177)
LRN_REGION_ACROSS_CHANNEL = 0
LRN_REGION_WITHIN_CHANNEL = 1

# InstanceNorm RMS mode: the spec's RMS (7464, 7472) is a plain sum of squares plus epsilon, with no
# division by the element count. Kept literal; flip this if a QNN backend shows a mean is meant.
INSTANCE_NORM_RMS_DIVIDES_BY_COUNT = False

DECISIONS: dict[str, list[dict[str, Any]]] = {
    "Batchnorm": [
        {
            "about": "what the op computes",
            "line": 270,
            "choice": "out[..., c] = in[..., c] * in[1][c] + in[2][c] (in[2] defaults to 0)",
            "why": "the spec gives no formula, only in[1] 'Weights' and in[2] 'Biases' per channel with no "
            "mean, variance or epsilon; hexagon_nn QuantizedBatchNorm (seed 000 line 681, crosswalk) is "
            "out = in*scale[d] + bias[d], and onnxruntime's QNN EP (batch_norm_op_builder.cc) lowers ONNX "
            "BatchNormalization to it with weights = scale/sqrt(var+eps), biases = B - mean*weights",
        },
    ],
    "GroupNorm": [
        {
            "about": "which channels form a group",
            "line": 6743,
            "choice": "group g holds the contiguous channels [g*C/G, (g+1)*C/G); statistics per (batch, group) "
            "over every non-batch, non-channel axis and the group's channels",
            "why": "the spec only says 'divides the channels into groups'; it cites ONNX GroupNormalization "
            "and torch.nn.GroupNorm, which both use contiguous channel blocks, and onnxruntime's QNN EP "
            "(group_norm_op_builder.cc) lowers ONNX GroupNormalization to GroupNorm unchanged",
        },
        {
            "about": "gamma/beta granularity",
            "line": 6781,
            "choice": "per channel ([channel]), applied after normalization",
            "why": "the spec shapes in[1]/in[2] as [channel]; ONNX GroupNormalization-21 agrees (opset 18 "
            "used per-group scale)",
        },
        {
            "about": "rank-1 input (no batch axis)",
            "line": 6767,
            "choice": "axis 0 of a rank >= 2 input is the batch; a rank-1 input is one sample of channels",
            "why": "the spec allows rank > 0 and names only the channel axis",
        },
    ],
    "InstanceNorm": [
        {
            "about": "axes of each region for rank n > 2 ([b, spatial..., c])",
            "line": 7432,
            "choice": "ACROSS_SPATIAL: axes 1..n-2; ACROSS_CHANNEL: axis n-1; ACROSS_ALL: axes 1..n-1",
            "why": "the spec's formulas sum over h,w (MU_SIGMA/SPATIAL), c (RMS/CHANNEL) and h,w,c (RMS/ALL)",
        },
        {
            "about": "MU_SIGMA with normalize_variance = false",
            "line": 7437,
            "choice": "out = in - mean (gamma and beta NOT applied), over the region's axes",
            "why": "the spec's formula says exactly in[0] - mu, which is Caffe MVN with normalize_variance "
            "false (an MVN layer has no gamma/beta); kept literal",
        },
        {
            "about": "RMS mode normalizer",
            "line": 7464,
            "choice": "RMS = sum of squares over the region + epsilon, no division by the count",
            "why": "the formula (7464, 7472) is explicit though the name suggests a mean; "
            "INSTANCE_NORM_RMS_DIVIDES_BY_COUNT switches reading if a backend settles it",
        },
        {
            "about": "combinations the spec does not define: MU_SIGMA with ACROSS_CHANNEL / ACROSS_ALL, RMS with "
            "ACROSS_SPATIAL",
            "line": 7432,
            "choice": "the defined formula of the same mode over the region's axes (MU_SIGMA: centred "
            "mean/variance; RMS: sum of squares)",
            "why": "mode picks the statistic and region the axes, as in the spec's own RMS pair and in Caffe "
            "MVN, which the QNN SDK converter names as the source of these options (its InstanceNorm translation "
            "rejects all but MU_SIGMA/ACROSS_SPATIAL/normalize_variance); NNAPI defines only MU_SIGMA/SPATIAL",
        },
        {
            "about": "normalize_variance in RMS mode",
            "line": 7541,
            "choice": "ignored",
            "why": "the spec mentions normalize_variance only in the MU_SIGMA formulas",
        },
        {
            "about": "variance",
            "line": 7456,
            "choice": "centred: mean((x - mu)^2)",
            "why": "stated by the spec; Android 10's NNAPI used the uncentred mean of squares (bug, fixed later)",
        },
    ],
    "L2Norm": [
        {
            "about": "epsilon",
            "line": 7673,
            "choice": "out = x / max(||x||_2, epsilon)",
            "why": "the spec's formula (and 'L2 norm lower bound', 7738); TF l2_normalize and NNAPI clamp "
            "the squared sum instead",
        },
        {
            "about": "axis vs axes",
            "line": 7729,
            "choice": "a non-empty axes that is not all zeros overrides axis; an all-zero axes (the spec "
            "default {0,..,0}) is treated as absent and axis is used; duplicates collapse",
            "why": "axes 'take precedence' (7724) but its default is all zeros, which would otherwise make "
            "axis unreachable whenever the default is materialised; both default to axis 0, so the "
            "readings only differ for an explicit axes=[0] beside a non-zero axis",
        },
        {
            "about": "default axis",
            "line": 7711,
            "choice": "0 (the spec default)",
            "why": "the spec states 0 although NNAPI uses -1 (the last axis)",
        },
    ],
    "LayerNorm": [
        {
            "about": "gamma/beta of lower rank than axes",
            "line": 7893,
            "choice": "gamma dim i maps to input axis axes[len(axes) - M + i] (aligned to the LAST M axes)",
            "why": "the spec asks for unidirectional broadcasting (numpy/ONNX trailing alignment), and "
            "onnxruntime's QNN EP (layer_norm_op_builder.cc) passes ONNX's trailing-broadcast scale through as "
            "gamma; when M == len(axes) this is exactly shape(gamma)[i] = shape(in[0])[axes[i]]",
        },
        {
            "about": "variance",
            "line": 7845,
            "choice": "centred population variance over axes",
            "why": "the spec's mean/variance tensors; TF LayerNormalization and ONNX agree",
        },
    ],
    "RmsNorm": [
        {
            "about": "gamma/beta alignment",
            "line": 11303,
            "choice": "gamma dim i maps to input axis axes[len(axes) - M + i]",
            "why": "same helper as LayerNorm; the spec shapes gamma as rank M = size(axes), so normally both "
            "readings coincide",
        },
    ],
    "Lrn": [
        {
            "about": "window upper bound",
            "line": 8084,
            "choice": "the sum runs over j in [max(0, x-R), min(shape[d]-1, x+R)] inclusive",
            "why": "M_2 = min(shape[d], x+R) read as an inclusive bound is one past the last valid index; "
            "the window is the centred 2R+1 window clipped to the tensor",
        },
        {
            "about": "alpha scaling",
            "line": 8101,
            "choice": "alpha is not divided by the window size",
            "why": "stated by the spec; onnxruntime's QNN EP (lrn_op_builder.cc) lowers ONNX LRN with "
            "alpha = onnx_alpha / size and radius = (size - 1) / 2",
        },
        {
            "about": "across-channel axis",
            "line": 8086,
            "choice": "the last axis (channel), for any rank",
            "why": "the formula indexes in[0][n,...,j] with M_2(N-1, c)",
        },
        {
            "about": "within-channel axes",
            "line": 8093,
            "choice": "axes 1 and 2 (h, w) of a rank-4 input",
            "why": "the formula uses M_2(1,h), M_2(2,w); rank 4 is required for this region",
        },
    ],
}


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


@register("Batchnorm")
def batchnorm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    c = x.shape[-1]
    return [x * _per_channel(inputs[1], 1.0, c) + _per_channel(_optional(inputs, 2), 0.0, c)]


@register("GroupNorm")
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


def _instance_region_axes(region: int, ndim: int) -> tuple[int, ...]:
    spatial = tuple(range(1, ndim - 1))
    return {
        INSTANCE_NORM_REGION_ACROSS_SPATIAL: spatial,
        INSTANCE_NORM_REGION_ACROSS_CHANNEL: (ndim - 1,),
        INSTANCE_NORM_REGION_ACROSS_ALL: spatial + (ndim - 1,),
    }[region]


@register("InstanceNorm")
def instance_norm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """Mode chooses the statistic, region the axes it is taken over (see DECISIONS for the
    combinations the spec leaves undefined)."""
    x = np.asarray(inputs[0], dtype=np.float64)
    c = x.shape[-1]
    gamma = _per_channel(inputs[1], 1.0, c)
    beta = _per_channel(_optional(inputs, 2), 0.0, c)
    eps = float(params.get("epsilon", 1e-12))
    axes = _instance_region_axes(int(params.get("region", INSTANCE_NORM_REGION_ACROSS_SPATIAL)), x.ndim)
    if int(params.get("mode", INSTANCE_NORM_MODE_MU_SIGMA)) == INSTANCE_NORM_MODE_RMS:
        reduce_sq = np.mean if INSTANCE_NORM_RMS_DIVIDES_BY_COUNT else np.sum
        rms = reduce_sq(x * x, axis=axes, keepdims=True) + eps
        return [x * gamma / np.sqrt(rms) + beta]
    mean = x.mean(axis=axes, keepdims=True)
    if not bool(params.get("normalize_variance", True)):
        return [x - mean]
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return [(x - mean) * gamma / np.sqrt(var + eps) + beta]


@register("L2Norm")
def l2_norm(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    given = params.get("axes")
    axes = sorted(set(_axes_list(given))) if given is not None else []
    if not any(axes):  # empty, or the all-zero default: the scalar axis decides
        axes = [int(params.get("axis", 0))]
    norm = np.sqrt(np.sum(x * x, axis=tuple(axes), keepdims=True))
    return [x / np.maximum(norm, float(params.get("epsilon", 1e-12)))]


@register("LayerNorm")
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


@register("RmsNorm")
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


@register("Lrn")
def lrn(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    r = int(params["radius"])
    sq = x * x
    if int(params.get("region", LRN_REGION_ACROSS_CHANNEL)) == LRN_REGION_WITHIN_CHANNEL:
        if x.ndim != 4:
            raise ValueError(f"Lrn: within-channel LRN needs a rank-4 input, got rank {x.ndim}")
        s = _window_sum(_window_sum(sq, 1, r), 2, r)  # the 2-D box is separable
    else:
        s = _window_sum(sq, x.ndim - 1, r)
    alpha, beta, bias = float(params.get("alpha", 1.0)), float(params.get("beta", 0.5)), float(params.get("bias", 1.0))
    return [x / (bias + alpha * s) ** beta]
