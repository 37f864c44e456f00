"""The matrix-product references (reference/matmul.py) against onnxruntime CPU and scipy.

MatMul's transposes and bias have no single ONNX node: a MatMul (+ Add) graph is built with the
operands transposed in the test. FullyConnected is ONNX Gemm(transB=1) on the [batch, n] view.
HadamardTransform is scipy.linalg.hadamard(n) / sqrt(n) applied along the last axis.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import reference
from cases import quant
from tests.onnx_oracle import ort_graph

RNG = np.random.default_rng(31)
OPSET = 18  # the cross-checks were written against opset 18's MatMul / Gemm
TOL = {"rtol": 1e-5, "atol": 1e-5}


def data(*shape: int) -> np.ndarray:
    return RNG.uniform(-2.0, 2.0, size=shape).astype(np.float32)


def f64(*arrays: np.ndarray) -> list[np.ndarray]:
    return [a.astype(np.float64) for a in arrays]


# ---- MatMul -------------------------------------------------------------------------------------

# (A shape as stored, B shape as stored, transpose_in0, transpose_in1)
MATMUL_CASES = [
    ((3, 4), (4, 5), False, False),
    ((3, 4), (5, 4), False, True),
    ((4, 3), (4, 5), True, False),
    ((4, 3), (5, 4), True, True),
    ((2, 3, 4), (2, 4, 6), False, False),
    ((10, 6, 4), (5, 1, 4, 3), False, False),  # the spec's broadcasting example, scaled down
    ((1, 3, 4), (2, 5, 4), False, True),
    ((2, 1, 4, 3), (3, 4, 2), True, False),
]


def transposed(a: np.ndarray, flag: bool) -> np.ndarray:
    return np.swapaxes(a, -1, -2) if flag else a


@pytest.mark.parametrize("a_shape,b_shape,t0,t1", MATMUL_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_matmul_matches_onnxruntime(a_shape, b_shape, t0, t1, with_bias) -> None:
    a, b = data(*a_shape), data(*b_shape)
    n = transposed(b, t1).shape[-1]
    feeds = {"a": np.ascontiguousarray(transposed(a, t0)), "b": np.ascontiguousarray(transposed(b, t1))}
    nodes = [("MatMul", ["a", "b"], {})]
    inputs = f64(a, b)
    if with_bias:
        feeds["bias"] = data(n)
        nodes.append(("Add", ["t0", "bias"], {}))
        inputs.append(feeds["bias"].astype(np.float64))
    (got,) = reference.run("MatMul", inputs, {"transpose_in0": t0, "transpose_in1": t1})
    (want,) = ort_graph(nodes, feeds, opset=OPSET)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, **TOL, err_msg=f"A{a_shape} B{b_shape} t0={t0} t1={t1} bias={with_bias}")


def test_matmul_bias_is_added_once_not_per_k() -> None:
    """The spec's formula sums (A B + b) over k; read as A B + b (opdefs/MatMul.yaml decisions)."""
    a = np.ones((1, 3))
    b = np.ones((3, 2))
    (got,) = reference.run("MatMul", [a, b, np.array([10.0, 20.0])], {})
    np.testing.assert_array_equal(got, [[13.0, 23.0]], err_msg="3 + b, not 3 + 3b")


def test_matmul_output_shape_follows_spec_broadcast_example() -> None:
    """[10, 256, 128] x [5, 1, 128, 64] -> [5, 10, 256, 64] (seed 8849-8856), with small sizes."""
    (got,) = reference.run("MatMul", [np.zeros((10, 8, 4)), np.zeros((5, 1, 4, 6))], {})
    assert got.shape == (5, 10, 8, 6), got.shape


def test_matmul_quantized_within_one_step() -> None:
    """UFIXED_POINT_8 activations and SFIXED_POINT_8 weights, UFIXED_POINT_16 output."""
    a, b = data(4, 16).astype(np.float64), data(16, 3).astype(np.float64)
    enc_a = quant.encoding_for_range(-2.0, 2.0, "UFIXED_POINT_8")
    enc_b = quant.encoding_for_range(-2.0, 2.0, "SFIXED_POINT_8")
    ra = quant.dequantize(quant.quantize(a, enc_a, "UFIXED_POINT_8"), enc_a)
    rb = quant.dequantize(quant.quantize(b, enc_b, "SFIXED_POINT_8"), enc_b)
    (got,) = reference.run("MatMul", [ra, rb], {})
    (want,) = ort_graph(
        [("MatMul", ["a", "b"], {})], {"a": ra.astype(np.float32), "b": rb.astype(np.float32)}, opset=OPSET
    )
    enc_out = quant.encoding_for_range(-40.0, 40.0, "UFIXED_POINT_16")
    q_got = quant.quantize(got, enc_out, "UFIXED_POINT_16").astype(int)
    q_want = quant.quantize(want, enc_out, "UFIXED_POINT_16").astype(int)
    assert np.max(np.abs(q_got - q_want)) <= 1, f"codes differ by more than one step: {np.abs(q_got - q_want).max()}"


# ---- FullyConnected -----------------------------------------------------------------------------


@pytest.mark.parametrize("x_shape,m", [((4, 6), 3), ((2, 3, 6), 5), ((2, 3, 4), 2), ((1, 1), 4)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_fully_connected_is_gemm_with_transposed_weights(x_shape, m, with_bias) -> None:
    """[batch, n] x [m, n]^T + [m]; in[0] is flattened to [batch, n] with n = shape(in[1])[1]."""
    n = x_shape[-1]
    x, w, b = data(*x_shape), data(m, n), data(m)
    inputs = f64(x, w, b) if with_bias else f64(x, w)
    (got,) = reference.run("FullyConnected", inputs, {})
    bias = b if with_bias else np.zeros(m, np.float32)
    (want,) = ort_graph(
        [("Gemm", ["x", "w", "b"], {"transB": 1})], {"x": x.reshape(-1, n), "w": w, "b": bias}, opset=OPSET
    )
    np.testing.assert_allclose(got, want, **TOL, err_msg=f"FullyConnected x{x_shape} w[{m},{n}] bias={with_bias}")


def test_fully_connected_flattens_any_shape_reshapable_to_batch_by_n() -> None:
    """in[0] [2, 3, 4] with n = 6: 24 elements are 4 batches of 6 (seed 5985-5988)."""
    x, w = data(2, 3, 4), data(5, 6)
    (got,) = reference.run("FullyConnected", f64(x, w), {})
    (want,) = ort_graph([("Gemm", ["x", "w"], {"transB": 1})], {"x": x.reshape(4, 6), "w": w}, opset=OPSET)
    np.testing.assert_allclose(got, want, **TOL, err_msg="[2,3,4] viewed as [4,6]")


def test_fully_connected_keep_dims_keeps_leading_dims() -> None:
    x, w = data(2, 3, 6), data(5, 6)
    (flat,) = reference.run("FullyConnected", f64(x, w), {"keep_dims": False})
    (kept,) = reference.run("FullyConnected", f64(x, w), {"keep_dims": True})
    assert flat.shape == (6, 5) and kept.shape == (2, 3, 5), (flat.shape, kept.shape)
    np.testing.assert_array_equal(kept.reshape(6, 5), flat, err_msg="same numbers, different shape")


def test_fully_connected_rank_1_input_gives_m() -> None:
    (got,) = reference.run("FullyConnected", [np.array([1.0, 2.0]), np.array([[1.0, 0.0], [1.0, 1.0]])], {})
    np.testing.assert_array_equal(got, [1.0, 3.0], err_msg="W x for a vector")


# ---- HadamardTransform --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1,), (2,), (3, 8), (2, 2, 16), (64,)])
@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_hadamard_transform_is_normalized_sylvester_hadamard_times_scale(shape: tuple[int, ...], scale: float) -> None:
    n = shape[-1]
    x = data(*shape).astype(np.float64)
    (got,) = reference.run("HadamardTransform", [x], {"scale": scale})
    want = x @ scipy.linalg.hadamard(n).T / np.sqrt(n) * scale
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"HadamardTransform{shape} scale={scale}")


def test_hadamard_transform_with_unit_scale_preserves_the_norm() -> None:
    """H_n / sqrt(n) is orthonormal: the default scale 1.0 keeps every row's length."""
    x = data(5, 32).astype(np.float64)
    (got,) = reference.run("HadamardTransform", [x], {})
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12, err_msg="norms")


def test_hadamard_transform_worked_example() -> None:
    """H_4 [1, 2, 3, 4] = [10, -2, -4, 0]; divided by sqrt(4) = 2."""
    (got,) = reference.run("HadamardTransform", [np.array([1.0, 2.0, 3.0, 4.0])], {})
    np.testing.assert_array_equal(got, [5.0, -1.0, -2.0, 0.0], err_msg="H4 [1, 2, 3, 4] / 2")


def test_hadamard_transform_refuses_a_non_power_of_two_dim() -> None:
    with pytest.raises(ValueError, match="power of two"):
        reference.run("HadamardTransform", [np.zeros((2, 6))], {})


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_hadamard_model_saturates_at_int16_steps_of_the_input_scale() -> None:
    """Input scale 2^-12, so the upper bound is 32767 x 2^-12: (6 + 6) / sqrt 2 = 8.49 comes back as 7.99976, (6 - 6)
    as 0."""
    from tests.reference_helpers import case, modelled

    enc = ([2.0**-12], [-32768])
    x = ("UFIXED_POINT_16", np.array([[57344, 57344]], np.uint16), enc)  # codes of 6.0
    c = case("HadamardTransform", [x], {"scale": 1.0}, [("UFIXED_POINT_16", (1, 2), ([2.0**-11], [-32768]))])
    np.testing.assert_allclose(modelled(c, "result-held-in-int16-at-input-scale")[0], [[32767 * 2.0**-12, 0.0]])


def test_hadamard_model_holds_a_256_long_axis_after_its_64_point_pass() -> None:
    """n = 256 in two passes, each held within 32767 steps of in[0]'s scale (2^-12: 7.99976): block 0 of 64 at 1.5,
    block 1 at 0.75, the rest 0. The 64-point pass gives 64 x 1.5 / 8 = 12, held at 7.99976, and 6; across the four
    blocks element 64 is (7.99976 - 6) / 2 = 0.99988 where the transform is (96 - 48) / 16 = 3 (one pass held at the
    end gives 3)."""
    from tests.reference_helpers import case, modelled

    enc = ([2.0**-12], [-32768])
    codes = np.full((1, 256), 32768, np.uint16)
    codes[0, :64] = 32768 + 6144  # 1.5
    codes[0, 64:128] = 32768 + 3072  # 0.75
    c = case("HadamardTransform", [("UFIXED_POINT_16", codes, enc)], {"scale": 1.0},
             [("UFIXED_POINT_16", (1, 256), ([2.0**-11], [-32768]))])
    real = np.where(codes > 0, (codes.astype(float) - 32768) * 2.0**-12, 0)
    (truth,) = reference.run("HadamardTransform", [real], {})
    assert truth[0, 64] == 3.0
    (got,) = modelled(c, "result-held-in-int16-at-input-scale")
    np.testing.assert_allclose(got[0, 64], (32767 * 2.0**-12 - 6.0) / 2)
    np.testing.assert_allclose(got[0, 0], (32767 * 2.0**-12 + 6.0) / 2)  # one pass: (96 + 48) / 16 = 9, held at 7.99976


def test_hadamard_unit_axis_model_ignores_scale_and_a_signed_offset() -> None:
    """n = 1: codes [5609, -3684] at offset 2311 and scale 2^-12, scale 2: the spec gives 2 x (code + 2311) x 2^-12,
    the model the codes alone x 2^-12 (scale ignored, the signed offset dropped); UFIXED_POINT_16 keeps its offset."""
    from tests.reference_helpers import case, modelled

    name = "unit-axis-scale-ignored-signed-offset-dropped"
    enc = ([2.0**-12], [2311])
    c = case("HadamardTransform", [("SFIXED_POINT_16", np.array([[5609], [-3684]], np.int16), enc)], {"scale": 2.0},
             [("SFIXED_POINT_16", (2, 1), enc)])
    np.testing.assert_allclose(modelled(c, name)[0], [[5609 * 2.0**-12], [-3684 * 2.0**-12]])
    real = np.array([[5609 + 2311], [-3684 + 2311]]) * 2.0**-12
    (truth,) = reference.run("HadamardTransform", [real], {"scale": 2.0})
    assert not np.allclose(truth, modelled(c, name)[0]), "the spec's result is not the model's"
    u = case("HadamardTransform", [("UFIXED_POINT_16", np.array([[40000]], np.uint16), ([2.0**-12], [-32768]))],
             {"scale": 2.0}, [("UFIXED_POINT_16", (1, 1), ([2.0**-12], [-32768]))])
    np.testing.assert_allclose(modelled(u, name)[0], [[(40000 - 32768) * 2.0**-12]])


def test_hadamard_unit_axis_model_refuses_a_longer_axis() -> None:
    from tests.reference_helpers import case, modelled

    enc = ([2.0**-12], [0])
    c = case("HadamardTransform", [("SFIXED_POINT_16", np.array([[5, 6]], np.int16), enc)], {"scale": 1.0},
             [("SFIXED_POINT_16", (1, 2), enc)])
    with pytest.raises(ValueError, match="one element"):
        modelled(c, "unit-axis-scale-ignored-signed-offset-dropped")


def test_matmul_16x8_model_requantizes_each_in1_column_leaving_int8() -> None:
    """in[1] [2, 2] at zero point 200, scale 0.01: column 0 codes [48, 0] are -152, -200 from the zero point, past
    -128, so they go onto a grid 200 / 128 coarser: -152 / 1.5625 = -97.28 -> -97, -200 -> -128, i.e. -1.515625 and
    -2.0 for -1.52 and -2.0; column 1 codes [190, 210] (-10, 10) stay. x = [1, 0] reads row 0 only."""
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_16", np.array([[32769, 32768]], np.uint16), ([1.0], [-32768]))  # [1, 0]
    w = ("UFIXED_POINT_8", np.array([[48, 190], [0, 210]], np.uint8), ([0.01], [-200]))
    c = case("MatMul", [x, w], {}, [("UFIXED_POINT_16", (1, 2), ([2.0**-10], [-32768]))])
    got = modelled(c, "htp-16x8-in1-requantized")[0]
    np.testing.assert_allclose(got, [[-97 * 1.5625 * 0.01, -0.1]])
    (truth,) = reference.run("MatMul", [np.array([[1.0, 0.0]]), np.array([[-1.52, -0.1], [-2.0, 0.1]])], {})
    assert abs(truth[0, 0] - got[0, 0]) > 0.004, "the spec's -1.52 is not the model's -1.515625"


def test_matmul_16x8_model_leaves_in1_columns_inside_int8_exact() -> None:
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_16", np.array([[32770, 32769]], np.uint16), ([1.0], [-32768]))  # [2, 1]
    w = ("UFIXED_POINT_8", np.array([[130, 100], [255, 1]], np.uint8), ([0.5], [-128]))  # [[1, -14], [63.5, -63.5]]
    c = case("MatMul", [x, w], {}, [("UFIXED_POINT_16", (1, 2), ([2.0**-8], [-32768]))])
    (truth,) = reference.run("MatMul", [np.array([[2.0, 1.0]]), np.array([[1.0, -14.0], [63.5, -63.5]])], {})
    np.testing.assert_allclose(modelled(c, "htp-16x8-in1-requantized")[0], truth)
