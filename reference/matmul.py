"""Matrix products: MatMul, FullyConnected, HadamardTransform.

Products are taken in float64 by numpy; a backend accumulating in float32/int32 differs by rounding,
which the tolerance (a K-long dot-product budget) absorbs, never this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference import register

DECISIONS: dict[str, list[dict[str, Any]]] = {
    "MatMul": [
        {
            "about": "bias inside the sum over k",
            "line": 8864,
            "choice": "C = A·B + b, the bias added once per output element (broadcast along the last axis)",
            "why": "read literally, sum_k (A B + b[j]) adds the bias K times; every framework (TF BatchMatMul + "
            "BiasAdd, ONNX Gemm) and the quantized MatMul kernels add it once, so the bracket is a typo",
        },
        {
            "about": "batch broadcasting",
            "line": 8849,
            "choice": "numpy matmul broadcasting of the batch dimensions",
            "why": "the spec's rule (equal, 1, or omitted) and its example ([10,256,128] x [5,1,128,64] -> "
            "[5,10,256,64]) are numpy's",
        },
    ],
    "FullyConnected": [
        {
            "about": "formula orientation",
            "line": 5991,
            "choice": "out = x · Wᵀ + b with W of shape [m, n] (x reshaped to [batch, n])",
            "why": "'inputAsVector * weightsMatrix' is a shape mismatch with W = [m, n]; NNAPI "
            "FULLY_CONNECTED (cited) computes x · Wᵀ with the same [num_units, input_size] weights",
        },
        {
            "about": "keep_dims",
            "line": 6051,
            "choice": "rank > 1 and keep_dims: in[0].shape[:-1] + [m], requiring shape[-1] == n; otherwise [batch, m] "
            "(rank 1 input: [m])",
            "why": "the output shape text (6078)",
        },
    ],
    "HadamardTransform": [
        {
            "about": "normalization",
            "line": 7087,
            "choice": "out = (H_n / sqrt(n)) · x * scale along the last axis, H_n the Sylvester-ordered ±1 matrix "
            "(H_2n = [[H, H], [H, -H]], the order of scipy.linalg.hadamard)",
            "why": "the spec writes HadamardTransform(in) * scale without saying; Qualcomm's QNN lowering in "
            "google-ai-edge/LiteRT (litert/vendors/qualcomm/core/builders/hadamard_transform_op_builder.cc) says the "
            "transform carries 1/sqrt(n) and maps a Sylvester ±h weight matrix to scale = S*h*sqrt(n)",
        },
        {
            "about": "last dimension not a power of two",
            "line": 7087,
            "choice": "no reference: the implementation raises ValueError",
            "why": "the spec is silent and no Sylvester matrix exists; the LiteRT lowering only emits power-of-two "
            "sizes. Cases should keep the last dimension a power of two",
        },
    ],
}


def _optional(inputs: list[np.ndarray | None], i: int) -> np.ndarray | None:
    return inputs[i] if len(inputs) > i and inputs[i] is not None else None


@register("MatMul")
def matmul(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    a = np.asarray(inputs[0], dtype=np.float64)
    b = np.asarray(inputs[1], dtype=np.float64)
    if bool(params.get("transpose_in0", False)):
        a = np.swapaxes(a, -1, -2)
    if bool(params.get("transpose_in1", False)):
        b = np.swapaxes(b, -1, -2)
    out = np.matmul(a, b)
    bias = _optional(inputs, 2)
    if bias is not None:
        out = out + np.asarray(bias, dtype=np.float64)
    return [out]


@register("FullyConnected")
def fully_connected(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    w = np.asarray(inputs[1], dtype=np.float64)
    m, n = w.shape
    bias = _optional(inputs, 2)
    b = np.zeros(m) if bias is None else np.asarray(bias, dtype=np.float64)
    if x.ndim == 1:
        return [w @ x + b]
    if x.size % n:
        raise ValueError(f"FullyConnected: in[0] of shape {x.shape} is not reshapable to [batch, {n}]")
    out = x.reshape(-1, n) @ w.T + b
    if bool(params.get("keep_dims", False)):
        if x.shape[-1] != n:
            raise ValueError(f"FullyConnected: keep_dims needs the last dim of {x.shape} to equal n = {n}")
        out = out.reshape(x.shape[:-1] + (m,))
    return [out]


def _fwht(x: np.ndarray) -> np.ndarray:
    """Fast Walsh-Hadamard transform along the last axis (length a power of two), Sylvester order."""
    n = x.shape[-1]
    h = 1
    while h < n:
        y = x.reshape(x.shape[:-1] + (n // (2 * h), 2, h))
        a, b = y[..., 0, :], y[..., 1, :]
        x = np.stack([a + b, a - b], axis=-2).reshape(x.shape)
        h *= 2
    return x


@register("HadamardTransform")
def hadamard_transform(
    inputs: list[np.ndarray | None], params: dict[str, Any], out_shapes: Any, out_dtypes: Any, *, op: str
) -> list[np.ndarray]:
    x = np.asarray(inputs[0], dtype=np.float64)
    n = x.shape[-1]
    if n & (n - 1):
        raise ValueError(f"HadamardTransform: last dimension {n} is not a power of two (no Sylvester matrix)")
    return [_fwht(x) * (float(params.get("scale", 1.0)) / np.sqrt(n))]
