"""A finding whose symptom is "changes-between-runs" covers a failing case only on a backend whose outputs for that
case change from run to run: the run executes the case again (conformance.execute gives the model check a rerun),
and a backend with a deterministic bug in the same cell stays a failure."""

from __future__ import annotations

import numpy as np

from adapters.base import OK, Outcome
from cases.case import Case, Param, Tensor
from conformance.execute import RunContext, execute
from reference import models
from reference.expected import expected
from reports.expectations import Expectations

FINDING = """
- id: softmax-changes
  class: deviation
  op: Softmax
  config: '*'
  backend: fake
  verdicts: [FAIL]
  model: {symptom: changes-between-runs}
  scope: cases
  reason: r
"""


def _softmax() -> Case:
    x = Tensor("in[0]", "FLOAT_32", (2, 5), np.linspace(-2, 2, 10, dtype=np.float32).reshape(2, 5))
    return Case("Softmax", [x], {"beta": Param("beta", "FLOAT_32", 1.0)}, [Tensor("out[0]", "FLOAT_32", (2, 5))])


class _Backend:
    """Gives ``outputs[k % len(outputs)]`` on its k-th run."""

    name = "fake"

    def __init__(self, *outputs: np.ndarray) -> None:
        self.outputs, self.runs = outputs, 0

    def available(self):
        return True, ""

    def info(self):
        return {}

    def capabilities(self):
        return {}

    def run(self, case):
        out = self.outputs[self.runs % len(self.outputs)]
        self.runs += 1
        return Outcome(OK, [out])

    def close(self):
        pass


def _judged(backend: _Backend) -> tuple[str, str | None, dict]:
    known = Expectations.from_text(FINDING, "f.yaml")
    rec = execute(_softmax(), RunContext(backend, "fake", known=known))
    applied = known.apply_record(rec)
    return applied.verdict, applied.extra.get("finding") or applied.message, rec.metrics.get("models") or {}


def test_a_case_whose_outputs_change_between_runs_is_the_findings():
    right = expected(_softmax())[0].astype(np.float32)
    verdict, _, found = _judged(_Backend(right * 1.2, right * 1.2, right * 0.7))
    assert verdict == "XFAIL", (verdict, found)


def test_a_deterministic_wrong_answer_in_the_same_cell_stays_a_failure():
    right = expected(_softmax())[0].astype(np.float32)
    backend = _Backend(right * 1.2)
    verdict, _, found = _judged(backend)
    assert verdict == "FAIL", (verdict, found)
    assert backend.runs == 1 + models.RERUNS, backend.runs
