"""The independent implementations the reference tests cross-check against, in one place.

Every reference test module needs "run this ONNX node (or chain) on onnxruntime's CPU provider" or
"on onnx.reference"; writing that helper once keeps the cross-checks comparable (same opset, same IR
version, same logging) and keeps the test modules about the op, not about ONNX plumbing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

F32, F16, F64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE
I64, I32, BOOL = TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL
DEFAULT_OPSET = 22
IR_VERSION = 10

Node = tuple[str, Sequence[str], dict[str, Any]]  # (op type, input names, attributes)


def _model(nodes: Sequence[Node], feeds: dict[str, np.ndarray], out_types: Sequence[int] | None,
           opset: int, n_outputs: int) -> onnx.ModelProto:  # fmt: skip
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in feeds.items()]  # fmt: skip
    made = []
    for i, (op, inputs, attrs) in enumerate(nodes):
        last = i == len(nodes) - 1
        outs = [f"y{j}" for j in range(n_outputs)] if last else [f"t{i}"]
        made.append(helper.make_node(op, list(inputs), outs, **attrs))
    types = list(out_types) if out_types is not None else [F32] * n_outputs
    outputs = [helper.make_tensor_value_info(f"y{j}", t, None) for j, t in enumerate(types)]
    model = helper.make_model(helper.make_graph(made, "oracle", ins, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])  # fmt: skip
    model.ir_version = IR_VERSION
    return model


def ort_graph(nodes: Sequence[Node], feeds: dict[str, np.ndarray], out_types: Sequence[int] | None = None,
              opset: int = DEFAULT_OPSET, n_outputs: int | None = None) -> list[np.ndarray]:  # fmt: skip
    """A chain of ONNX nodes on onnxruntime CPU: node i writes ``t<i>``, the last writes ``y0..``;
    inputs are named by ``feeds``' keys. Returns every output of the last node."""
    n = n_outputs or (len(out_types) if out_types is not None else 1)
    model = _model(nodes, feeds, out_types, opset, n)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def ort_node(op: str, inputs: Sequence[np.ndarray | None], out_types: Sequence[int] | None = None,
             opset: int = DEFAULT_OPSET, n_outputs: int | None = None, **attrs: Any) -> list[np.ndarray]:  # fmt: skip
    """One ONNX node on onnxruntime CPU; ``None`` inputs are left out (ONNX's empty input name)."""
    feeds = {f"x{i}": a for i, a in enumerate(inputs) if a is not None}
    names = ["" if a is None else f"x{i}" for i, a in enumerate(inputs)]
    while names and names[-1] == "":
        names.pop()
    return ort_graph([(op, names, attrs)], feeds, out_types, opset, n_outputs)


def onnx_reference_node(op: str, inputs: Sequence[np.ndarray | None], opset: int = DEFAULT_OPSET,
                        n_outputs: int = 1, **attrs: Any) -> list[np.ndarray]:  # fmt: skip
    """One ONNX node on ``onnx.reference`` (the pure-python evaluator): the second opinion where
    onnxruntime lacks a kernel. See spec-ambiguities.md for its known defects (LRN, grouped ConvTranspose)."""
    from onnx.reference import ReferenceEvaluator

    feeds = {f"x{i}": a for i, a in enumerate(inputs) if a is not None}
    names = ["" if a is None else f"x{i}" for i, a in enumerate(inputs)]
    while names and names[-1] == "":
        names.pop()
    model = _model([(op, names, attrs)], feeds, None, opset, n_outputs)
    return list(ReferenceEvaluator(model).run(None, feeds))
