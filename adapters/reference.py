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

    def available(self) -> tuple[bool, str]:
        return True, ""

    def info(self) -> dict[str, Any]:
        return {"numpy": np.__version__, "implemented_ops": len(reference.implemented())}

    def capabilities(self) -> dict[str, Any]:
        return {"ops": reference.implemented()}

    def run(self, case: Case) -> Outcome:
        t0 = time.perf_counter()
        op = opdefs.load(case.op)
        broken = check.violations(op, case)
        if broken:
            return Outcome(REJECTED, message=f"violates {', '.join(broken)}", seconds=time.perf_counter() - t0)
        if not reference.has(case.op):
            return Outcome(SKIP, message=f"no reference implementation for {case.op} yet")
        try:
            real = expected(case)
            outs = encode_outputs(case, real)
        except Exception as e:  # a reference that breaks on a valid case is this backend's ERROR, not the run's
            return Outcome(ERROR, message=f"{type(e).__name__}: {e}", seconds=time.perf_counter() - t0)
        return Outcome(OK, outs, seconds=time.perf_counter() - t0)

    def close(self) -> None:
        pass


def make(options: dict[str, Any] | None = None) -> ReferenceAdapter:
    return ReferenceAdapter()
