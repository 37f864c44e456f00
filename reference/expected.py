"""From a Case to the reference's real-valued expectation: dequantize, fill params, run, done.

This is the bridge the conformance run and the generator (for output shapes and encodings) share, so
both read a case the same way.
"""

from __future__ import annotations

import numpy as np

import reference
from cases.case import Case
from opdefs import OpDef, dtypes
from reference.quant import real_value


def out_dtype(qnn_dtype: str) -> np.dtype:
    """What the reference's out_dtypes says for a declared output: real-valued unless an integer/bool."""
    d = dtypes.get(qnn_dtype)
    if d.kind in ("int", "uint", "bool"):
        return d.storage
    return np.dtype(np.float64)


def expected(case: Case, with_out_shapes: bool = True) -> list[np.ndarray]:
    inputs = [None if t is None else real_value(t) for t in case.inputs]
    while inputs and inputs[-1] is None:
        inputs.pop()
    params = {k: p.value for k, p in case.params.items()}
    out_shapes = [t.shape for t in case.outputs] if (with_out_shapes and case.outputs) else None
    out_dtypes = [out_dtype(t.dtype) for t in case.outputs] if case.outputs else None
    return reference.run(case.op, inputs, params, out_shapes, out_dtypes)


def infer(op: OpDef, case: Case) -> list[np.ndarray] | None:
    """The generator's ``infer`` callback (``cases.generate.Settings.infer``): the reference's real outputs
    for a case being built, using its declared output shapes once it has some; None without a reference."""
    return expected(case, with_out_shapes=bool(case.outputs)) if reference.has(op.name) else None
