"""Sparse tensors: CreateSparse (2100), GetSparseIndices (6536), GetSparseValues (6578), SparseToDense (12142).

How a sparse tensor crosses ``reference.run`` (whose inputs and outputs are arrays): as a
``SparseTensor`` (indices [M, K], values [M, D_K, ..., D_{N-1}], dense_shape [D_0, ..., D_{N-1}]),
passed in the inputs list where the spec has a sparse input and returned in the outputs list where
it has a sparse output. It is the spec's own description (CreateSparse, 2092-2099): K outermost
sparse dimensions, N-K dense inner dimensions, unspecified elements zero (for quantized types the
zero is real zero, offset 0). ``SparseTensor.from_dense`` builds one from a dense array for cases.

Canonical form: entries sorted by index, row-major (lexicographic on the K index columns), no
duplicate index. A backend may hold its entries in another order, so GetSparseIndices and
GetSparseValues outputs must be compared as a set of (index, value) rows (``canonical_rows``),
never position by position; M (the number of entries) is data-dependent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference import register


@dataclass(frozen=True)
class SparseTensor:
    """A COO tensor: ``values[m]`` is the dense tensor at ``[*indices[m], ...]``."""

    indices: np.ndarray  # [M, K] integers
    values: np.ndarray  # [M, D_K, ..., D_{N-1}]
    dense_shape: tuple[int, ...]  # [D_0, ..., D_{N-1}]

    def __post_init__(self) -> None:
        idx = np.asarray(self.indices)
        if idx.ndim != 2:
            raise ValueError(f"indices must be [M, K], got shape {idx.shape}")
        m, k = idx.shape
        n = len(self.dense_shape)
        if not 0 < k <= n:
            raise ValueError(f"K = {k} must satisfy 0 < K <= N = {n}")
        vals = np.asarray(self.values)
        if vals.shape != (m, *self.dense_shape[k:]):
            raise ValueError(f"values {list(vals.shape)} != [M, D_K..] = {[m, *self.dense_shape[k:]]}")
        if m and (np.any(idx < 0) or np.any(idx >= np.asarray(self.dense_shape[:k]))):
            raise ValueError(f"an index lies outside the dense shape {list(self.dense_shape[:k])}")
        if m and len({tuple(r) for r in idx.tolist()}) != m:
            raise ValueError("duplicate indices: two values for one element")

    @property
    def k(self) -> int:
        return int(np.asarray(self.indices).shape[1])

    def canonical(self) -> SparseTensor:
        """The same tensor with its entries in row-major index order."""
        idx = np.asarray(self.indices, dtype=np.int64)
        order = np.lexsort(idx.T[::-1]) if len(idx) else np.arange(0)
        return SparseTensor(idx[order], np.asarray(self.values)[order], tuple(self.dense_shape))

    def to_dense(self) -> np.ndarray:
        vals = np.asarray(self.values, dtype=np.float64)
        out = np.zeros(self.dense_shape, dtype=np.float64)
        for row, v in zip(np.asarray(self.indices, dtype=np.int64), vals, strict=True):
            out[tuple(row)] = v
        return out

    @classmethod
    def from_dense(cls, dense: np.ndarray, k: int) -> SparseTensor:
        """The entries of ``dense`` whose [D_K, ...] block is not all zero, over its first k axes."""
        dense = np.asarray(dense, dtype=np.float64)
        blocks = dense.reshape(*dense.shape[:k], -1)
        nz = np.argwhere(np.any(blocks != 0, axis=-1))
        return cls(nz.astype(np.int64), dense[tuple(nz.T)], tuple(dense.shape))


def canonical_rows(indices: np.ndarray, values: np.ndarray) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """(index, value) pairs sorted by index: what a comparator compares for the order-free outputs."""
    idx = np.asarray(indices, dtype=np.int64)
    vals = np.asarray(values)
    order = np.lexsort(idx.T[::-1]) if len(idx) else np.arange(0)
    return [(tuple(idx[i].tolist()), vals[i]) for i in order]


def _sparse_input(x: object, what: str) -> SparseTensor:
    if not isinstance(x, SparseTensor):
        raise TypeError(f"{what} must be a reference.sparse.SparseTensor, got {type(x).__name__}")
    return x


@register("CreateSparse", verified_by="hand")
def create_sparse(inputs, params, out_shapes, out_dtypes, *, op):
    """The dense shape [D_0 .. D_{N-1}] is the declared output's: the spec takes it from nowhere else."""
    if not out_shapes:
        raise LookupError("CreateSparse needs the declared output shape (out_shapes) for D_0..D_{N-1}")
    indices = np.asarray(inputs[0])
    if np.any(indices != np.round(indices)):
        raise ValueError("indices must be integers")
    sp = SparseTensor(indices.astype(np.int64), np.asarray(inputs[1], dtype=np.float64), tuple(out_shapes[0]))
    return [sp.canonical()]


@register("GetSparseIndices", verified_by="hand")
def get_sparse_indices(inputs, params, out_shapes, out_dtypes, *, op):
    sp = _sparse_input(inputs[0], "in[0]").canonical()
    dtype = out_dtypes[0] if out_dtypes else np.int64
    return [np.asarray(sp.indices).astype(dtype)]


@register("GetSparseValues", verified_by="hand")
def get_sparse_values(inputs, params, out_shapes, out_dtypes, *, op):
    sp = _sparse_input(inputs[0], "in[0]").canonical()
    return [np.asarray(sp.values, dtype=np.float64)]


@register("SparseToDense", verified_by="hand")
def sparse_to_dense(inputs, params, out_shapes, out_dtypes, *, op):
    return [_sparse_input(inputs[0], "in[0]").to_dense()]
