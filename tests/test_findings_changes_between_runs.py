"""A finding whose symptom is "changes-between-runs" covers a failing case only on a backend whose outputs for that
case change from run to run: the run executes the case again (conformance.execute gives the model check a rerun),
and a backend with a deterministic bug in the same cell stays a failure."""

from __future__ import annotations

import numpy as np

from cases.case import Case, Param, Tensor
from conformance.execute import RunContext, execute
from reference import models
from reference.expected import expected
from reports.expectations import Expectations
from tests.fake_backends import Canned

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


def _judged(backend: Canned) -> tuple[str, dict]:
    """The verdict with the finding applied, and the models' results the record keeps."""
    known = Expectations.from_text(FINDING, "f.yaml")
    rec = execute(_softmax(), RunContext(backend, "fake", known=known))
    return known.apply_record(rec).verdict, rec.metrics.get("models") or {}


def test_a_case_whose_outputs_change_between_runs_is_the_findings():
    right = expected(_softmax())[0].astype(np.float32)
    verdict, found = _judged(Canned([right * 1.2], [right * 1.2], [right * 0.7]))
    assert verdict == "XFAIL", (verdict, found)


def test_a_deterministic_wrong_answer_in_the_same_cell_stays_a_failure():
    right = expected(_softmax())[0].astype(np.float32)
    backend = Canned([right * 1.2])
    verdict, found = _judged(backend)
    assert verdict == "FAIL", (verdict, found)
    assert backend.runs == 1 + models.RERUNS, backend.runs
