"""A dedicated op (Relu6, ElementWiseAdd ...) is its general op with parameters fixed, said once in its YAML
(``computed_as``): the reference and the ONNX lowering follow that one statement."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import opdefs
import reference
from adapters import onnx as lowering
from cases.case import Case, Tensor

SPECS = opdefs.load_all()
DEDICATED = sorted(n for n, s in SPECS.items() if s.computed_as is not None)


def test_the_dedicated_ops_of_the_element_wise_families_say_what_they_are_computed_as():
    generals = {SPECS[n].computed_as.op for n in DEDICATED}
    assert generals == {"ElementWiseNeuron", "ElementWiseUnary", "ElementWiseBinary"}, generals
    assert "Relu6" in DEDICATED and "ElementWiseAdd" in DEDICATED and "ElementWiseSquareRoot" in DEDICATED


@pytest.mark.parametrize("op", DEDICATED)
def test_a_dedicated_ops_reference_is_its_general_ops_with_the_fixed_parameters(op):
    spec = SPECS[op]
    general = SPECS[spec.computed_as.op]
    arity = len(general.inputs)
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(0.1, 4.0, size=(2, 3)) for _ in range(arity)]
    # the dedicated op's own mandatory parameters (ReluMinMax's bounds) in increasing order, passed to both
    own = {name: 0.5 + 1.5 * k for k, (name, p) in enumerate(spec.params.items()) if p.get("mandatory")}
    got = reference.run(op, inputs, own)
    want = reference.run(general.name, inputs, {**own, **spec.computed_as_params(general)})
    np.testing.assert_array_equal(got[0], want[0], err_msg=f"{op} differs from {general.name} {spec.computed_as}")


def test_relu6_is_clipped_at_0_and_6_by_the_statement_in_its_yaml():
    (out,) = reference.run("Relu6", [np.array([-3.0, 2.0, 9.0])])
    assert out.tolist() == [0.0, 2.0, 6.0]


def test_relu6_is_lowered_to_onnx_as_a_clip_between_0_and_6():
    case = Case("Relu6", [Tensor("in[0]", "FLOAT_32", (3,), np.array([-3.0, 2.0, 9.0], np.float32))], {},
                [Tensor("out[0]", "FLOAT_32", (3,), None)], config="FLOAT_32")  # fmt: skip
    model = lowering.lower(case)
    import onnx

    graph = onnx.load_from_string(model.model).graph
    assert [n.op_type for n in graph.node] == ["Clip"], [n.op_type for n in graph.node]
    bounds = sorted(float(onnx.numpy_helper.to_array(t)) for t in graph.initializer)
    assert bounds == [0.0, 6.0], bounds


def test_every_dedicated_op_is_lowered_where_its_general_op_is():
    lowered = set(lowering.supported())
    missing = [n for n in DEDICATED if SPECS[n].computed_as.op in lowered and n not in lowered]
    assert missing == [], missing


def _spec_with(tmp_path: Path, params: str) -> Path:
    text = Path(opdefs.load("Relu6").path).read_text()
    fixed = "  params:\n    operation: RELU_MIN_MAX\n    min_value: 0.0\n    max_value: 6.0\n"
    assert fixed in text, "Relu6.yaml's computed_as is no longer written as this test expects"
    text = text.replace(fixed, f"  params: {params}\n")
    path = tmp_path / "Relu6.yaml"
    path.write_text(text)
    return path


def test_a_computed_as_naming_a_parameter_the_general_op_lacks_is_a_lint_problem(tmp_path):
    (problem,) = opdefs.lint([_spec_with(tmp_path, "{operation: RELU_MIN_MAX, top: 6.0}")])
    assert problem.field == "computed_as.params.top" and "has no parameter" in problem.message, problem


def test_a_computed_as_naming_no_member_of_the_enum_is_a_lint_problem(tmp_path):
    (problem,) = opdefs.lint([_spec_with(tmp_path, "{operation: RELU_SIX}")])
    assert problem.field == "computed_as.params.operation" and "RELU_SIX" in problem.message, problem
