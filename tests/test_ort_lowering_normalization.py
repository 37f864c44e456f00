"""The ONNX lowerings of the normalization ops (Lrn, InstanceNorm, GroupNorm, RmsNorm, LayerNorm, L2Norm).

Each is checked on ONNX Runtime's CPU execution provider against the numpy reference (``conformance.execute``,
verdict PASS) in float32 and in a fixed-point configuration, so the lowering and the reference hold the same
reading; and where ONNX has the op, the lowering is that one node, which is what lets the QNN execution
provider map it to the QNN op of the same name.
"""

from __future__ import annotations

import numpy as np
import pytest

from adapters.onnx import lower
from tests.test_ort_lowering_part2 import F32, S8, U8, case, passes, quantized

RNG = np.random.default_rng(20251126)


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-2.0, 2.0, shape).astype(np.float32)


def static(name: str, data: np.ndarray):
    from cases.case import Tensor

    return Tensor(name, F32, data.shape, data, static=True)


def onnx_nodes(c) -> list[str]:
    return lower(c).node_types


# ---- Lrn -> LRN, or a windowed sum of squares within channels ---------------------------------------
def _lrn(shape: tuple[int, ...], region: int) -> object:
    params = {"radius": 1, "alpha": 0.5, "beta": 0.75, "bias": 1.5, "region": region}
    return case("Lrn", [rand(*shape)], params, shape)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 6), (2, 3, 7)], ids=["rank4", "rank2", "rank3"])
@pytest.mark.parametrize("dtype", [F32, U8, S8])
def test_lrn_across_channels_matches_the_reference(cpu, shape, dtype):
    c = _lrn(shape, 0)
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


def test_lrn_across_channels_is_one_onnx_lrn_node(cpu):
    assert onnx_nodes(_lrn((2, 3, 4, 5), 0)).count("LRN") == 1


@pytest.mark.parametrize("dtype", [F32, U8])
def test_lrn_within_channel_matches_the_reference(cpu, dtype):
    c = _lrn((2, 4, 5, 3), 1)
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


# ---- InstanceNorm -> InstanceNormalization, or the spec's formulas --------------------------------------
def _instance(mode: int, region: int, normalize: bool, beta: bool = True) -> object:
    x = rand(2, 3, 4, 5)
    ins = [x, static("in[1]", rand(5))] + ([static("in[2]", rand(5))] if beta else [])
    params = {"mode": mode, "region": region, "normalize_variance": normalize, "epsilon": 1e-3}
    return case("InstanceNorm", ins, params, x.shape)


@pytest.mark.parametrize("mode,region,normalize", [(0, 0, True), (0, 0, False), (0, 1, True), (0, 2, True),
                                                   (1, 0, True), (1, 1, True), (1, 2, True)],
                         ids=["mu-sigma-spatial", "mean-only", "mu-sigma-channel", "mu-sigma-all", "rms-spatial",
                              "rms-channel", "rms-all"])  # fmt: skip
def test_instance_norm_float_matches_the_reference(cpu, mode, region, normalize):
    passes(cpu, _instance(mode, region, normalize))


def test_instance_norm_without_beta_matches_the_reference(cpu):
    passes(cpu, _instance(0, 0, True, beta=False))


def test_instance_norm_ufixed8_matches_the_reference(cpu):
    passes(cpu, quantized(_instance(0, 0, True), U8))


def test_instance_norm_default_form_is_one_onnx_instance_normalization_node(cpu):
    assert onnx_nodes(_instance(0, 0, True)).count("InstanceNormalization") == 1


# ---- GroupNorm -> GroupNormalization ----------------------------------------------------------------
def _group(shape: tuple[int, ...], group: int, affine: bool = True) -> object:
    c = shape[-1]
    ins = [rand(*shape)] + ([static("in[1]", rand(c)), static("in[2]", rand(c))] if affine else [])
    return case("GroupNorm", ins, {"group": group, "epsilon": 1e-3}, shape)


@pytest.mark.parametrize("shape", [(2, 3, 4, 6), (3, 6), (6,), (2, 5, 6)], ids=["rank4", "rank2", "rank1", "rank3"])
def test_group_norm_float_matches_the_reference(cpu, shape):
    passes(cpu, _group(shape, 3))


def test_group_norm_without_gamma_and_beta_matches_the_reference(cpu):
    passes(cpu, _group((2, 3, 4, 4), 2, affine=False))


@pytest.mark.parametrize("dtype", [U8, S8])
def test_group_norm_fixed_point_matches_the_reference(cpu, dtype):
    passes(cpu, quantized(_group((2, 3, 4, 6), 2), dtype))


def test_group_norm_is_one_onnx_group_normalization_node(cpu):
    assert onnx_nodes(_group((2, 3, 4, 6), 3)).count("GroupNormalization") == 1


# ---- RmsNorm -> RMSNormalization (opset 23); LayerNorm on any axis set -----------------------------------
def _suffix_norm(op: str, axes: list[int], beta: bool) -> object:
    x = rand(2, 3, 4)
    gamma = rand(*[x.shape[a] for a in axes])
    ins = [x, static("in[1]", gamma)] + ([static("in[2]", rand(*gamma.shape))] if beta else [])
    return case(op, ins, {"axes": np.array(axes, np.uint32), "epsilon": 1e-3}, x.shape)


@pytest.mark.parametrize("axes", [[2], [1, 2], [2, 1], [0], [0, 2]], ids=["last", "suffix", "suffix-reversed",
                                                                          "first", "not-adjacent"])  # fmt: skip
@pytest.mark.parametrize("op", ["RmsNorm", "LayerNorm"])
def test_suffix_normalization_on_any_axes_matches_the_reference(cpu, op, axes):
    passes(cpu, _suffix_norm(op, axes, beta=True))


@pytest.mark.parametrize("op", ["RmsNorm", "LayerNorm"])
def test_suffix_normalization_ufixed8_matches_the_reference(cpu, op):
    passes(cpu, quantized(_suffix_norm(op, [0, 2], beta=False), U8))


def test_rms_norm_is_one_onnx_rms_normalization_node_at_opset_23(cpu):
    import onnx

    c = _suffix_norm("RmsNorm", [2], beta=False)
    model = onnx.load_from_string(lower(c).model)
    assert [n.op_type for n in model.graph.node] == ["RMSNormalization"]
    assert {o.domain: o.version for o in model.opset_import}[""] == 23


# ---- L2Norm -> ReduceL2, Max(epsilon), Div ------------------------------------------------------------
@pytest.mark.parametrize("params", [{"axis": 1}, {"axes": np.array([1, 2], np.uint32)},
                                    {"axis": 0, "epsilon": 10.0}],
                         ids=["axis", "axes", "epsilon-bound"])  # fmt: skip
@pytest.mark.parametrize("dtype", [F32, U8])
def test_l2_norm_matches_the_reference(cpu, params, dtype):
    c = case("L2Norm", [rand(2, 3, 4)], params, (2, 3, 4))
    passes(cpu, c if dtype == F32 else quantized(c, dtype))
