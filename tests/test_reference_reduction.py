"""The reduction references (reference/reduction.py) against onnxruntime CPU and the spec's own text.

ONNX and QNN agree on reductions except where the MasterOpDef says otherwise; those places (output
rank of a full reduction, TopK's tie order, CumulativeSum's example) have hand-written cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference
from cases import quant
from tests.onnx_oracle import F32, I64, ort_node

RNG = np.random.default_rng(20240611)


def data(shape: tuple[int, ...], lo: float = -3.0, hi: float = 3.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


OPSET = 18  # the cross-checks were written against opset 18's Reduce* (axes as an input)

# ---- Reduce* ------------------------------------------------------------------------------------

REDUCE_ONNX = {
    "ReduceMax": "ReduceMax",
    "ReduceMean": "ReduceMean",
    "ReduceMin": "ReduceMin",
    "ReduceProd": "ReduceProd",
    "ReduceSum": "ReduceSum",
    "ReduceSumSquare": "ReduceSumSquare",
}
REDUCE_CASES = [
    ((5,), [0]),
    ((3, 4), [1]),
    ((3, 4), [0]),
    ((2, 3, 4), [0, 2]),
    ((2, 3, 4, 5), [1, 2]),
    ((2, 3, 4, 5), [3]),
    ((1, 1, 6), [2]),
    ((2, 3, 4), [0, 1, 2]),
]


@pytest.mark.parametrize("op", sorted(REDUCE_ONNX))
@pytest.mark.parametrize("shape,axes", REDUCE_CASES)
@pytest.mark.parametrize("keep", [False, True])
def test_reduce_matches_onnxruntime(op: str, shape: tuple[int, ...], axes: list[int], keep: bool) -> None:
    x = data(shape, 0.5, 1.5) if op == "ReduceProd" else data(shape)
    (got,) = reference.run(op, [x.astype(np.float64)], {"axes": np.array(axes, np.uint32), "keep_dims": keep})
    (want,) = ort_node(REDUCE_ONNX[op], [x, np.array(axes, np.int64)], [F32], opset=OPSET, keepdims=int(keep))
    np.testing.assert_allclose(
        got.reshape(want.shape), want, rtol=2e-6, atol=2e-6, err_msg=f"{op}{shape} axes={axes} keep_dims={keep}"
    )


@pytest.mark.parametrize("op", sorted(set(REDUCE_ONNX) - {"ReduceSumSquare"}))
def test_reduce_shape_follows_max_1_rule(op: str) -> None:
    """K = N if keep_dims else max(1, N - M) (seed 10312 and siblings): reducing every axis gives [1]."""
    x = data((2, 3)).astype(np.float64)
    assert reference.run(op, [x], {"axes": np.array([0, 1], np.uint32)})[0].shape == (1,), op
    assert reference.run(op, [x], {"axes": np.array([1], np.uint32)})[0].shape == (2,), op
    assert reference.run(op, [x], {"axes": np.array([0, 1], np.uint32), "keep_dims": True})[0].shape == (1, 1), op


def test_reduce_sum_square_full_reduction_is_rank_0() -> None:
    """ReduceSumSquare alone says K = max(0, N - M) (seed 10658)."""
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    (got,) = reference.run("ReduceSumSquare", [x], {"axes": np.array([0, 1], np.uint32)})
    assert got.shape == (), f"shape {got.shape}"
    assert got == 30.0


def test_reduce_sum_square_of_a_scalar_is_its_square() -> None:
    """'If rank(in[0]) = 0, no reduction occurs and the output is simply in[0] squared' (seed 10607)."""
    (got,) = reference.run("ReduceSumSquare", [np.array(-3.0)], {"axes": np.array([], np.uint32)})
    assert got.shape == () and got == 9.0, got


def test_reduce_mean_quantized_within_one_step() -> None:
    """UFIXED_POINT_8 in and out: the reference on dequantized inputs, quantized with the output
    encoding, against onnxruntime's float mean quantized with the same encoding."""
    x = data((2, 5, 6, 3), -1.0, 2.0).astype(np.float64)
    enc_in = quant.encoding_for_range(-1.0, 2.0, "UFIXED_POINT_8")
    real_in = quant.dequantize(quant.quantize(x, enc_in, "UFIXED_POINT_8"), enc_in)
    enc_out = quant.encoding_for_range(-0.5, 1.5, "UFIXED_POINT_8")
    (got,) = reference.run("ReduceMean", [real_in], {"axes": np.array([1, 2], np.uint32), "keep_dims": True})
    (want,) = ort_node(
        "ReduceMean", [real_in.astype(np.float32), np.array([1, 2], np.int64)], [F32], opset=OPSET, keepdims=1
    )
    q_got = quant.quantize(got, enc_out, "UFIXED_POINT_8").astype(int)
    q_want = quant.quantize(want, enc_out, "UFIXED_POINT_8").astype(int)
    assert np.max(np.abs(q_got - q_want)) <= 1, f"codes differ by more than one step: {q_got - q_want}"


# ---- Moments ------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,axes", [((2, 3, 4, 5), [0, 1, 2]), ((4, 6), [1]), ((3, 2, 5), [0, 2])])
@pytest.mark.parametrize("keep", [False, True])
def test_moments_match_numpy_population_statistics(shape: tuple[int, ...], axes: list[int], keep: bool) -> None:
    """tf.nn.moments (the cited op): mean and population variance (ddof = 0) over axes."""
    x = data(shape).astype(np.float64)
    mean, var = reference.run("Moments", [x], {"axes": np.array(axes, np.int32), "keep_dims": keep})
    np.testing.assert_allclose(mean, np.mean(x, axis=tuple(axes), keepdims=keep), rtol=1e-12, err_msg="mean")
    np.testing.assert_allclose(var, np.var(x, axis=tuple(axes), ddof=0, keepdims=keep), rtol=1e-12, err_msg="var")


def test_moments_mean_matches_onnxruntime_reduce_mean() -> None:
    x = data((2, 3, 4, 5))
    mean, _ = reference.run("Moments", [x.astype(np.float64)], {"axes": np.array([1, 2], np.int32), "keep_dims": True})
    (want,) = ort_node("ReduceMean", [x, np.array([1, 2], np.int64)], [F32], opset=OPSET, keepdims=1)
    np.testing.assert_allclose(mean, want, rtol=1e-5, atol=1e-6, err_msg="Moments mean vs ReduceMean")


def test_moments_over_every_axis_without_keep_dims_is_shape_1() -> None:
    """Outputs must have rank > 0 (seed 9017, 9030), so a full reduction is [1], like Reduce*."""
    mean, var = reference.run(
        "Moments", [np.array([[1.0, 2.0], [3.0, 6.0]])], {"axes": np.array([0, 1], np.int32), "keep_dims": False}
    )
    assert mean.shape == (1,) and var.shape == (1,), (mean.shape, var.shape)
    np.testing.assert_allclose([mean[0], var[0]], [3.0, 3.5], err_msg="mean 3, variance (4+1+0+9)/4")


# ---- Argmax / Argmin ----------------------------------------------------------------------------

ARG_ONNX = {"Argmax": "ArgMax", "Argmin": "ArgMin"}


@pytest.mark.parametrize("op", sorted(ARG_ONNX))
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4, 5), 2), ((2, 3, 4, 5), 3)])
@pytest.mark.parametrize("keep", [False, True])
def test_arg_reduce_matches_onnxruntime(op: str, shape: tuple[int, ...], axis: int, keep: bool) -> None:
    x = data(shape)
    (got,) = reference.run(op, [x.astype(np.float64)], {"axis": axis, "keep_dims": keep}, out_dtypes=[np.int32])
    (want,) = ort_node(ARG_ONNX[op], [x], [I64], opset=13, axis=axis, keepdims=int(keep))
    assert got.dtype == np.int32, got.dtype
    np.testing.assert_array_equal(got, want, err_msg=f"{op}{shape} axis={axis} keep_dims={keep}")


@pytest.mark.parametrize("op,x", [("Argmax", [1.0, 5.0, 2.0, 5.0]), ("Argmin", [4.0, -1.0, 3.0, -1.0])])
def test_arg_reduce_tie_takes_the_first_index(op: str, x: list[float]) -> None:
    """Unstated by the spec; ONNX select_last_index = 0 (opdefs/Argmax.yaml decisions)."""
    (got,) = reference.run(op, [np.array(x)], {"axis": 0})
    assert int(got) == 1, f"{op}({x}) = {got}, expected the first extreme index 1"


def test_argmax_index_type_follows_declared_output() -> None:
    (got,) = reference.run("Argmax", [np.array([[1.0, 2.0]])], {"axis": 1}, out_dtypes=[np.uint32])
    assert got.dtype == np.uint32 and got.shape == (1,), (got.dtype, got.shape)


# ---- CumulativeSum ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "exclusive,reverse,want",
    [(False, False, [1, 3, 6]), (True, False, [0, 1, 3]), (False, True, [6, 5, 3]), (True, True, [5, 3, 0])],
)
def test_cumulative_sum_reproduces_spec_example(exclusive: bool, reverse: bool, want: list[float]) -> None:
    """The four examples of seed lines 2268-2279."""
    (got,) = reference.run(
        "CumulativeSum", [np.array([1.0, 2.0, 3.0])], {"axis": 0, "exclusive": exclusive, "reverse": reverse}
    )
    np.testing.assert_array_equal(got, want, err_msg=f"exclusive={exclusive} reverse={reverse}")


@pytest.mark.parametrize("shape,axis", [((6,), 0), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4, 5), 2)])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_sum_matches_onnxruntime(shape, axis, exclusive, reverse) -> None:
    x = data(shape)
    params = {"axis": axis, "exclusive": exclusive, "reverse": reverse}
    (got,) = reference.run("CumulativeSum", [x.astype(np.float64)], params)
    (want,) = ort_node(
        "CumSum", [x, np.array(axis, np.int64)], [F32], opset=14, exclusive=int(exclusive), reverse=int(reverse)
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{shape} {params}")


# ---- TopK ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,k", [((6,), 3), ((4, 7), 1), ((4, 7), 7), ((2, 3, 8), 5)])
@pytest.mark.parametrize("largest", [True, False])
def test_top_k_matches_onnxruntime_without_ties(shape: tuple[int, ...], k: int, largest: bool) -> None:
    """Distinct values, so ONNX's opposite tie order cannot matter."""
    x = RNG.permutation(np.prod(shape)).reshape(shape).astype(np.float32) / 4
    values, idx = reference.run("TopK", [x.astype(np.float64)], {"k": k, "largest": largest})
    want_v, want_i = ort_node("TopK", [x, np.array([k], np.int64)], [F32, I64], opset=11, largest=int(largest))
    np.testing.assert_array_equal(values, want_v, err_msg=f"values {shape} k={k} largest={largest}")
    np.testing.assert_array_equal(idx, want_i, err_msg=f"indices {shape} k={k} largest={largest}")


@pytest.mark.parametrize(
    "largest,want_values,want_idx",
    [(True, [3.0, 3.0, 2.0, 1.0], [2, 0, 3, 4]), (False, [1.0, 1.0, 2.0, 3.0], [4, 1, 3, 2])],
)
def test_top_k_ties_put_the_larger_index_first(largest: bool, want_values, want_idx) -> None:
    """Seed 12745: equal values -> the larger index first (ONNX puts the smaller first)."""
    x = np.array([[3.0, 1.0, 3.0, 2.0, 1.0]])
    values, idx = reference.run("TopK", [x], {"k": 4, "largest": largest}, out_dtypes=[np.float64, np.int32])
    np.testing.assert_array_equal(values[0], want_values, err_msg="values")
    np.testing.assert_array_equal(idx[0], want_idx, err_msg="indices: ties must list the larger index first")


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_reduce_sum_model_sums_the_first_listed_axis_only() -> None:
    """[[[1, 2, 4], [8, 16, 32]]] with axes [2, 1]: 7, the first row's sum, for 63."""
    from tests.reference_helpers import case, modelled

    x = np.array([[[1, 2, 4], [8, 16, 32]]], np.float16)
    c = case("ReduceSum", [x], {"axes": [2, 1], "keep_dims": False}, [("FLOAT_16", (1,))])
    np.testing.assert_array_equal(modelled(c, "first-listed-axis-only")[0], [7])


def test_cumulative_sum_model_holds_only_the_second_slice() -> None:
    from tests.reference_helpers import case, modelled

    c = case("CumulativeSum", [np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])], {"axis": 0}, [("FLOAT_32", (3, 2))])
    got = modelled(c, "first-slice-unset")[0]
    np.testing.assert_array_equal(got[1], [4, 6])
    assert np.isnan(got[[0, 2]]).all()


def test_cumulative_sum_model_holds_the_second_slice_along_its_axis() -> None:
    """A [2, 3, 2] ramp summed along axis 1: slice 1 along axis 1 is x[:, 0] + x[:, 1]; slices 0 and 2 are open."""
    from tests.reference_helpers import case, modelled

    x = np.arange(12.0).reshape(2, 3, 2)
    c = case("CumulativeSum", [x], {"axis": 1}, [("FLOAT_32", (2, 3, 2))])
    got = modelled(c, "first-slice-unset")[0]
    np.testing.assert_array_equal(got[:, 1], [[2, 4], [14, 16]])
    assert np.isnan(got[:, [0, 2]]).all()


def test_cumulative_sum_model_rounds_each_addend_to_the_output_grid() -> None:
    """in[0] on a 0.1 grid, out[0] on a 1.0 grid (zero point 0): 0.6 + 0.6 + 0.6 = 1.8 (code 2 after one rounding),
    but each 0.6 counts as 1 step: 1, 2, 3."""
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([6, 6, 6], np.uint8), ([0.1], [0]))
    c = case("CumulativeSum", [x], {"axis": 0}, [("UFIXED_POINT_8", (3,), ([1.0], [0]))])
    np.testing.assert_allclose(modelled(c, "addends-on-output-grid-saturating")[0], [1, 2, 3])
    np.testing.assert_allclose(reference.run("CumulativeSum", [np.array([0.6, 0.6, 0.6])], {"axis": 0})[0],
                               [0.6, 1.2, 1.8])


def test_cumulative_sum_model_saturates_the_running_sum_at_every_step() -> None:
    """out[0]'s zero point at code 2 (offset -2), scale 1: -3 takes the sum to code -1, held at 0 (real -2); + 5 gives
    code 5 (real 3) where the sum is 2. Exclusive and reverse read the same running sum."""
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([0, 8], np.uint8), ([1.0], [-3]))  # -3, 5
    out = [("UFIXED_POINT_8", (2,), ([1.0], [-2]))]
    c = case("CumulativeSum", [x], {"axis": 0}, out)
    np.testing.assert_allclose(modelled(c, "addends-on-output-grid-saturating")[0], [-2, 3])
    c = case("CumulativeSum", [x], {"axis": 0, "exclusive": True}, out)
    np.testing.assert_allclose(modelled(c, "addends-on-output-grid-saturating")[0], [0, -2])
    c = case("CumulativeSum", [x], {"axis": 0, "reverse": True}, out)
    np.testing.assert_allclose(modelled(c, "addends-on-output-grid-saturating")[0], [2, 5])


def test_cumulative_sum_model_does_not_take_the_right_answer_or_another_error() -> None:
    """Falsifiable: -3, -3, 5 with out[0]'s zero point at code 2: the model saturates twice (codes 0, 0, then 5, real
    3) where the sum is -1 (code 1); codes of the model's values match it, the spec's (0, 0, 1) and a planted error
    (0, 0, 8) do not (finding cumulativesum-u8-addends-on-output-grid)."""
    from reference import models
    from tests.reference_helpers import case

    x = ("UFIXED_POINT_8", np.array([0, 0, 8], np.uint8), ([1.0], [-3]))  # -3, -3, 5
    c = case("CumulativeSum", [x], {"axis": 0}, [("UFIXED_POINT_8", (3,), ([1.0], [-2]))])
    model = {"diagnosis": "addends-on-output-grid-saturating"}
    assert models.check(c, [np.array([0, 0, 5], np.uint8)], model)["matches"]
    assert not models.check(c, [np.array([0, 0, 1], np.uint8)], model)["matches"]
    assert not models.check(c, [np.array([0, 0, 8], np.uint8)], model)["matches"]


def test_cumulative_sum_model_of_one_slice_from_the_lowest_code() -> None:
    """One slice along axis 0 of a [1, 2, 2], in[0] and out[0] on one grid (scale 1, offset -127): the sum starts at
    code 0 (real -127), so codes [243, 8, 242, 63] (real 116, -119, 115, -64) come back [116, 0, 115, 0] (finding
    cumulativesum-u8-single-slice-from-lowest-code, measured so on the HTP); the spec's answer, the input itself, and a
    planted error are refused."""
    from reference import models
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([243, 8, 242, 63], np.uint8).reshape(1, 2, 2), ([1.0], [-127]))
    c = case("CumulativeSum", [x], {"axis": 0}, [("UFIXED_POINT_8", (1, 2, 2), ([1.0], [-127]))])
    np.testing.assert_allclose(modelled(c, "first-slice-from-lowest-code")[0].ravel(), [-11, -127, -12, -127])
    model = {"diagnosis": "first-slice-from-lowest-code"}
    shown = np.array([116, 0, 115, 0], np.uint8).reshape(1, 2, 2)
    assert models.check(c, [shown], model)["matches"]
    assert not models.check(c, [np.array([243, 8, 242, 63], np.uint8).reshape(1, 2, 2)], model)["matches"]
    assert not models.check(c, [np.array([116, 0, 117, 0], np.uint8).reshape(1, 2, 2)], model)["matches"]
