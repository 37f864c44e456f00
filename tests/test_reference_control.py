"""If reference (reference/control.py): subgraphs in the reference's minimal graph form, run through reference.run."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from reference.control import Graph, Node, run_graph

# then: relu(x) + 1; else: -x (x is an outer tensor the subgraphs read)
THEN = Graph([Node("Relu", ["x"], ["r"]), Node("ElementWiseAdd", ["r", "one"], ["y"])], ["y"], ["x"],
             {"one": np.array([1.0])})  # fmt: skip
ELSE = Graph([Node("ElementWiseNeg", ["x"], ["y"])], ["y"], ["x"])
X = np.array([-2.0, 3.0])


def test_graph_runs_nodes_in_order() -> None:
    (y,) = run_graph(THEN, [X])
    np.testing.assert_array_equal(y, [1.0, 4.0], err_msg="relu(x) + 1")


@pytest.mark.parametrize("cond,want", [(True, [1.0, 4.0]), (False, [2.0, -3.0])])
def test_if_runs_the_branch_the_condition_names(cond: bool, want: list[float]) -> None:
    params = {"then_graph": "pos", "else_graph": "neg", "graphs": {"pos": THEN, "neg": ELSE}}
    (y,) = reference.run("If", [np.array([cond]), X], params)
    np.testing.assert_array_equal(y, want, err_msg=f"condition {cond}")


def test_if_without_else_produces_nothing_when_false() -> None:
    assert reference.run("If", [np.array(False), X], {"then_graph": THEN}) == []


def test_if_refuses_an_unknown_subgraph_name_and_a_multi_element_condition() -> None:
    with pytest.raises(ValueError, match="no subgraph"):
        reference.run("If", [np.array(True), X], {"then_graph": "missing", "graphs": {}})
    with pytest.raises(ValueError, match="one value"):
        reference.run("If", [np.array([True, False]), X], {"then_graph": THEN})
