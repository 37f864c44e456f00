"""The reference as a backend: a spec-following implementation that validates like a backend should.

It refuses (REJECTED) any case that breaks a checkable constraint of the spec, computes the rest with
the numpy reference, and stores results in the declared output types. Running the conformance
cases against it checks the generator, the reference and the comparator together.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import opdefs
import reference
from adapters.base import ERROR, OK, REJECTED, SKIP, Outcome
from cases import check
from cases.case import Case
from reference.compare import encode_outputs
from reference.expected import expected


class ReferenceAdapter:
    name = "reference"

    def __init__(self) -> None:
        self._ops: list[str] | None = None

    def available(self) -> tuple[bool, str]:
        return True, ""

    def _implemented(self) -> list[str]:
        """Read once per adapter: ``reference.implemented()`` reads every spec (about 10 ms), and every record
        asks for ``info()``: per case it was two thirds of a reference run's time."""
        if self._ops is None:
            self._ops = reference.implemented()
        return self._ops

    def info(self) -> dict[str, Any]:
        return {"numpy": np.__version__, "implemented_ops": len(self._implemented())}

    def capabilities(self) -> dict[str, Any]:
        return {"ops": list(self._implemented())}

    def run(self, case: Case) -> Outcome:
        t0 = time.perf_counter()
        op = opdefs.load(case.op)
        broken = check.violations(op, case)
        if broken:
            return Outcome(REJECTED, message=f"violates {', '.join(broken)}", seconds=time.perf_counter() - t0)
        if not reference.has(case.op):
            return Outcome(SKIP, message=f"no reference implementation for {case.op} yet")
        try:
            real = _sample_where_free(op, case, expected(case))
            outs = encode_outputs(case, real)
        except Exception as e:  # a reference that breaks on a valid case is this backend's ERROR, not the run's
            return Outcome(ERROR, message=f"{type(e).__name__}: {e}", seconds=time.perf_counter() - t0)
        details = {"executions": case.executions} if case.steps else {}
        return Outcome(OK, outs, seconds=time.perf_counter() - t0, details=details)

    def close(self) -> None:
        pass


def _sample_where_free(op: opdefs.OpDef, case: Case, real: list[np.ndarray]) -> list[np.ndarray]:
    """A random op has no single right answer; as a spec-following backend the reference returns a draw
    of the op's declared distribution (seeded by the case, so a replay gives the same numbers)."""
    dist = op.tolerance.get("distribution")
    if not dist or dist.get("kind") != "uniform":
        return real
    defaults = op.param_defaults()
    low, high = (float(case.params[k].value if k in case.params else defaults[k]) for k in (dist["low"], dist["high"]))
    rng = np.random.default_rng(int(case.case_id(), 16) % 2**63)
    out = []
    for r in real:
        r = np.array(r, dtype=np.float64)
        free = np.isnan(r)
        r[free] = rng.uniform(low, high, int(free.sum()))
        out.append(r)
    return out


def make(options: dict[str, Any] | None = None) -> ReferenceAdapter:
    return ReferenceAdapter()
