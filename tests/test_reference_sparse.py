"""Sparse ops (reference/sparse.py) on hand-written tensors from the spec's description (2092-2099)."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from reference.sparse import SparseTensor, canonical_rows


def test_sparse_to_dense_fills_unspecified_elements_with_zero() -> None:
    sp = SparseTensor(np.array([[0, 2], [1, 0]]), np.array([5.0, -1.5]), (2, 3))
    (dense,) = reference.run("SparseToDense", [sp], {})
    np.testing.assert_array_equal(dense, [[0, 0, 5.0], [-1.5, 0, 0]], err_msg="dense form")


def test_partially_sparse_tensor_has_dense_inner_blocks() -> None:
    """K = 2 sparse spatial dims over a dense channel dim: each value is a whole [C] block (2096)."""
    sp = SparseTensor(np.array([[1, 1]]), np.array([[1.0, 2.0, 3.0]]), (2, 2, 3))
    (dense,) = reference.run("SparseToDense", [sp], {})
    want = np.zeros((2, 2, 3))
    want[1, 1] = [1, 2, 3]
    np.testing.assert_array_equal(dense, want, err_msg="the channel block at (1, 1)")


def test_create_sparse_takes_the_dense_shape_from_the_output_and_sorts_entries() -> None:
    indices, values = np.array([[2, 1], [0, 3]]), np.array([7.0, 8.0])
    (sp,) = reference.run("CreateSparse", [indices, values], {}, out_shapes=[(3, 4)])
    assert sp.dense_shape == (3, 4), sp.dense_shape
    np.testing.assert_array_equal(sp.indices, [[0, 3], [2, 1]], err_msg="entries in row-major order")
    np.testing.assert_array_equal(sp.values, [8.0, 7.0], err_msg="values follow their indices")


def test_get_indices_and_values_round_trip_create_sparse() -> None:
    indices, values = np.array([[1, 0], [0, 1]]), np.array([[1.0, 2.0], [3.0, 4.0]])
    (sp,) = reference.run("CreateSparse", [indices, values], {}, out_shapes=[(2, 2, 2)])
    (got_idx,) = reference.run("GetSparseIndices", [sp], {}, out_dtypes=[np.dtype(np.uint32)])
    (got_val,) = reference.run("GetSparseValues", [sp], {})
    assert got_idx.dtype == np.uint32, got_idx.dtype
    assert [r[0] for r in canonical_rows(got_idx, got_val)] == [(0, 1), (1, 0)]
    np.testing.assert_array_equal(got_val, [[3.0, 4.0], [1.0, 2.0]], err_msg="values paired with sorted indices")


def test_explicit_zero_values_stay_entries() -> None:
    sp = SparseTensor(np.array([[0], [2]]), np.array([0.0, 1.0]), (3,))
    (vals,) = reference.run("GetSparseValues", [sp], {})
    assert vals.tolist() == [0.0, 1.0], "a stored zero is an entry, not dropped"


@pytest.mark.parametrize("indices,values,shape,what", [
    ([[0, 0], [0, 0]], [1.0, 2.0], (2, 2), "duplicate"),
    ([[0, 2]], [1.0], (2, 2), "outside"),
    ([[-1, 0]], [1.0], (2, 2), "outside"),
    ([[0, 0, 0]], [1.0], (2, 2), "K"),
])  # fmt: skip
def test_create_sparse_refuses_invalid_indices(indices: list, values: list, shape: tuple, what: str) -> None:
    with pytest.raises(ValueError, match=what):
        reference.run("CreateSparse", [np.array(indices), np.array(values)], {}, out_shapes=[shape])


def test_from_dense_round_trips() -> None:
    dense = np.array([[[0, 0], [1, 0]], [[0, 0], [0, 0]], [[2, 3], [0, 0]]], dtype=np.float64)
    sp = SparseTensor.from_dense(dense, 2)
    np.testing.assert_array_equal(sp.indices, [[0, 1], [2, 0]], err_msg="non-zero blocks")
    np.testing.assert_array_equal(sp.to_dense(), dense, err_msg="round trip")


def test_sparse_ops_refuse_a_plain_array() -> None:
    with pytest.raises(TypeError):
        reference.run("SparseToDense", [np.zeros((2, 2))], {})
