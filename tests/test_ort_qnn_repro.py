"""A case as an ONNX repro (``python -m conformance onnx``) and what the ort-qnn adapter records of the EP's graph.

The repro is what an ort-qnn finding hands the EP's maintainers: the model the case lowers to, its feeds, and
what the QNN op must produce with the budget the suite judges it by, so that it can be run with onnxruntime
alone (findings/cases/ort-qnn/repro.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from adapters.ort_qnn import composed_ops
from cases import quant
from cases.case import Case, Tensor, encoding_for_range
from conformance.execute import onnx_repro
from reference.compare import allowed_difference
from reference.tolerance import budget_for

REPO = Path(__file__).resolve().parents[1]
U8 = "UFIXED_POINT_8"


def add_u8() -> Case:
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])
    enc = encoding_for_range(-1.0, 2.0, U8)
    out = encoding_for_range(-2.0, 4.0, U8)
    ins = [Tensor(f"in[{i}]", U8, x.shape, quant.quantize(x, enc, U8), enc) for i in range(2)]
    return Case("ElementWiseAdd", ins, {}, [Tensor("out[0]", U8, x.shape, encoding=out)], config=U8)


def test_composed_ops_are_the_qnn_op_types_of_the_graph_the_ep_composed() -> None:
    log = "\n".join([
        "2026-11-26 05:53:15 [V:onnxruntime:, qnn_model_wrapper.cc:557 CreateQnnNode] Qnn_OpConfig node name: Div2 "
        "package_name: qti.aisw QNN_op_type: ElementWiseDivide num_of_inputs: 2",
        "2026-11-26 05:53:15 [V:onnxruntime:, qnn_model_wrapper.cc:771 ComposeQnnGraph] Qnn_OpConfig node name: Div2 "
        "package_name: qti.aisw QNN_op_type: ElementWiseDivide num_of_inputs: 2 num_of_outputs: 1",
        "2026-11-26 05:53:15 [V:onnxruntime:, qnn_model_wrapper.cc:771 ComposeQnnGraph] Qnn_OpConfig node name: "
        "Floor3 package_name: qti.aisw QNN_op_type: ElementWiseFloor num_of_inputs: 1 num_of_outputs: 1",
    ])
    assert composed_ops(log) == ["ElementWiseDivide", "ElementWiseFloor"], "validation-only nodes are not the graph"


def test_the_repro_holds_the_lowered_model_its_feeds_and_what_the_op_must_produce(tmp_path: Path) -> None:
    case = add_u8()
    model_path = onnx_repro(case, tmp_path / "add")
    model = onnx.load(model_path)
    data = np.load(model_path.with_suffix(".npz"))
    feeds = {k.split(":", 1)[1] for k in data.files if k.startswith("feed:")}
    assert feeds == {i.name for i in model.graph.input}, f"feeds {feeds} are not the model's graph inputs"
    (out,) = [o.name for o in model.graph.output]
    want = quant.quantize(np.array([[1.0, -2.0, 4.0], [3.0, 0.0, -1.0]]), case.outputs[0].encoding, U8)
    np.testing.assert_array_equal(data[f"expected:{out}"], want)
    assert np.all(data[f"budget:{out}"] == budget_for(U8).steps), "an 8-bit output's budget is its steps, per element"


def test_the_allowed_difference_of_an_element_the_spec_leaves_open_is_unbounded() -> None:
    out = Tensor("out[0]", "FLOAT_32", (3,))
    allowed = allowed_difference(np.array([1.0, np.nan, -np.inf]), out, budget_for("FLOAT_32"))
    assert np.isfinite(allowed[0]) and np.isinf(allowed[1:]).all(), allowed


def test_the_onnx_command_writes_the_repro_of_a_saved_case(tmp_path: Path) -> None:
    saved = add_u8().save(tmp_path / "case")
    result = subprocess.run([sys.executable, "-m", "conformance", "onnx", str(saved), str(tmp_path / "repro")],
                            cwd=REPO, capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "repro.onnx").is_file() and (tmp_path / "repro.npz").is_file()


def test_a_case_without_an_onnx_form_is_refused_with_the_reason(tmp_path: Path) -> None:
    case = Case("Buffer", [], {}, [Tensor("out[0]", "FLOAT_32", (1,))])
    saved = case.save(tmp_path / "case")
    result = subprocess.run([sys.executable, "-m", "conformance", "onnx", str(saved), str(tmp_path / "repro")],
                            cwd=REPO, capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 2 and "no ONNX form" in result.stderr, result.stderr
    if (tmp_path / "repro.onnx").exists():
        pytest.fail("a refused case left a model behind")
