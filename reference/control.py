"""If (MasterOpDef 7243-7282): run the then- or else-subgraph named by the op's STRING params.

The spec names subgraphs by string and says nothing of how they are built; a single-op case cannot
carry them, so the reference defines a minimal graph form that a case can: a ``Graph`` is a list of
``Node``s (op name, input tensor names, params, output tensor names) executed in order through
``reference.run`` itself, with named inputs, constant tensors and named outputs.

How If receives its subgraphs through ``reference.run``: ``then_graph`` / ``else_graph`` hold either
a ``Graph`` or a string name looked up in ``params["graphs"]`` (a name -> Graph mapping the case
carries beside the spec's params). ``inputs[0]`` is the condition; any further inputs (not in the
spec, which has only in[0]) are the values of the outer graph's tensors the subgraph reads, bound
to ``Graph.inputs`` in order. The outputs of If are the chosen subgraph's outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

import reference
from reference import register


@dataclass
class Node:
    op: str
    inputs: list[str | None]  # tensor names; None for an absent optional input
    outputs: list[str]
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Graph:
    nodes: list[Node]
    outputs: list[str]
    inputs: list[str] = field(default_factory=list)  # names bound, in order, to values given from outside
    constants: dict[str, np.ndarray] = field(default_factory=dict)


def run_graph(graph: Graph, values: list[np.ndarray]) -> list[np.ndarray]:
    """Execute ``graph`` on real values for its inputs; every node goes through ``reference.run``."""
    if len(values) != len(graph.inputs):
        raise ValueError(f"graph takes {len(graph.inputs)} input(s), {len(values)} given")
    env: dict[str, np.ndarray] = {k: np.asarray(v) for k, v in graph.constants.items()}
    env.update(zip(graph.inputs, values, strict=True))
    for node in graph.nodes:
        missing = [n for n in node.inputs if n is not None and n not in env]
        if missing:
            raise ValueError(f"{node.op} reads {missing} before any node writes them")
        outs = reference.run(node.op, [None if n is None else env[n] for n in node.inputs], node.params)
        if len(outs) < len(node.outputs):
            raise ValueError(f"{node.op} produced {len(outs)} output(s), the node names {len(node.outputs)}")
        env.update(zip(node.outputs, outs, strict=False))
    return [env[name] for name in graph.outputs]


def _resolve(ref: Any, graphs: dict[str, Graph]) -> Graph | None:
    if ref is None or isinstance(ref, Graph):
        return ref
    if isinstance(ref, str):
        if ref not in graphs:
            raise ValueError(f"no subgraph named {ref!r} (known: {sorted(graphs)})")
        return graphs[ref]
    raise TypeError(f"a subgraph is a reference.control.Graph or its name, got {type(ref).__name__}")


@register("If", verified_by="hand")
def if_op(inputs, params, out_shapes, out_dtypes, *, op):
    cond = np.asarray(inputs[0])
    if cond.size != 1:
        raise ValueError(f"the condition must hold one value, got shape {list(cond.shape)}")
    graphs = params.get("graphs") or {}
    then_graph = _resolve(params.get("then_graph"), graphs)
    if then_graph is None:
        raise ValueError("then_graph is mandatory")
    chosen = then_graph if bool(cond.reshape(-1)[0]) else _resolve(params.get("else_graph"), graphs)
    if chosen is None:
        return []
    return run_graph(chosen, list(inputs[1:]))
