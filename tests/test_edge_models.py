"""HTP models of edge-tier findings: FLOAT_16 LogSoftmax along an axis of one element (reference/activation.py,
logsoftmax-f16-unit-axis-padded-lanes) and 8-bit comparisons into a fixed-point output
(reference/elementwise_models_b.py, binary-8bit-compare-fixed-output-one-step)."""

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


def test_the_truth_as_one_step_model_writes_true_as_one_code_above_the_zero_point():
    """Finding binary-8bit-compare-fixed-output-one-step: GREATER into a UFIXED_POINT_8 [0, 1] grid gave code 1 for
    true; the right code 255 is refused."""
    from cases.case import Encoding
    from reference.compare import encode_outputs
    from reference.expected import expected

    enc = Encoding((1 / 255,), (0,))
    a = Tensor("in[0]", "UFIXED_POINT_8", (4,), np.array([10, 200, 30, 250], np.uint8), enc)
    b = Tensor("in[1]", "UFIXED_POINT_8", (4,), np.array([100, 100, 100, 100], np.uint8), enc)
    case = Case("ElementWiseBinary", [a, b], {"operation": Param("operation", "UINT_32", 6)},
                [Tensor("out[0]", "UFIXED_POINT_8", (4,), None, enc)])  # fmt: skip
    model = {"diagnosis": "truth-as-one-step"}
    assert models.check(case, [np.array([0, 1, 0, 1], np.uint8)], model)["matches"] is True
    assert models.check(case, encode_outputs(case, expected(case)), model)["matches"] is False
