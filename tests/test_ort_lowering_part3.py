"""The ONNX lowerings of ChannelShuffle, BatchPermutation, ConstantOfShape, Moments, HadamardTransform and Logit.

Each is checked on ONNX Runtime's CPU execution provider against the numpy reference (``conformance.execute``, verdict
PASS), in float32 and a fixed-point configuration, so the lowering and the reference hold the same reading;
where the reference reads something ONNX cannot say, the case is not lowered (SKIP), never given ONNX's reading.
"""

from __future__ import annotations

import numpy as np
import pytest

from adapters.onnx.movement import hadamard
from cases.case import Param, Tensor, encoding_for_range
from tests.test_ort_lowering_part2 import F32, S8, U8, case, passes, quantized

RNG = np.random.default_rng(20251127)


def rand(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def index_tensor(values: list[int]) -> Tensor:
    return Tensor("in[1]", "INT_32", (len(values),), np.array(values, np.int32), static=True)


@pytest.mark.parametrize("dtype", [F32, U8, S8])
@pytest.mark.parametrize("axis", [1, 3])
def test_channel_shuffle_matches_the_reference(cpu, dtype, axis):
    c = case("ChannelShuffle", [rand(2, 6, 3, 6)], {"num_groups": 3, "axis": axis}, (2, 6, 3, 6))
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


@pytest.mark.parametrize("dtype", [F32, U8])
def test_batch_permutation_gathers_the_listed_batches(cpu, dtype):
    c = case("BatchPermutation", [rand(4, 3, 2), index_tensor([2, 0, 3])], {}, (3, 3, 2))
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


def test_batch_permutation_with_an_index_outside_the_batch_is_not_lowered(cpu):
    c = case("BatchPermutation", [rand(4, 3, 2), index_tensor([2, 7])], {}, (2, 3, 2))
    out = cpu.run(c)
    assert out.status == "skip" and "outside the batch" in out.message, (out.status, out.message)


@pytest.mark.parametrize("dtype", [F32, U8])
def test_constant_of_shape_fills_the_shape_in_its_input(cpu, dtype):
    shape = Tensor("in[0]", "UINT_32", (3,), np.array([2, 3, 4], np.uint32))
    c = case("ConstantOfShape", [shape], {"value": 1.5}, (2, 3, 4))
    c.params["value"] = Param("value", F32, 1.5)
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("dtype", [F32, U8])
def test_moments_gives_the_mean_and_the_population_variance(cpu, keep, dtype):
    x = rand(2, 3, 4)
    out = (2, 1, 1) if keep else (2,)
    c = case("Moments", [x], {"axes": np.array([1, 2], np.uint32), "keep_dims": keep}, out)
    if dtype == F32:
        c.outputs.append(Tensor("out[1]", F32, out))
    else:
        c = quantized(c, dtype)  # out[0], the mean, on a grid covering it; out[1] on one covering the variance
        var = float(x.var(axis=(1, 2)).max())
        c.outputs.append(Tensor("out[1]", dtype, out, encoding=encoding_for_range(0.0, var, dtype)))
    passes(cpu, c)


def test_the_hadamard_constant_is_the_sylvester_matrix():
    h = hadamard(4)
    assert (h @ h == 4 * np.eye(4)).all() and (h[1] == [1, -1, 1, -1]).all(), h


@pytest.mark.parametrize("dtype", [F32, U8, "UFIXED_POINT_16"])
def test_hadamard_transform_matches_the_reference(cpu, dtype):
    c = case("HadamardTransform", [rand(3, 8)], {"scale": 0.5}, (3, 8))
    passes(cpu, c if dtype == F32 else quantized(c, dtype))


@pytest.mark.parametrize("eps", [None, 0.2], ids=["unclamped", "clamped"])
@pytest.mark.parametrize("dtype", [F32, U8])
def test_logit_is_the_inverse_sigmoid(cpu, eps, dtype):
    ins = [rand(2, 5, lo=0.05, hi=0.95)]
    if eps is not None:
        ins.append(Tensor("in[1]", F32, (1,), np.array([eps], np.float32), static=True))
    c = case("Logit", ins, {}, (2, 5))
    passes(cpu, c if dtype == F32 else quantized(c, dtype))
