"""The convolution references (reference/convolution.py) against onnxruntime CPU and the spec text.

QNN is channel-last with filters [f..., cin/group, cout] (transposed: [f..., cin, cout/group]);
ONNX is channel-first with W [cout, cin/group, f...] (ConvTranspose: [cin, cout/group, f...]).
The translation happens here only. Configurations are drawn at random from a seeded generator so
each parametrized case is a different (stride, pad, dilation, group, bias) mix.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference
from cases import quant
from tests.onnx_oracle import nchw, nhwc, ort_node

RNG_SEED = 20240612
N_RANDOM = 12


def filt_to_onnx(w: np.ndarray) -> np.ndarray:
    """[f..., a, b] -> [b, a, f...] for Conv; ConvTranspose wants [a, b, f...] (see filt_t_to_onnx)."""
    n = w.ndim - 2
    return np.transpose(w, (n + 1, n, *range(n)))


def filt_t_to_onnx(w: np.ndarray) -> np.ndarray:
    n = w.ndim - 2
    return np.transpose(w, (n, n + 1, *range(n)))


def onnx_pads(pads: np.ndarray) -> list[int]:
    p = np.asarray(pads).reshape(-1, 2)
    return [int(v) for v in p[:, 0]] + [int(v) for v in p[:, 1]]


def f64s(*arrays: np.ndarray | None) -> list[np.ndarray | None]:
    return [None if a is None else a.astype(np.float64) for a in arrays]


def on_grid(a: np.ndarray, dtype: str, per_last_axis: bool = False) -> np.ndarray:
    """``a`` quantized with cases.quant (per tensor, or per channel of the last axis as QNN filters
    may be) and dequantized back: the real values a quantized case hands both implementations."""
    if per_last_axis:
        qmax = 127.0 if dtype == "SFIXED_POINT_8" else 32767.0
        scales = tuple(float(v) for v in np.max(np.abs(a.reshape(-1, a.shape[-1])), axis=0) / qmax + 1e-6)
        enc = quant.Encoding(scales, (0,) * a.shape[-1], axis=a.ndim - 1)
    else:
        enc = quant.encoding_for_range(float(a.min()), float(a.max()), dtype)
    return quant.dequantize(quant.quantize(a, enc, dtype), enc).astype(np.float32)


def quantized_case(i: int) -> bool:
    """Every fourth random case runs on quantized reals (UFIXED_POINT_8 data, per-axis SFIXED_POINT_8 filters)."""
    return i % 4 == 3


def u32(v) -> np.ndarray:
    return np.array(v, np.uint32)


def conv_config(rng: np.random.Generator, n: int, depthwise: bool = False, transposed: bool = False,
                dilated: bool = True) -> dict:  # fmt: skip
    """One random configuration of an n-d (transposed / depthwise) convolution that fits its input."""
    while True:
        group = 1 if depthwise else int(rng.choice([1, 2, 3]))
        cin = int(rng.integers(1, 4)) * (1 if depthwise else group)
        cout = cin * int(rng.integers(1, 3)) if depthwise else int(rng.integers(1, 4)) * group
        spatial = tuple(int(v) for v in rng.integers(2 if transposed else 3, 7, size=n))
        k = tuple(int(v) for v in rng.integers(1, 4, size=n))
        s = tuple(int(v) for v in rng.integers(1, 3, size=n))
        d = tuple(int(v) for v in rng.integers(1, 3, size=n)) if dilated else (1,) * n
        pads = rng.integers(0, 3, size=(n, 2))
        span = [(k[i] - 1) * d[i] + 1 for i in range(n)]
        if transposed:
            opad = tuple(int(rng.integers(0, s[i])) for i in range(n))
            full = [s[i] * (spatial[i] - 1) + span[i] for i in range(n)]
            if any(full[i] - pads[i].sum() + opad[i] < 1 for i in range(n)):
                continue
        else:
            opad = (0,) * n
            if any(spatial[i] + pads[i].sum() < span[i] for i in range(n)):
                continue
        return dict(group=group, cin=cin, cout=cout, spatial=spatial, k=k, s=s, d=d, pads=pads, opad=opad,
                    bias=bool(rng.integers(0, 2)), batch=int(rng.integers(1, 3)))  # fmt: skip


def qnn_params(cfg: dict, n: int, with_dilation: bool = True, with_group: bool = True) -> dict:
    one = n == 1
    p = {
        "stride": u32(cfg["s"][0] if one else cfg["s"]),
        "pad_amount": u32(cfg["pads"].reshape(-1) if one else cfg["pads"]),
    }
    if with_dilation:
        p["dilation"] = u32(cfg["d"][0] if one else cfg["d"])
    if with_group:
        p["group"] = cfg["group"]
    return p


CONV_CASES = [(op, n, i) for op, n in (("Conv1d", 1), ("Conv2d", 2), ("Conv3d", 3)) for i in range(N_RANDOM)]


@pytest.mark.parametrize("op,n,i", CONV_CASES)
def test_conv_matches_onnxruntime_conv(op: str, n: int, i: int) -> None:
    rng = np.random.default_rng([RNG_SEED, n, i])
    c = conv_config(rng, n)
    x = rng.uniform(-2, 2, (c["batch"], *c["spatial"], c["cin"])).astype(np.float32)
    w = rng.uniform(-1, 1, (*c["k"], c["cin"] // c["group"], c["cout"])).astype(np.float32)
    if quantized_case(i):
        x, w = on_grid(x, "UFIXED_POINT_8"), on_grid(w, "SFIXED_POINT_8", per_last_axis=True)
    b = rng.uniform(-1, 1, c["cout"]).astype(np.float32) if c["bias"] else None
    (got,) = reference.run(op, f64s(x, w, b),
                           qnn_params(c, n))  # fmt: skip
    (want,) = ort_node("Conv", [nchw(x).copy(), filt_to_onnx(w).copy(), b], group=c["group"],
                       strides=list(c["s"]), dilations=list(c["d"]), pads=onnx_pads(c["pads"]))  # fmt: skip
    np.testing.assert_allclose(got, nhwc(want), rtol=1e-4, atol=1e-4, err_msg=f"{op} {c}")


@pytest.mark.parametrize("op,n,i", [(op, n, i) for op, n in (("DepthWiseConv1d", 1), ("DepthWiseConv2d", 2))
                                    for i in range(N_RANDOM)])  # fmt: skip
def test_depthwise_conv_matches_onnxruntime_conv_with_group_channel_in(op: str, n: int, i: int) -> None:
    rng = np.random.default_rng([RNG_SEED, 10 + n, i])
    c = conv_config(rng, n, depthwise=True)
    x = rng.uniform(-2, 2, (c["batch"], *c["spatial"], c["cin"])).astype(np.float32)
    w = rng.uniform(-1, 1, (*c["k"], 1, c["cout"])).astype(np.float32)
    if quantized_case(i):
        x, w = on_grid(x, "UFIXED_POINT_8"), on_grid(w, "SFIXED_POINT_8", per_last_axis=True)
    b = rng.uniform(-1, 1, c["cout"]).astype(np.float32) if c["bias"] else None
    (got,) = reference.run(op, f64s(x, w, b),
                           qnn_params(c, n, with_group=False))  # fmt: skip
    (want,) = ort_node("Conv", [nchw(x).copy(), filt_to_onnx(w).copy(), b], group=c["cin"],
                       strides=list(c["s"]), dilations=list(c["d"]), pads=onnx_pads(c["pads"]))  # fmt: skip
    np.testing.assert_allclose(got, nhwc(want), rtol=1e-4, atol=1e-4, err_msg=f"{op} {c}")


TRANSPOSE_CASES = [(op, n, i) for op, n in (("TransposeConv1d", 1), ("TransposeConv2d", 2), ("TransposeConv3d", 3))
                   for i in range(N_RANDOM)]  # fmt: skip


@pytest.mark.parametrize("op,n,i", TRANSPOSE_CASES)
def test_transpose_conv_matches_onnxruntime_conv_transpose(op: str, n: int, i: int) -> None:
    """Includes groups, output_padding beyond the after-pad (bias-only cells) and, for 3-D, dilation."""
    rng = np.random.default_rng([RNG_SEED, 20 + n, i])
    c = conv_config(rng, n, transposed=True, dilated=n == 3)  # TransposeConv1d/2d have no dilation
    x = rng.uniform(-2, 2, (c["batch"], *c["spatial"], c["cin"])).astype(np.float32)
    w = rng.uniform(-1, 1, (*c["k"], c["cin"], c["cout"] // c["group"])).astype(np.float32)
    if quantized_case(i):
        x, w = on_grid(x, "UFIXED_POINT_8"), on_grid(w, "SFIXED_POINT_8", per_last_axis=True)
    b = rng.uniform(-1, 1, c["cout"]).astype(np.float32) if c["bias"] else None
    params = qnn_params(c, n, with_dilation=n == 3)
    params["output_padding"] = u32(c["opad"][0] if n == 1 else c["opad"])
    (got,) = reference.run(op, f64s(x, w, b),
                           params)  # fmt: skip
    (want,) = ort_node("ConvTranspose", [nchw(x).copy(), filt_t_to_onnx(w).copy(), b], group=c["group"],
                       strides=list(c["s"]), dilations=list(c["d"]), pads=onnx_pads(c["pads"]),
                       output_padding=list(c["opad"]))  # fmt: skip
    np.testing.assert_allclose(got, nhwc(want), rtol=1e-4, atol=1e-4, err_msg=f"{op} {c}")


def test_conv2d_quantized_per_axis_filter_matches_onnxruntime() -> None:
    """UFIXED_POINT_8 activations, SFIXED_POINT_8 filters quantized per output channel (axis 3):
    both sides see the same dequantized reals, so they agree to float32 rounding."""
    rng = np.random.default_rng(RNG_SEED + 1)
    x = rng.uniform(-1, 3, (1, 5, 6, 4))
    w = rng.uniform(-1, 1, (3, 3, 2, 4)) * np.array([0.1, 0.5, 1.0, 2.0])
    enc_x = quant.encoding_for_range(-1.0, 3.0, "UFIXED_POINT_8")
    x_real = quant.dequantize(quant.quantize(x, enc_x, "UFIXED_POINT_8"), enc_x)
    scales = tuple(float(s) for s in np.max(np.abs(w), axis=(0, 1, 2)) / 127.0)
    enc_w = quant.Encoding(scales, (0,) * 4, axis=3)
    w_real = quant.dequantize(quant.quantize(w, enc_w, "SFIXED_POINT_8"), enc_w)
    assert not np.allclose(w_real, w), "the filter quantization must actually change the values"
    params = {"stride": u32([1, 2]), "pad_amount": u32([[1, 0], [1, 1]]), "group": 2, "dilation": u32([1, 1])}
    (got,) = reference.run("Conv2d", [x_real, w_real], params)
    (want,) = ort_node("Conv", [nchw(x_real).astype(np.float32), filt_to_onnx(w_real).astype(np.float32)],
                       group=2, strides=[1, 2], pads=[1, 1, 0, 1])  # fmt: skip
    np.testing.assert_allclose(got, nhwc(want), rtol=1e-5, atol=1e-5, err_msg="quantized Conv2d")


def test_conv1d_hand_case_stride_dilation_padding() -> None:
    """width_out = floor((1 + 5 + 0 - 3) / 2 + 1) = 2 (seed 1651); taps 0 and 2 with zero padding."""
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0]).reshape(1, 5, 1)
    w = np.array([1.0, 10.0]).reshape(2, 1, 1)
    (got,) = reference.run("Conv1d", [x, w, np.array([0.5])],
                           {"stride": u32(2), "pad_amount": u32([1, 0]), "dilation": u32(2)})  # fmt: skip
    # windows over the padded row [0,1,2,3,4,5] start at 0 and 2: 0 + 10*2, 2 + 10*4
    np.testing.assert_array_equal(got.ravel(), [20.5, 42.5], err_msg="Conv1d hand case")


def test_conv_without_bias_is_conv_with_zero_bias() -> None:
    rng = np.random.default_rng(RNG_SEED + 2)
    x, w = rng.normal(size=(1, 4, 4, 2)), rng.normal(size=(2, 2, 2, 3))
    p = {"stride": u32([1, 1]), "pad_amount": u32([[0, 0], [0, 0]])}
    a = reference.run("Conv2d", [x, w], p)[0]
    b = reference.run("Conv2d", [x, w, np.zeros(3)], p)[0]
    np.testing.assert_array_equal(a, b, err_msg="absent bias must act as zeros")


def test_transpose_conv2d_output_padding_cells_past_the_full_output_hold_the_bias() -> None:
    """x = [1, 2], filter [1, 1], stride 2, bias 0.5: the full output is [1, 1, 2, 2]; output_padding 1
    adds a fifth column that no input reaches, so it is the bias alone (ONNX ConvTranspose). The HTP
    simulator writes 0 there (FLOAT_32) or an unset code (UFIXED_POINT_8)."""
    x = np.array([1.0, 2.0]).reshape(1, 1, 2, 1)
    w = np.ones((1, 2, 1, 1))
    p = {"stride": u32([1, 2]), "pad_amount": u32([[0, 0], [0, 0]]), "output_padding": u32([0, 1])}
    (got,) = reference.run("TransposeConv2d", [x, w, np.array([0.5])], p)
    np.testing.assert_array_equal(got.ravel(), [1.5, 1.5, 2.5, 2.5, 0.5], err_msg="output_padding column")


def test_transpose_conv2d_output_padding_restores_cropped_after_pad_cells() -> None:
    """pad_amount after = 1 with output_padding 1: the cropped last column comes back computed, not zero
    ('does not actually add zero-padding to output', seed 13019)."""
    x = np.array([1.0, 2.0]).reshape(1, 1, 2, 1)
    w = np.ones((1, 2, 1, 1))
    p = {"stride": u32([1, 2]), "pad_amount": u32([[0, 0], [0, 1]]), "output_padding": u32([0, 1])}
    (got,) = reference.run("TransposeConv2d", [x, w], p)
    np.testing.assert_array_equal(got.ravel(), [1.0, 1.0, 2.0, 2.0], err_msg="cropped column restored")


def test_transpose_conv2d_ignores_a_dilation_param() -> None:
    """TransposeConv2d defines no dilation (seed 12935-13050): its output size has the undilated filter."""
    x = np.ones((1, 2, 2, 1))
    w = np.ones((2, 2, 1, 1))
    p = {"stride": u32([1, 1]), "pad_amount": u32([[0, 0], [0, 0]])}
    (got,) = reference.run("TransposeConv2d", [x, w], p)
    assert got.shape == (1, 3, 3, 1), got.shape
    np.testing.assert_array_equal(got[0, :, :, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]], err_msg="2x2 ones deconv")


def test_grouped_transpose_conv_keeps_groups_apart() -> None:
    """group 2, channel_in 2, channel_out 2: input channel 0 feeds only output channel 0."""
    x = np.zeros((1, 1, 1, 2))
    x[..., 0] = 1.0
    w = np.full((1, 1, 2, 1), 3.0)
    (got,) = reference.run("TransposeConv2d", [x, w], {"stride": u32([1, 1]), "pad_amount": u32([[0, 0], [0, 0]]),
                                                       "group": 2})  # fmt: skip
    np.testing.assert_array_equal(got.ravel(), [3.0, 0.0], err_msg="group leak")


# ---- Im2Col / Col2Im ----------------------------------------------------------------------------


def test_im2col_hand_case_channel_outermost_rows() -> None:
    """x[0, 0, w, c] = 10c + w, kernel [1, 2]: row c*kh*kw + i*kw + j, column = window position."""
    x = np.array([[10.0 * c + w for c in range(2)] for w in range(3)]).reshape(1, 1, 3, 2)
    (got,) = reference.run("Im2Col", [x], {"kernel_size": u32([1, 2]), "stride": u32([1, 1]),
                                           "pad_amount": u32([[0, 0], [0, 0]])})  # fmt: skip
    np.testing.assert_array_equal(got[0], [[0, 1], [1, 2], [10, 11], [11, 12]], err_msg="Im2Col row order")


def test_im2col_hand_case_padding_dilation() -> None:
    """3x3 image 1..9, kernel 2x2, dilation 2, stride 1, pad before 1: a 4x4 padded image, 2x2 windows.
    Window (r, c) reads padded cells (r + 2i, c + 2j); padded (p, q) holds x[p-1, q-1], zero on the pad."""
    x = np.arange(1.0, 10.0).reshape(1, 3, 3, 1)
    p = {"kernel_size": u32([2, 2]), "stride": u32([1, 1]), "pad_amount": u32([[1, 0], [1, 0]]),
         "dilation": u32([2, 2])}  # fmt: skip
    (got,) = reference.run("Im2Col", [x], p)
    want = [[0, 0, 0, 1], [0, 0, 2, 3], [0, 4, 0, 7], [5, 6, 8, 9]]  # rows (i, j), columns (r, c), row-major
    np.testing.assert_array_equal(got[0], want, err_msg="Im2Col with padding and dilation")


IM2COL_CASES = [((1, 4, 5, 2), [2, 2], [1, 1], [[0, 0], [0, 0]], [1, 1]),
                ((2, 5, 6, 3), [3, 2], [2, 1], [[1, 1], [0, 1]], [1, 2]),
                ((1, 6, 6, 1), [2, 3], [1, 2], [[1, 0], [1, 1]], [2, 1]),
                ((1, 3, 4, 2), [1, 1], [2, 2], [[0, 0], [0, 0]], [1, 1])]  # fmt: skip


@pytest.mark.parametrize("shape,k,s,pads,d", IM2COL_CASES)
def test_im2col_times_filter_matches_onnxruntime_conv(shape, k, s, pads, d) -> None:
    """ONNX Conv's W [cout, cin, kh, kw] flattened row-major is the filter matrix for channel-outermost
    Im2Col rows: W.reshape(cout, -1) @ Im2Col(x) must equal Conv(x) with positions in row-major order."""
    rng = np.random.default_rng(RNG_SEED + 3)
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    wt = rng.uniform(-1, 1, (3, shape[-1], *k)).astype(np.float32)
    p = {"kernel_size": u32(k), "stride": u32(s), "pad_amount": u32(pads), "dilation": u32(d)}
    (cols,) = reference.run("Im2Col", [x.astype(np.float64)], p)
    (want,) = ort_node("Conv", [nchw(x).copy(), wt], strides=s, dilations=d, pads=onnx_pads(np.array(pads)))
    got = np.einsum("ok,bkl->bol", wt.reshape(3, -1).astype(np.float64), cols).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"Im2Col {shape} k={k} s={s} p={pads} d={d}")


@pytest.mark.parametrize("quantized", [False, True])
@pytest.mark.parametrize("shape,k,s,pads,d", IM2COL_CASES)
def test_col2im_matches_onnxruntime_col2im(shape, k, s, pads, d, quantized: bool) -> None:
    rng = np.random.default_rng(RNG_SEED + 4)
    nb, h, w, c = shape
    p = {"kernel_size": u32(k), "stride": u32(s), "pad_amount": u32(pads), "dilation": u32(d)}
    L = int(np.prod([(hw + sum(pp) - dd * (kk - 1) - 1) // ss + 1
                     for hw, pp, dd, kk, ss in zip((h, w), pads, d, k, s, strict=True)]))  # fmt: skip
    cols = rng.uniform(-2, 2, (nb, c * k[0] * k[1], L)).astype(np.float32)
    if quantized:
        cols = on_grid(cols, "UFIXED_POINT_8")
    (got,) = reference.run("Col2Im", [cols.astype(np.float64)], p, out_shapes=[shape])
    (want,) = ort_node("Col2Im", [cols, np.array([h, w], np.int64), np.array(k, np.int64)], opset=18,
                       strides=s, dilations=d, pads=onnx_pads(np.array(pads)))  # fmt: skip
    np.testing.assert_allclose(got, nhwc(want), rtol=1e-5, atol=1e-5, err_msg=f"Col2Im {shape} k={k}")


def test_col2im_is_the_adjoint_of_im2col() -> None:
    """<Im2Col(x), y> == <x, Col2Im(y)>: the two ops use the same flatten order."""
    rng = np.random.default_rng(RNG_SEED + 5)
    shape, p = (2, 5, 4, 3), {"kernel_size": u32([2, 3]), "stride": u32([1, 2]), "pad_amount": u32([[1, 0], [1, 1]]),
                              "dilation": u32([2, 1])}  # fmt: skip
    x = rng.normal(size=shape)
    (cols,) = reference.run("Im2Col", [x], p)
    y = rng.normal(size=cols.shape)
    (back,) = reference.run("Col2Im", [y], p, out_shapes=[shape])
    assert np.isclose(np.sum(cols * y), np.sum(x * back), rtol=1e-12), "Col2Im is not Im2Col's adjoint"


def test_col2im_sums_overlapping_values() -> None:
    """'The overlapping values in the resulting image are summed' (seed 1087): kernel 1x2, stride 1."""
    cols = np.array([[1.0, 10.0], [100.0, 1000.0]]).reshape(1, 2, 2)
    p = {"kernel_size": u32([1, 2]), "stride": u32([1, 1]), "pad_amount": u32([[0, 0], [0, 0]])}
    (got,) = reference.run("Col2Im", [cols], p, out_shapes=[(1, 1, 3, 1)])
    np.testing.assert_array_equal(got.ravel(), [1.0, 110.0, 1000.0], err_msg="overlap sum")


# ---- Correlation1D ------------------------------------------------------------------------------


def correlation_by_formula(a: np.ndarray, b: np.ndarray, disp: int, shift: int) -> np.ndarray:
    """The spec's formula (seed 2021-2035) one element at a time."""
    nb, h, w, depth = a.shape
    out = np.zeros((nb, h, w, 2 * disp + 1))
    for n, y, x, d in np.ndindex(*out.shape):
        xs = x + d - (disp - shift)
        if 0 <= xs < w:
            out[n, y, x, d] = np.dot(a[n, y, x], b[n, y, xs]) / depth
    return out


@pytest.mark.parametrize("i", range(8))
def test_correlation1d_matches_the_formula_elementwise(i: int) -> None:
    rng = np.random.default_rng([RNG_SEED, 40, i])
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(2, 7)), int(rng.integers(1, 5)))
    disp, shift = int(rng.integers(0, 4)), int(rng.integers(-2, 3))
    a, b = rng.normal(size=shape), rng.normal(size=shape)
    if quantized_case(i):
        a, b = (on_grid(v, "SFIXED_POINT_8").astype(np.float64) for v in (a, b))
    (got,) = reference.run("Correlation1D", [a, b], {"displacement": disp, "shift": shift})
    np.testing.assert_allclose(got, correlation_by_formula(a, b, disp, shift), rtol=1e-12, atol=1e-12,
                               err_msg=f"shape {shape} displacement {disp} shift {shift}")  # fmt: skip


def test_correlation1d_hand_case() -> None:
    """width 2, depth 2, displacement 1: output channel d compares column w with w + d - 1."""
    a = np.array([[1.0, 2.0], [3.0, 4.0]]).reshape(1, 1, 2, 2)
    b = np.array([[1.0, 10.0], [100.0, 1000.0]]).reshape(1, 1, 2, 2)
    (got,) = reference.run("Correlation1D", [a, b], {"displacement": 1, "shift": 0})
    want = [[0.0, (1 + 20) / 2, (100 + 2000) / 2], [(3 + 40) / 2, (300 + 4000) / 2, 0.0]]
    np.testing.assert_array_equal(got[0, 0], want, err_msg="Correlation1D")


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_depthwise_model_zeroes_the_channels_past_channel_in() -> None:
    """A [1, 4, 1, 2] input, a 1 x 1 filter with multiplier 2 (weights 1, 2, 3, 4), stride [2, 1]: output channels 0 and
    1 are right, 2 and 3 are 0 (FLOAT_16); FLOAT_32 leaves them open."""
    from tests.reference_helpers import case, modelled

    x = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float16).reshape(1, 4, 1, 2)
    w = np.array([1, 2, 3, 4], np.float16).reshape(1, 1, 1, 4)
    params = {"stride": [2, 1], "pad_amount": [[0, 0], [0, 0]], "dilation": [1, 1]}
    c = case("DepthWiseConv2d", [x, w, np.zeros(4, np.float16)], params, [("FLOAT_16", (1, 2, 1, 4))])
    np.testing.assert_array_equal(modelled(c, "channels-past-channel-in-zero")[0].reshape(2, 4),
                                  [[1, 2, 0, 0], [5, 10, 0, 0]])  # fmt: skip
    c32 = case("DepthWiseConv2d", [x.astype(np.float32), w.astype(np.float32), np.zeros(4, np.float32)], params,
               [("FLOAT_32", (1, 2, 1, 4))])  # fmt: skip
    assert np.isnan(modelled(c32, "channels-past-channel-in-zero")[0][..., 2:]).all()


def test_depthwise_model_gives_the_channels_past_channel_in_the_lowest_code() -> None:
    """SFIXED_POINT_8 out[0] at offset 50 (real 0 is code -50): channels 2 and 3 come out as code -128, the grid's
    lowest, as seed 0's edge cases do; UFIXED_POINT_8 keeps code 0."""
    from tests.reference_helpers import case, modelled

    params = {"stride": [2, 1], "pad_amount": [[0, 0], [0, 0]], "dilation": [1, 1]}
    enc = ([0.5], [0])
    x = ("SFIXED_POINT_8", np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.int8).reshape(1, 4, 1, 2), enc)
    w = ("SFIXED_POINT_8", np.array([2, 2, 2, 2], np.int8).reshape(1, 1, 1, 4), enc)
    c = case("DepthWiseConv2d", [x, w], params, [("SFIXED_POINT_8", (1, 2, 1, 4), ([0.25], [50]))])
    got = modelled(c, "channels-past-channel-in-zero")[0]
    np.testing.assert_allclose(got[..., 2:], (-128 + 50) * 0.25)
    u = ("UFIXED_POINT_8", np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.uint8).reshape(1, 4, 1, 2), enc)
    wu = ("UFIXED_POINT_8", np.array([2, 2, 2, 2], np.uint8).reshape(1, 1, 1, 4), enc)
    cu = case("DepthWiseConv2d", [u, wu], params, [("UFIXED_POINT_8", (1, 2, 1, 4), ([0.25], [-20]))])
    np.testing.assert_allclose(modelled(cu, "channels-past-channel-in-zero")[0][..., 2:], -20 * 0.25)


def test_transpose_conv2d_model_leaves_the_output_padding_cells_open() -> None:
    """A [1, 1, 2, 1] input, a 2 x 2 filter, stride 2, output_padding [1, 1], bias -0.75: the full output is 2 x 4, so
    row 2 and column 4 are the cells output_padding adds; the rest is the reference's."""
    from tests.reference_helpers import case, modelled

    x, w, b = np.array([1.0, -1.0]).reshape(1, 1, 2, 1), np.ones((2, 2, 1, 1)), np.array([-0.75])
    params = {"stride": [2, 2], "pad_amount": [[0, 0], [0, 0]], "output_padding": [1, 1]}
    c = case("TransposeConv2d", [x, w, b], params, [("FLOAT_32", (1, 3, 5, 1))])
    got = modelled(c, "output-padding-cells-unset")[0][0, ..., 0]
    assert np.isnan(got[2]).all() and np.isnan(got[:, 4]).all()
    np.testing.assert_array_equal(got[:2, :4], [[0.25, 0.25, -1.75, -1.75], [0.25, 0.25, -1.75, -1.75]])


def test_transpose_conv3d_model_packs_a_strided_width_at_stride_one() -> None:
    """Three samples 1, 2, 3 along the width, a 1-wide filter of 1, stride 2, bias 0.5: [1.5, 2.5, 3.5, 0.5, 0.5] for
    [1.5, 0.5, 2.5, 0.5, 3.5]."""
    from tests.reference_helpers import case, modelled

    x, w, b = np.array([1.0, 2.0, 3.0]).reshape(1, 1, 1, 3, 1), np.ones((1, 1, 1, 1, 1)), np.array([0.5])
    params = {"stride": [1, 1, 2], "pad_amount": [[0, 0], [0, 0], [0, 0]]}
    c = case("TransposeConv3d", [x, w, b], params, [("FLOAT_32", (1, 1, 1, 5, 1))])
    np.testing.assert_array_equal(modelled(c, "width-stride-read-as-1")[0].ravel(), [1.5, 2.5, 3.5, 0.5, 0.5])


def test_transpose_conv1d_model_leaves_the_output_padding_cell_open() -> None:
    """[1, -1], a 2-wide filter of ones, stride 2, output_padding 1, bias -0.75: the full output is 4 wide, so cell 4 is
    the one output_padding adds (open); cells 0-3 are 0.25, 0.25, -1.75, -1.75."""
    from tests.reference_helpers import case, modelled

    x, w, b = np.array([1.0, -1.0]).reshape(1, 2, 1), np.ones((2, 1, 1)), np.array([-0.75])
    c = case("TransposeConv1d", [x, w, b], {"stride": 2, "pad_amount": [0, 0], "output_padding": 1},
             [("FLOAT_32", (1, 5, 1))])  # fmt: skip
    got = modelled(c, "output-padding-cells-unset")[0].ravel()
    np.testing.assert_allclose(got[:4], [0.25, 0.25, -1.75, -1.75])
    assert np.isnan(got[4])


@pytest.mark.parametrize("dtype, shift", [("UFIXED_POINT_8", 0), ("SFIXED_POINT_8", -128)])
def test_conv1d_model_pads_with_the_input_grids_lowest_value(dtype: str, shift: int) -> None:
    """x = [1, 2] on a grid of step 0.5 whose lowest code (0 unsigned, -128 signed) is -1, a 3-wide filter of ones,
    pad [1, 1]: the padded input is [-1, 1, 2, -1], so [2, 2] where the reference's zero padding gives [3, 3]."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x = (dtype, np.array([4, 6]).reshape(1, 2, 1) + shift, ([0.5], [-2 - shift]))
    w = (dtype, np.array([3, 3, 3]).reshape(3, 1, 1) + shift, ([1.0], [-2 - shift]))
    b = (dtype, np.array([0]) + shift, ([1.0], [-shift]))
    c = case("Conv1d", [x, w, b], {"stride": 1, "pad_amount": [1, 1]}, [(dtype, (1, 2, 1), ([0.1], [-shift]))])
    np.testing.assert_allclose(expected(c)[0].ravel(), [3.0, 3.0])
    np.testing.assert_array_equal(modelled(c, "pad-cells-as-input-lowest-code")[0].ravel(), [2.0, 2.0])


def test_ep_conv2d_model_pads_with_the_lowest_value_only_in_the_first_8_output_rows() -> None:
    """A [1, 12, 1, 1] column of 2s on a grid whose lowest value is -1, a 3-high filter of ones, pads [1, 1]: the
    reference gives 4 at both ends and 6 between; the EP's conv reads its top pad as -1 (row 0: 3) but its bottom pad,
    past the first 8 output rows, as 0 (row 11: 4), as the HTP gave a [2, 14, 3, 256] DepthWiseConv2d case (s20)."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    dtype = "UFIXED_POINT_8"
    x = (dtype, np.full((1, 12, 1, 1), 6), ([0.5], [-2]))
    w = (dtype, np.full((3, 1, 1, 1), 3), ([1.0], [-2]))
    b = (dtype, np.array([0]), ([1.0], [0]))
    c = case("Conv2d", [x, w, b], {"stride": [1, 1], "pad_amount": [[1, 1], [0, 0]]},
             [(dtype, (1, 12, 1, 1), ([0.1], [0]))])  # fmt: skip
    np.testing.assert_allclose(expected(c)[0].ravel()[[0, 5, 11]], [4.0, 6.0, 4.0])
    got = modelled(c, "pad-cells-as-input-lowest-code")[0].ravel()
    np.testing.assert_array_equal(got[[0, 5, 11]], [3.0, 6.0, 4.0])


def test_ep_transpose_conv1d_model_pads_the_flipped_filters_borders_with_the_input_grids_lowest_value() -> None:
    """x = [1, 2] on a grid of step 0.5 whose lowest value is -1, a 2-wide filter of ones, stride 1, no pad: the
    transposed convolution is the filter over [pad, 1, 2, pad], [1, 3, 2] with zeros, [0, 3, 1] with -1 in the pads;
    with stride 2 and output_padding 1 the cell output_padding adds is open; grouped with output_padding is another
    pattern, which the model refuses."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([4, 6]).reshape(1, 2, 1), ([0.5], [-2]))
    w = ("UFIXED_POINT_8", np.array([3, 3]).reshape(2, 1, 1), ([1.0], [-2]))
    b = ("UFIXED_POINT_8", np.array([0]), ([1.0], [0]))
    c = case("TransposeConv1d", [x, w, b], {"stride": 1, "pad_amount": [0, 0]}, [("UFIXED_POINT_8", (1, 3, 1),
             ([0.1], [0]))])  # fmt: skip
    np.testing.assert_allclose(expected(c)[0].ravel(), [1.0, 3.0, 2.0])
    name = "virtual-inputs-as-input-lowest-first-8-rows"
    np.testing.assert_allclose(modelled(c, name)[0].ravel(), [0.0, 3.0, 1.0])
    c = case("TransposeConv1d", [x, w, b], {"stride": 2, "pad_amount": [0, 0], "output_padding": 1},
             [("UFIXED_POINT_8", (1, 5, 1), ([0.1], [0]))])  # fmt: skip
    got = modelled(c, name)[0].ravel()
    np.testing.assert_allclose(got[:4], [1.0, 1.0, 2.0, 2.0])
    assert np.isnan(got[4])
    x2 = ("UFIXED_POINT_8", np.array([4, 6, 4, 6]).reshape(1, 2, 2), ([0.5], [-2]))
    w2 = ("UFIXED_POINT_8", np.array([3, 3, 3, 3]).reshape(2, 2, 1), ([1.0], [-2]))
    b2 = ("UFIXED_POINT_8", np.array([0, 0]), ([1.0], [0]))
    c = case("TransposeConv1d", [x2, w2, b2], {"stride": 2, "pad_amount": [0, 0], "output_padding": 1, "group": 2},
             [("UFIXED_POINT_8", (1, 5, 2), ([0.1], [0]))])  # fmt: skip
    with pytest.raises(ValueError, match="grouped"):
        modelled(c, name)


def test_ep_transpose_conv1d_model_reads_only_the_virtual_inputs_on_the_strides_grid() -> None:
    """Stride 2, x = [1, 2] (lowest value -1), a 2-wide filter of ones, no pad: each output reads one input (taps 0, 1
    at 2i and 2i + 1), so no tap reaches past in[0] and the outputs are the reference's [1, 1, 2, 2]; with pad_amount
    [1, 1] the output [1, 2, 2] is still the reference's: the pads crop, no virtual input is read."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([4, 6]).reshape(1, 2, 1), ([0.5], [-2]))
    w = ("UFIXED_POINT_8", np.array([3, 3]).reshape(2, 1, 1), ([1.0], [-2]))
    b = ("UFIXED_POINT_8", np.array([0]), ([1.0], [0]))
    name = "virtual-inputs-as-input-lowest-first-8-rows"
    for pads, width, want in (([0, 0], 4, [1, 1, 2, 2]), ([1, 1], 2, [1, 2])):
        c = case("TransposeConv1d", [x, w, b], {"stride": 2, "pad_amount": pads},
                 [("UFIXED_POINT_8", (1, width, 1), ([0.1], [0]))])  # fmt: skip
        np.testing.assert_allclose(expected(c)[0].ravel(), want)
        np.testing.assert_allclose(modelled(c, name)[0].ravel(), want)


# ep-transposeconv-8bit-border-pads-lowest's case through the ONNX Runtime QNN EP (onnxruntime-qnn 2.7.0), out[0]
EP_TRANSPOSE_CODES = np.array([255, 255, 255, 255, 255, 255, 255, 255, 230, 244, 228, 159, 255, 144, 255, 216, 140, 233,
                               35, 79, 0, 101, 247, 184, 221, 255, 140, 214, 153, 244, 255, 240], np.uint8)  # fmt: skip


def test_ep_transpose_conv_border_model_reproduces_its_findings_case_and_refuses_others() -> None:
    """Within the finding's band (3 steps) of the EP's codes; the spec's answer and the codes with one element moved
    4 steps are not."""
    from pathlib import Path

    from cases.case import Case
    from cases.quant import quantize
    from reference import models
    from reference.expected import expected

    c = Case.load(Path(__file__).resolve().parents[1] / "findings/cases/TransposeConv2d/"
                  "ep-transposeconv-8bit-border-pads-lowest.json")  # fmt: skip
    model, band = {"diagnosis": "virtual-inputs-as-input-lowest-first-8-rows"}, 3
    codes = EP_TRANSPOSE_CODES.reshape(c.outputs[0].shape)
    assert models.check(c, [codes], model)["max_steps"] <= band
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert models.check(c, [spec], model)["max_steps"] > band
    planted = codes.copy()
    planted.flat[8] -= 4
    assert models.check(c, [planted], model)["max_steps"] > band


def test_htp_transpose_conv3d_model_gives_the_width_the_heights_stride_and_cuts_the_middle() -> None:
    """Samples 1, 2, 4 along the width, a filter [1, 1] wide, stride [1, 2, 1]: at the height's stride 2 the row
    scatters to [1, 1, 2, 2, 4, 4], 6 wide where 4 are declared, and columns 1 to 4 come out: [1, 2, 2, 4] where
    [1, 3, 6, 4] belongs; with stride [1, 1, 2] the row packs at stride 1 ([1, 3, 6, 4]) and the 6-wide output's
    last two columns hold only the bias (0)."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x, w, b = np.array([1.0, 2.0, 4.0]).reshape(1, 1, 1, 3, 1), np.ones((1, 1, 2, 1, 1)), np.array([0.0])
    c = case("TransposeConv3d", [x, w, b], {"stride": [1, 2, 1], "pad_amount": [[0, 0]] * 3},
             [("FLOAT_32", (1, 1, 1, 4, 1))])  # fmt: skip
    np.testing.assert_array_equal(expected(c)[0].ravel(), [1, 3, 6, 4])
    np.testing.assert_array_equal(modelled(c, "htp-fixed-transpose-conv3d")[0].ravel(), [1, 2, 2, 4])
    c = case("TransposeConv3d", [x, w, b], {"stride": [1, 1, 2], "pad_amount": [[0, 0]] * 3},
             [("FLOAT_32", (1, 1, 1, 6, 1))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "htp-fixed-transpose-conv3d")[0].ravel(), [1, 3, 6, 4, 0, 0])


def test_htp_transpose_conv3d_model_crops_the_depth_by_the_height_before_pad() -> None:
    """Depth slices 1, 2, 4 of one cell, a filter 2 high of ones, bias 0.5, pad_amount [[0, 0], [1, 0], [0, 0]]: the
    height's before-pad crops the depth too, so the slices come out 2.5, 4.5 and then 0 past the full result, where
    1.5, 2.5, 4.5 belong."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x = np.array([1.0, 2.0, 4.0]).reshape(1, 3, 1, 1, 1)
    w, b = np.ones((1, 2, 1, 1, 1)), np.array([0.5])
    c = case("TransposeConv3d", [x, w, b], {"stride": [1, 1, 1], "pad_amount": [[0, 0], [1, 0], [0, 0]]},
             [("FLOAT_32", (1, 3, 1, 1, 1))])  # fmt: skip
    np.testing.assert_array_equal(expected(c)[0].ravel(), [1.5, 2.5, 4.5])
    np.testing.assert_array_equal(modelled(c, "htp-fixed-transpose-conv3d")[0].ravel(), [2.5, 4.5, 0.0])


def test_htp_transpose_conv3d_model_applies_a_grouped_filter_ungrouped() -> None:
    """Two input channels 1 and 2, group 2, a 1 x 1 x 1 filter [[3], [5]] (channel_out / group = 1), bias [0.5,
    0.25]: the first output channel is 1 * 3 + 2 * 5 + 0.5 = 13.5 and the second only its bias, where [3.5, 10.25]
    belongs."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x, w = np.array([1.0, 2.0]).reshape(1, 1, 1, 1, 2), np.array([3.0, 5.0]).reshape(1, 1, 1, 2, 1)
    b = np.array([0.5, 0.25])
    c = case("TransposeConv3d", [x, w, b], {"stride": [1, 1, 1], "pad_amount": [[0, 0]] * 3, "group": 2},
             [("FLOAT_32", (1, 1, 1, 1, 2))])  # fmt: skip
    np.testing.assert_array_equal(expected(c)[0].ravel(), [3.5, 10.25])
    np.testing.assert_array_equal(modelled(c, "htp-fixed-transpose-conv3d")[0].ravel(), [13.5, 0.25])


def test_htp_transpose_conv3d_model_leaves_the_output_padding_cells_open() -> None:
    """One sample 2, a 1 x 1 x 1 filter of 3, bias 0.5, stride [2, 2, 2], output_padding [0, 0, 1]: the full result is
    the one cell 6.5 and the width gets one cell more, which the HTP does not write (bias or 0 in 8-bit cases, other
    values in 16x8 ones): left open (NaN)."""
    from tests.reference_helpers import case, modelled

    x, w, b = np.array([2.0]).reshape(1, 1, 1, 1, 1), np.array([3.0]).reshape(1, 1, 1, 1, 1), np.array([0.5])
    params = {"stride": [2, 2, 2], "pad_amount": [[0, 0]] * 3, "output_padding": [0, 0, 1]}
    c = case("TransposeConv3d", [x, w, b], params, [("FLOAT_32", (1, 1, 1, 2, 1))])
    got = modelled(c, "htp-fixed-transpose-conv3d")[0].ravel()
    assert got[0] == 6.5 and np.isnan(got[1])


def test_transpose_conv2d_model_starts_a_grouped_output_output_padding_cells_early() -> None:
    """Two groups of one channel each, a 1 x 1 filter of 1, stride 2 along the width: the full transposed convolution of
    [1, 2, 3] is [1, 0, 2, 0, 3] (and ten times that in channel 1). With pad_amount [1, 0] and output_padding 1 the
    output is full[1:] and one added cell; the model reads from full[0] instead, so every cell moves one to the right.
    With no pad before, the model's first cell lies before the full extent: left open (NaN)."""
    from tests.reference_helpers import case, modelled

    x = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]).reshape(1, 1, 3, 2)
    w, b = np.ones((1, 1, 2, 1)), np.array([0.5, -0.5])
    params = {"stride": [1, 2], "pad_amount": [[0, 0], [1, 0]], "output_padding": [0, 1], "group": 2}
    c = case("TransposeConv2d", [x, w, b], params, [("FLOAT_32", (1, 1, 5, 2))])
    got = modelled(c, "output-padding-before")[0][0, 0]
    np.testing.assert_array_equal(got[:, 0], [1.5, 0.5, 2.5, 0.5, 3.5])  # the reference: [0.5, 2.5, 0.5, 3.5, 0.5]
    np.testing.assert_array_equal(got[:, 1], [9.5, -0.5, 19.5, -0.5, 29.5])
    params["pad_amount"] = [[0, 0], [0, 0]]
    c = case("TransposeConv2d", [x, w, b], params, [("FLOAT_32", (1, 1, 6, 2))])
    got = modelled(c, "output-padding-before")[0][0, 0, :, 0]
    assert np.isnan(got[0]) and np.array_equal(got[1:], [1.5, 0.5, 2.5, 0.5, 3.5])


def test_transpose_conv1d_model_starts_a_grouped_output_output_padding_cells_early() -> None:
    """The same model for TransposeConv1d (ort-qnn reshapes it to TransposeConv2d): two groups, a filter of 1 one wide,
    stride 2, pad_amount [1, 0], output_padding 1: every cell moves one to the right of the reference."""
    from tests.reference_helpers import case, modelled

    x = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]).reshape(1, 3, 2)
    w, b = np.ones((1, 2, 1)), np.array([0.5, -0.5])
    params = {"stride": 2, "pad_amount": [1, 0], "output_padding": 1, "group": 2}
    c = case("TransposeConv1d", [x, w, b], params, [("FLOAT_32", (1, 5, 2))])
    got = modelled(c, "output-padding-before")[0][0]
    np.testing.assert_array_equal(got[:, 0], [1.5, 0.5, 2.5, 0.5, 3.5])
    assert not np.array_equal(got, reference.run("TransposeConv1d", [x, w, b], params, out_shapes=[(1, 5, 2)])[0][0])


def test_depthwise_model_of_channels_read_as_multiplier_1() -> None:
    """Two input channels (1 and 10 everywhere), multiplier 2, a 1 x 1 filter [1, 2, 3, 4], bias [0.5, 0.5, 0.5, -1]:
    the reference is [1, 2, 30, 40] + bias; the model computes channel 0 from input 0 with filter 0 (1) and channel 1
    from input 1 with filter 1 (20), and leaves channels 2 and 3 at their bias."""
    from tests.reference_helpers import case, modelled

    x = np.stack([np.ones((2, 2)), np.full((2, 2), 10.0)], axis=-1)[None]
    w, b = np.array([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4), np.array([0.5, 0.5, 0.5, -1.0])
    params = {"stride": [1, 1], "pad_amount": [[0, 0], [0, 0]], "dilation": [2, 2]}
    c = case("DepthWiseConv2d", [x, w, b], params, [("FLOAT_16", (1, 2, 2, 4))])
    got = modelled(c, "channels-read-as-multiplier-1")[0][0, 0, 0]
    np.testing.assert_array_equal(got, [1.5, 20.5, 0.5, -1.0])


def test_depthwise_model_of_channels_past_channel_in_zero_in_batch_0_only() -> None:
    """Two batches of one channel (1 and 2 everywhere), multiplier 2, a 1 x 1 filter [3, 4], no bias, UFIXED_POINT_8 out
    on scale 1, offset -100 (code 0 = -100): batch 0 is [3, code 0] for [3, 4], batch 1 the reference [6, 8]."""
    from tests.reference_helpers import case, modelled

    x = np.stack([np.ones((1, 2, 1)), np.full((1, 2, 1), 2.0)])
    w = np.array([3.0, 4.0]).reshape(1, 1, 1, 2)
    params = {"stride": [1, 1], "pad_amount": [[0, 0], [0, 0]], "dilation": [2, 2]}
    c = case("DepthWiseConv2d", [x, w], params, [("UFIXED_POINT_8", (2, 1, 2, 2), ((1.0,), (-100,)))])
    got = modelled(c, "channels-past-channel-in-zero-batch-0")[0]
    np.testing.assert_array_equal(got[0, 0, 0], [3.0, -100.0])
    np.testing.assert_array_equal(got[1, 0, 0], [6.0, 8.0])


def _depthwise_probe(tap: tuple[int, int, int, int], multiplier: int = 2):
    """The probe the dilation-phases model was read from: a [1, 1, 8, 2] ramp, a 1 x 2 filter of multiplier 2 (or
    another) with one tap set, dilation [1, 2]."""
    from cases.case import Case, Param, Tensor

    cout = 2 * multiplier
    x = (np.arange(16, dtype=np.float32) + 1).reshape(1, 1, 8, 2)
    w = np.zeros((1, 2, 1, cout), np.float32)
    w[tap] = 1.0
    u32 = np.uint32
    params = {"dilation": Param("dilation", "UINT_32", np.array([1, 2], u32)),
              "stride": Param("stride", "UINT_32", np.array([1, 1], u32)),
              "pad_amount": Param("pad_amount", "UINT_32", np.zeros((2, 2), u32))}
    ins = [Tensor("in[0]", "FLOAT_32", x.shape, x), Tensor("in[1]", "FLOAT_32", w.shape, w, static=True),
           Tensor("in[2]", "FLOAT_32", (cout,), np.zeros(cout, np.float32), static=True)]
    return Case("DepthWiseConv2d", ins, params, [Tensor("out[0]", "FLOAT_32", (1, 1, 6, cout))])


@pytest.mark.parametrize("tap, measured", [
    ((0, 0, 0, 0), [[1, 0, 3, 0], [3, 0, 0, 0], [0, 0, 7, 0], [7, 0, 0, 0], [0, 0, 11, 0], [11, 0, 0, 0]]),
    ((0, 0, 0, 2), [[0, 0, 0, 0], [0, 0, 4, 0], [4, 0, 0, 0], [0, 0, 8, 0], [8, 0, 0, 0], [0, 0, 12, 0]]),
    ((0, 1, 0, 0), [[5, 0, 7, 0], [7, 0, 0, 0], [0, 0, 11, 0], [11, 0, 0, 0], [0, 0, 15, 0], [15, 0, 0, 0]]),
])
def test_the_dilation_phases_model_gives_what_the_htp_gave_on_the_probe(tap, measured):
    """The HTP simulator's outputs for the probe (finding depthwiseconv2d-f32-dilation-phases-overlap): odd columns
    right, each even column the neighbouring odd columns' channels shifted by channel_in; the batch's last
    channel_in values are left open."""
    from reference.models import _NAMED

    reference.load_families()
    got = _NAMED["DepthWiseConv2d"]["dilation-phases-channel-in-apart"](_depthwise_probe(tap))[0][0, 0]
    want = np.asarray(measured, dtype=np.float64)
    open_ = np.isnan(got)
    assert open_.sum() == 2 and open_[-1, 2:].all(), f"open elements: {np.argwhere(open_).tolist()}"
    assert np.array_equal(got[~open_], want[~open_]), f"model {got.tolist()}\nHTP   {want.tolist()}"


@pytest.mark.parametrize("tap, measured", [
    ((0, 0, 0, 0), [[1, 0, 3, 0, 0, 0], [3, 0, 0, 0, 7, 0], [0, 0, 7, 0, 0, 0], [7, 0, 0, 0, 11, 0],
                    [0, 0, 11, 0, 0, 0], [11, 0, 0, 0, 0, 0]]),
    ((0, 0, 0, 4), [[0, 0, 0, 0, 0, 0]] * 5 + [[0, 0, 0, 0, 12, 0]]),
    ((0, 1, 0, 2), [[0, 0, 0, 0, 7, 0], [0, 0, 7, 0, 0, 0], [7, 0, 0, 0, 11, 0], [0, 0, 11, 0, 0, 0],
                    [11, 0, 0, 0, 15, 0], [0, 0, 15, 0, 0, 0]]),
])
def test_the_dilation_phases_model_places_pixels_two_channel_in_apart_at_multiplier_3(tap, measured):
    """The same probe with a multiplier of 3 (channel_out 6), measured on the HTP simulator: within a phase each pixel
    sits 2 x channel_in = 4 values after the one before, so its channels 4 and 5 are the next pixel's 0 and 1, even
    in the odd columns (column 1, tap 4: 0 where 4 belongs)."""
    from reference.models import _NAMED

    reference.load_families()
    got = _NAMED["DepthWiseConv2d"]["dilation-phases-channel-in-apart"](_depthwise_probe(tap, 3))[0][0, 0]
    want = np.asarray(measured, dtype=np.float64)
    open_ = np.isnan(got)
    assert open_.sum() == 2 and open_[-1, 4:].all(), f"open elements: {np.argwhere(open_).tolist()}"
    assert np.array_equal(got[~open_], want[~open_]), f"model {got.tolist()}\nHTP   {want.tolist()}"


def test_the_dilation_phases_model_is_not_the_right_answer():
    from reference.expected import expected
    from reference.models import _NAMED

    case = _depthwise_probe((0, 0, 0, 0))
    got = _NAMED["DepthWiseConv2d"]["dilation-phases-channel-in-apart"](case)[0]
    right = expected(case)[0]
    assert not np.allclose(np.nan_to_num(got), right), "the model of the bug gives the spec's answer"


def _conv2d_16a16w(weights: list[int]) -> object:
    """A 1x1 Conv2d of one input value 1.0 (code 2, scale 0.5) with filters of these SFIXED_POINT_16 codes (scale
    2^-8) and no bias: out[0] holds each weight's real value (UFIXED_POINT_16 out, scale 2^-8, offset -32768)."""
    from tests.reference_helpers import case

    n = len(weights)
    x = ("UFIXED_POINT_16", np.array([[[[2]]]], np.uint16), ([0.5], [0]))
    w = ("SFIXED_POINT_16", np.array(weights, np.int16).reshape(1, 1, 1, n), ([2.0**-8], [0]))
    params = {"stride": [1, 1], "pad_amount": [[0, 0], [0, 0]], "dilation": [1, 2]}
    return case("Conv2d", [x, w], params, [("UFIXED_POINT_16", (1, 1, 1, n), ([2.0**-8], [-32768]))])


def test_conv2d_16a16w_model_counts_a_weight_with_a_high_low_byte_256_less() -> None:
    """0x0180 (384) counts 128, 0x0080 (128) counts -128, 0x7fff counts 32511, and negative codes alike: -1 (0xffff)
    counts -257; 0x017f (383) is right (finding conv2d-16a16w-dilated-weight-low-byte-signed)."""
    from tests.reference_helpers import modelled

    got = modelled(_conv2d_16a16w([384, 128, 32767, 383, -1]), "weights-16bit-low-byte-signed")[0].ravel()
    np.testing.assert_allclose(got * 256, [128, -128, 32511, 383, -257])


def test_conv2d_16a16w_model_refuses_the_right_weights_and_another_error() -> None:
    """Falsifiable: the model's codes match it; the spec's (each weight as it is) and a planted error (the low byte
    dropped: 384 -> 256) do not."""
    from reference import models

    c = _conv2d_16a16w([384, 128, 383])
    model = {"diagnosis": "weights-16bit-low-byte-signed"}
    codes = lambda weights: [np.array(weights, np.int64).reshape(1, 1, 1, 3) + 32768]  # noqa: E731
    assert models.check(c, [codes([128, -128, 383])[0].astype(np.uint16)], model)["matches"]
    assert not models.check(c, [codes([384, 128, 383])[0].astype(np.uint16)], model)["matches"]
    assert not models.check(c, [codes([256, 0, 256])[0].astype(np.uint16)], model)["matches"]


def test_depthwise_model_of_first_channels_as_multiplier_1_leaves_the_others_open() -> None:
    """Two input channels (1 and 10 everywhere), multiplier 2, a 1 x 1 filter [1, 2, 3, 4], bias [0.5, 0.5, 0.5, -1]:
    channel 0 from input 0 with filter 0 (1.5), channel 1 from input 1 with filter 1 (20.5), channels 2 and 3 open
    (finding depthwiseconv2d-f16-multiplier-dilation-first-channels). Outputs with any values there match; the spec's
    answer (channel 1 from input 0: 2.5) and a planted error in channel 0 do not."""
    from reference import models
    from tests.reference_helpers import case, modelled

    x = np.stack([np.ones((2, 2)), np.full((2, 2), 10.0)], axis=-1)[None]
    w, b = np.array([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4), np.array([0.5, 0.5, 0.5, -1.0])
    params = {"stride": [1, 1], "pad_amount": [[0, 0], [0, 0]], "dilation": [2, 2]}
    c = case("DepthWiseConv2d", [x, w, b], params, [("FLOAT_16", (1, 2, 2, 4))])
    got = modelled(c, "first-channels-as-multiplier-1")[0]
    np.testing.assert_array_equal(got[..., :2], np.broadcast_to([1.5, 20.5], (1, 2, 2, 2)))
    assert np.isnan(got[..., 2:]).all()
    model = {"diagnosis": "first-channels-as-multiplier-1"}
    shown = np.broadcast_to(np.array([1.5, 20.5, 7.0, -3.0], np.float16), (1, 2, 2, 4)).copy()
    assert models.check(c, [shown], model)["matches"]
    spec = np.broadcast_to(np.array([1.5, 2.5, 30.5, 39.0], np.float16), (1, 2, 2, 4)).copy()
    assert not models.check(c, [spec], model)["matches"]
    planted = shown.copy()
    planted[0, 1, 1, 0] = 2.5
    assert not models.check(c, [planted], model)["matches"]
