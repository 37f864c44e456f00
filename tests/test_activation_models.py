"""The HTP model of FLOAT_16 LogSoftmax along an axis of one element (reference/activation.py, finding
logsoftmax-f16-unit-axis-padded-lanes)."""

from __future__ import annotations

import numpy as np

from cases.case import Case, Param, Tensor
from reference import models

MODEL = {"diagnosis": "unit-axis-sums-32-zero-lanes"}


def _log_softmax(values: list[float]) -> Case:
    x = np.array(values, np.float16).reshape(-1, 1)
    params = {"axis": Param("axis", "UINT_32", 1), "beta": Param("beta", "FLOAT_32", 1.0)}
    return Case("LogSoftmax", [Tensor("in[0]", "FLOAT_16", x.shape, x)], params,
                [Tensor("out[0]", "FLOAT_16", x.shape)])  # fmt: skip


def test_the_model_gives_what_the_htp_gave_for_an_axis_of_one():
    """Measured: x = 0 gave -3.496 (-ln 33), x = 1 gave -2.549, x = -3 gave -6.469."""
    case = _log_softmax([0.0, 1.0, -3.0])
    htp = np.array([[-3.496], [-2.549], [-6.469]], np.float16)
    assert models.check(case, [htp], MODEL)["matches"] is True


def test_the_model_refuses_the_right_zeros():
    case = _log_softmax([0.0, 1.0, -3.0])
    assert models.check(case, [np.zeros((3, 1), np.float16)], MODEL)["matches"] is False
