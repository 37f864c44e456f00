"""Numpy float64 reference implementations of QNN ops, registered by MasterOpDef op name.

Implementations live one op family per module (``reference/elementwise.py`` ...). Each registers a
function ``impl(inputs, params, out_shapes, out_dtypes, *, op) -> list[np.ndarray]`` (``op`` lets one
function serve several names, e.g. ElementWiseAdd and ElementWiseBinary) that sees real values
(quantized inputs already dequantized) and a params dict in which every parameter the spec gives a
default for is present (per-operation and symbolic defaults resolved too, by ``resolved``).
Outputs are real-valued float64 (or bool / integer arrays where the op's
meaning is logical or an index); quantizing them with the output encoding is ``cases.quant``'s
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
# Ops whose outputs depend on earlier executions of the same graph: impl(executions, params, out_shapes,
# out_dtypes, *, op) -> one output list per execution, the state carried between them.
_SEQUENCES: dict[str, Callable[..., list[list[np.ndarray]]]] = {}
_VERIFIED_BY: dict[str, str] = {}
# Ops whose spec leaves a choice open that the reference made as a recorded decision, with the other
# readings implemented too: diagnose(inputs, params, actual, *, op) -> {"reading": the reading whose
# expectation is closest to what a backend returned, "reading_errors": {reading: largest error}}.
_DIAGNOSES: dict[str, Callable[..., dict[str, Any]]] = {}
_LOADED = False

# How an implementation is verified, declared where it is registered (not learned by running tests):
# the name of the independent implementation its tests cross-check against, or HAND for hand-computed
# cases from the spec text only. The suite's own tests hold the declaration to account
# (tests/test_reference_registry.py checks every claimed oracle is exercised by a test module).
HAND = "hand"

# Modules of this package that hold no op implementations.
_NOT_FAMILIES = {"quant", "compare", "expected", "tolerance", "__main__", "util"}


def register(*ops: str, verified_by: str | None = None) -> Callable[[Impl], Impl]:
    """Register one implementation under one or more QNN op names.

    ``verified_by`` names the independent implementation the op's tests cross-check against
    ("onnxruntime", "onnx.reference", "scipy", "numpy", ...) or ``HAND``; None means unverified."""

    def deco(fn: Impl) -> Impl:
        for op in ops:
            if op in _REGISTRY and _REGISTRY[op] is not fn:
                raise ValueError(f"reference for {op} registered twice ({_REGISTRY[op].__module__}, {fn.__module__})")
            _REGISTRY[op] = fn
            if verified_by:
                _VERIFIED_BY[op] = verified_by
        return fn

    return deco


def load_families() -> None:
    """Import every family module once, so their registrations (references, named models) exist."""
    global _LOADED
    if _LOADED:
        return
    for mod in pkgutil.iter_modules(__path__):
        if mod.name not in _NOT_FAMILIES and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    _LOADED = True


def _general(op: str) -> tuple[str, dict[str, Any]] | None:
    """The registered general op a dedicated op is computed as (its spec's ``computed_as``) and the
    parameters it fixes, enum members by number; None when the spec names none (or there is no spec)."""
    import opdefs

    try:
        spec = opdefs.load(op)
    except KeyError:
        return None
    ca = spec.computed_as
    if ca is None or ca.op not in _REGISTRY:
        return None
    return ca.op, spec.computed_as_params(opdefs.load(ca.op))


def implemented() -> list[str]:
    """Every op with a reference: the registered ones and the dedicated ops computed as one of them."""
    import opdefs

    load_families()
    names, _ = opdefs.load_each()
    return sorted(set(_REGISTRY) | {n for n in names if n not in _REGISTRY and _general(n)})


def verified_by(op: str) -> str | None:
    """The declared verification of ``op``'s reference (an oracle's name, ``HAND``) or None; a dedicated op
    computed as a general one shares its verification."""
    load_families()
    if op not in _REGISTRY and (general := _general(op)):
        return _VERIFIED_BY.get(general[0])
    return _VERIFIED_BY.get(op)


def has(op: str) -> bool:
    load_families()
    return op in _REGISTRY or _general(op) is not None


def resolved(op: str, params: dict[str, Any], inputs: list[np.ndarray | None]) -> dict[str, Any]:
    """``params`` with every default the spec states filled in (opdefs.OpDef.resolved_params: concrete,
    per-operation and symbolic ones such as Softmax's ``N-1``, the ranks read off ``inputs``)."""
    import opdefs

    return opdefs.load(op).resolved_params(params, [None if x is None else np.ndim(x) for x in inputs])


def member(op: str, params: dict[str, Any], name: str) -> str:
    """The member name of enum parameter ``name`` in ``params`` (reference.run has filled in its default):
    implementations compare names, the numbering lives in the spec only. ValueError when it is absent or
    not a member."""
    import opdefs

    if params.get(name) is None:
        raise ValueError(f"{op}: the parameter {name!r} is missing")
    return opdefs.load(op).enum_name(name, params[name])


def run(
    op: str,
    inputs: list[np.ndarray | None],
    params: dict[str, Any] | None = None,
    out_shapes: list[tuple[int, ...]] | None = None,
    out_dtypes: list[Any] | None = None,
) -> list[np.ndarray]:
    """Compute ``op`` on real-valued inputs; omitted params take the spec default (DESIGN.md)."""
    load_families()
    if op not in _REGISTRY and (general := _general(op)):
        # a dedicated op (Relu6, ElementWiseAdd) is its general op with the parameters its spec fixes
        name, fixed = general
        own = resolved(op, dict(params or {}), list(inputs))
        return run(name, inputs, {**own, **fixed}, out_shapes, out_dtypes)
    try:
        impl = _REGISTRY[op]
    except KeyError:
        raise NotImplementedError(f"no reference implementation for {op}") from None
    # IEEE specials (inf on overflow, nan from inf - inf) are part of a float expectation and the comparison
    # judges them; numpy's warning about them is one line of stderr noise per case, not a finding
    with np.errstate(all="ignore"):
        return impl(list(inputs), resolved(op, dict(params or {}), list(inputs)), out_shapes, out_dtypes, op=op)


SequenceImpl = Callable[..., list[list[np.ndarray]]]


def register_sequence(*ops: str) -> Callable[[SequenceImpl], SequenceImpl]:
    """Register how consecutive executions of one graph of ``ops`` behave (a case with ``steps``)."""

    def deco(fn: SequenceImpl) -> SequenceImpl:
        for op in ops:
            _SEQUENCES[op] = fn
        return fn

    return deco


def run_sequence(
    op: str,
    executions: list[list[np.ndarray | None]],
    params: dict[str, Any] | None = None,
    out_shapes: list[tuple[int, ...]] | None = None,
    out_dtypes: list[Any] | None = None,
) -> list[list[np.ndarray]]:
    """Outputs of consecutive executions of one graph of ``op`` (the inputs of each, real-valued)."""
    load_families()
    try:
        impl = _SEQUENCES[op]
    except KeyError:
        raise NotImplementedError(f"no reference for consecutive executions of {op}: it keeps no state") from None
    first = list(executions[0]) if executions else []
    with np.errstate(all="ignore"):  # as in run()
        return impl([list(e) for e in executions], resolved(op, dict(params or {}), first), out_shapes, out_dtypes,
                    op=op)


def register_diagnosis(*ops: str) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Register, for ops whose spec leaves a reading open (Nv12ToRgb's colour matrix ...), a function
    that says which reading a backend's real-valued outputs follow."""

    def deco(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        for op in ops:
            _DIAGNOSES[op] = fn
        return fn

    return deco


def has_diagnosis(op: str) -> bool:
    load_families()
    return op in _DIAGNOSES


def diagnose(op: str, inputs: list[np.ndarray | None], params: dict[str, Any] | None,
             actual: list[np.ndarray]) -> dict[str, Any]:  # fmt: skip
    """Which of the implemented readings a backend's outputs (real values) follow; {} where the op has
    no open reading."""
    load_families()
    fn = _DIAGNOSES.get(op)
    if fn is None:
        return {}
    return fn(list(inputs), resolved(op, dict(params or {}), list(inputs)), list(actual), op=op)
