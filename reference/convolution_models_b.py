"""The HTP's 16x8 arithmetic (16-bit activations x asymmetric 8-bit weights) as a model (finding conv-16x8-precision).

Measured on the HTP simulator with hand-made FullyConnected cases (one or two weights per output channel, every weight
code, the activation swept over its range) and checked on the typical 16x8 cases of seeds 0-3: the HTP takes the
weights' codes minus their zero point (UFIXED_POINT_8, zero point z = -offset) as signed 8-bit integers. Where a weight
group's codes minus z fit in [-128, 127] they are kept as they are; where they do not (a zero point far from 128 and
weights at the other end of the range), the group is requantized onto a symmetric signed grid whose scale maps its most
negative value to -128 or its most positive to 127, whichever needs the larger scale: ``s_g = s * max(-min(q - z) / 128,
max(q - z) / 127)``, codes ``round(w / s_g)`` (half to even, clipped to [-128, 127]). A group is one output channel
(FullyConnected's row, the filter's last axis), and for TransposeConv2d/3d one output channel of one group and one
stride phase of the filter (the filter taps k with the same k mod stride on each spatial axis), the pieces a strided
transposed convolution is computed from; for TransposeConv3d, per output depth slice, only the filter depth taps that
reach that slice (``per_depth_taps``). The products are then accumulated exactly and the result requantized once to
out[0] with the multiplier in[0].scale x s_g / out[0].scale rounded to binary16 (11 significant bits), in every group.
Measured residual against the model, typical 16x8 cases of seeds 0-3 that failed against the reference: at most 24 steps
where the zero point is above 128 (within every case's budget), up to 124 (Conv2d), 186 (TransposeConv2d) where it is
below: a second effect of positive weights past 127 not found, left to a band (the ``-zero-point-below-128`` model). A
weight tensor whose zero point is 128 is symmetric already and takes another path that none of this describes: the model
does not apply there (it raises, so it covers nothing).

Three hand-made figures: a FullyConnected of one output channel with weights codes [48] at z = 200 (q - z = -152) gives
scale 0.01 x 152/128 and a multiplier rounded 3.2e-4 low, 4 to 19 steps on a 8/65535 grid; two weights [48, 0] at z =
200 (q - z = -152, -200) requantize -152 to round(-152 x 128/200) = -97, i.e. -1.5156 for -1.52, 72 steps at the ends of
the activation range, as measured; the same pair at z = 128 is exact.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from reference.models import _NAMED, register_combination, register_model, register_symptom

# MatMul is not among them: it drops its bias as well (matmul-16x8-bias-ignored), so its models are its own (below);
# its in[1] is requantized by the same rule per matrix of a batch and output column (one group per column of all the
# batch's matrices together missed 3-D cases by up to 262 steps)
# the 1-D forms too: the ONNX Runtime QNN EP hands them to the HTP as the 2-D ops (findings/ort-qnn.yaml)
OPS = ("Conv1d", "Conv2d", "Conv3d", "DepthWiseConv1d", "DepthWiseConv2d", "TransposeConv1d", "TransposeConv2d",
       "TransposeConv3d", "FullyConnected")
NAME = "htp-16x8-weights-requantized"
SYMMETRIC_ZERO_POINT = 128  # UFIXED_POINT_8's zero point of a symmetric grid (offset -128)


def _groups(case: Any, shape: tuple[int, ...], layout: str | None = None) -> np.ndarray:
    """A label per weight element: the weight group the HTP gives one scale (module docstring); ``layout``
    "htp-fixed-transpose-conv3d": the groups of the kernel that model describes (no groups, the width taking the
    height's stride)."""
    nd = len(shape)
    if case.op == "FullyConnected":  # in[1] is [channel_out, channel_in]
        return np.broadcast_to(np.arange(shape[0]).reshape(-1, *([1] * (nd - 1))), shape)
    if case.op == "MatMul":  # in[1] is [..., k, n] ([..., n, k] transposed): one group per matrix and output column
        k_axis = nd - 1 if bool(case.params["transpose_in1"].value if "transpose_in1" in case.params else False) \
            else nd - 2
        index = np.indices(shape)
        return np.ravel_multi_index(tuple(np.where(a == k_axis, 0, index[a]) for a in range(nd)), shape)
    labels = np.broadcast_to(np.arange(shape[-1]).reshape([1] * (nd - 1) + [-1]), shape).astype(np.int64)
    if case.op.startswith("TransposeConv"):  # [f..., channel_in, channel_out / group]
        group = int(case.params["group"].value) if "group" in case.params else 1
        if layout == "htp-fixed-transpose-conv3d":
            group = 1
        cin = shape[-2]
        view = [1] * nd
        view[-2] = -1
        labels = labels + shape[-1] * np.broadcast_to((np.arange(cin) // max(1, cin // group)).reshape(view), shape)
        n = nd - 2
        stride = np.asarray(case.params["stride"].value if "stride" in case.params else 1).reshape(-1)
        stride = np.repeat(stride, n) if stride.size == 1 else stride
        if layout == "htp-fixed-transpose-conv3d":
            stride = np.array([stride[0], stride[1], stride[1]])
        mult = shape[-1] * group
        for i in range(n):
            view = [1] * nd
            view[i] = -1
            phase = (np.arange(shape[i]) % int(stride[i])).reshape(view)
            labels = labels + mult * np.broadcast_to(phase, shape)
            mult *= int(stride[i])
    return labels


def zero_point(case: Any) -> int:
    """in[1]'s zero point (minus the API's offset)."""
    return -int(case.inputs[1].encoding.offsets[0])


def _zero_point_below_128(case: Any, name: str) -> None:
    """ValueError (naming the model ``name``) unless in[1]'s zero point is below 128: the *-zero-point-below-128
    models' cases."""
    if zero_point(case) >= SYMMETRIC_ZERO_POINT:
        raise ValueError(f"{name}: in[1]'s zero point is {zero_point(case)}")


def _group_extremes(labels: np.ndarray, centred: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each weight's group (0..G-1, flat) and each group's smallest and largest code minus the zero point: one pass
    over the weights, not a mask per group."""
    _, group = np.unique(labels.ravel(), return_inverse=True)
    lo = np.full(group.max() + 1, np.iinfo(np.int64).max)
    hi = np.full(group.max() + 1, np.iinfo(np.int64).min)
    np.minimum.at(lo, group, centred.ravel())
    np.maximum.at(hi, group, centred.ravel())
    return group, lo, hi


def applies_16x8(case: Any) -> None:
    """ValueError where htp_weights' model does not apply: not UFIXED_POINT_16 x per-tensor UFIXED_POINT_8, or
    weights already symmetric (zero point 128)."""
    x, w, out = case.inputs[0], case.inputs[1], case.outputs[0]
    if not (x is not None and w is not None and x.dtype == "UFIXED_POINT_16" and w.dtype == "UFIXED_POINT_8"
            and out.dtype == "UFIXED_POINT_16" and w.encoding is not None and not w.encoding.per_axis
            and not x.encoding.per_axis and not out.encoding.per_axis):  # fmt: skip
        raise ValueError(f"{NAME}: 16-bit activations and output with per-tensor 8-bit weights only")
    if zero_point(case) == SYMMETRIC_ZERO_POINT:
        raise ValueError(f"{NAME}: the weights are symmetric (zero point 128): not this path")


def htp_weights(case: Any, layout: str | None = None, depth_taps: tuple[int, ...] | None = None) -> np.ndarray:
    """The real weights the HTP computes a 16x8 case with (module docstring); ValueError where the model does not
    apply (not UFIXED_POINT_16 x UFIXED_POINT_8, or weights already symmetric). ``depth_taps``: a TransposeConv3d
    output depth slice's filter depth taps (``depth_taps_per_slice``), the groups taken over those taps only."""
    from cases.quant import real_value

    applies_16x8(case)
    x, w, out = case.inputs[0], case.inputs[1], case.outputs[0]
    zero_point = -int(w.encoding.offsets[0])
    scale = float(w.encoding.scales[0])
    real = real_value(w)
    centred = w.data.astype(np.int64) - zero_point  # q - z
    labels = _groups(case, tuple(w.shape), layout)
    if depth_taps is not None:  # the taps outside the slice's: groups of their own (their weights unused there)
        outside = ~np.isin(np.arange(w.shape[0]), depth_taps).reshape([-1] + [1] * (len(w.shape) - 1))
        labels = np.where(outside, -1 - labels, labels)
    ratio = float(x.encoding.scales[0]) / float(out.encoding.scales[0])
    group, lo, hi = _group_extremes(labels, centred)
    s_g = np.where((lo >= -128) & (hi <= 127), scale, scale * np.maximum(-lo / 128, hi / 127))
    codes = np.clip(np.rint(real.ravel() / s_g[group]), -128, 127)
    s_eff = (ratio * s_g).astype(np.float16).astype(np.float64) / ratio  # the multiplier in binary16
    return (codes * s_eff[group]).reshape(real.shape)


def htp_case(case: Any, layout: str | None = None, depth_taps: tuple[int, ...] | None = None) -> Any:
    """The case with in[1] replaced by the weights the HTP computes with (real values, FLOAT_32); ``layout``: the
    kernel's layout bug, where it changes the weight groups (``_groups``); ``depth_taps``: see ``htp_weights``."""
    from cases.case import Tensor

    w = case.inputs[1]
    real = Tensor(w.name, "FLOAT_32", w.shape, htp_weights(case, layout, depth_taps).astype(np.float32), None,
                  w.static)  # fmt: skip
    return replace(case, inputs=[case.inputs[0], real, *case.inputs[2:]])


def depth_taps_per_slice(case: Any, layout: str | None = None) -> list[tuple[int, ...]]:
    """For each output depth slice of a TransposeConv3d, the filter depth taps that reach it: kd with
    (f - kd x dilation) a multiple of the stride and its quotient an input depth, f the slice's index in the full
    transposed convolution (the slice plus the depth's before-pad; ``layout`` "htp-fixed-transpose-conv3d": plus the
    height's before-pad, as that kernel crops). Interior slices have every tap of their stride phase; the edge ones
    (the first and last, where the filter hangs over the input) fewer; a slice past the full result none."""
    from reference.convolution import _pads, _per_axis
    from reference.expected import arguments

    _, params = arguments(case)
    stride = _per_axis(params["stride"], 3, "stride")[0]
    dilation = _per_axis(params.get("dilation", 1), 3, "dilation")[0]
    pads = _pads(params["pad_amount"], 3)
    front = pads[1][0] if layout == "htp-fixed-transpose-conv3d" else pads[0][0]
    depth, taps = case.inputs[0].shape[1], case.inputs[1].shape[0]
    def reach(f: int) -> tuple[int, ...]:
        return tuple(k for k in range(taps) if (f - k * dilation) % stride == 0
                     and 0 <= (f - k * dilation) // stride < depth)  # fmt: skip

    return [reach(f) for f in range(front, front + case.outputs[0].shape[1])]


def per_depth_taps(case: Any, layout: str | None, compute: Any) -> list[np.ndarray]:
    """``compute`` (a case with real weights -> outputs) on the HTP's 16x8 weights; for TransposeConv3d each output
    depth slice computed with the weights requantized over the filter depth taps that reach it (measured: the last
    slice of 73a765b5fdf6e024, which only the last tap reaches, is computed with that tap's channel groups; every
    other slice with the whole filter's: 1473 of its 1536 last-tap weights read back with one-hot inputs are within
    half a step of that grouping, 1213 of the whole filter's; the same on a case without the layout deviations;
    findings conv-16x8-precision, transposeconv3d-16x8-layout-deviations). Other ops: the whole filter's groups."""
    if case.op != "TransposeConv3d":
        return compute(htp_case(case, layout))
    per_slice = depth_taps_per_slice(case, layout)
    whole = tuple(range(case.inputs[1].shape[0]))
    outs = [np.array(o, dtype=np.float64) for o in compute(htp_case(case, layout))]
    for taps in sorted(set(per_slice) - {whole}):
        if not taps:
            continue  # no tap reaches the slice: its value does not depend on the weights
        slices = [i for i, t in enumerate(per_slice) if t == taps]
        part = compute(htp_case(case, layout, taps))
        outs[0][:, slices] = np.asarray(part[0], dtype=np.float64)[:, slices]
    return outs


@register_model(*OPS, name=NAME)
def htp_16x8_weights_requantized(case: Any) -> list[np.ndarray]:
    """The HTP's 16x8 convolution or product with asymmetric 8-bit weights: each weight group whose codes minus the
    zero point leave [-128, 127] requantized onto the symmetric grid s x max(-min/128, max/127) (a group: an output
    channel, and for a transposed convolution also its group and stride phase), the products accumulated exactly and
    requantized once with a binary16 multiplier. Weights with zero point 128 are another path: not modelled."""
    from reference.expected import expected

    return per_depth_taps(case, None, expected)


@register_model("MatMul", name=NAME + "-as-fully-connected")
def htp_16x8_matmul_as_fully_connected(case: Any) -> list[np.ndarray]:
    """A 16x8 MatMul with its bias handed to the HTP as a FullyConnected (the ONNX Runtime QNN EP composes ONNX MatMul
    + Add so: its graph dump names Transpose, FullyConnected): in[1] requantized per output column as
    htp-16x8-weights-requantized does FullyConnected's rows, the bias kept (QNN MatMul's own kernel drops it:
    matmul-16x8-bias-ignored). Finding ep-matmul-16x8-as-fully-connected."""
    from reference.expected import expected

    return expected(htp_case(case))


@register_model("MatMul", name=NAME + "-as-fully-connected-zero-point-below-128")
def htp_16x8_matmul_as_fully_connected_zero_point_below_128(case: Any) -> list[np.ndarray]:
    """htp-16x8-weights-requantized-as-fully-connected where in[1]'s zero point is below 128 (the second effect of
    the *-zero-point-below-128 findings); other cases: not modelled."""
    _zero_point_below_128(case, f"{NAME}-as-fully-connected-zero-point-below-128")
    return htp_16x8_matmul_as_fully_connected(case)


@register_model(*OPS, name=NAME + "-zero-point-below-128")
def htp_16x8_weights_requantized_zero_point_below_128(case: Any) -> list[np.ndarray]:
    """htp-16x8-weights-requantized where in[1]'s zero point is below 128 (the positive weights reach past 127): the
    outputs of such cases are measured further from the model than the others' (up to 124 steps on Conv2d, 186 on
    TransposeConv2d, against 24 with a zero point above 128): a second effect not found. Other cases: not modelled."""
    _zero_point_below_128(case, f"{NAME}-zero-point-below-128")
    return htp_16x8_weights_requantized(case)


# matmul-16x8-bias-ignored-zero-point-below-128's band (findings/qnn-htp.yaml): how far a 16x8 MatMul whose in[1] has a
# zero point below 128 is from the model, at most (the second effect conv's zero points below 128 show as well).
MATMUL_16X8_BELOW_128_BAND_STEPS = 102
MATMUL_NAME = NAME + "-without-bias"


def _bias_shows(case: Any, band_steps: float) -> None:
    """ValueError unless the bias in[2] moves some output element by more than ``band_steps`` plus the case's budget:
    a smaller one cannot show being dropped (an output that adds it and passes would be within the model's reach)."""
    from cases.quant import real_range
    from reference.expected import expected
    from reference.tolerance import budget_for

    if len(case.inputs) < 3 or case.inputs[2] is None:
        raise ValueError("no bias in[2]")
    out = case.outputs[0]
    scale = float(out.encoding.scales[0])
    budget = budget_for(out.dtype)
    lo, hi = real_range(out.encoding, out.dtype)
    allowed = budget.steps + budget.range_rtol * max(abs(float(np.max(lo))), abs(float(np.max(hi)))) / scale
    without = expected(replace(case, inputs=list(case.inputs[:2])))
    shift = float(np.max(np.abs(expected(case)[0] - without[0]))) / scale
    if shift <= band_steps + allowed:
        raise ValueError(f"the bias moves out[0] by {shift:.0f} steps at most, within the case's reach of the model "
                         f"({band_steps:g} + {allowed:.0f}): it cannot show")


def _matmul_without_bias(case: Any) -> list[np.ndarray]:
    from reference.expected import expected

    htp = htp_case(case)
    return expected(replace(htp, inputs=list(htp.inputs[:2])))


@register_model("MatMul", name=MATMUL_NAME)
def matmul_16x8_weights_requantized_without_bias(case: Any) -> list[np.ndarray]:
    """The HTP's 16x8 MatMul with a bias (matmul-16x8-bias-ignored): in[1] requantized as conv-16x8-precision's weights
    (htp-16x8-weights-requantized), one group per matrix of the batch and output column, the product computed without
    the bias in[2] (matmul-fixed-bias-ignored). Applies where in[1]'s zero point is above 128 (below: the
    -zero-point-below-128 model) and the bias moves some output by more than the case's budget (a smaller one
    cannot show being dropped)."""
    if zero_point(case) <= SYMMETRIC_ZERO_POINT:
        raise ValueError(f"{MATMUL_NAME}: in[1]'s zero point is {zero_point(case)}, not above 128")
    _bias_shows(case, 0)
    return _matmul_without_bias(case)


@register_model("MatMul", name=MATMUL_NAME + "-zero-point-below-128")
def matmul_16x8_weights_requantized_without_bias_below_128(case: Any) -> list[np.ndarray]:
    """htp-16x8-weights-requantized-without-bias where in[1]'s zero point is below 128: measured further from the model
    (up to 102 steps), as conv's zero points below 128 are; applies where the bias moves some output by more than that
    band plus the case's budget."""
    _zero_point_below_128(case, f"{MATMUL_NAME}-zero-point-below-128")
    _bias_shows(case, MATMUL_16X8_BELOW_128_BAND_STEPS)
    return _matmul_without_bias(case)


# How far off a half a requantized weight code (q - z) x 127 / max(q - z) may lie and still round either way: the HTP
# rounds it with a factor 127 / max off by a relative error that changes with the maximum (measured on 16x8 MatMul
# columns of every code at zero point 103, maxima 128-152: each maximum's error lies in [-3.4e-4, +3.6e-4], e.g.
# 149 -> -44 x 127/149 = -37.503 comes out -37, 130 -> 109 x 127/130 = 106.485 comes out 107); 2^-11 holds them all.
NEAR_HALF_REL = 2.0**-11
NEAR_HALF = NAME + "-near-half-codes-either-way"
NEAR_HALF_MAX_PER_GROUP = 10  # near-half codes of one group tried both ways at most (2^10 choices)


def _near_half_flips(case: Any) -> list[tuple[int, tuple[int, ...], float]]:
    """(group, weight index, the real change of going to the other neighbour) for each requantized code within
    NEAR_HALF_REL of a half, in groups whose positive weights pass 127 and set the grid (max / 127 >= -min / 128)."""
    x, w, out = case.inputs[0], case.inputs[1], case.outputs[0]
    htp_weights(case)  # the same conditions: 16x8, per-tensor, not symmetric
    centred = w.data.astype(np.int64) - zero_point(case)
    labels = _groups(case, tuple(w.shape))
    ratio = float(x.encoding.scales[0]) / float(out.encoding.scales[0])
    group, lows, highs = _group_extremes(labels, centred)
    group = group.reshape(centred.shape)
    flips = []
    for g in np.flatnonzero((highs > 127) & (highs / 127 >= -lows / 128)):  # groups whose positive side sets the grid
        hi = int(highs[g])
        s_eff = float(np.float16(ratio * float(w.encoding.scales[0]) * hi / 127)) / ratio
        for index in map(tuple, np.argwhere(group == g)):
            t = centred[index] * 127 / hi
            if abs(abs(t - np.floor(t)) - 0.5) <= abs(t) * NEAR_HALF_REL:
                flips.append((int(g), index, (-1.0 if np.rint(t) > t else 1.0) * s_eff))
    return flips


@register_symptom("Conv2d", "Conv3d", "MatMul", "TransposeConv2d", name=NEAR_HALF)
def htp_16x8_near_half_codes_either_way(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """htp-16x8-weights-requantized where in[1]'s zero point is below 128 and a group's positive weights set its grid
    (findings conv2d-16x8-zero-point-below-128-near-half-codes, conv3d-..., transposeconv2d-...,
    matmul-16x8-bias-ignored-near-half-codes):
    the requantized codes (q - z) x 127 / max come out rounded with a factor off by up to 3.6e-4 (relative), one way
    or the other for each maximum with no rule found, so a code within 2^-11 of a half (relative) goes to one of its
    two neighbours: -37.503 to -37 at maximum 149 (measured on MatMul columns of every code). The symptom: the model
    with each such code at one of its neighbours, the one that fits each group's outputs best (an output depends on
    one group: the choices are independent), within the case's budget everywhere; a case with no such code is the
    plain model's, and a group with more than 10 of them is not tried. MatMul is computed without its bias, as
    matmul-16x8-bias-ignored says."""
    from cases.case import Tensor
    from cases.quant import real_value
    from reference.compare import allowed_difference
    from reference.expected import expected
    from reference.models import real_outputs
    from reference.tolerance import budget_for

    if zero_point(case) >= SYMMETRIC_ZERO_POINT:
        return f"in[1]'s zero point is {zero_point(case)}: not below 128"
    try:
        flips = _near_half_flips(case)
    except ValueError as e:
        return str(e)
    if not flips:
        return "no requantized weight code near a half: the plain model's case"
    model = (_matmul_without_bias(case) if case.op == "MatMul" else expected(htp_case(case)))[0]
    x, w, out = case.inputs[0], case.inputs[1], case.outputs[0]
    rx = Tensor(x.name, "FLOAT_32", x.shape, real_value(x).astype(np.float32), None, x.static)
    deltas = []
    for _, index, change in flips:  # the output's change for each code moved to its other neighbour
        one = np.zeros(w.shape, np.float32)
        one[index] = change
        deltas.append(expected(replace(case, inputs=[rx, Tensor(w.name, "FLOAT_32", w.shape, one, None, w.static)]))[0])
    got = real_outputs(case, stored)[0]
    allowed = allowed_difference(model, out, budget_for(out.dtype)) * float(out.encoding.scales[0])
    fitted = model.copy()
    for g in sorted({f[0] for f in flips}):
        mine = [d for f, d in zip(flips, deltas, strict=True) if f[0] == g]
        if len(mine) > NEAR_HALF_MAX_PER_GROUP:
            return f"group {g} has {len(mine)} near-half codes: more than {NEAR_HALF_MAX_PER_GROUP} to try"
        support = np.any([d != 0 for d in mine], axis=0)
        best = None
        for choice in np.ndindex(*([2] * len(mine))):
            moved = [d[support] for d, c in zip(mine, choice, strict=True) if c]
            y = model[support] + sum(moved, np.zeros(int(support.sum())))
            worst = float(np.max(np.abs(got[support] - y) / np.maximum(allowed[support], 1e-30)))
            if best is None or worst < best[0]:
                best = (worst, y)
        fitted[support] = best[1]
    j = judged([fitted])
    return None if j.passed else f"no neighbour of the near-half codes fits: {j.message}"


@register_combination("TransposeConv1d", "TransposeConv2d", "TransposeConv3d")
def transpose_conv_with_16x8_weights(case: Any, names: list[str]) -> list[np.ndarray]:
    """A transposed convolution's layout bug (the first name: output-padding-cells-unset, output-padding-before,
    htp-fixed-transpose-conv3d) computed with the HTP's 16x8 weights where the case has asymmetric 8-bit weights
    (htp-16x8-weights-requantized among the others); the first model alone elsewhere."""
    first, others = names[0], names[1:]
    if any(n not in (NAME,) for n in others):
        raise ValueError(f"no combination of {first} with {others}")
    try:
        applies_16x8(case)
    except ValueError:  # symmetric weights or another configuration: the layout bug alone
        return _NAMED[case.op][first](case)
    outs = per_depth_taps(case, first, _NAMED[case.op][first])
    if first == "htp-fixed-transpose-conv3d" and _width_dilated(case):
        outs[0] = _past_columns_open(case, np.array(outs[0], dtype=np.float64))
    return outs


def _width_dilated(case: Any) -> bool:
    dilation = np.asarray(case.params["dilation"].value if "dilation" in case.params else 1).reshape(-1)
    return int(dilation[-1]) > 1


def _past_columns_open(case: Any, out: np.ndarray) -> np.ndarray:
    """In 16x8, the columns past the narrower result of a width dilation the kernel ignores hold the bias on some
    shapes, as in the 8-bit cases, and 0 on others; no rule found, so they are left open (NaN). Measured on seed 4's
    a7abcc510b694836 cut down (filter 1 x 3 x 3, dilation [1, 1, 2], zero point 200; input depth x height x width):
    the bias at width 3 and 4 with any depth 1 to 7, at width 8 with depth 1 or 2 and any height 1 to 8; 0 at depth 3
    and more with width 7 to 14, and at depth 2 with width 12 and 14 (widths 2, 5, 6 and 10 fail to finalize with
    QNN_COMMON_ERROR_MEM_ALLOC at some depths). Every other cell of the output is held to the model."""
    from reference.convolution import htp_fixed_transpose_conv3d_written_width

    written = htp_fixed_transpose_conv3d_written_width(case)
    if written < out.shape[3]:
        out[:, :, :, written:] = np.nan
    return out


# --- 16x4: 16-bit activations x 4-bit per-axis weights (finding conv-16x4-precision) ---------------------------------
OPS_16X4 = ("Conv1d", "Conv2d", "DepthWiseConv1d", "DepthWiseConv2d", "FullyConnected")
NAME_16X4 = "htp-16x4-sum-floored-to-256"


def _filter_sums(case: Any, codes: np.ndarray) -> np.ndarray:
    """The sum of each output channel's weight codes (FullyConnected's in[1] is [channel_out, channel_in], a
    convolution's filter has channel_out last)."""
    return codes.sum(axis=1) if case.op == "FullyConnected" else codes.reshape(-1, codes.shape[-1]).sum(axis=0)


def htp_16x4_codes(case: Any, v73: bool = False, as_conv2d: bool = False) -> np.ndarray:
    """out[0]'s codes as the HTP simulator computes a 16-bit activation x 4-bit per-axis weight case (models below:
    ``v73`` the kernel of v73 and later; ``as_conv2d``: a DepthWiseConv2d handed to the HTP as a grouped Conv2d, as
    the ONNX Runtime QNN EP does, whatever its channel multiplier); ValueError where it does not apply."""
    import reference
    from reference.expected import arguments

    x, w, out = case.inputs[0], case.inputs[1], case.outputs[0]
    b = case.inputs[2] if len(case.inputs) > 2 else None
    four_bit = w.dtype == "SFIXED_POINT_4" or (w.dtype == "SFIXED_POINT_8" and w.encoding is not None
                                               and w.encoding.bitwidth == 4)  # fmt: skip
    if not (x.dtype == out.dtype == "UFIXED_POINT_16" and four_bit and w.encoding is not None and x.data is not None
            and w.data is not None):  # fmt: skip
        raise ValueError(f"{NAME_16X4}: UFIXED_POINT_16 activations and output with 4-bit weights only")
    _, params = arguments(case)
    if case.op == "Conv2d" and max(np.ravel(params["dilation"])) > 1 and max(np.ravel(params["stride"])) > 1:
        raise ValueError(f"{NAME_16X4}: a dilated strided Conv2d takes another path (measured exact)")
    if case.op == "DepthWiseConv2d" and w.shape[-1] != x.shape[-1] and not as_conv2d:
        raise ValueError(f"{NAME_16X4}: a channel multiplier above 1 takes another path")
    xs, xoff = float(x.encoding.scales[0]), int(x.encoding.offsets[0])
    os_, ooff = float(out.encoding.scales[0]), int(out.encoding.offsets[0])
    s = np.broadcast_to(np.asarray(w.encoding.scales, dtype=np.float64), (w.shape[0 if case.op == "FullyConnected"
                                                                                   else -1],))  # fmt: skip
    wc = w.data.astype(np.float64)
    exact = reference.run(case.op, [x.data.astype(np.float64) + xoff, wc, None], params)[0]  # sum of (code + offset) w
    wsum = _filter_sums(case, wc)
    raw = np.floor((exact - xoff * wsum) / 256) * 256  # sum of code x w, floored to a multiple of 256
    m = xs * s / os_
    bias = np.zeros_like(m)
    if b is not None and b.data is not None and b.encoding is not None:
        bias = b.data.astype(np.float64) * np.asarray(b.encoding.scales, dtype=np.float64) / (xs * s)
    share = np.ceil(xoff * wsum / 256 - 0.5) * 256  # the offset's share, rounded to a multiple of 256, halves down
    if v73:  # the bias (in whole accumulator units) truncated towards zero to a multiple of 256, out[0]'s offset
        # exact, a float32 multiplier: a bias of -1792 given as -1791.99994 x (in[0].scale x s) is -1792 there
        k = share + np.trunc(np.round(bias) / 256) * 256 - ooff / m
        mq = m.astype(np.float32).astype(np.float64)
    else:  # the bias with out[0]'s offset floored to a multiple of 256, a binary16 multiplier
        k = share + np.floor((bias - ooff / m) / 256) * 256
        mq = m.astype(np.float16).astype(np.float64)
    return np.clip(np.round(mq * (raw + k)), 0, 65535)


@register_model(*OPS_16X4, name=NAME_16X4)
def htp_16x4_sum_floored_to_256(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 16x4 Conv2d, DepthWiseConv2d and FullyConnected (UFIXED_POINT_16 activations, per-axis
    4-bit weights, SFIXED_POINT_8 of bit width 4 or SFIXED_POINT_4 alike; finding conv-16x4-precision): the sum of
    in[0]'s stored codes (0..65535, not minus their offset) times the weight codes over each output element's window
    is floored to a multiple of 256; the offset's share, in[0]'s offset x the sum of the channel's weight codes, is
    rounded to a multiple of 256 (halves down), and the bias with out[0]'s offset (bias - out[0]'s offset / m, in
    accumulator units) floored to one; their sum times m = in[0].scale x the channel's weight scale / out[0].scale
    rounded to binary16, rounded, is the output code. Measured on hand-made FullyConnected cases (every activation
    code; offsets -40000 to -1000, 1 to 256 inputs, weight scales 0.003-0.5, out[0]'s offset -13000 to -62000) to
    within a step, and on the 16x4 typical cases of the saved runs (seeds 0-4; SFIXED_POINT_4 probes of seeds 5-6).
    A dilated strided Conv2d and a DepthWiseConv2d with a channel multiplier above 1 take other paths (measured
    exact, or another bug): the model refuses them (it then covers nothing)."""
    from cases.quant import dequantize

    return [dequantize(htp_16x4_codes(case).reshape(case.outputs[0].shape), case.outputs[0].encoding)]


@register_model("DepthWiseConv2d", name=NAME_16X4 + "-as-grouped-conv2d")
def htp_16x4_sum_floored_as_grouped_conv2d(case: Any) -> list[np.ndarray]:
    """htp-16x4-sum-floored-to-256 for a DepthWiseConv2d that reaches the HTP as a grouped Conv2d (the ONNX Runtime
    QNN EP composes ONNX Conv with group = channels so: its graph dump names Conv2d), a channel multiplier above 1
    included: the Conv2d kernel's arithmetic, not the native DepthWiseConv2d's other path (finding
    ep-conv-16x4-sum-floored)."""
    from cases.quant import dequantize

    return [dequantize(htp_16x4_codes(case, as_conv2d=True).reshape(case.outputs[0].shape), case.outputs[0].encoding)]


NAME_16X4_V73 = "htp-16x4-sum-floored-bias-truncated"


@register_model(*OPS_16X4, name=NAME_16X4_V73)
def htp_16x4_sum_floored_bias_truncated(case: Any) -> list[np.ndarray]:
    """The same ops at HTP v73 and later (finding conv-16x4-precision-v73): the sum of in[0]'s stored codes times the
    weight codes is floored to a multiple of 256 and the offset's share rounded to one, as at v68, but the bias alone
    is truncated towards zero to a multiple of 256, out[0]'s offset is added exactly, and the multiplier is not rounded
    to binary16. Measured at SoC 43, 57, 69 and 87 (v73, v75, v79, v81) on hand-made FullyConnected cases (1 to 200
    inputs per channel, activation offsets -45000 to -500, weight scales 0.003-0.5, bias codes to +-200000): within a
    step, where the v68 model is off by up to 19 steps; at v68 and v69 it is the other way round."""
    from cases.quant import dequantize

    return [dequantize(htp_16x4_codes(case, v73=True).reshape(case.outputs[0].shape), case.outputs[0].encoding)]
