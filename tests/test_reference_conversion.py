"""The conversion references (reference/conversion.py) and the quantization module (cases/quant.py).

Quantize, Dequantize and Convert are identities on real values, so what is checked is the whole
path a case takes: codes -> quant.dequantize -> reference -> quant.quantize -> codes, against
onnxruntime's QuantizeLinear / DequantizeLinear with zero_point = -offset. Cast is checked against
onnxruntime's Cast where ONNX defines the result, and by hand where the project chose (saturation).
"""

from __future__ import annotations

import numpy as np
import pytest

import reference
from cases import quant
from cases.case import Encoding
from opdefs import dtypes
from tests.onnx_oracle import BOOL, F32, ort_graph, tensor_type

RNG = np.random.default_rng(99)
FIXED_POINT = [
    "UFIXED_POINT_4",
    "SFIXED_POINT_4",
    "UFIXED_POINT_8",
    "SFIXED_POINT_8",
    "UFIXED_POINT_16",
    "SFIXED_POINT_16",
    "UFIXED_POINT_32",
    "SFIXED_POINT_32",
]
OPSET = 21  # the cross-checks were written against opset 21's QuantizeLinear / DequantizeLinear / Cast
# fixed-point types onnxruntime's QuantizeLinear / DequantizeLinear (opset 21) handle on the CPU EP
ORT_FIXED_POINT = ["UFIXED_POINT_8", "SFIXED_POINT_8", "UFIXED_POINT_16", "SFIXED_POINT_16"]


def zero_point(enc: Encoding, dtype: str) -> np.ndarray:
    """The ONNX zero point of a QNN encoding, stored in the type's storage dtype."""
    return (-np.asarray(enc.offsets)).astype(dtypes.get(dtype).storage).reshape(-1 if enc.per_axis else ())


def scales(enc: Encoding) -> np.ndarray:
    return np.asarray(enc.scales, np.float32).reshape(-1 if enc.per_axis else ())


def all_codes(dtype: str, n: int = 4096) -> np.ndarray:
    """Every code of a narrow type, else both ends plus a random sample of the range."""
    d = dtypes.get(dtype)
    if d.bits <= 8:
        return np.arange(d.qmin, d.qmax + 1).astype(d.storage)
    inner = RNG.integers(d.qmin, d.qmax, size=n - 2, endpoint=True)
    return np.concatenate([[d.qmin, d.qmax], inner]).astype(d.storage)


def per_axis_encoding(dtype: str, channels: int) -> Encoding:
    d = dtypes.get(dtype)
    offsets = tuple(int(o) for o in -RNG.integers(d.qmin, d.qmax, size=channels, endpoint=True))
    scl = tuple(float(np.float32(s)) for s in RNG.uniform(1e-3, 2.0, size=channels))
    return Encoding(scl, offsets, axis=1)


# ---- cases/quant.py -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FIXED_POINT)
def test_quant_per_tensor_round_trip_keeps_every_code(dtype: str) -> None:
    d = dtypes.get(dtype)
    enc = quant.encoding_for_range(-3.0, 5.0, dtype)
    codes = all_codes(dtype)
    back = quant.quantize(quant.dequantize(codes, enc), enc, dtype)
    assert back.dtype == d.storage, back.dtype
    np.testing.assert_array_equal(back, codes, err_msg=f"{dtype}: quantize(dequantize(q)) != q")


@pytest.mark.parametrize("dtype", FIXED_POINT)
def test_quant_per_axis_round_trip_keeps_every_code(dtype: str) -> None:
    enc = per_axis_encoding(dtype, 3)
    d = dtypes.get(dtype)
    codes = RNG.integers(d.qmin, d.qmax, size=(4, 3, 5), endpoint=True).astype(d.storage)
    codes[0, :, 0], codes[0, :, 1] = d.qmin, d.qmax
    real = quant.dequantize(codes, enc)
    for c in range(3):
        want = enc.scales[c] * (codes[:, c, :].astype(np.float64) + enc.offsets[c])
        np.testing.assert_array_equal(real[:, c, :], want, err_msg=f"{dtype}: channel {c} uses its own scale/offset")
    np.testing.assert_array_equal(quant.quantize(real, enc, dtype), codes, err_msg=f"{dtype}: per-axis round trip")


@pytest.mark.parametrize("dtype", FIXED_POINT)
def test_quant_saturates_at_the_type_range(dtype: str) -> None:
    d = dtypes.get(dtype)
    enc = quant.encoding_for_range(-1.0, 1.0, dtype)
    lo, hi = (float(np.ravel(v)[0]) for v in quant.real_range(enc, dtype))
    real = np.array([lo * 10 - 1, hi * 10 + 1, -np.inf, np.inf])
    got = quant.quantize(real, enc, dtype)
    np.testing.assert_array_equal(got, [d.qmin, d.qmax, d.qmin, d.qmax], err_msg=f"{dtype}: out-of-range values clamp")


def test_quant_offset_is_minus_the_zero_point() -> None:
    """real = scale * (q + offset) (the QNN API convention): offset -128 puts real 0 at code 128."""
    enc = Encoding((0.5,), (-128,))
    np.testing.assert_array_equal(
        quant.dequantize(np.array([128, 130, 0], np.uint8), enc), [0.0, 1.0, -64.0], err_msg="dequantize"
    )
    np.testing.assert_array_equal(
        quant.quantize(np.array([0.0, 1.0, -64.0]), enc, "UFIXED_POINT_8"), [128, 130, 0], err_msg="quantize"
    )


def test_quant_ties_round_half_to_even() -> None:
    """No tie rule in the spec; the module documents numpy rint (half to even)."""
    enc = Encoding((1.0,), (0,))
    got = quant.quantize(np.array([0.5, 1.5, 2.5, -0.5]), enc, "SFIXED_POINT_8")
    np.testing.assert_array_equal(got, [0, 2, 2, 0], err_msg="half to even")


@pytest.mark.parametrize("dtype", FIXED_POINT)
@pytest.mark.parametrize("lo,hi", [(-1.0, 1.0), (0.0, 6.0), (-3.7, 0.2), (0.5, 2.0), (-2.0, -0.5), (0.0, 0.0)])
def test_quant_encoding_for_range_represents_zero_and_covers_the_range(dtype: str, lo: float, hi: float) -> None:
    enc = quant.encoding_for_range(lo, hi, dtype)
    zero = quant.dequantize(quant.quantize(np.array(0.0), enc, dtype), enc)
    assert zero == 0.0, f"{dtype} [{lo}, {hi}]: 0 comes back as {zero}"
    rlo, rhi = (float(np.ravel(v)[0]) for v in quant.real_range(enc, dtype))
    step = enc.scales[0]
    assert rlo <= min(lo, 0.0) + step and rhi >= max(hi, 0.0) - step, f"{dtype}: grid [{rlo}, {rhi}] vs [{lo}, {hi}]"
    for v in (lo, hi):
        back = quant.dequantize(quant.quantize(np.array(v), enc, dtype), enc)
        assert abs(back - v) <= step, f"{dtype}: {v} comes back as {back} (step {step})"


@pytest.mark.parametrize("dtype", ["SFIXED_POINT_32", "UFIXED_POINT_32"])
@pytest.mark.parametrize("lo,hi", [(0.0, 6.0), (-2.0, -0.5), (-5.0, 0.1), (-3.0, 5.0)])
def test_quant_encoding_for_range_offset_fits_the_api_int32(dtype: str, lo: float, hi: float) -> None:
    """Qnn_ScaleOffset_t.offset is an int32 (shared/qnn-c-api-facts.md): a 32-bit zero point of -2**31
    (SFIXED_POINT_32, lo = 0) or above 2**31 (UFIXED_POINT_32, hi <= 0) cannot be handed to a backend."""
    enc = quant.encoding_for_range(lo, hi, dtype)
    assert -(2**31) <= enc.offsets[0] <= 2**31 - 1, f"{dtype} [{lo}, {hi}]: offset {enc.offsets[0]} overflows int32"
    zero = quant.dequantize(quant.quantize(np.array(0.0), enc, dtype), enc)
    assert zero == 0.0, f"{dtype} [{lo}, {hi}]: 0 comes back as {zero}"
    for v in (lo, hi):
        back = quant.dequantize(quant.quantize(np.array(v), enc, dtype), enc)
        assert abs(back - v) <= enc.scales[0], f"{dtype}: {v} comes back as {back}"


@pytest.mark.parametrize("dtype", ORT_FIXED_POINT)
def test_quant_quantize_matches_onnx_quantize_linear(dtype: str) -> None:
    """The same codes as QuantizeLinear with zero_point = -offset (per tensor, and per axis 1)."""
    x = RNG.uniform(-4.0, 6.0, size=(3, 4, 5)).astype(np.float32)
    otype = tensor_type(dtypes.get(dtype).storage)
    for enc in (quant.encoding_for_range(-3.0, 5.0, dtype), per_axis_encoding(dtype, 4)):
        attrs = {"axis": 1} if enc.per_axis else {}
        feeds = {"x": x, "s": scales(enc), "z": zero_point(enc, dtype)}
        (want,) = ort_graph([("QuantizeLinear", ["x", "s", "z"], attrs)], feeds, [otype], OPSET)
        got = quant.quantize(x.astype(np.float64), enc, dtype)
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        assert diff.max() <= 1, f"{dtype} per_axis={enc.per_axis}: codes differ by {diff.max()}"
        assert np.mean(diff == 0) > 0.99, f"{dtype}: only float32 division ties may differ"


# ---- Quantize / Dequantize / Convert ------------------------------------------------------------


@pytest.mark.parametrize("dtype", ORT_FIXED_POINT)
def test_quantize_op_then_output_encoding_is_quantize_linear(dtype: str) -> None:
    x = RNG.uniform(-2.0, 3.0, size=(2, 3, 4)).astype(np.float32)
    enc = quant.encoding_for_range(-1.5, 2.5, dtype)  # narrower than x: saturation included
    (real,) = reference.run("Quantize", [x.astype(np.float64)], {})
    got = quant.quantize(real, enc, dtype)
    otype = tensor_type(dtypes.get(dtype).storage)
    feeds = {"x": x, "s": scales(enc), "z": zero_point(enc, dtype)}
    (want,) = ort_graph([("QuantizeLinear", ["x", "s", "z"], {})], feeds, [otype], OPSET)
    assert np.abs(got.astype(np.int64) - want.astype(np.int64)).max() <= 1, f"{dtype}: Quantize codes"


@pytest.mark.parametrize("dtype", ORT_FIXED_POINT)
def test_dequantize_op_on_dequantized_codes_is_dequantize_linear(dtype: str) -> None:
    enc = quant.encoding_for_range(-2.0, 7.0, dtype)
    codes = all_codes(dtype, 512).reshape(-1, 8)
    (got,) = reference.run("Dequantize", [quant.dequantize(codes, enc)], {})
    feeds = {"q": codes, "s": scales(enc), "z": zero_point(enc, dtype)}
    (want,) = ort_graph([("DequantizeLinear", ["q", "s", "z"], {})], feeds, [F32], OPSET)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7 * enc.scales[0], err_msg=f"{dtype}: Dequantize")


@pytest.mark.parametrize("src,dst", [("UFIXED_POINT_8", "UFIXED_POINT_16"), ("UFIXED_POINT_16", "SFIXED_POINT_8")])
def test_convert_requantizes_like_dequantize_then_quantize_linear(src: str, dst: str) -> None:
    enc_in = quant.encoding_for_range(-1.0, 3.0, src)
    enc_out = quant.encoding_for_range(-0.5, 2.0, dst)
    codes = all_codes(src, 1024).reshape(-1, 4)
    (real,) = reference.run("Convert", [quant.dequantize(codes, enc_in)], {})
    got = quant.quantize(real, enc_out, dst)
    feeds = {
        "q": codes,
        "s_in": scales(enc_in),
        "z_in": zero_point(enc_in, src),
        "s_out": scales(enc_out),
        "z_out": zero_point(enc_out, dst),
    }
    nodes = [("DequantizeLinear", ["q", "s_in", "z_in"], {}), ("QuantizeLinear", ["t0", "s_out", "z_out"], {})]
    (want,) = ort_graph(nodes, feeds, [tensor_type(dtypes.get(dst).storage)], OPSET)
    assert np.abs(got.astype(np.int64) - want.astype(np.int64)).max() <= 1, f"Convert {src} -> {dst}"


def test_convert_quantize_dequantize_return_the_real_value_unchanged() -> None:
    x = np.array([[-1.25, 0.0, 3.5]])
    for op in ("Convert", "Quantize", "Dequantize"):
        (got,) = reference.run(op, [x], {})
        assert got.dtype == np.float64, f"{op}: {got.dtype}"
        np.testing.assert_array_equal(got, x, err_msg=f"{op} is the identity on real values")


# ---- Cast ---------------------------------------------------------------------------------------

CAST_TARGETS = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.int64]


@pytest.mark.parametrize("target", CAST_TARGETS)
def test_cast_float_to_integer_truncates_like_onnx(target) -> None:
    info = np.iinfo(target)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    x = RNG.uniform(lo, hi, size=(4, 25)).astype(np.float32)
    x[0, :6] = [0.5, -0.5, 1.99, -1.99, 0.0, 2.5]
    x = np.clip(x, lo, hi)
    (got,) = reference.run("Cast", [x.astype(np.float64)], {}, out_dtypes=[target])
    to = tensor_type(target)
    (want,) = ort_graph([("Cast", ["x"], {"to": to})], {"x": x}, [to], OPSET)
    assert got.dtype == target, got.dtype
    np.testing.assert_array_equal(got, want, err_msg=f"Cast float -> {np.dtype(target)}")


@pytest.mark.parametrize("src", [np.int32, np.uint8, np.int8])
def test_cast_integer_to_float_matches_onnx(src) -> None:
    info = np.iinfo(src)
    x = RNG.integers(info.min, info.max, size=(3, 7), endpoint=True).astype(src)
    (got,) = reference.run("Cast", [x], {}, out_dtypes=[np.float64])
    (want,) = ort_graph([("Cast", ["x"], {"to": F32})], {"x": x}, [F32], OPSET)
    np.testing.assert_array_equal(got, x.astype(np.float64), err_msg="the exact value, unrounded")
    np.testing.assert_array_equal(got.astype(np.float32), want, err_msg=f"Cast {np.dtype(src)} -> FLOAT_32")


def test_cast_to_bool_is_nonzero_like_onnx() -> None:
    x = np.array([0.0, -0.0, 1e-30, -2.0, 7.5], np.float32)
    (got,) = reference.run("Cast", [x.astype(np.float64)], {}, out_dtypes=[np.bool_])
    (want,) = ort_graph([("Cast", ["x"], {"to": BOOL})], {"x": x}, [BOOL], OPSET)
    assert got.dtype == np.bool_, got.dtype
    np.testing.assert_array_equal(got, want, err_msg="Cast -> bool")


def test_cast_from_bool_gives_one_and_zero() -> None:
    x = np.array([True, False, True])
    (as_int,) = reference.run("Cast", [x], {}, out_dtypes=[np.int32])
    (as_float,) = reference.run("Cast", [x], {}, out_dtypes=[np.float64])
    np.testing.assert_array_equal(as_int, [1, 0, 1], err_msg="bool -> int")
    np.testing.assert_array_equal(as_float, [1.0, 0.0, 1.0], err_msg="bool -> float")


@pytest.mark.parametrize(
    "target,x,want",
    [
        (np.uint8, [300.7, -5.0, 255.9], [255, 0, 255]),
        (np.int8, [-200.5, 127.9, 128.0], [-128, 127, 127]),
        (np.int32, [3e10, -3e10, np.nan], [2**31 - 1, -(2**31), 0]),
        (np.uint64, [1e30, -1.0, np.inf], [np.iinfo(np.uint64).max - 2047, 0, np.iinfo(np.uint64).max - 2047]),
    ],
)
def test_cast_out_of_range_saturates_and_nan_is_zero(target, x, want) -> None:
    """ONNX leaves these undefined; the reference saturates (opdefs/Cast.yaml decisions). For uint64 the bound
    is the largest float64 below 2**64."""
    (got,) = reference.run("Cast", [np.array(x)], {}, out_dtypes=[target])
    np.testing.assert_array_equal(got, np.array(want, dtype=target), err_msg=f"Cast {x} -> {np.dtype(target)}")


def test_cast_to_float_leaves_rounding_to_the_comparator() -> None:
    """A FLOAT_16 / FLOAT_32 output is real-valued (float64): narrowing is the comparator's cast."""
    (got,) = reference.run("Cast", [np.array([0.1, 1e-8])], {}, out_dtypes=[np.float64])
    np.testing.assert_array_equal(got, [0.1, 1e-8], err_msg="no float32 rounding inside the reference")


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_cast_bool_model_goes_through_an_unsigned_integer() -> None:
    """0.5, -0.5 and -3 truncate or saturate to 0 (false); 1.5 and 7 stay nonzero (true)."""
    from tests.reference_helpers import case, modelled

    c = case("Cast", [np.array([0.5, -0.5, -3.0, 1.5, 7.0])], {}, [("BOOL_8", (5,))])
    np.testing.assert_array_equal(modelled(c, "bool-via-unsigned-integer")[0], [False, False, False, True, True])


def test_cast_bool_model_converts_nan_as_the_infinity_of_its_sign() -> None:
    """Measured on the HTP (seed-1 edge case 75a7ca276072c97f and a probe): NaN casts to true and -NaN to false, as
    +inf and -inf do; a model sending every NaN to 0 (false) would leave that case red."""
    from tests.reference_helpers import case, modelled

    x = np.array([np.nan, -np.nan, np.inf, -np.inf], dtype=np.float32)
    c = case("Cast", [x], {}, [("BOOL_8", (4,))])
    np.testing.assert_array_equal(modelled(c, "bool-via-unsigned-integer")[0], [True, False, True, False])


def test_cast_unsigned_8_as_bool_model_makes_every_nonzero_one() -> None:
    """UINT_8 [0, 1, 2, 37, 255] -> FLOAT_32 as the HTP after v68 gives it: [0, 1, 1, 1, 1]."""
    from tests.reference_helpers import case, modelled

    c = case("Cast", [np.array([0, 1, 2, 37, 255], dtype=np.uint8)], {}, [("FLOAT_32", (5,))])
    np.testing.assert_array_equal(modelled(c, "unsigned-8-as-bool")[0], [0.0, 1.0, 1.0, 1.0, 1.0])


def test_cast_unsigned_8_as_bool_model_takes_the_htp_output_and_refuses_the_right_one() -> None:
    """Falsifiable: the HTP's v73 output for [0, 1, 2, 37, 255] (0 and 0x3f800001, 1 + 2^-23) matches the model; the
    spec's [0, 1, 2, 37, 255] and a planted error (255 -> 0) do not (finding cast-u8-f32-nonzero-is-one)."""
    from reference import models
    from tests.reference_helpers import case

    c = case("Cast", [np.array([0, 1, 2, 37, 255], dtype=np.uint8)], {}, [("FLOAT_32", (5,))])
    model = {"diagnosis": "unsigned-8-as-bool"}
    one = np.array([0x3F800001], np.uint32).view(np.float32)[0]
    assert models.check(c, [np.array([0, one, one, one, one], np.float32)], model)["matches"]
    assert not models.check(c, [np.array([0, 1, 2, 37, 255], np.float32)], model)["matches"]
    assert not models.check(c, [np.array([0, one, one, one, 0], np.float32)], model)["matches"]
