"""The independent implementations the reference tests cross-check against, in one place.

Every reference test module needs "run this ONNX node (or chain) on onnxruntime's CPU provider" or
"on onnx.reference"; writing that helper once keeps the cross-checks comparable (same opset, same IR
version, same logging) and keeps the test modules about the op, not about ONNX plumbing.

Importable without onnx and onnxruntime (the ONNX extras): a test that asks an engine is skipped then, saying why,
and every hand-computed test of the same module still runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

try:
    import onnx
    import onnxruntime as ort
    from onnx import helper
except ImportError as e:  # the ONNX extras are not installed: only the tests that run an engine skip
    onnx = ort = helper = None  # type: ignore[assignment]
    MISSING = f"the ONNX oracles need the ONNX extras (pip install '.[crosscheck]'): {e}"
else:
    MISSING = ""

# ONNX's TensorProto element types (fixed by the ONNX standard), so a test module's tables need no onnx to load
F32, F16, F64 = 1, 10, 11
I64, I32, BOOL = 7, 6, 9
# an output whose type the graph leaves to the engine (the default: the node decides, as in the backend)
UNTYPED = 0
DEFAULT_OPSET = 22
IR_VERSION = 10
ORT = "onnxruntime"
ONNX_REFERENCE = "onnx.reference"
ENGINES = (ORT, ONNX_REFERENCE)

Node = tuple[str, Sequence[str], dict[str, Any]]  # (op type, input names, attributes)


def _need_onnx() -> None:
    if MISSING:
        pytest.skip(MISSING)


def tensor_type(dtype: Any) -> int:
    """The ONNX element type of a numpy dtype (or scalar type), for ``out_types``."""
    _need_onnx()
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _model(nodes: Sequence[Node], feeds: dict[str, np.ndarray], out_types: Sequence[int] | None,
           opset: int, n_outputs: int) -> Any:  # fmt: skip
    ins = [helper.make_tensor_value_info(k, tensor_type(v.dtype), v.shape) for k, v in feeds.items()]
    made = []
    for i, (op, inputs, attrs) in enumerate(nodes):
        last = i == len(nodes) - 1
        outs = [f"y{j}" for j in range(n_outputs)] if last else [f"t{i}"]
        made.append(helper.make_node(op, list(inputs), outs, **attrs))
    types = list(out_types) if out_types is not None else [UNTYPED] * n_outputs
    outputs = [helper.make_empty_tensor_value_info(f"y{j}") if t == UNTYPED
               else helper.make_tensor_value_info(f"y{j}", t, None) for j, t in enumerate(types)]  # fmt: skip
    model = helper.make_model(helper.make_graph(made, "oracle", ins, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])  # fmt: skip
    model.ir_version = IR_VERSION
    return model


@functools.lru_cache(maxsize=512)
def _session(model: bytes, engine: str) -> Any:
    """Sessions are kept by model bytes: property tests run one model on many draws, and building a
    session costs more than running it."""
    if engine == ONNX_REFERENCE:
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(onnx.load_from_string(model))
    if engine != ORT:
        raise ValueError(f"unknown engine {engine!r}: one of {ENGINES}")
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def run_graph(engine: str, nodes: Sequence[Node], feeds: dict[str, np.ndarray],
              out_types: Sequence[int] | None = None, opset: int = DEFAULT_OPSET,
              n_outputs: int | None = None) -> list[np.ndarray]:  # fmt: skip
    """A chain of ONNX nodes on ``engine``: node i writes ``t<i>``, the last writes ``y0..``; inputs are
    named by ``feeds``' keys. ``out_types`` declares the outputs' types (the engine then holds the node
    to them); without it, ``n_outputs`` untyped outputs. Returns every output of the last node."""
    _need_onnx()
    n = n_outputs or (len(out_types) if out_types is not None else 1)
    model = _model(nodes, feeds, out_types, opset, n)
    return list(_session(model.SerializeToString(), engine).run(None, feeds))


def run_node(engine: str, op: str, inputs: Sequence[np.ndarray | None], out_types: Sequence[int] | None = None,
             opset: int = DEFAULT_OPSET, n_outputs: int | None = None, **attrs: Any) -> list[np.ndarray]:  # fmt: skip
    """One ONNX node on ``engine``; inputs are ``x0, x1, ..``, ``None`` inputs are left out (ONNX's
    empty input name)."""
    feeds = {f"x{i}": a for i, a in enumerate(inputs) if a is not None}
    names = ["" if a is None else f"x{i}" for i, a in enumerate(inputs)]
    while names and names[-1] == "":
        names.pop()
    return run_graph(engine, [(op, names, attrs)], feeds, out_types, opset, n_outputs)


def ort_graph(nodes: Sequence[Node], feeds: dict[str, np.ndarray], out_types: Sequence[int] | None = None,
              opset: int = DEFAULT_OPSET, n_outputs: int | None = None) -> list[np.ndarray]:  # fmt: skip
    """A chain of ONNX nodes on onnxruntime CPU (see ``run_graph``)."""
    return run_graph(ORT, nodes, feeds, out_types, opset, n_outputs)


def ort_node(op: str, inputs: Sequence[np.ndarray | None], out_types: Sequence[int] | None = None,
             opset: int = DEFAULT_OPSET, n_outputs: int | None = None, **attrs: Any) -> list[np.ndarray]:  # fmt: skip
    """One ONNX node on onnxruntime CPU (see ``run_node``)."""
    return run_node(ORT, op, inputs, out_types, opset, n_outputs, **attrs)


def onnx_reference_node(op: str, inputs: Sequence[np.ndarray | None], out_types: Sequence[int] | None = None,
                        opset: int = DEFAULT_OPSET, n_outputs: int | None = None,
                        **attrs: Any) -> list[np.ndarray]:  # fmt: skip
    """One ONNX node on ``onnx.reference`` (the pure-python evaluator): the second opinion where
    onnxruntime lacks a kernel. See spec-ambiguities.md for its known defects (LRN, grouped ConvTranspose)."""
    return run_node(ONNX_REFERENCE, op, inputs, out_types, opset, n_outputs, **attrs)


def node_function(op: str, *, engine: str = ORT, out: Any = None, opset: int = DEFAULT_OPSET,
                  **attrs: Any) -> Callable[..., np.ndarray]:  # fmt: skip
    """One ONNX node as a numpy function returning its first output, typed like the first input
    unless ``out`` (a numpy dtype) says: the form tables of (QNN op, independent implementation) want."""

    def run(*arrays: np.ndarray) -> np.ndarray:
        out_type = tensor_type(out if out is not None else arrays[0].dtype)
        return np.asarray(run_node(engine, op, arrays, [out_type], opset, **attrs)[0])

    run.__name__ = f"{engine}:{op}"
    return run


def nchw(x: np.ndarray) -> np.ndarray:
    """QNN's channel-last layout [N, spatial.., C] as ONNX's channel-first [N, C, spatial..]."""
    return np.moveaxis(x, -1, 1)


def nhwc(x: np.ndarray) -> np.ndarray:
    """ONNX's channel-first result back in QNN's channel-last layout."""
    return np.moveaxis(x, 1, -1)
