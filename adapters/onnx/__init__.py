"""One Case -> one small ONNX model that means the same thing, for the ONNX Runtime adapters.

``builder`` holds the graph builder (QDQ wrapping, layout moves, parameters resolved by the spec);
each family module holds the lowerings of the op families its ``FAMILIES`` names (the ``family:``
of each op's YAML), as a ``LOWERINGS`` table. This module joins the tables and is what the adapters
import: ``lower(case)``, ``supported()``, ``read_outputs``, ``Lowered`` and ``Unlowerable``.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import opdefs
from adapters.onnx import elementwise, movement, normalization, spatial
from adapters.onnx.builder import Builder, Lowered, Lowering, OutputSpec, Unlowerable, read_outputs
from cases.case import Case, Param

FAMILY_MODULES = (elementwise, normalization, movement, spatial)
LOWERINGS: dict[str, Lowering] = {op: fn for m in FAMILY_MODULES for op, fn in m.LOWERINGS.items()}

__all__ = ["LOWERINGS", "Lowered", "OutputSpec", "Unlowerable", "coverage", "lower", "read_outputs", "supported"]


@functools.cache
def supported() -> list[str]:
    """The lowered ops: those of the LOWERINGS tables and the dedicated ops computed as one of them."""
    names, _ = opdefs.load_each()
    return sorted(set(LOWERINGS) | {n for n, spec in names.items() if _lowered_as(spec)})


def _lowered_as(spec: opdefs.OpDef) -> str | None:
    ca = spec.computed_as
    return ca.op if ca is not None and ca.op in LOWERINGS else None


def _as_general(case: Case) -> Case:
    """A dedicated op's case (Relu6, ElementWiseAdd) as its general op's, with the parameters its spec's
    ``computed_as`` fixes: the ONNX model of a dedicated op is its general op's, stated once in the YAML."""
    try:
        spec = opdefs.load(case.op)
    except KeyError:
        return case
    general = _lowered_as(spec)
    if general is None:
        return case
    gspec = opdefs.load(general)
    fixed = {k: Param(k, gspec.params[k].get("dtype", ""), v) for k, v in spec.computed_as_params(gspec).items()}
    return replace(case, op=general, params={**case.params, **fixed})


def lower(case: Case) -> Lowered:
    """The ONNX model for ``case``; raises Unlowerable when there is none."""
    name = case.op
    if case.op not in LOWERINGS:
        case = _as_general(case)
    fn = LOWERINGS.get(case.op)
    if fn is None:
        raise Unlowerable(f"no ONNX lowering for {name}")
    b = Builder(case, graph_name=name)
    try:
        values = fn(b)
    except Unlowerable:
        raise
    except (ValueError, IndexError, KeyError, TypeError) as e:  # a param the lowering cannot read
        raise Unlowerable(f"{name}: cannot lower: {type(e).__name__}: {e}") from None
    return b.finish(values)


@functools.cache
def coverage() -> dict[str, list[str]]:
    """QNN ops with and without a lowering, over the specs in opdefs/."""
    names = sorted(opdefs.load_all())
    lowered = set(supported())
    return {"lowered": [n for n in names if n in lowered], "not_lowered": [n for n in names if n not in lowered]}
