"""One Case -> one small ONNX model that means the same thing, for the ONNX Runtime adapters.

``builder`` holds the graph builder (QDQ wrapping, layout moves, parameters resolved by the spec);
each family module holds the lowerings of the op families its ``FAMILIES`` names (the ``family:``
of each op's YAML), as a ``LOWERINGS`` table. This module joins the tables and is what the adapters
import: ``lower(case)``, ``supported()``, ``read_outputs``, ``Lowered`` and ``Unlowerable``.
"""

from __future__ import annotations

import functools

import opdefs
from adapters.onnx import elementwise, movement, normalization, spatial
from adapters.onnx.builder import Builder, Lowered, Lowering, OutputSpec, Unlowerable, read_outputs
from cases.case import Case

FAMILY_MODULES = (elementwise, normalization, movement, spatial)
LOWERINGS: dict[str, Lowering] = {op: fn for m in FAMILY_MODULES for op, fn in m.LOWERINGS.items()}

__all__ = ["LOWERINGS", "Lowered", "OutputSpec", "Unlowerable", "coverage", "lower", "read_outputs", "supported"]


def supported() -> list[str]:
    return sorted(LOWERINGS)


def lower(case: Case) -> Lowered:
    """The ONNX model for ``case``; raises Unlowerable when there is none."""
    fn = LOWERINGS.get(case.op)
    if fn is None:
        raise Unlowerable(f"no ONNX lowering for {case.op}")
    b = Builder(case)
    try:
        values = fn(b)
    except Unlowerable:
        raise
    except (ValueError, IndexError, KeyError, TypeError) as e:  # a param the lowering cannot read
        raise Unlowerable(f"{case.op}: cannot lower: {type(e).__name__}: {e}") from None
    return b.finish(values)


@functools.cache
def coverage() -> dict[str, list[str]]:
    """QNN ops with and without a lowering, over the specs in opdefs/."""
    names = sorted(opdefs.load_all())
    return {"lowered": [n for n in names if n in LOWERINGS], "not_lowered": [n for n in names if n not in LOWERINGS]}
