"""Many lowered cases as one ONNX model: the batched form of the ONNX Runtime adapters.

Why: building a session costs far more than running it (with the QNN EP it composes and finalizes a QNN
graph: about 7 ms for one node on the simulator, 60 ms when no other session keeps the simulator started),
so independent cases of one cell share one model and one session. Each case's subgraph keeps its own
names under a prefix ``c<k>_``; nothing connects them, so each output is what the case's own model would
give (``tests/test_batching.py`` checks it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import onnx
from onnx import compose, helper

from adapters.onnx import Lowered, OutputSpec


def merge(parts: Sequence[Lowered]) -> Lowered:
    """One model holding every part side by side; outputs in order, part after part."""
    graphs, feeds, outputs, node_types = [], {}, [], []
    opsets: dict[str, int] = {}
    ir_version = 0
    for k, part in enumerate(parts):
        model = compose.add_prefix(onnx.load_from_string(part.model), f"c{k}_")
        for i, node in enumerate(model.graph.node):
            node.name = node.name or f"c{k}_n{i}"  # so that a refusal naming the node names its part
        ir_version = max(ir_version, model.ir_version)
        for op in model.opset_import:
            opsets[op.domain] = max(opsets.get(op.domain, 0), op.version)
        graphs.append(model.graph)
        feeds.update({f"c{k}_{name}": value for name, value in part.feeds.items()})
        outputs += [OutputSpec(f"c{k}_{o.name}", o.dtype, o.shape) for o in part.outputs]
        node_types += part.node_types
    graph = helper.make_graph(
        [n for g in graphs for n in g.node], "batch",
        [i for g in graphs for i in g.input], [o for g in graphs for o in g.output],
        [t for g in graphs for t in g.initializer], value_info=[v for g in graphs for v in g.value_info],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in sorted(opsets.items())])
    model.ir_version = ir_version
    return Lowered(model.SerializeToString(), feeds, outputs, node_types)


_PART = re.compile(r"(?<![A-Za-z0-9_])c(\d+)_")


def named_parts(text: str, count: int) -> set[int]:
    """The parts whose node or tensor names (``c<k>_...``) a refusal of the merged model mentions."""
    return {k for k in map(int, _PART.findall(text)) if k < count}


def split(parts: Sequence[Lowered], arrays: Sequence) -> list[list]:
    """The merged session's outputs, back to one list per part."""
    out, at = [], 0
    for part in parts:
        out.append(list(arrays[at:at + len(part.outputs)]))
        at += len(part.outputs)
    return out
