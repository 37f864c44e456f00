"""The normalization references (reference/normalization.py) against onnxruntime CPU, scipy, and the spec.

QNN is channel-last; the ONNX ops used here are channel-first (BatchNormalization, GroupNormalization,
InstanceNormalization, LRN) or normalize trailing axes (LayerNormalization, RMSNormalization), so each
test translates layout and parameters (LRN's alpha is divided by the window size in ONNX, not in QNN).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage

import reference
from cases import quant
from tests.onnx_oracle import nchw, nhwc, ort_node
from tests.reference_helpers import member

RNG = np.random.default_rng(7)
# the spec's numbers of the enum members these tests name
INSTANCE_NORM_MODE_MU_SIGMA, INSTANCE_NORM_MODE_RMS = (member("InstanceNorm", "mode", m) for m in ("MU_SIGMA", "RMS"))
INSTANCE_NORM_REGION_ACROSS_SPATIAL, INSTANCE_NORM_REGION_ACROSS_CHANNEL, INSTANCE_NORM_REGION_ACROSS_ALL = (
    member("InstanceNorm", "region", r) for r in ("ACROSS_SPATIAL", "ACROSS_CHANNEL", "ACROSS_ALL"))
LRN_REGION_ACROSS_CHANNEL, LRN_REGION_WITHIN_CHANNEL = (
    member("Lrn", "region", r) for r in ("ACROSS_CHANNEL", "WITHIN_CHANNEL"))
TOL = {"rtol": 2e-5, "atol": 2e-5}  # float32 onnxruntime against float64 reference


def data(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def f64(*arrays: np.ndarray) -> list[np.ndarray]:
    return [a.astype(np.float64) for a in arrays]


def f32(*arrays: np.ndarray) -> list[np.ndarray]:
    return [a.astype(np.float32) for a in arrays]


# ---- Batchnorm ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 5), (2, 3, 4, 6), (1, 4, 3)])
def test_batchnorm_is_onnx_batchnorm_with_unit_statistics(shape: tuple[int, ...]) -> None:
    """in * weights + biases per channel = ONNX BatchNormalization with mean 0, var 1, epsilon 0."""
    c = shape[-1]
    x, w, b = data(*shape), data(c), data(c)
    (got,) = reference.run("Batchnorm", f64(x, w, b), {})
    want = ort_node(
        "BatchNormalization", [nchw(x), w, b, np.zeros(c, np.float32), np.ones(c, np.float32)], opset=15, epsilon=0.0
    )[0]
    np.testing.assert_allclose(got, nhwc(want), **TOL, err_msg=f"Batchnorm{shape}")


def test_batchnorm_bias_defaults_to_zero() -> None:
    (got,) = reference.run("Batchnorm", [np.array([[1.0, -2.0]]), np.array([3.0, 0.5])], {})
    np.testing.assert_array_equal(got, [[3.0, -1.0]], err_msg="x * w with no bias")


# ---- GroupNorm ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,group", [((2, 4, 5, 6), 3), ((1, 3, 3, 4), 1), ((1, 3, 3, 4), 4), ((2, 7, 6), 2)])
def test_group_norm_matches_onnx_group_normalization(shape: tuple[int, ...], group: int) -> None:
    """ONNX GroupNormalization-21 (contiguous channel groups, per-channel scale/bias) on NCHW."""
    c = shape[-1]
    x, gamma, beta = data(*shape), data(c), data(c)
    (got,) = reference.run("GroupNorm", f64(x, gamma, beta), {"group": group, "epsilon": 1e-5})
    want = ort_node("GroupNormalization", [nchw(x), gamma, beta], opset=21, num_groups=group, epsilon=1e-5)[0]
    np.testing.assert_allclose(got, nhwc(want), **TOL, err_msg=f"GroupNorm{shape} group={group}")


def test_group_norm_groups_are_contiguous_channels() -> None:
    """Channels [0, 1] and [2, 3] form the two groups: each half is normalized on its own."""
    x = np.array([[[0.0, 2.0, 10.0, 30.0]]])  # one batch, one position, four channels
    (got,) = reference.run("GroupNorm", [x], {"group": 2, "epsilon": 0.0})
    np.testing.assert_allclose(got, [[[-1.0, 1.0, -1.0, 1.0]]], err_msg="groups {0,1} and {2,3}")


# ---- InstanceNorm -------------------------------------------------------------------------------


def instance_params(mode: int, region: int, eps: float = 1e-5, normalize_variance: bool = True) -> dict:
    return {"mode": mode, "region": region, "epsilon": eps, "normalize_variance": normalize_variance}


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 4, 5, 3), (1, 3, 2, 4, 2)])
def test_instance_norm_mu_sigma_spatial_is_onnx_instance_normalization(shape: tuple[int, ...]) -> None:
    c = shape[-1]
    x, gamma, beta = data(*shape), data(c), data(c)
    params = instance_params(INSTANCE_NORM_MODE_MU_SIGMA, INSTANCE_NORM_REGION_ACROSS_SPATIAL)
    (got,) = reference.run("InstanceNorm", f64(x, gamma, beta), params)
    want = ort_node("InstanceNormalization", [nchw(x), gamma, beta], epsilon=1e-5)[0]
    np.testing.assert_allclose(got, nhwc(want), **TOL, err_msg=f"InstanceNorm MU_SIGMA/SPATIAL {shape}")


def test_instance_norm_mu_sigma_all_is_one_group_group_normalization() -> None:
    x, gamma, beta = data(2, 3, 4, 5), data(5), data(5)
    params = instance_params(INSTANCE_NORM_MODE_MU_SIGMA, INSTANCE_NORM_REGION_ACROSS_ALL)
    (got,) = reference.run("InstanceNorm", f64(x, gamma, beta), params)
    want = ort_node("GroupNormalization", [nchw(x), gamma, beta], opset=21, num_groups=1, epsilon=1e-5)[0]
    np.testing.assert_allclose(got, nhwc(want), **TOL, err_msg="MU_SIGMA/ACROSS_ALL")


def test_instance_norm_mu_sigma_channel_is_layer_normalization_over_channels() -> None:
    x, gamma, beta = data(2, 3, 4, 5), data(5), data(5)
    params = instance_params(INSTANCE_NORM_MODE_MU_SIGMA, INSTANCE_NORM_REGION_ACROSS_CHANNEL)
    (got,) = reference.run("InstanceNorm", f64(x, gamma, beta), params)
    want = ort_node("LayerNormalization", [x, gamma, beta], opset=17, axis=-1, epsilon=1e-5)[0]
    np.testing.assert_allclose(got, want, **TOL, err_msg="MU_SIGMA/ACROSS_CHANNEL")


@pytest.mark.parametrize(
    "region,onnx_axes",
    [(INSTANCE_NORM_REGION_ACROSS_CHANNEL, (3,)), (INSTANCE_NORM_REGION_ACROSS_ALL, (1, 2, 3))],
)
def test_instance_norm_rms_sums_squares_without_dividing_by_count(region: int, onnx_axes: tuple[int, ...]) -> None:
    """Spec RMS = sum(x^2) + eps (7464, 7472) = n * (mean(x^2) + eps / n): ONNX RMSNormalization with
    epsilon / n and scale gamma / sqrt(n); beta added after (RMSNormalization has no bias)."""
    x, gamma, beta = data(2, 3, 4, 5), data(5), data(5)
    n = int(np.prod([x.shape[a] for a in onnx_axes]))
    params = instance_params(INSTANCE_NORM_MODE_RMS, region, eps=1e-3)
    (got,) = reference.run("InstanceNorm", f64(x, gamma, beta), params)
    scaled = (gamma / np.sqrt(n)).astype(np.float32)
    want = ort_node("RMSNormalization", [x, scaled], opset=23, axis=onnx_axes[0], epsilon=1e-3 / n)[0] + beta
    np.testing.assert_allclose(got, want, **TOL, err_msg=f"RMS region={region}")


def test_instance_norm_rms_spatial_normalizes_each_channel_over_h_w() -> None:
    """The undefined RMS/ACROSS_SPATIAL combination: the RMS statistic over the spatial axes."""
    x, gamma, beta = data(2, 3, 4, 5), data(5), data(5)
    n = 3 * 4
    params = instance_params(INSTANCE_NORM_MODE_RMS, INSTANCE_NORM_REGION_ACROSS_SPATIAL, eps=1e-3)
    (got,) = reference.run("InstanceNorm", f64(x, gamma, beta), params)
    normed = ort_node("RMSNormalization", [nchw(x), np.ones((3, 4), np.float32)], opset=23, axis=2, epsilon=1e-3 / n)[0]
    want = nhwc(normed) * gamma / np.sqrt(n) + beta
    np.testing.assert_allclose(got, want, **TOL, err_msg="RMS/ACROSS_SPATIAL")


def test_instance_norm_rms_worked_example() -> None:
    """x = [3, 4] over channels, epsilon 0: RMS = 9 + 16 = 25, out = x / 5 * gamma + beta."""
    x = np.array([[[[3.0, 4.0]]]])
    params = instance_params(INSTANCE_NORM_MODE_RMS, INSTANCE_NORM_REGION_ACROSS_CHANNEL, eps=0.0)
    (got,) = reference.run("InstanceNorm", [x, np.array([2.0, 1.0]), np.array([0.0, 1.0])], params)
    np.testing.assert_allclose(got.ravel(), [1.2, 1.8], err_msg="[3/5*2, 4/5*1 + 1]")


def test_instance_norm_without_variance_normalization_only_subtracts_the_mean() -> None:
    """Seed 7437-7440: out = in - mu, gamma and beta not applied."""
    x = np.array([1.0, 3.0, 5.0, 7.0]).reshape(1, 2, 2, 1)
    params = instance_params(INSTANCE_NORM_MODE_MU_SIGMA, INSTANCE_NORM_REGION_ACROSS_SPATIAL, normalize_variance=False)
    (got,) = reference.run("InstanceNorm", [x, np.array([2.0]), np.array([5.0])], params)
    np.testing.assert_array_equal(got.ravel(), [-3.0, -1.0, 1.0, 3.0], err_msg="in - mean(in) = in - 4")


def test_instance_norm_defaults_are_mu_sigma_spatial() -> None:
    x, gamma = data(1, 3, 3, 2), data(2)
    (got,) = reference.run("InstanceNorm", f64(x, gamma), {})
    want = ort_node("InstanceNormalization", [nchw(x), gamma, np.zeros(2, np.float32)], epsilon=1e-12)[0]
    np.testing.assert_allclose(got, nhwc(want), rtol=1e-4, atol=1e-4, err_msg="spec defaults")


# ---- L2Norm -------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,axis", [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4, 5), 3), ((2, 3, 4, 5), 1)])
def test_l2_norm_matches_onnx_lp_normalization(shape: tuple[int, ...], axis: int) -> None:
    x = data(*shape)
    (got,) = reference.run("L2Norm", f64(x), {"axis": axis})
    want = ort_node("LpNormalization", [x], axis=axis, p=2)[0]
    np.testing.assert_allclose(got, want, **TOL, err_msg=f"L2Norm{shape} axis={axis}")


def test_l2_norm_default_axis_is_0() -> None:
    """Seed 7711 (NNAPI would use the last axis)."""
    x = data(3, 4)
    (got,) = reference.run("L2Norm", f64(x), {})
    np.testing.assert_allclose(got, x / np.linalg.norm(x, axis=0, keepdims=True), rtol=1e-6, err_msg="axis 0")


def test_l2_norm_axes_override_axis() -> None:
    x = data(2, 3, 4).astype(np.float64)
    (got,) = reference.run("L2Norm", [x], {"axis": 0, "axes": np.array([1, 2], np.uint32)})
    want = x / np.sqrt(np.sum(x**2, axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(got, want, rtol=1e-12, err_msg="normalized over axes 1 and 2")


def test_l2_norm_all_zero_axes_defer_to_axis() -> None:
    """An all-zero axes is the spec default {0,..,0}, treated as absent (opdefs/L2Norm.yaml decisions)."""
    x = data(3, 4).astype(np.float64)
    (got,) = reference.run("L2Norm", [x], {"axis": 1, "axes": np.array([0, 0], np.uint32)})
    np.testing.assert_allclose(got, x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-12, err_msg="axis 1")


def test_l2_norm_explicit_axes_zero_overrides_axis() -> None:
    """axes=[0] beside axis 1: axes is non-empty, so axis is ignored (MasterOpDef 7705, 7724): normalized along 0."""
    x = data(3, 4).astype(np.float64)
    (got,) = reference.run("L2Norm", [x], {"axis": 1, "axes": np.array([0], np.uint32)})
    np.testing.assert_allclose(got, x / np.linalg.norm(x, axis=0, keepdims=True), rtol=1e-12, err_msg="axis 0")


@pytest.mark.parametrize("x,want", [([3e-7, 4e-7], [0.3, 0.4]), ([0.0, 0.0], [0.0, 0.0]), ([3.0, 4.0], [0.6, 0.8])])
def test_l2_norm_epsilon_bounds_the_norm_not_its_square(x: list[float], want: list[float]) -> None:
    """out = x / max(||x||, eps) (seed 7673): ||[3e-7, 4e-7]|| = 5e-7 < eps = 1e-6, so x / 1e-6."""
    (got,) = reference.run("L2Norm", [np.array(x)], {"axis": 0, "epsilon": 1e-6})
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=f"L2Norm({x})")


# ---- LayerNorm / RmsNorm ------------------------------------------------------------------------

# (shape, axes); axes may be non-trailing and unsorted: the test moves them to the back, in order,
# where ONNX LayerNormalization / RMSNormalization (axis = first trailing axis) normalize.
NORM_AXES_CASES = [
    ((2, 3, 4, 5), [3]),
    ((2, 3, 4, 5), [2, 3]),
    ((2, 3, 4, 5), [1, 2, 3]),
    ((2, 3, 4, 5), [1]),
    ((2, 3, 4, 5), [0, 2]),
    ((3, 4, 5), [2, 1]),
    ((6,), [0]),
]


def onnx_over_axes(op: str, x: np.ndarray, axes: list[int], feeds: list[np.ndarray], **attrs) -> np.ndarray:
    others = [a for a in range(x.ndim) if a not in axes]
    perm = others + list(axes)
    y = ort_node(
        op, [np.transpose(x, perm), *feeds], opset=23 if op == "RMSNormalization" else 17, axis=len(others), **attrs
    )[0]
    return np.transpose(y, np.argsort(perm))


@pytest.mark.parametrize("shape,axes", NORM_AXES_CASES)
def test_layer_norm_matches_onnx_layer_normalization(shape: tuple[int, ...], axes: list[int]) -> None:
    gshape = tuple(shape[a] for a in axes)  # shape(gamma)[i] = shape(in[0])[axes[i]] (seed 7889)
    x, gamma, beta = data(*shape), data(*gshape), data(*gshape)
    (got,) = reference.run("LayerNorm", f64(x, gamma, beta), {"axes": np.array(axes, np.uint32), "epsilon": 1e-4})
    want = onnx_over_axes("LayerNormalization", x, axes, [gamma, beta], epsilon=1e-4)
    np.testing.assert_allclose(got, want, **TOL, err_msg=f"LayerNorm{shape} axes={axes}")


def test_layer_norm_lower_rank_gamma_aligns_with_the_last_axes() -> None:
    """gamma [C] with axes [1, 2, 3]: broadcast like ONNX's unidirectional scale (the op's YAML decisions)."""
    x, gamma, beta = data(2, 3, 4, 5), data(5), data(5)
    (got,) = reference.run("LayerNorm", f64(x, gamma, beta), {"axes": np.array([1, 2, 3], np.uint32)})
    want = ort_node("LayerNormalization", [x, gamma, beta], opset=17, axis=1, epsilon=1e-3)[0]
    np.testing.assert_allclose(got, want, **TOL, err_msg="gamma [5] against axes [1, 2, 3]")


def test_layer_norm_quantized_within_one_step() -> None:
    """SFIXED_POINT_8 activations, UFIXED_POINT_8 output: reference vs onnxruntime, both quantized."""
    x = data(2, 6, 8, lo=-4.0, hi=4.0).astype(np.float64)
    enc_in = quant.encoding_for_range(-4.0, 4.0, "SFIXED_POINT_8")
    real = quant.dequantize(quant.quantize(x, enc_in, "SFIXED_POINT_8"), enc_in)
    gamma, beta = np.full(8, 0.5), np.full(8, 0.25)
    (got,) = reference.run("LayerNorm", [real, gamma, beta], {"axes": np.array([2], np.uint32)})
    want = ort_node("LayerNormalization", [real.astype(np.float32), *f32(gamma, beta)], opset=17, axis=2, epsilon=1e-3)[
        0
    ]
    enc_out = quant.encoding_for_range(-1.5, 1.5, "UFIXED_POINT_8")
    q_got = quant.quantize(got, enc_out, "UFIXED_POINT_8").astype(int)
    q_want = quant.quantize(want, enc_out, "UFIXED_POINT_8").astype(int)
    assert np.max(np.abs(q_got - q_want)) <= 1, f"codes differ by more than one step: {np.abs(q_got - q_want).max()}"


@pytest.mark.parametrize("shape,axes", NORM_AXES_CASES)
def test_rms_norm_matches_onnx_rms_normalization(shape: tuple[int, ...], axes: list[int]) -> None:
    gshape = tuple(shape[a] for a in axes)
    x, gamma, beta = data(*shape), data(*gshape), data(*gshape)
    (got,) = reference.run("RmsNorm", f64(x, gamma, beta), {"axes": np.array(axes, np.uint32)})
    want = onnx_over_axes("RMSNormalization", x, axes, [gamma], epsilon=1e-6)
    others = [a for a in range(len(shape)) if a not in axes]
    beta_full = np.transpose(np.broadcast_to(beta, tuple(shape[a] for a in others) + gshape), np.argsort(others + axes))
    np.testing.assert_allclose(got, want + beta_full, **TOL, err_msg=f"RmsNorm{shape} axes={axes}")


def test_rms_norm_worked_example() -> None:
    """mean([3, 4]^2) = 12.5: out = x / sqrt(12.5 + eps)."""
    (got,) = reference.run("RmsNorm", [np.array([3.0, 4.0])], {"axes": np.array([0], np.uint32), "epsilon": 0.0})
    np.testing.assert_allclose(got, [3 / np.sqrt(12.5), 4 / np.sqrt(12.5)], rtol=1e-15, err_msg="RmsNorm([3, 4])")


# ---- Lrn ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,radius", [((1, 3, 4, 5), 1), ((2, 2, 3, 7), 2), ((1, 2, 2, 4), 0), ((1, 2, 2, 3), 4)])
@pytest.mark.parametrize("alpha,beta,bias", [(1.0, 0.5, 1.0), (0.3, 0.75, 2.0)])
def test_lrn_across_channel_matches_onnxruntime(shape, radius, alpha, beta, bias) -> None:
    """ONNX LRN sums over size = 2R + 1 channels and divides alpha by size; QNN does not (8101).
    onnxruntime's LRN is used: onnx.reference's iterates over the wrong axis (spec-ambiguities.md)."""
    x = data(*shape)
    params = {"radius": radius, "alpha": alpha, "beta": beta, "bias": bias, "region": LRN_REGION_ACROSS_CHANNEL}
    (got,) = reference.run("Lrn", f64(x), params)
    size = 2 * radius + 1
    want = ort_node("LRN", [nchw(x)], opset=13, size=size, alpha=alpha * size, beta=beta, bias=bias)[0]
    np.testing.assert_allclose(got, nhwc(want), **TOL, err_msg=f"Lrn{shape} {params}")


@pytest.mark.parametrize("radius", [0, 1, 2])
def test_lrn_within_channel_sums_the_clipped_spatial_window(radius: int) -> None:
    x = data(2, 5, 6, 3).astype(np.float64)
    params = {"radius": radius, "alpha": 0.2, "beta": 0.75, "bias": 1.5, "region": LRN_REGION_WITHIN_CHANNEL}
    (got,) = reference.run("Lrn", [x], params)
    box = np.ones((1, 2 * radius + 1, 2 * radius + 1, 1))
    s = scipy.ndimage.correlate(x**2, box, mode="constant", cval=0.0)
    np.testing.assert_allclose(got, x / (1.5 + 0.2 * s) ** 0.75, rtol=1e-12, err_msg=f"radius {radius}")


def test_lrn_window_is_clipped_at_both_ends() -> None:
    """x = [1, 2, 3], R = 1, alpha = 1, beta = 1, bias = 0: S = [1+4, 1+4+9, 4+9]."""
    params = {"radius": 1, "alpha": 1.0, "beta": 1.0, "bias": 0.0}
    (got,) = reference.run("Lrn", [np.array([1.0, 2.0, 3.0])], params)
    np.testing.assert_allclose(got, [1 / 5, 2 / 14, 3 / 13], rtol=1e-15, err_msg="clipped 3-wide window")


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_l2norm_model_bounds_the_squared_norm_by_epsilon() -> None:
    """[-1, 0.5] with epsilon 2: ||x||^2 = 1.25 < 2, so x / sqrt(2) = [-0.7071, 0.3536] where x / 2 belongs."""
    from tests.reference_helpers import case, modelled

    c = case("L2Norm", [np.array([[-1.0, 0.5]], np.float16)], {"epsilon": 2.0, "axis": 1}, [("FLOAT_16", (1, 2))])
    np.testing.assert_allclose(modelled(c, "epsilon-bounds-squared-norm")[0], [[-1 / np.sqrt(2), 0.5 / np.sqrt(2)]])
    big = case("L2Norm", [np.array([[3.0, 4.0]], np.float16)], {"epsilon": 2.0, "axis": 1}, [("FLOAT_16", (1, 2))])
    np.testing.assert_allclose(modelled(big, "epsilon-bounds-squared-norm")[0], [[0.6, 0.8]])  # both bounds unused


def test_groupnorm_model_takes_the_rows_of_a_rank2_input_as_one_sample() -> None:
    """[[1, 10], [3, 30]] with two groups: one sample of two rows, so channel 0 is normalised over (1, 3) and channel 1
    over (10, 30): +-1 / sqrt(1 + eps) (eps 1e-9); the batch reading has one element per group (every output 0)."""
    from tests.reference_helpers import case, modelled

    c = case("GroupNorm", [np.array([[1.0, 10.0], [3.0, 30.0]])], {"group": 2, "epsilon": 1e-9}, [("FLOAT_32", (2, 2))])
    np.testing.assert_allclose(modelled(c, "leading-axes-as-one-batch")[0], [[-1, -1], [1, 1]], rtol=1e-6)
    np.testing.assert_allclose(reference.run("GroupNorm", [c.inputs[0].data], {"group": 2, "epsilon": 1e-9})[0], 0)


def test_lrn_short_window_symptom_takes_the_eps_outputs_and_refuses_a_flip_or_a_larger_value() -> None:
    """ep-lrn-f16-within-channel-window-past-input's case: the EP gives in[0] / bias^beta (window sums 0), inside the
    symptom's interval; the same outputs negated, or 30% larger than in[0] / bias^beta, are outside it."""
    from pathlib import Path

    from cases.case import Case
    from reference import models
    from reference.expected import arguments

    c = Case.load(Path(__file__).resolve().parents[1] / "findings/cases/Lrn/"
                  "ep-lrn-f16-within-channel-window-past-input.json")  # fmt: skip
    inputs, params = arguments(c)
    none = (np.asarray(inputs[0], np.float64) / float(params["bias"]) ** float(params["beta"])).astype(np.float16)
    symptom = {"symptom": "window-sums-between-none-and-all"}
    assert models.check(c, [none], symptom)["matches"]
    assert not models.check(c, [-none], symptom)["matches"]
    assert not models.check(c, [(none * np.float16(1.3)).astype(np.float16)], symptom)["matches"]
