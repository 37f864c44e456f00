"""Lowerings of the normalization family.

Where ONNX has the op (LRN, InstanceNormalization, GroupNormalization, LayerNormalization, and
RMSNormalization since opset 23) the lowering is that one node, so the QNN execution provider sees what a
converter would hand it and can map it to the QNN op of the same name. What the ONNX node cannot say (a
region or mode it has no attribute for, an axis set that is not a trailing suffix, L2Norm's epsilon) is a
short composite of ONNX arithmetic computing the spec's formula, still one lowering per op.

QNN tensors are channel-last; the ONNX nodes are channel-first (axis 1). Rank-4 and higher inputs move
through ``channels_first`` (Transpose in and out, which ORT's layout transformer cancels against the EP's
own NHWC layout); a channel-last input of another rank is reshaped to ``[rows, C, 1, 1]``, which puts the
channel at axis 1 without moving any element.
"""

from __future__ import annotations

import numpy as np

from adapters.onnx.builder import Builder, Lowering, Unlowerable, arith, channels_first, on_input_grid

FAMILIES = frozenset({"normalization"})
RMS_NORMALIZATION_OPSET = 23  # ONNX added RMSNormalization in opset 23 (ONNX 1.18)


def _batchnorm(b: Builder) -> list[str]:
    """QNN Batchnorm is already folded: x * weights + bias over the last (channel) axis."""
    x = b.input(0)
    y = b.node("Mul", [x, b.input(1)])
    if b.has(2):
        y = b.node("Add", [y, b.input(2)])
    return [y]


def _normalized_axes(b: Builder) -> tuple[list[int], list[int] | None]:
    """``axes`` as listed, and the permutation that makes them the trailing axes in that order (None where
    they already are a trailing suffix). ONNX's LayerNormalization and RMSNormalization normalize the axes
    from ``axis`` on; any other set is moved there by a Transpose (and back after), and listed in their own
    order gamma's and beta's dims (dim i belongs to axis axes[-M + i], the LayerNorm decision) then follow
    the input's."""
    n = b.rank(0)
    listed = b.p.ints("axes")
    axes = sorted(listed)
    if not all(0 <= a < n for a in axes) or axes == list(range(axes[0], n)):
        return listed, None  # an axis outside [0, N) goes to ORT as it is: its refusal is the verdict
    return listed, [a for a in range(n) if a not in listed] + listed


def _along_axes(b: Builder, i: int, listed: list[int]) -> str:
    """gamma / beta, transposed into the input's axis order where ``axes`` lists trailing axes out of it."""
    m = b.rank(i)
    perm = [int(k) for k in np.argsort(listed[len(listed) - m :])] if 0 < m <= len(listed) else []
    return b.input(i, perm if perm != sorted(perm) else None)


def _suffix_norm(b: Builder, node: Lowering) -> list[str]:
    """Run ``node`` (which reads x, gamma, beta and the first normalized axis) on the trailing axes: in place
    where ``axes`` already are, else between a Transpose that moves them there and its inverse."""
    listed, perm = _normalized_axes(b)
    if perm is None:
        first = min(min(listed), b.rank(0))
        gamma = _along_axes(b, 1, listed) if b.has(1) else None
        beta = _along_axes(b, 2, listed) if b.has(2) else None
        return [node(b, b.input(0), gamma, beta, first, b.shape(0)[first:])]
    n = b.rank(0)
    x = b.input(0, perm)
    gamma = b.input(1) if b.has(1) else None
    beta = b.input(2) if b.has(2) else None
    y = node(b, x, gamma, beta, n - len(listed), tuple(b.shape(0)[a] for a in listed))
    return [b.transpose(b.on_output_grid(y), [int(k) for k in np.argsort(perm)])]


def _layer_norm(b: Builder) -> list[str]:
    def node(b: Builder, x: str, gamma: str | None, beta: str | None, axis: int, shape: tuple[int, ...]) -> str:
        gamma = gamma if gamma is not None else b.like(np.ones(shape), x)
        ins = [x, gamma] + ([beta] if beta is not None else [])
        return b.node("LayerNormalization", ins, axis=axis, epsilon=b.p.float("epsilon"))

    return _suffix_norm(b, node)


def _rms_norm(b: Builder) -> list[str]:
    """ONNX RMSNormalization (opset 23): x / sqrt(mean(x^2) + epsilon) * scale over the trailing axes from
    ``axis``. It has no bias: QNN's beta is an Add after it."""
    b.opset = max(b.opset, RMS_NORMALIZATION_OPSET)

    def node(b: Builder, x: str, gamma: str | None, beta: str | None, axis: int, shape: tuple[int, ...]) -> str:
        gamma = gamma if gamma is not None else b.like(np.ones(shape), x)
        y = b.node("RMSNormalization", [x, gamma], axis=axis, epsilon=b.p.float("epsilon"))
        return b.node("Add", [y, beta]) if beta is not None else y

    return _suffix_norm(b, node)


def _per_channel(b: Builder, i: int, fill: float, like: str) -> str:
    """Input i ([channel]) or, where the case leaves it out, the spec's {fill,..,fill} default: ONNX's
    normalization nodes take scale and bias as required inputs."""
    return b.input(i) if b.has(i) else b.like(np.full(b.shape(0)[-1], fill), like)


def _group_norm(b: Builder) -> list[str]:
    """ONNX GroupNormalization (opset 21: scale and bias per channel, contiguous channel groups, the GroupNorm
    decisions). Its input is [N, C, ...]: rank 2 is that already, a higher rank moves the channel to axis 1,
    and a rank-1 input (one sample of channels, the reference's reading) becomes [1, C]."""
    eps, groups = b.p.float("epsilon"), b.p.int("group")

    def inner(b: Builder, x: str, r: int) -> str:
        return b.node("GroupNormalization", [x, _per_channel(b, 1, 1.0, x), _per_channel(b, 2, 0.0, x)],
                      epsilon=eps, num_groups=groups)  # fmt: skip

    r = b.rank(0)
    if r >= 3:
        return channels_first(inner)(b)
    x = b.input(0)
    if r == 2:
        return [inner(b, x, r)]
    y = inner(b, on_input_grid(b, 0, b.node("Reshape", [x, b.i64([1, b.shape(0)[0]])])), 2)
    return [b.to_declared(y)]


def _instance_norm(b: Builder) -> list[str]:
    """ONNX InstanceNormalization is QNN's default form (MU_SIGMA over the spatial axes, the variance
    normalized). The other modes, regions and normalize_variance = false have no ONNX attribute: they are
    the spec's formulas (the InstanceNorm decisions) in ONNX arithmetic over the region's axes."""
    mode, region = b.p.member("mode"), b.p.member("region")
    eps = b.p.float("epsilon")
    normalize = b.p.bool("normalize_variance", True)
    if mode == "MU_SIGMA" and region == "ACROSS_SPATIAL" and normalize:
        def inner(b: Builder, x: str, r: int) -> str:
            return b.node("InstanceNormalization", [x, _per_channel(b, 1, 1.0, x), _per_channel(b, 2, 0.0, x)],
                          epsilon=eps)  # fmt: skip

        return channels_first(inner)(b)
    n = b.rank(0)
    spatial = list(range(1, n - 1))
    axes = {"ACROSS_SPATIAL": spatial, "ACROSS_CHANNEL": [n - 1], "ACROSS_ALL": [*spatial, n - 1]}[region]
    x = b.input(0)
    if mode == "RMS":  # the spec's RMS: a plain sum of squares plus epsilon (no division by the count)
        squares = b.node("ReduceSum", [b.node("Mul", [x, x]), b.i64(axes)], keepdims=1)
        rms = b.node("Sqrt", [arith(b, "Add", squares, eps)])
        y = b.node("Div", [b.node("Mul", [x, _per_channel(b, 1, 1.0, x)]), rms])
        return [b.node("Add", [y, _per_channel(b, 2, 0.0, x)])]
    centred = b.node("Sub", [x, b.node("ReduceMean", [x, b.i64(axes)], keepdims=1)])
    if not normalize:  # in[0] - mu, gamma and beta not applied (the decision)
        return [centred]
    var = b.node("ReduceMean", [b.node("Mul", [centred, centred]), b.i64(axes)], keepdims=1)
    sigma = b.node("Sqrt", [arith(b, "Add", var, eps)])
    y = b.node("Div", [b.node("Mul", [centred, _per_channel(b, 1, 1.0, x)]), sigma])
    return [b.node("Add", [y, _per_channel(b, 2, 0.0, x)])]


def _lrn(b: Builder) -> list[str]:
    """Across channels: ONNX LRN, whose window of ``size`` = 2R + 1 channels is QNN's [c - R, c + R] clipped
    to the tensor, and whose alpha is divided by size where QNN's is not (the Lrn decision), so alpha * size
    goes in. ONNX LRN wants [N, C, ...]: rank 4 moves the channel to axis 1, any other rank is reshaped to
    [rows, C, 1, 1]. Within channels (a (2R + 1)^2 window over h and w) has no ONNX node: the window sums
    are an AveragePool of x^2 counting the zero padding, times the window's area."""
    radius = b.p.int("radius")
    alpha, beta, bias = b.p.float("alpha"), b.p.float("beta"), b.p.float("bias")
    if radius < 0:
        raise Unlowerable(f"Lrn radius {radius} is negative")
    size = 2 * radius + 1
    if b.p.member("region") == "ACROSS_CHANNEL":
        def inner(b: Builder, x: str, r: int) -> str:
            return b.node("LRN", [x], size=size, alpha=alpha * size, beta=beta, bias=bias)

        if b.rank(0) == 4:
            return channels_first(inner)(b)
        shape = b.shape(0)
        rows = int(np.prod(shape[:-1], dtype=np.int64))
        x = on_input_grid(b, 0, b.node("Reshape", [b.input(0), b.i64([rows, shape[-1], 1, 1])]))
        return [b.to_declared(inner(b, x, 4))]
    if b.rank(0) != 4:
        raise Unlowerable(f"within-channel Lrn of a rank-{b.rank(0)} input (the spec requires rank 4)")
    x = b.input(0)
    squares = b.transpose(b.node("Mul", [x, x]), [0, 3, 1, 2])
    mean = b.node("AveragePool", [squares], kernel_shape=[size, size], pads=[radius] * 4, strides=[1, 1],
                  count_include_pad=1)  # fmt: skip
    sums = arith(b, "Mul", b.transpose(mean, [0, 2, 3, 1]), float(size * size))
    scale = b.node("Pow", [arith(b, "Add", arith(b, "Mul", sums, alpha), bias), b.like(beta, sums)])
    return [b.node("Div", [x, scale])]


def _l2_norm(b: Builder) -> list[str]:
    """x / max(||x||_2, epsilon) over ``axes`` (or ``axis`` where axes is absent or the all-zero default {0,..,0},
    two or more zeros: the L2Norm decisions). ONNX LpNormalization has no epsilon and one axis: ReduceL2, Max, Div."""
    given = b.p.get("axes")
    raw = [int(a) for a in np.asarray(given).reshape(-1)] if given is not None else []
    axes = sorted(set(raw))
    if not raw or (len(raw) > 1 and not any(raw)):
        axes = [b.p.int("axis")]
    x = b.input(0)
    norm = b.node("ReduceL2", [x, b.i64(axes)], keepdims=1)
    return [b.node("Div", [x, b.node("Max", [norm, b.like(b.p.float("epsilon"), norm)])])]


LOWERINGS: dict[str, Lowering] = {
    "Batchnorm": _batchnorm, "LayerNorm": _layer_norm, "RmsNorm": _rms_norm, "GroupNorm": _group_norm,
    "InstanceNorm": _instance_norm, "Lrn": _lrn, "L2Norm": _l2_norm,
}  # fmt: skip
