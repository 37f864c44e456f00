"""From a Case to the reference's real-valued expectation: dequantize, fill params, run, done.

This is the bridge the conformance run and the generator (for output shapes and encodings) share, so
both read a case the same way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

import reference
from cases.case import Case
from cases.quant import real_value
from opdefs import OpDef, dtypes


def out_dtype(qnn_dtype: str) -> np.dtype:
    """What the reference's out_dtypes says for a declared output: real-valued unless an integer/bool."""
    d = dtypes.get(qnn_dtype)
    if d.kind in ("int", "uint", "bool"):
        return d.storage
    return np.dtype(np.float64)


def _real_inputs(inputs: list) -> list[np.ndarray | None]:
    real = [None if t is None else real_value(t) for t in inputs]
    while real and real[-1] is None:
        real.pop()
    return real


def expected(case: Case, with_out_shapes: bool = True) -> list[np.ndarray]:
    """The real outputs; for a case with ``steps``, every execution's outputs one after another (execution
    0's, then 1's ...), each execution contributing exactly the case's declared outputs - the same layout
    an adapter's Outcome uses (adapters/base.py)."""
    params = {k: p.value for k, p in case.params.items()}
    out_shapes = [t.shape for t in case.outputs] if (with_out_shapes and case.outputs) else None
    out_dtypes = [out_dtype(t.dtype) for t in case.outputs] if case.outputs else None
    if not case.steps:
        return reference.run(case.op, _real_inputs(case.inputs), params, out_shapes, out_dtypes)
    runs = [_real_inputs(case.step_inputs(k)) for k in range(case.executions)]
    per_step = reference.run_sequence(case.op, runs, params, out_shapes, out_dtypes)
    n = len(case.outputs)
    if any(len(outs) < n for outs in per_step):
        raise ValueError(f"the reference gives fewer outputs per execution than the {n} the case declares")
    return [o for outs in per_step for o in outs[:n]]


def infer(op: OpDef, case: Case) -> list[np.ndarray] | None:
    """The generator's ``infer`` callback (``cases.generate.Settings.infer``): the reference's real outputs
    for a case being built, using its declared output shapes once it has some; None without a reference."""
    return expected(case, with_out_shapes=bool(case.outputs)) if reference.has(op.name) else None


def reading(case: Case, actual: list[np.ndarray]) -> dict[str, Any]:
    """Which implemented reading of an open point of the spec a backend's stored outputs follow
    (``reference.diagnose``): {} for ops without one, and for cases whose outputs cannot be read."""
    if not reference.has_diagnosis(case.op) or case.steps or len(actual) < len(case.outputs):
        return {}  # checked first: every judged case passes here, and most ops have no open reading
    real = [real_value(replace(t, data=np.asarray(a))) for t, a in zip(case.outputs, actual, strict=False)]
    params = {k: p.value for k, p in case.params.items()}
    return reference.diagnose(case.op, _real_inputs(case.inputs), params, real)


def arguments(case: Case) -> tuple[list[np.ndarray | None], dict[str, Any]]:
    """A case's real inputs and its parameters with every default the spec states, as an implementation sees them:
    for a model of a deviation (``reference.models.register_model``) that computes the op its own way."""
    inputs = _real_inputs(case.inputs)
    params = {k: p.value for k, p in case.params.items()}
    return inputs, reference.resolved(case.op, params, inputs)
