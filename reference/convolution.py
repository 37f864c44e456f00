"""Convolutions: Conv1d/2d/3d, DepthWiseConv1d/2d, TransposeConv1d/2d/3d, Im2Col, Col2Im, Correlation1D.

Every op here is channel-last: activations are ``[batch, spatial..., channel]`` and filters put the
spatial extent first (``[f..., cin/group, cout]`` for convolutions, ``[f..., cin, cout/group]`` for
transposed ones). One n-dimensional routine per direction serves every rank, so the 1-D, 2-D and
3-D ops cannot drift apart. Groups are contiguous channel blocks (group g owns input channels
``[g*cin/G, (g+1)*cin/G)`` and output channels ``[g*cout/G, (g+1)*cout/G)``), as in ONNX and TF.
The readings of unclear spec text are recorded in each op's YAML ``decisions:``.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from reference import register
from reference.models import register_model


def _per_axis(value: Any, n: int, name: str) -> tuple[int, ...]:
    """A stride/dilation/output_padding param as n ints (1-D ops give scalars)."""
    v = np.asarray(value, dtype=np.int64).reshape(-1)
    if v.size == 1 and n > 1:
        v = np.repeat(v, n)
    if v.size != n:
        raise ValueError(f"{name} has {v.size} entries for {n} spatial axes")
    return tuple(int(a) for a in v)


def _pads(value: Any, n: int) -> tuple[tuple[int, int], ...]:
    """pad_amount as n (before, after) pairs; 1-D ops write it flat as [before, after]."""
    p = np.asarray(value, dtype=np.int64).reshape(-1)
    if p.size != 2 * n:
        raise ValueError(f"pad_amount has {p.size} entries for {n} spatial axes")
    return tuple((int(p[2 * i]), int(p[2 * i + 1])) for i in range(n))


def _bias(b: np.ndarray | None, cout: int) -> np.ndarray:
    """The optional bias; absent means zeros (spec default {0,..,0})."""
    if b is None:
        return np.zeros(cout)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    if b.size != cout:
        raise ValueError(f"bias has {b.size} entries, channel_out is {cout}")
    return b


def conv_nd(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    stride: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    dilation: tuple[int, ...],
    group: int,
) -> np.ndarray:
    """Grouped, dilated, strided correlation (what every framework calls convolution) with zero padding.

    Accumulates one filter tap at a time over strided views of the padded input: the sums are exact
    float64 dot products of length prod(filter) * cin/group, no im2col buffer is built."""
    n = x.ndim - 2
    cin, ksize, cin_g, cout = x.shape[-1], w.shape[:n], w.shape[n], w.shape[n + 1]
    if group < 1 or cin % group or cout % group:
        raise ValueError(f"channel_in {cin} and channel_out {cout} must be divisible by group {group}")
    if cin_g != cin // group:
        raise ValueError(f"filter has {cin_g} input channels, expected channel_in / group = {cin // group}")
    if any(s < 1 for s in stride) or any(d < 1 for d in dilation):
        raise ValueError("stride and dilation must be > 0")
    xp = np.pad(x, [(0, 0), *pads, (0, 0)])
    span = [(k - 1) * d + 1 for k, d in zip(ksize, dilation, strict=True)]
    out_sz = [(xp.shape[1 + i] - span[i]) // stride[i] + 1 for i in range(n)]
    if any(o < 1 for o in out_sz):
        raise ValueError(f"dilated filter {span} does not fit the padded input {xp.shape[1:-1]}")
    cout_g = cout // group
    wg = w.reshape(*ksize, cin_g, group, cout_g)
    out = np.zeros((x.shape[0], *out_sz, group, cout_g))
    for tap in itertools.product(*(range(k) for k in ksize)):
        sl = tuple(
            slice(tap[i] * dilation[i], tap[i] * dilation[i] + (out_sz[i] - 1) * stride[i] + 1, stride[i])
            for i in range(n)
        )
        slab = xp[(slice(None), *sl, slice(None))].reshape(x.shape[0], *out_sz, group, cin_g)
        out += np.einsum("...gi,igo->...go", slab, wg[tap])
    return out.reshape(x.shape[0], *out_sz, cout) + _bias(b, cout)


def transpose_conv_nd(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    stride: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    dilation: tuple[int, ...],
    output_padding: tuple[int, ...],
    group: int,
) -> np.ndarray:
    """The adjoint of ``conv_nd``: every input cell scatters its filter-weighted value into the full
    output (size stride*(in-1) + dilated filter), which is then cropped by pad_amount. Output cells
    past the full extent (output_padding larger than the after-pad) receive no contribution, only
    the bias, as in ONNX ConvTranspose."""
    n = x.ndim - 2
    cin, ksize, w_cin, cout_g = x.shape[-1], w.shape[:n], w.shape[n], w.shape[n + 1]
    if group < 1 or cin % group:
        raise ValueError(f"channel_in {cin} must be divisible by group {group}")
    if w_cin != cin:
        raise ValueError(f"filter has {w_cin} input channels, channel_in is {cin}")
    if any(s < 1 for s in stride) or any(d < 1 for d in dilation):
        raise ValueError("stride and dilation must be > 0")
    if any(op >= s for op, s in zip(output_padding, stride, strict=True)):
        raise ValueError("output_padding must be < stride")
    cin_g, cout = cin // group, cout_g * group
    span = [(k - 1) * d + 1 for k, d in zip(ksize, dilation, strict=True)]
    full_sz = [stride[i] * (x.shape[1 + i] - 1) + span[i] for i in range(n)]
    out_sz = [full_sz[i] - pads[i][0] - pads[i][1] + output_padding[i] for i in range(n)]
    if any(o < 1 for o in out_sz):
        raise ValueError(f"pad_amount removes the whole output ({out_sz})")
    # Room past the full extent for output_padding cells beyond the after-pad.
    alloc = [max(full_sz[i], pads[i][0] + out_sz[i]) for i in range(n)]
    full = np.zeros((x.shape[0], *alloc, group, cout_g))
    xg = x.reshape(*x.shape[:-1], group, cin_g)
    wg = w.reshape(*ksize, group, cin_g, cout_g)
    for tap in itertools.product(*(range(k) for k in ksize)):
        sl = tuple(
            slice(tap[i] * dilation[i], tap[i] * dilation[i] + (x.shape[1 + i] - 1) * stride[i] + 1, stride[i])
            for i in range(n)
        )
        full[(slice(None), *sl)] += np.einsum("...gi,gio->...go", xg, wg[tap])
    crop = tuple(slice(pads[i][0], pads[i][0] + out_sz[i]) for i in range(n))
    out = full[(slice(None), *crop)].reshape(x.shape[0], *out_sz, cout)
    return out + _bias(b, cout)


def _f64(a: np.ndarray | None) -> np.ndarray | None:
    return None if a is None else np.asarray(a, dtype=np.float64)


def _conv_operands(inputs: list[np.ndarray | None], params: dict[str, Any]) -> tuple:
    """x, filters, bias (or None), and the per-axis stride, pads and dilation every convolution reads."""
    x, w = _f64(inputs[0]), _f64(inputs[1])
    b = _f64(inputs[2]) if len(inputs) > 2 else None
    n = x.ndim - 2
    return (x, w, b, _per_axis(params["stride"], n, "stride"), _pads(params["pad_amount"], n),
            _per_axis(params.get("dilation", 1), n, "dilation"))  # fmt: skip


@register("Conv1d", "Conv2d", "Conv3d", verified_by="onnxruntime")
def conv(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    return [conv_nd(*_conv_operands(inputs, params), int(params.get("group", 1)))]


@register("DepthWiseConv1d", "DepthWiseConv2d", verified_by="onnxruntime")
def depthwise_conv(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """A grouped convolution with group = channel_in (the spec's own equivalence): output channel o
    reads input channel o // (channel_out / channel_in)."""
    operands = _conv_operands(inputs, params)
    x, w = operands[0], operands[1]
    cin, cout = x.shape[-1], w.shape[-1]
    if w.shape[-2] != 1 or cout % cin:
        raise ValueError(f"depthwise filter {w.shape}: needs [..., 1, k * channel_in] with channel_in {cin}")
    return [conv_nd(*operands, cin)]


@register_model("DepthWiseConv2d", name="channels-past-channel-in-zero")
def depthwise_channels_past_channel_in_zero(case: Any) -> list[np.ndarray]:
    """The HTP simulator's DepthWiseConv2d with a depth multiplier above 1 and a dilation above 1 (or an unequal
    stride) (finding depthwiseconv2d-multiplier-dilation-wrong): only the first channel_in output channels are
    computed (with their bias); the others come out 0 in FLOAT_16, the grid's lowest code in fixed point (not its zero
    point: code 0 in UFIXED, -128 in SFIXED_POINT_8, seed 0's edge cases at offsets 34 and 50), and other values in
    FLOAT_32 (left open: NaN, any value)."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    from cases.quant import code_range, dequantize

    y = depthwise_conv(inputs, params, None, None, op=case.op)[0]
    cin = np.shape(inputs[0])[-1]
    out = case.outputs[0]
    enc = out.encoding
    lowest = dequantize(np.array(code_range(out.dtype, enc.bitwidth)[0]), enc) if enc is not None else 0.0
    y[..., cin:] = np.nan if out.dtype == "FLOAT_32" else lowest
    return [y]


@register_model("DepthWiseConv2d", name="dilation-phases-channel-in-apart")
def depthwise_dilation_phases_channel_in_apart(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_32 DepthWiseConv2d with a depth multiplier and a dilation above 1 (finding
    depthwiseconv2d-f32-dilation-phases-overlap). It dilates by phases, as space-to-batch does: output rows h % dh
    and columns w % dw are each an undilated convolution over the matching input cells, computed on an output
    rounded up to whole phases (hf x wf pixels, the padded rows and columns computed too). Each pixel's channel_out
    results are placed as if out[0] had channel_in channels: pixel (h, w) at channel_in x (h x wf + w) elements into
    its batch's place, the phases in order (rows h % dh, then columns w % dw), each phase's pixels in order; a later
    write overwrites what it meets. Every pixel is read back from its place, channel_out values. With a multiplier
    of 2 and dilation [1, 2] the odd output columns come back right, and even column 2w' holds channels
    [channel_in, channel_out) of column 2w'-1 followed by channels [0, channel_in) of column 2w'+1; with dilation
    [2, 2] the first row of the next phase row (h + 1) overwrites the last channel_in values of row h.

    Batches are processed one after another. Where a batch's places meet its neighbour's (its last channel_in
    output values, and, past the first batch, its first channel_in), the value depends on the order of the writes;
    those are left open (NaN).

    Measured on one-hot filter taps over a ramp ([1, 1, 8, 2], multiplier 2, dilation [1, 2]), and on every typical
    FLOAT_32 failure with a multiplier and a dilation saved from seeds 0-4 (9 cases: dilation [1, 2] and [2, 2],
    multipliers 2 and 3, batch 1 and 2, odd and even widths, padded or not): every element that is not left open
    matches. Until issue 43 each phase was placed channel_in after the previous one and each pixel 2 x channel_in
    after the previous one within it: the same places with dilation [1, 2], not with [2, 2] (seed 3's 5e1b6082832bed71
    and 9cad1504b1795a7e, 20 and 24 elements off that, 0 off this)."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x = np.asarray(inputs[0])
    n, cin = x.shape[0], x.shape[-1]
    _, ho, wo, cout = case.outputs[0].shape
    dh, dw = (int(v) for v in np.asarray(params.get("dilation", [1, 1])).reshape(-1)[:2])
    sh, sw = (int(v) for v in np.asarray(params.get("stride", [1, 1])).reshape(-1)[:2])
    hf, wf = dh * -(-ho // dh), dw * -(-wo // dw)  # whole phases
    pads = np.array(params.get("pad_amount", [[0, 0], [0, 0]]), dtype=np.int64).reshape(2, 2)
    pads[0, 1] += (hf - ho) * sh
    pads[1, 1] += (wf - wo) * sw
    full = depthwise_conv(inputs, {**params, "pad_amount": pads}, None, None, op=case.op)[0][:, :hf, :wf, :]
    out = np.full((n, ho, wo, cout), np.nan)
    for b in range(n):
        scratch = np.full(hf * wf * cin + cout, np.nan)
        for qh in range(dh):
            for qw in range(dw):  # in order: a later pixel, and a later phase, overwrite what they meet
                for h in range(qh, hf, dh):
                    for w in range(qw, wf, dw):
                        at = cin * (h * wf + w)
                        scratch[at:at + cout] = full[b, h, w]
        for h in range(ho):
            for w in range(wo):
                at = cin * (h * wf + w)
                out[b, h, w] = scratch[at:at + cout]
    flat = out.reshape(n, -1)
    flat[:, -cin:] = np.nan  # where the next batch's places begin
    flat[1:, :cin] = np.nan  # where the previous batch's places end
    return [flat.reshape(out.shape)]


# The output rows of the EP's FLOAT_32 convolutions (Dequantize -> FLOAT_32 conv -> Quantize on the HTP) whose padded
# cells or virtual inputs hold in[0]'s lowest value: rows 0-7; past them the reference's (TransposeConv2d: outputs 15
# rows high; DepthWiseConv2d: a [2, 14, 3, 256] input padded to 16 output rows, s20)
EP_BORDER_ROWS = 8


@register_model("Conv1d", "Conv2d", "DepthWiseConv1d", "DepthWiseConv2d", name="pad-cells-as-input-lowest-code")
def conv_pad_cells_as_input_lowest_code(case: Any) -> list[np.ndarray]:
    """The ONNX Runtime QNN EP's 8-bit convolution with an 8-bit DequantizeLinear bias (finding
    ep-conv-8bit-qdq-bias-wrong), which it hands to the HTP as Dequantize -> FLOAT_32 Conv2d -> Quantize: the padded
    cells hold the lowest value of in[0]'s grid (its code 0 unsigned, -128 signed: scale * (lowest code + offset))
    instead of 0; the input's own cells, the filters and the bias are the reference's."""
    from cases.quant import real_range
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, w, b, stride, pads, dilation = _conv_operands(inputs, params)
    fill = float(np.min(real_range(case.inputs[0].encoding, case.inputs[0].dtype)[0]))
    xp = np.full((x.shape[0], *(s + a + z for s, (a, z) in zip(x.shape[1:-1], pads, strict=True)), x.shape[-1]), fill)
    xp[(slice(None), *(slice(a, a + s) for s, (a, _) in zip(x.shape[1:-1], pads, strict=True)))] = x
    group = x.shape[-1] if case.op.startswith("DepthWise") else int(params.get("group", 1))
    y = conv_nd(xp, w, b, stride, tuple((0, 0) for _ in pads), dilation, group)
    if y.ndim == 4 and y.shape[1] > EP_BORDER_ROWS:  # past the first 8 output rows the padded cells hold 0 again
        y[:, EP_BORDER_ROWS:] = conv_nd(x, w, b, stride, pads, dilation, group)[:, EP_BORDER_ROWS:]
    return [y]


@register_model("TransposeConv1d", "TransposeConv2d", name="virtual-inputs-as-input-lowest-first-8-rows")
def ep_transpose_conv_virtual_inputs_as_input_lowest(case: Any) -> list[np.ndarray]:
    """The ONNX Runtime QNN EP's 8-bit TransposeConv1d/2d (finding ep-transposeconv-8bit-border-pads-lowest), which it
    hands to the HTP as Dequantize -> FLOAT_32 TransposeConv2d -> Quantize (1-D as a 2-D of height 1): every filter tap
    that reaches past in[0] (an input index below 0 or past the end, on the stride's grid) reads the lowest value of
    in[0]'s grid (scale * (lowest code + offset)) instead of nothing, in the first 8 output rows of each stride phase;
    past them the reference's. Computed as the reference on in[0] extended on each side by cells holding that value
    (pad_amount grown by as many strides). The cells output_padding adds are left open, as the HTP's TransposeConv2d
    leaves them (output-padding-cells-unset); a grouped case with output_padding is another pattern (its output
    shifted: ep-transposeconv1d-grouped-output-padding-shifted), which the model refuses."""
    from cases.quant import real_range
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, w, b, stride, pads, dilation = _conv_operands(inputs, params)
    n = x.ndim - 2
    output_padding = _per_axis(params.get("output_padding", 0), n, "output_padding")
    if any(output_padding) and int(params.get("group", 1)) > 1:
        raise ValueError("grouped with output_padding: not this pattern")
    low = float(np.min(real_range(case.inputs[0].encoding, case.inputs[0].dtype)[0]))
    extra = [w.shape[i] // stride[i] + 1 for i in range(n)]  # input cells past each end a tap can reach
    wide = np.pad(x, [(0, 0), *((e, e) for e in extra), (0, 0)], constant_values=low)
    grown = tuple((a + e * s, z + e * s) for (a, z), e, s in zip(pads, extra, stride, strict=True))
    y = transpose_conv_nd(wide, w, b, stride, grown, dilation, output_padding, int(params.get("group", 1)))
    if case.op == "TransposeConv2d":  # output rows past the first 8 of their stride phase: the reference's
        later = np.arange(y.shape[1]) // stride[0] >= EP_BORDER_ROWS
        y[:, later] = transpose_conv(inputs, params, None, None, op=case.op)[0][:, later]
    if any(output_padding):
        y[np.isnan(transpose_conv2d_output_padding_cells_unset(case)[0])] = np.nan
    return [y]


@register_model("TransposeConv1d", "TransposeConv2d", name="output-padding-before-virtual-inputs-as-input-lowest")
def ep_transpose_conv_shifted_virtual_inputs_lowest(case: Any) -> list[np.ndarray]:
    """The ONNX Runtime QNN EP's 8-bit grouped TransposeConv1d/2d with output_padding (finding
    ep-transposeconv-8bit-grouped-output-padding-shifted): both of its TransposeConv2d's bugs at once, the output
    window shifted by output_padding (output-padding-before: out[i] = full[i + pad_before - output_padding]) over
    in[0] extended by cells holding the lowest value of its grid (virtual-inputs-as-input-lowest-first-8-rows), so
    the cells the shifted window takes past the end of the full transposed convolution hold the taps that reach
    those cells. Rows past the first 8 of a stride phase (TransposeConv2d): output-padding-before's."""
    from cases.quant import real_range
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, w, b, stride, pads, dilation = _conv_operands(inputs, params)
    n = x.ndim - 2
    output_padding = _per_axis(params.get("output_padding", 0), n, "output_padding")
    group = int(params.get("group", 1))
    if group < 2 or not any(output_padding):
        raise ValueError("grouped with output_padding only")
    low = float(np.min(real_range(case.inputs[0].encoding, case.inputs[0].dtype)[0]))
    extra = [w.shape[i] // stride[i] + 1 for i in range(n)]  # input cells past each end a tap can reach
    wide = np.pad(x, [(0, 0), *((e, e) for e in extra), (0, 0)], constant_values=low)
    full = transpose_conv_nd(wide, w, None, stride, tuple((0, 0) for _ in range(n)), dilation, (0,) * n, group)
    size = [stride[i] * (x.shape[1 + i] - 1) + (w.shape[i] - 1) * dilation[i] + 1 - pads[i][0] - pads[i][1]
            + output_padding[i] for i in range(n)]  # fmt: skip
    start = [extra[i] * stride[i] + pads[i][0] - output_padding[i] for i in range(n)]
    y = full[(slice(None), *(slice(a, a + s) for a, s in zip(start, size, strict=True)))] + _bias(b, full.shape[-1])
    if case.op == "TransposeConv2d":
        later = np.arange(y.shape[1]) // stride[0] >= EP_BORDER_ROWS
        y[:, later] = transpose_conv2d_output_padding_before(case)[0][:, later]
    return [y]


@register("TransposeConv1d", "TransposeConv2d", "TransposeConv3d", verified_by="onnxruntime")
def transpose_conv(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """TransposeConv1d and TransposeConv2d have no dilation parameter: dilation 1."""
    operands = _conv_operands(inputs, params)
    n = operands[0].ndim - 2
    output_padding = _per_axis(params.get("output_padding", 0), n, "output_padding")
    return [transpose_conv_nd(*operands, output_padding, int(params.get("group", 1)))]


@register_model("TransposeConv1d", "TransposeConv2d", name="output-padding-cells-unset")
def transpose_conv2d_output_padding_cells_unset(case: Any) -> list[np.ndarray]:
    """The HTP simulator's TransposeConv2d with output_padding (finding transposeconv2d-output-padding-cells): the
    cells output_padding adds past the full transposed convolution, which only the bias reaches, are not written with
    it (0, or whatever the buffer held: left open, NaN); every other cell is the reference's. TransposeConv1d is the
    same bug where the ONNX route reshapes it to TransposeConv2d (ort-qnn's ep-transposeconv1d-output-padding-cells)."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    y = transpose_conv(inputs, params, None, None, op=case.op)[0]
    x, w, _, stride, pads, dilation = _conv_operands(inputs, params)
    for i in range(x.ndim - 2):
        full = stride[i] * (x.shape[1 + i] - 1) + (w.shape[i] - 1) * dilation[i] + 1
        past = max(0, full - pads[i][0])  # output index where the cells past the full extent begin
        index = [slice(None)] * y.ndim
        index[1 + i] = slice(past, None)
        y[tuple(index)] = np.nan
    return [y]



@register_model("TransposeConv3d", name="width-stride-read-as-1")
def transpose_conv3d_width_stride_read_as_1(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point TransposeConv3d with a width stride above 1 and a filter 1 wide (the first
    reading of finding transposeconv3d-fixed-stride-gaps, which now uses htp-fixed-transpose-conv3d, its general
    form: the width takes the height's stride, here 1): the samples of a row land on consecutive output columns, as
    with stride 1, and the columns past them hold only the bias ([x0, x1, x2] at stride 2 -> [x0, x1, x2, b, b] for
    [x0, b, x1, b, x2])."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, w, b, stride, pads, dilation = _conv_operands(inputs, params)
    n = x.ndim - 2
    output_padding = _per_axis(params.get("output_padding", 0), n, "output_padding")
    packed = transpose_conv_nd(x, w, b, (*stride[:-1], 1), pads, dilation, (*output_padding[:-1], 0),
                               int(params.get("group", 1)))  # fmt: skip
    shape = case.outputs[0].shape
    out = np.broadcast_to(_bias(b, shape[-1]), shape).copy()
    region = tuple(slice(0, min(a, c)) for a, c in zip(packed.shape, shape, strict=True))
    out[region] = packed[region]
    return [out]


def _patch_grid(
    hw: tuple[int, int], params: dict[str, Any]
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[tuple[int, int], ...], tuple[int, int]]:
    """Kernel, stride, dilation, pads and the number of patch positions per axis for Im2Col/Col2Im.

    The spec's count formula has 2 * padding[i]; with a (before, after) pair per axis the padded
    extent is before + hw + after."""
    k = _per_axis(params["kernel_size"], 2, "kernel_size")
    s = _per_axis(params["stride"], 2, "stride")
    d = _per_axis(params.get("dilation", [1, 1]), 2, "dilation")
    pads = _pads(params["pad_amount"], 2)
    if min(k) < 1 or min(s) < 1 or min(d) < 1:
        raise ValueError("kernel_size, stride and dilation must be > 0")
    counts = tuple((hw[i] + pads[i][0] + pads[i][1] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))
    if min(counts) < 1:
        raise ValueError(f"the dilated kernel does not fit the padded image ({counts} positions)")
    return k, s, d, pads, counts  # type: ignore[return-value]


@register("Im2Col", verified_by="hand")
def im2col(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """Row index c * kh * kw + i * kw + j (channel outermost, as the shape's 'channel * height_kernel
    * width_kernel' and the cited torch Unfold); column index oh * OW + ow (row-major positions)."""
    x = _f64(inputs[0])
    nb, h, w, c = x.shape
    k, s, d, pads, (oh, ow) = _patch_grid((h, w), params)
    xp = np.pad(x, [(0, 0), *pads, (0, 0)])
    out = np.empty((nb, c, k[0], k[1], oh, ow))
    for i, j in itertools.product(range(k[0]), range(k[1])):
        y0, x0 = i * d[0], j * d[1]
        slab = xp[:, y0 : y0 + (oh - 1) * s[0] + 1 : s[0], x0 : x0 + (ow - 1) * s[1] + 1 : s[1], :]
        out[:, :, i, j] = np.moveaxis(slab, -1, 1)
    return [out.reshape(nb, c * k[0] * k[1], oh * ow)]


@register("Col2Im", verified_by="onnxruntime")
def col2im(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """Im2Col's adjoint: the image size comes from the declared output tensor (the spec gives no
    parameter for it); overlapping contributions are summed and those landing in the padding dropped."""
    cols = _f64(inputs[0])
    if not out_shapes or out_shapes[0] is None:
        # Not a ValueError: the case is valid, only the interface call lacks the declared output tensor
        # (shape inference by the generator then falls back to the spec's dims).
        raise LookupError("Col2Im's image size comes from the declared output shape (out_shapes)")
    if len(out_shapes[0]) != 4:
        raise ValueError(f"declared output shape {out_shapes[0]} is not [batch, height, width, channel]")
    nb, h, w, c = (int(v) for v in out_shapes[0])
    k, s, d, pads, (oh, ow) = _patch_grid((h, w), params)
    if cols.shape != (nb, c * k[0] * k[1], oh * ow):
        raise ValueError(f"in[0] shape {cols.shape} != [batch, channel*kh*kw, L] = {(nb, c * k[0] * k[1], oh * ow)}")
    blocks = cols.reshape(nb, c, k[0], k[1], oh, ow)
    img = np.zeros((nb, h + pads[0][0] + pads[0][1], w + pads[1][0] + pads[1][1], c))
    for i, j in itertools.product(range(k[0]), range(k[1])):
        y0, x0 = i * d[0], j * d[1]
        img[:, y0 : y0 + (oh - 1) * s[0] + 1 : s[0], x0 : x0 + (ow - 1) * s[1] + 1 : s[1], :] += np.moveaxis(
            blocks[:, :, i, j], 1, -1
        )
    return [img[:, pads[0][0] : pads[0][0] + h, pads[1][0] : pads[1][0] + w, :]]


@register("Correlation1D", verified_by="numpy")
def correlation_1d(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    """out[n,h,w,d] = mean over input channels of in0[n,h,w,:] * in1[n,h,w',:] with
    w' = w + d - (displacement - shift), zero where w' leaves the row; d runs over the
    2 * displacement + 1 output channels and the mean divides by the input depth."""
    a, b = _f64(inputs[0]), _f64(inputs[1])
    if a.shape != b.shape or a.ndim != 4:
        raise ValueError(f"in[0] {a.shape} and in[1] {b.shape} must be the same [batch, height, width, depth]")
    disp, shift = int(params["displacement"]), int(params["shift"])
    nb, h, w, depth = a.shape
    out = np.zeros((nb, h, w, 2 * disp + 1))
    for d in range(2 * disp + 1):
        off = d - (disp - shift)
        lo, hi = max(0, -off), min(w, w - off)
        if lo < hi:
            out[:, :, lo:hi, d] = np.sum(a[:, :, lo:hi, :] * b[:, :, lo + off : hi + off, :], axis=-1) / depth
    return [out]


@register_model("DepthWiseConv2d", name="channels-past-channel-in-zero-batch-0")
def depthwise_channels_past_channel_in_zero_batch_0(case: Any) -> list[np.ndarray]:
    """``channels-past-channel-in-zero`` in batch 0 only, the other batches right: the HTP simulator's fixed-point
    DepthWiseConv2d with a depth multiplier above 1, a dilation above 1 and more than one batch (finding
    depthwiseconv2d-fixed-multiplier-dilation-batch-0)."""
    from reference.expected import arguments

    y = depthwise_channels_past_channel_in_zero(case)[0]
    inputs, params = arguments(case)
    y[1:] = depthwise_conv(inputs, params, None, None, op=case.op)[0][1:]
    return [y]


@register_model("DepthWiseConv2d", name="channels-read-as-multiplier-1")
def depthwise_channels_read_as_multiplier_1(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 DepthWiseConv2d with a depth multiplier above 1 and a dilation above 1, in the
    shapes of finding depthwiseconv2d-f16-multiplier-dilation-as-multiplier-1: the first channel_in output channels are
    computed as a depth multiplier of 1 (output channel o reads input channel o through filter channel o, where the spec
    has input channel o // multiplier) plus their bias; the other output channels hold only their bias."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, w, b, stride, pads, dilation = _conv_operands(inputs, params)
    cin, cout = x.shape[-1], w.shape[-1]
    first = conv_nd(x, w[..., :cin], None, stride, pads, dilation, cin)
    y = np.zeros((*first.shape[:-1], cout))
    y[..., :cin] = first
    return [y + _bias(b, cout)]


@register_model("DepthWiseConv2d", name="first-channels-as-multiplier-1")
def depthwise_first_channels_as_multiplier_1(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 DepthWiseConv2d with a depth multiplier above 1 and a dilation above 1 at the
    typical tier's sizes (finding depthwiseconv2d-f16-multiplier-dilation-first-channels): the first channel_in output
    channels are ``channels-read-as-multiplier-1``'s (output channel o from input channel o through filter channel o,
    plus its bias); the other output channels hold values of other pixels and channels that follow no rule found, so
    they are left open (NaN, any value)."""
    y = depthwise_channels_read_as_multiplier_1(case)[0]
    cin = int(np.shape(case.inputs[0].data)[-1])
    y[..., cin:] = np.nan
    return [y]


@register_model("TransposeConv1d", "TransposeConv2d", name="output-padding-before")
def transpose_conv2d_output_padding_before(case: Any) -> list[np.ndarray]:
    """The HTP simulator's grouped TransposeConv2d (group > 1) with output_padding (finding
    transposeconv2d-grouped-output-padding-shifted): the output window starts output_padding cells early, at
    pad_before - output_padding of the full transposed convolution instead of pad_before, as if the added cells were
    put before the output rather than after it; every cell is shifted by output_padding along that axis. A cell the
    window then takes from before the full extent (pad_before < output_padding) is left open (NaN, any value).
    TransposeConv1d is the same bug where the ONNX route reshapes it to TransposeConv2d (ort-qnn's
    ep-transposeconv1d-grouped-output-padding-shifted)."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, w, b, stride, pads, dilation = _conv_operands(inputs, params)
    n = x.ndim - 2
    output_padding = _per_axis(params.get("output_padding", 0), n, "output_padding")
    group = int(params.get("group", 1))
    full = transpose_conv_nd(x, w, None, stride, tuple((0, 0) for _ in range(n)), dilation, (0,) * n, group)
    out_sz = [full.shape[1 + i] - pads[i][0] - pads[i][1] + output_padding[i] for i in range(n)]
    y = np.full((x.shape[0], *out_sz, full.shape[-1]), np.nan)
    dst, src = [], []
    for i in range(n):
        start = pads[i][0] - output_padding[i]  # the full cell the first output cell reads
        lo, hi = max(0, -start), min(out_sz[i], full.shape[1 + i] - start)
        dst.append(slice(lo, hi))
        src.append(slice(start + lo, start + hi))
    y[(slice(None), *dst)] = full[(slice(None), *src)]
    return [y + _bias(b, full.shape[-1])]


@register_model("TransposeConv3d", name="htp-fixed-transpose-conv3d")
def transpose_conv3d_htp_fixed(case: Any) -> list[np.ndarray]:
    """The HTP's fixed-point TransposeConv3d as measured on qnn-htp (findings transposeconv3d-fixed-stride-gaps,
    -depth-crop-from-height-pad, -group-ignored, -dilation-ignored): the full transposed convolution is built with
    the width axis taking the HEIGHT's stride and with no height or width dilation; along the width it is then cut
    to the declared size from the middle (offset: the width before-pad plus half, rounded down, of what that full
    result has more than the right one; a narrower one starts at 0 and the columns past it hold only the bias); the
    depth axis is cropped at the front by the HEIGHT before-pad instead of its own, and depth slices past the full
    result hold 0; with group > 1 the filter is applied as one ungrouped filter over every input channel into the
    first channel_out / group output channels, the other channels holding only their bias; the cells output_padding
    adds at the end of an axis are left open (NaN: bias or 0 in the 8-bit cases, other values in 16x8 ones, as
    TransposeConv2d's output-padding-cells-unset). ([x0, x1, x2] in one row, a filter [1, 1] wide, stride [1, 2, 1]:
    the row is scattered at stride 2 into 6 columns and columns 1 to 4 come out, [x0, x1, x1, x2] where
    [x0, x0 + x1, x1 + x2, x2] belongs.)"""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, w, b, stride, pads, dilation = _conv_operands(inputs, params)
    n = x.ndim - 2
    if n != 3:
        raise ValueError("TransposeConv3d only")
    cout_g, group = w.shape[-1], int(params.get("group", 1))
    bias = _bias(b, cout_g * group)
    full = transpose_conv_nd(x, w, bias[:cout_g], (stride[0], stride[1], stride[1]), ((0, 0),) * n,
                             (dilation[0], 1, 1), (0, 0, 0), 1)  # fmt: skip
    shape = case.outputs[0].shape
    out = np.broadcast_to(bias, shape).copy()
    src = _htp_fixed_transpose_conv3d_source(x.shape, w.shape, full.shape, shape, stride, pads, dilation)
    out[(slice(None), *(slice(0, sl.stop - sl.start) for sl in src), slice(0, cout_g))] = full[(slice(None), *src)]
    out[:, src[0].stop - src[0].start :] = 0.0
    output_padding = _per_axis(params.get("output_padding", 0), n, "output_padding")
    for i, extra in enumerate(output_padding):  # the cells output_padding adds: not written, left open
        if extra:
            out[(slice(None),) * (1 + i) + (slice(shape[1 + i] - extra, None),)] = np.nan
    return [out]


def _htp_fixed_transpose_conv3d_source(x_shape: tuple[int, ...], w_shape: tuple[int, ...], full_shape: tuple[int, ...],
                                        out_shape: list[int], stride: Any, pads: Any,
                                        dilation: Any) -> tuple[slice, ...]:  # fmt: skip
    """Which cells of htp-fixed-transpose-conv3d's full result land in the output (depth, height, width): from the
    depth and height before-pad, and along the width from the middle of a full result wider than the right one."""
    front = (pads[1][0], pads[1][0], _width_front(x_shape, w_shape, full_shape[3], stride, pads, dilation))
    return tuple(slice(f, max(f, min(f + s, t))) for f, s, t in zip(front, out_shape[1:-1], full_shape[1:-1],
                                                                     strict=True))  # fmt: skip


def _width_front(x_shape: tuple[int, ...], w_shape: tuple[int, ...], full_width: int, stride: Any, pads: Any,
                 dilation: Any) -> int:  # fmt: skip
    """The first column of htp-fixed-transpose-conv3d's full result (``full_width`` wide) that lands in the output."""
    right_width = stride[2] * (x_shape[3] - 1) + (w_shape[2] - 1) * dilation[2] + 1
    return pads[2][0] + max(0, full_width - right_width) // 2


def htp_fixed_transpose_conv3d_written_width(case: Any) -> int:
    """How many output columns htp-fixed-transpose-conv3d fills from its result; the columns after hold the bias."""
    from reference.expected import arguments

    inputs, params = arguments(case)
    x, w, _b, stride, pads, dilation = _conv_operands(inputs, params)
    full_width = stride[1] * (x.shape[3] - 1) + w.shape[2]  # the width with the height's stride and no dilation
    front = _width_front(x.shape, w.shape, full_width, stride, pads, dilation)
    return max(0, min(case.outputs[0].shape[3], full_width - front))


@register_model("Conv2d", name="weights-16bit-low-byte-signed")
def weights_16bit_low_byte_signed(case: Any) -> list[np.ndarray]:
    """The HTP's 16a16w convolution (16-bit activations, SFIXED_POINT_16 weights; finding
    conv2d-16a16w-weight-low-byte-signed): each 16-bit weight code is taken as its high byte times 256 plus its low
    byte read as a signed 8-bit number, so a code whose low byte is 128 or more counts 256 less than it is (0x0180,
    384, counts 128; 0x0080, 128, counts -128; 0xffff, -1, counts -257) where a split that signs the low byte must
    carry one into the high byte. The reference computed with those weight codes."""
    import reference
    from cases.quant import dequantize
    from reference.expected import arguments, out_dtype

    inputs, params = arguments(case)
    w = case.inputs[1]
    codes = w.data.astype(np.int64)  # the codes it reads can pass int16's range (0x8080 counts -32896)
    inputs[1] = dequantize(codes - 256 * ((codes & 0xFF) >= 128), w.encoding)
    return reference.run(case.op, inputs, params, [t.shape for t in case.outputs],
                         [out_dtype(t.dtype) for t in case.outputs])
