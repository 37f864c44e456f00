"""Numpy float64 reference implementations of QNN ops, registered by MasterOpDef op name.

Implementations live one op family per module (``reference/elementwise.py`` ...). Each registers a
function ``impl(inputs, params, out_shapes, out_dtypes, *, op) -> list[np.ndarray]`` (``op`` lets one
function serve several names, e.g. ElementWiseAdd and ElementWiseBinary) that sees real values
(quantized inputs already dequantized) and a params dict in which every parameter the spec gives a
default for is present. Outputs are real-valued float64 (or bool / integer arrays where the op's
meaning is logical or an index); quantizing them with the output encoding is ``reference.quant``'s
and the comparator's job, never an implementation's.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np

Impl = Callable[..., list[np.ndarray]]
_REGISTRY: dict[str, Impl] = {}
_LOADED = False

# Modules of this package that hold no op implementations.
_NOT_FAMILIES = {"quant", "compare", "expected", "__main__", "util"}


def register(*ops: str) -> Callable[[Impl], Impl]:
    """Register one implementation under one or more QNN op names."""

    def deco(fn: Impl) -> Impl:
        for op in ops:
            if op in _REGISTRY and _REGISTRY[op] is not fn:
                raise ValueError(f"reference for {op} registered twice ({_REGISTRY[op].__module__}, {fn.__module__})")
            _REGISTRY[op] = fn
        return fn

    return deco


def _load_families() -> None:
    global _LOADED
    if _LOADED:
        return
    for mod in pkgutil.iter_modules(__path__):
        if mod.name not in _NOT_FAMILIES and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    _LOADED = True


def implemented() -> list[str]:
    _load_families()
    return sorted(_REGISTRY)


def has(op: str) -> bool:
    _load_families()
    return op in _REGISTRY


def defaults(op: str) -> dict[str, Any]:
    """The spec defaults of ``op``'s parameters (concrete ones only; symbolic defaults such as
    ``N-1`` are resolved by the implementation, which knows N)."""
    import opdefs

    return opdefs.load(op).param_defaults()


def run(
    op: str,
    inputs: list[np.ndarray | None],
    params: dict[str, Any] | None = None,
    out_shapes: list[tuple[int, ...]] | None = None,
    out_dtypes: list[Any] | None = None,
) -> list[np.ndarray]:
    """Compute ``op`` on real-valued inputs; omitted params take the spec default (DESIGN.md)."""
    _load_families()
    try:
        impl = _REGISTRY[op]
    except KeyError:
        raise NotImplementedError(f"no reference implementation for {op}") from None
    full = dict(defaults(op))
    full.update(params or {})
    return impl(list(inputs), full, out_shapes, out_dtypes, op=op)
