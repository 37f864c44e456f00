"""The indexing references (reference/indexing.py) against ONNX's Gather*/Scatter*/NonZero/OneHot.

Cross-checks use in-range, non-negative indices, where QNN and ONNX agree. What ONNX cannot say
(-1 meaning "skip" rather than "last", the -1 padding of NonZero, BatchPermutation's ignored
indices, last-wins duplicates under reduction NONE) is pinned by hand-computed cases named for the
decision they check (the ``decisions:`` lists of opdefs/<Op>.yaml).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from cases import quant
from tests.onnx_oracle import onnx_reference_node, ort_node
from tests.reference_helpers import f32, member, ref, same

# the spec's numbers of the ScatterElements reduction members (ScatterNd numbers them the same)
SCATTER_NONE, SCATTER_ADD, SCATTER_MUL, SCATTER_MAX = (member("ScatterElements", "reduction", r)
                                                       for r in ("NONE", "ADD", "MUL", "MAX"))  # fmt: skip
ONNX_REDUCTION = {SCATTER_NONE: "none", SCATTER_ADD: "add", SCATTER_MUL: "mul", SCATTER_MAX: "max"}
SEEDS = range(6)


# the cross-checks were written against opset 21; outputs are typed by the node
onnx_ref = partial(onnx_reference_node, opset=21)
onnx_ort = partial(ort_node, opset=21)


def shape_of(rng, rank, lo=1, hi=4):
    return tuple(int(d) for d in rng.integers(lo, hi + 1, rank))


# ---------------------------------------------------------------------------------------------
# Gather, GatherElements, GatherNd


@pytest.mark.parametrize("seed", SEEDS)
def test_gather_matches_onnx_gather_on_every_axis(seed):
    rng = np.random.default_rng(seed)
    x = f32(rng, shape_of(rng, int(rng.integers(1, 4))))
    for axis in range(x.ndim):
        idx = rng.integers(0, x.shape[axis], shape_of(rng, int(rng.integers(1, 3)))).astype(np.int32)
        (got,) = ref("Gather", [x.astype(np.float64), idx], {"axis": axis})
        same(got, onnx_ref("Gather", [x, idx], axis=axis)[0], f"Gather axis={axis} idx={idx.tolist()}")


def test_gather_skips_minus_one_with_zeros():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    (got,) = ref("Gather", [x, np.array([2, -1, 0], np.int32)], {"axis": 0})
    same(got, [[5, 6], [0, 0], [1, 2]], "-1 skips (line 6091): a zero row, not the last row as in ONNX")


def test_gather_reads_uint32_all_ones_as_skip():
    x = np.array([1.0, 2.0, 3.0])
    idx = np.array([1, 0xFFFFFFFF], np.uint32)
    same(ref("Gather", [x, idx], {"axis": 0})[0], [2, 0], "UINT_32 0xFFFFFFFF is -1 (skip)")
    same(ref("Gather", [x, idx.astype(np.float64)], {"axis": 0})[0], [2, 0], "same when passed as real values")


def test_gather_rejects_indices_out_of_range():
    with pytest.raises(ValueError, match="outside"):
        ref("Gather", [np.arange(3.0), np.array([3], np.int32)], {"axis": 0})


@pytest.mark.parametrize("seed", SEEDS)
def test_gather_elements_matches_onnx(seed):
    rng = np.random.default_rng(seed)
    x = f32(rng, shape_of(rng, int(rng.integers(1, 4)), 2, 4))
    for axis in range(x.ndim):
        shape = [int(rng.integers(1, d + 1)) for d in x.shape]  # in[1] may be smaller off the axis
        shape[axis] = int(rng.integers(1, 5))
        idx = rng.integers(0, x.shape[axis], shape).astype(np.int32)
        (got,) = ref("GatherElements", [x.astype(np.float64), idx], {"axis": axis})
        # onnxruntime: onnx.reference refuses in[1] smaller than in[0] off the axis, which ONNX allows.
        same(got, onnx_ort("GatherElements", [x, idx], axis=axis)[0], f"GatherElements axis={axis}")


def test_gather_elements_skips_minus_one_with_zeros():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    (got,) = ref("GatherElements", [x, np.array([[1, -1], [-1, 0]], np.int32)], {"axis": 1})
    same(got, [[2, 0], [0, 3]], "-1 skips (line 6176)")


@pytest.mark.parametrize("batch_dims", [0, 1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_gather_nd_matches_onnx_gathernd(batch_dims, seed):
    rng = np.random.default_rng(seed)
    n = batch_dims + int(rng.integers(1, 3))
    x = f32(rng, shape_of(rng, n, 1, 4))
    k = int(rng.integers(1, n - batch_dims + 1))
    tuples = shape_of(rng, int(rng.integers(0, 3)))
    idx = np.stack([rng.integers(0, x.shape[batch_dims + j], x.shape[:batch_dims] + tuples) for j in range(k)], -1)
    idx = idx.astype(np.int32)
    (got,) = ref("GatherNd", [x.astype(np.float64), idx], {"batch_dims": batch_dims})
    (expected,) = onnx_ref("GatherND", [x, idx.astype(np.int64)], batch_dims=batch_dims)
    same(got, expected, f"GatherNd batch_dims={batch_dims} x{x.shape} idx{idx.shape}")


def test_gather_nd_skips_a_tuple_with_minus_one():
    x = np.arange(12.0).reshape(3, 4)
    (got,) = ref("GatherNd", [x, np.array([[2], [-1], [0]], np.int32)])
    same(got, [[8, 9, 10, 11], [0, 0, 0, 0], [0, 1, 2, 3]], "-1 skips a whole slice (line 6251)")
    (got,) = ref("GatherNd", [x, np.array([[1, 2], [-1, 3]], np.int32)])
    same(got, [6, 0], "any -1 component skips the element")


# ---------------------------------------------------------------------------------------------
# ScatterElements, ScatterNd


def _unique_positions(rng, dim, shape, axis):
    """Indices along ``axis`` with no duplicate target: a slice of a permutation per line."""
    moved = np.moveaxis(np.empty(shape), axis, -1)
    lines = [rng.permutation(dim)[: shape[axis]] for _ in range(int(np.prod(moved.shape[:-1])))]
    return np.moveaxis(np.array(lines).reshape(moved.shape), -1, axis)


@pytest.mark.parametrize("reduction", [SCATTER_NONE, SCATTER_ADD, SCATTER_MUL, SCATTER_MAX])
@pytest.mark.parametrize("seed", range(4))
def test_scatter_elements_matches_onnx(reduction, seed):
    rng = np.random.default_rng(seed)
    x = f32(rng, shape_of(rng, int(rng.integers(1, 4)), 2, 4))
    for axis in range(x.ndim):
        shape = [int(rng.integers(1, d + 1)) for d in x.shape]
        if reduction == SCATTER_NONE:  # ONNX leaves duplicates undefined under 'none'
            idx = _unique_positions(rng, x.shape[axis], shape, axis)
        else:
            shape[axis] = int(rng.integers(1, 6))  # duplicates are allowed and accumulate
            idx = rng.integers(0, x.shape[axis], shape)
        idx = idx.astype(np.int32)
        upd = f32(rng, idx.shape)
        params = {"axis": axis, "reduction": reduction}
        (got,) = ref("ScatterElements", [x.astype(np.float64), idx, upd.astype(np.float64)], params)
        attrs = {"axis": axis, "reduction": ONNX_REDUCTION[reduction]}
        (expected,) = onnx_ref("ScatterElements", [x.astype(np.float64), idx, upd.astype(np.float64)], **attrs)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=f"ScatterElements {attrs}")


def test_scatter_elements_none_lets_the_last_duplicate_win():
    x = np.zeros(3)
    (got,) = ref("ScatterElements", [x, np.array([1, 1, 1], np.int32), np.array([5.0, 6.0, 7.0])])
    same(got, [0, 7, 0], "duplicates under NONE: the last update in row-major order wins (line 11656)")


def test_scatter_elements_max_compares_with_the_original_data():
    x = np.array([4.0, 0.0])
    (got,) = ref("ScatterElements", [x, np.array([0, 1, 1], np.int32), np.array([1.0, -2.0, -1.0])], {"reduction": 3})
    same(got, [4, 0], "MAX keeps in[0] where it is larger than every update")


def test_scatter_elements_skips_minus_one():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    idx = np.array([[-1, 0], [1, -1]], np.int32)
    (got,) = ref("ScatterElements", [x, idx, np.array([[9.0, 8.0], [7.0, 6.0]])], {"axis": 0})
    same(got, [[1, 8], [7, 4]], "-1 applies no update (line 11584)")


def test_scatter_elements_add_quantized_matches_onnx_within_one_step():
    rng = np.random.default_rng(3)
    dtype = "UFIXED_POINT_8"
    x, upd = rng.uniform(-1, 1, (4, 6)), rng.uniform(-1, 1, (6, 6))
    enc_in = quant.encoding_for_range(-1, 1, dtype)
    xr, ur = (quant.dequantize(quant.quantize(a, enc_in, dtype), enc_in) for a in (x, upd))
    idx = rng.integers(0, 4, (6, 6)).astype(np.int32)
    (got,) = ref("ScatterElements", [xr, idx, ur], {"axis": 0, "reduction": SCATTER_ADD})
    (expected,) = onnx_ref("ScatterElements", [xr.astype(np.float32), idx, ur.astype(np.float32)], reduction="add")
    enc_out = quant.encoding_for_range(-6, 6, dtype)
    q_got, q_exp = (quant.quantize(a, enc_out, dtype).astype(int) for a in (got, expected))
    worst = int(np.max(np.abs(q_got - q_exp)))
    assert worst <= 1, f"quantized ScatterElements ADD differs from ONNX by {worst} steps"


@pytest.mark.parametrize("reduction", [SCATTER_NONE, SCATTER_ADD, SCATTER_MUL])
@pytest.mark.parametrize("seed", range(4))
def test_scatter_nd_matches_onnx(reduction, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    x = f32(rng, shape_of(rng, n, 2, 4))
    k = int(rng.integers(1, n + 1))
    lead = shape_of(rng, int(rng.integers(1, 3)), 1, 3)
    count = int(np.prod(lead))
    cells = np.array(list(np.ndindex(x.shape[:k])))
    if reduction == SCATTER_NONE:  # unique tuples (ONNX leaves duplicates undefined under 'none')
        lead = (min(count, len(cells)),)
        pick = rng.permutation(len(cells))[: lead[0]]
    else:
        pick = rng.integers(0, len(cells), count)
    idx = cells[pick].reshape(lead + (k,)).astype(np.int32)
    upd = f32(rng, lead + x.shape[k:]).astype(np.float64)
    (got,) = ref("ScatterNd", [x.astype(np.float64), idx, upd], {"reduction": reduction})
    attrs = {"reduction": ONNX_REDUCTION[reduction]}
    (expected,) = onnx_ref("ScatterND", [x.astype(np.float64), idx.astype(np.int64), upd], **attrs)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=f"ScatterNd {attrs} idx{idx.shape}")


def test_scatter_nd_none_lets_the_last_duplicate_win_and_skips_minus_one():
    x = np.zeros((3, 2))
    idx = np.array([[1], [-1], [1]], np.int32)
    (got,) = ref("ScatterNd", [x, idx, np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])])
    same(got, [[0, 0], [5, 6], [0, 0]], "last duplicate wins (line 11761); -1 updates nothing (line 11699)")


def test_scatter_nd_rejects_max_which_it_does_not_list():
    with pytest.raises(ValueError, match="reduction"):
        ref("ScatterNd", [np.zeros(2), np.array([[0]], np.int32), np.array([1.0])], {"reduction": 3})


# ---------------------------------------------------------------------------------------------
# NonZero


@pytest.mark.parametrize("seed", SEEDS)
def test_nonzero_rows_are_onnx_nonzero_transposed_then_minus_one(seed):
    rng = np.random.default_rng(seed)
    shape = shape_of(rng, int(rng.integers(1, 4)))
    x = np.where(rng.random(shape) < 0.4, rng.uniform(-2, 2, shape), 0).astype(np.float32)
    (got,) = ref("NonZero", [x.astype(np.float64)], out_dtypes=[np.int32])
    coords = onnx_ref("NonZero", [x])[0].T  # ONNX: [N, nnz], row-major element order
    assert got.shape == (x.size, x.ndim), f"NonZero shape {got.shape}, expected [M, N] = {(x.size, x.ndim)}"
    same(got[: len(coords)], coords, "NonZero leading rows")
    same(got[len(coords) :], np.full((x.size - len(coords), x.ndim), -1), "NonZero fill rows are -1 (line 9288)")


def test_nonzero_uint32_output_fills_with_all_ones():
    (got,) = ref("NonZero", [np.array([[0.0, 2.0], [0.0, 0.0]])], out_dtypes=[np.uint32])
    assert got.dtype == np.uint32, f"dtype {got.dtype}"
    same(got, np.array([[0, 1], [-1, -1], [-1, -1], [-1, -1]]).astype(np.uint32), "UINT_32 -1 is 0xFFFFFFFF")


# ---------------------------------------------------------------------------------------------
# OneHot


@pytest.mark.parametrize("seed", range(4))
def test_one_hot_matches_onnx_for_every_axis(seed):
    rng = np.random.default_rng(seed)
    depth = int(rng.integers(1, 6))
    idx = rng.integers(0, depth, shape_of(rng, int(rng.integers(1, 4)))).astype(np.int32)
    on, off = np.float32(2.5), np.float32(-0.5)
    for axis in range(idx.ndim + 1):
        params = {"depth": depth, "axis": axis, "on_value": on, "off_value": off}
        (got,) = ref("OneHot", [idx], params)
        values = np.array([off, on], np.float32)
        (expected,) = onnx_ref("OneHot", [idx.astype(np.int64), np.array(depth, np.int64), values], axis=axis)
        same(got, expected, f"OneHot depth={depth} axis={axis}")


def test_one_hot_defaults_axis_last_and_values_one_zero():
    (got,) = ref("OneHot", [np.array([2, 0], np.int32)], {"depth": 3})
    same(got, [[0, 0, 1], [1, 0, 0]], "default axis N, on 1, off 0")


def test_one_hot_out_of_range_index_gives_all_off_values():
    (got,) = ref("OneHot", [np.array([3, -1], np.int32)], {"depth": 3})
    same(got, [[0, 0, 0], [0, 0, 0]], "out-of-range index is all off_value (TensorFlow; line 9435)")


# ---------------------------------------------------------------------------------------------
# BatchPermutation


def test_batch_permutation_spec_example():
    x = np.array([[[1, 5], [3, 4]], [[4, 3], [5, 2]], [[2, 2], [6, 0]], [[0, 0], [1, 2]]], float)
    (got,) = ref("BatchPermutation", [x, np.array([2, 0, 1, 3], np.int32)])
    expected = [[[2, 2], [6, 0]], [[1, 5], [3, 4]], [[4, 3], [5, 2]], [[0, 0], [1, 2]]]
    same(got, expected, "the example at lines 340-357")


@pytest.mark.parametrize("seed", SEEDS)
def test_batch_permutation_matches_numpy_take(seed):
    rng = np.random.default_rng(seed)
    x = f32(rng, shape_of(rng, int(rng.integers(1, 5)), 1, 5))
    idx = rng.permutation(x.shape[0])[: int(rng.integers(1, x.shape[0] + 1))].astype(np.int32)
    (got,) = ref("BatchPermutation", [x.astype(np.float64), idx])
    same(got, np.take(x, idx, axis=0), f"BatchPermutation idx={idx.tolist()}")


def test_batch_permutation_drops_invalid_indices_and_pads_zeros_at_the_end():
    x = np.array([[1.0], [2.0], [3.0], [4.0]])
    (got,) = ref("BatchPermutation", [x, np.array([2, 7, -1, 0], np.int32)])
    same(got, [[3], [1], [0], [0]], "valid indices packed first, then zero rows (line 397)")


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_gather_model_flips_the_sign_bit_of_every_code() -> None:
    """Codes 89 and -59 (offset 0, scale 1) come back as -39 and 69."""
    from tests.reference_helpers import case, modelled

    enc = ([1.0], [0])
    c = case("Gather", [("SFIXED_POINT_8", np.array([[89, -59], [1, 2]], np.int8), enc),
                        ("INT_32", np.array([0], np.int32))], {"axis": 0},
             [("SFIXED_POINT_8", (1, 2), enc)])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "sign-bit-flipped")[0], [[-39, 69]])


def test_gather_model_reads_every_outer_row_as_the_first() -> None:
    """A [2, 3] table gathered on axis 1 by [0, 2]: row 1 repeats row 0's gathered values."""
    from tests.reference_helpers import case, modelled

    table = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    c = case("Gather", [table, ("INT_32", np.array([0, 2], np.int32))], {"axis": 1}, [("FLOAT_32", (2, 2))])
    np.testing.assert_array_equal(modelled(c, "outer-rows-read-as-first")[0], [[1, 3], [1, 3]])


def test_gather_model_on_axis_0_reads_every_outer_index_row_as_the_first() -> None:
    """A [3, 2] table gathered on axis 0 by [[2, 0], [1, 1]]: the spec gives [[5, 6], [1, 2]] then [[3, 4], [3, 4]];
    the model repeats in[1]'s first row, [[5, 6], [1, 2]] twice (seed 0's rank-5 edge case, axis 0)."""
    from tests.reference_helpers import case, modelled

    table = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = case("Gather", [table, ("INT_32", np.array([[2, 0], [1, 1]], np.int32))], {"axis": 0},
             [("FLOAT_32", (2, 2, 2))])
    np.testing.assert_array_equal(modelled(c, "outer-rows-read-as-first")[0], [[[5, 6], [1, 2]], [[5, 6], [1, 2]]])


def test_batch_permutation_takes_gathers_sign_bit_model() -> None:
    """BatchPermutation is Gather on axis 0 on the ONNX route: rows [1, 0] of codes [[89, -59], [1, 2]] come back
    [[-127, -126], [-39, 69]] (each code 128 off)."""
    from tests.reference_helpers import case, modelled

    enc = ([1.0], [0])
    c = case("BatchPermutation", [("SFIXED_POINT_8", np.array([[89, -59], [1, 2]], np.int8), enc),
                                  ("INT_32", np.array([1, 0], np.int32))], {},
             [("SFIXED_POINT_8", (2, 2), enc)])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "sign-bit-flipped")[0], [[-127, -126], [-39, 69]])


def test_gather_model_holds_only_the_first_outer_slice() -> None:
    """A [2, 3, 2] table gathered on axis 1 with indices [2, 0]: outer slice 0 is [[4, 5], [0, 1]]; slice 1 is open."""
    from tests.reference_helpers import case, modelled

    x = np.arange(12.0).reshape(2, 3, 2)
    c = case("Gather", [x, np.array([2, 0], np.int32)], {"axis": 1}, [("FLOAT_32", (2, 2, 2))])
    got = modelled(c, "outer-rows-after-first-open")[0]
    np.testing.assert_array_equal(got[0], [[4, 5], [0, 1]])
    assert np.isnan(got[1]).all()


def test_scatter_nd_mul_model_rounds_each_partial_product_to_the_output_grid():
    """Grid step 0.5 (offset -128): x = 1.5, updates 1.5 and 2 at one index. The spec gives 4.5; the model rounds 2.25
    to 2.0 (half to even) before multiplying by 2: 4.0."""
    import reference
    from tests.reference_helpers import case, modelled

    enc = ([0.5], [-128])
    idx = ("INT_32", np.array([[0], [0]], np.int32))
    c = case("ScatterNd", [("UFIXED_POINT_8", np.array([131], np.uint8), enc), idx,
                           ("UFIXED_POINT_8", np.array([131, 132], np.uint8), enc)], {"reduction": 2},
             [("UFIXED_POINT_8", (1,), enc)])
    (truth,) = reference.run("ScatterNd", [np.array([1.5]), np.array([[0], [0]]), np.array([1.5, 2.0])],
                             {"reduction": 2})
    assert truth[0] == 4.5
    np.testing.assert_array_equal(modelled(c, "mul-partials-on-output-grid")[0], [4.0])


def test_scatter_nd_mul_model_holds_a_partial_product_in_the_output_range():
    """Out[0] in [-250, 5] (step 1, offset -250): x = 2, updates 4 and -1. The spec's -8 is inside the range; the
    model holds 8 at 5 after the first update, then gives -5 (seed 1's edge case, -1.43 for -13.7, is this)."""
    import reference
    from tests.reference_helpers import case, modelled

    enc = ([1.0], [-250])
    idx = ("INT_32", np.array([[0], [0]], np.int32))
    c = case("ScatterNd", [("UFIXED_POINT_8", np.array([252], np.uint8), enc), idx,
                           ("UFIXED_POINT_8", np.array([254, 249], np.uint8), enc)], {"reduction": 2},
             [("UFIXED_POINT_8", (1,), enc)])
    (truth,) = reference.run("ScatterNd", [np.array([2.0]), np.array([[0], [0]]), np.array([4.0, -1.0])],
                             {"reduction": 2})
    assert truth[0] == -8.0
    np.testing.assert_array_equal(modelled(c, "mul-partials-on-output-grid")[0], [-5.0])


def test_scatter_nd_mul_model_refuses_add():
    from tests.reference_helpers import case, modelled

    enc = ([1.0], [-250])
    c = case("ScatterNd", [("UFIXED_POINT_8", np.array([252], np.uint8), enc), ("INT_32", np.array([[0]], np.int32)),
                           ("UFIXED_POINT_8", np.array([252], np.uint8), enc)], {"reduction": 1},
             [("UFIXED_POINT_8", (1,), enc)])
    with pytest.raises(ValueError, match="MUL"):
        modelled(c, "mul-partials-on-output-grid")
