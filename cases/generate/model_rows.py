"""The model tier: a layer of a public model (``generate.model_layers`` in the op's spec) as a case.

Why a tier of its own: the typical tier draws sizes that exercise a kernel's main loop and its tail, but no drawn
size is a layer anybody deploys. A row names its model, its layer and where its shape comes from, and fixes the
case's input shapes, its parameters and any dim no input shows (a Resize's output size); everything else is drawn as
a typical case draws it (converter forms, encodings fitted to the data, values in the op's domain). A cell of the
model tier takes a few rows, each next datatype configuration of the op starting further along the list, so that the
op's cells together run every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from opdefs import OpDef


@dataclass(frozen=True)
class ModelRow:
    """A row made usable: input shapes by reference (``in[0]``), parameter values as the spec numbers them (enum
    member names turned into their values), dims by name (those the shapes show, and the row's own)."""

    label: str
    shapes: dict[str, tuple[int, ...]]
    params: dict[str, Any]
    dims: dict[str, int]


def model_row(op: OpDef, row: dict[str, Any]) -> ModelRow:
    names = op.enum_names()
    params = {}
    for name, value in (row.get("params") or {}).items():
        if isinstance(value, str):  # an enum member by name (a row is read by people: NEAREST, not 0)
            if value not in names:
                raise ValueError(f"{op.name}: model layer {row.get('model')}: parameter {name}: {value!r} is not a "
                                 "member name of the spec (a number written 1e-05 reads as text: write 1.0e-05)")
            value = names[value]
        params[name] = np.asarray(value) if isinstance(value, list) else value
    shapes = {ref: tuple(int(d) for d in shape) for ref, shape in row["shapes"].items()}
    dims: dict[str, int] = {}
    for decl in op.input_specs:
        shape = shapes.get(f"in[{decl.first_index}]")
        if shape is None:
            continue
        listed, trailing = decl.shape.get("dims") or [], decl.shape.get("trailing") or []
        if listed:
            named = list(zip(listed, shape, strict=False))
        elif trailing:
            named = list(zip(trailing, shape[len(shape) - len(trailing):], strict=False))
        else:
            named = []
        for name, size in named:
            if isinstance(name, str) and name.isidentifier():
                dims.setdefault(name, int(size))
    dims.update({k: int(v) for k, v in (row.get("dims") or {}).items()})
    return ModelRow(f"{row['model']}: {row['layer']}", shapes, params, dims)


def rows_for_cell(op: OpDef, config_index: int, per_cell: int) -> list[dict[str, Any]]:
    """The rows a cell of the model tier runs: ``per_cell`` of them, the configuration's index along the list."""
    rows = op.model_layers
    if not rows:
        return []
    per_cell = min(per_cell, len(rows))
    start = (config_index * per_cell) % len(rows)
    return [rows[(start + k) % len(rows)] for k in range(per_cell)]
