"""The lowest-code symptom of fixed-point ReduceMax/ReduceMin (reference/reduction_models_a.py, finding
reduce-fixed-one-wide-axis-unit-channel-lowest)."""

from __future__ import annotations

import numpy as np

from cases.case import Case, Param, Tensor
from reference import models
from reference.expected import expected


def _reduce_max_u8(shape: tuple[int, ...], axes: list[int]) -> Case:
    """UFIXED_POINT_8 ReduceMax with keep_dims, on one grid (scale 0.1, offset -128) in and out."""
    from cases.case import Encoding

    enc = Encoding((0.1,), (-128,))
    codes = (np.arange(int(np.prod(shape))) * 7 % 200 + 20).astype(np.uint8).reshape(shape)
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    params = {"axes": Param("axes", "UINT_32", np.array(axes, np.uint32)),
              "keep_dims": Param("keep_dims", "BOOL_8", True)}
    return Case("ReduceMax", [Tensor("in[0]", "UFIXED_POINT_8", shape, codes, enc)], params,
                [Tensor("out[0]", "UFIXED_POINT_8", out_shape, None, enc)])  # fmt: skip


LOWEST = {"symptom": "lowest-code-one-wide-axis-with-unit-channel"}


def test_reduce_lowest_code_symptom_takes_lowest_codes_where_one_wide_axis_is_reduced_with_a_unit_channel():
    """Finding reduce-fixed-one-wide-axis-unit-channel-lowest: [3, 1, 4, 1] over [1, 2, 3] gave code 0 for all three."""
    from reference.compare import encode_outputs

    case = _reduce_max_u8((3, 1, 4, 1), [1, 2, 3])
    right = encode_outputs(case, expected(case))
    assert models.check(case, [np.zeros_like(right[0])], LOWEST)["matches"] is True
    assert models.check(case, right, LOWEST)["matches"] is False  # right outputs show no symptom


def test_reduce_lowest_code_symptom_refuses_another_wrong_value_and_another_shape():
    from reference.compare import encode_outputs

    case = _reduce_max_u8((3, 1, 4, 1), [1, 2, 3])
    got = encode_outputs(case, expected(case))[0].copy()
    got.reshape(-1)[0] = 0
    got.reshape(-1)[1] = got.reshape(-1)[1] - 5  # a planted error that is not the lowest code
    assert models.check(case, [got], LOWEST)["matches"] is False
    two_wide = _reduce_max_u8((3, 2, 4, 1), [1, 2, 3])
    result = models.check(two_wide, [np.zeros((3, 1, 1, 1), np.uint8)], LOWEST)
    assert result["matches"] is False and "2 reduced axes wider than 1" in result["message"], result


def test_reduce_sum_overflow_symptom_takes_nan_and_refuses_a_finite_value_or_a_sum_that_fits() -> None:
    """ep-reducesumsquare-f16-overflow-nan's case (the squares sum to 162847, past float16's 65504): NaN shows the
    symptom, 65504 does not; the same case scaled so that the sum fits has no overflow: nothing there is the bug."""
    from dataclasses import replace
    from pathlib import Path

    from cases.case import Case
    from reference import models

    c = Case.load(Path(__file__).resolve().parents[1] / "findings/cases/ReduceSumSquare/"
                  "ep-reducesumsquare-f16-overflow-nan.json")  # fmt: skip
    symptom = {"symptom": "nan-where-the-float16-sum-overflows"}
    shape = c.outputs[0].shape
    assert models.check(c, [np.full(shape, np.nan, np.float16)], symptom)["matches"]
    assert not models.check(c, [np.full(shape, 65504, np.float16)], symptom)["matches"]
    x = c.inputs[0]
    small = replace(c, inputs=[replace(x, data=(np.asarray(x.data) / np.float16(4)).astype(np.float16))])
    assert not models.check(small, [np.full(shape, np.nan, np.float16)], symptom)["matches"]


FLOAT16_SCAN = {"diagnosis": "float16-scan-ties-away"}


def test_float16_scan_model_reproduces_its_finding_case():
    """Finding cumulativesum-float-float16-scan: [[1000, 2048], [0.3, 1], [-1000, -2048]] along axis 0 came back
    [[1000, 2048], [1000.5, 2050], [0.5, 2]] at v69 to v81: float16 sums, 2048 + 1 (a tie) rounded away from zero."""
    case = Case.load("findings/cases/CumulativeSum/cumulativesum-float-float16-scan.json")
    shown = np.array([[1000, 2048], [1000.5, 2050], [0.5, 2]], np.float16)
    np.testing.assert_array_equal(models._NAMED["CumulativeSum"]["float16-scan-ties-away"](case)[0], shown)
    assert models.check(case, [shown], FLOAT16_SCAN)["matches"] is True


def test_float16_scan_model_refuses_the_spec_answer_an_ieee_float16_scan_and_a_planted_error():
    case = Case.load("findings/cases/CumulativeSum/cumulativesum-float-float16-scan.json")
    right = expected(case)[0].astype(np.float16)
    ties_to_even = np.array([[1000, 2048], [1000.5, 2048], [0.5, 0]], np.float16)
    planted = np.array([[1000, 2048], [1000.5, 2050], [0.5, 3]], np.float16)
    for outputs in (right, ties_to_even, planted):
        assert models.check(case, [outputs], FLOAT16_SCAN)["matches"] is False, outputs


def test_float16_scan_model_reads_reverse_and_exclusive_as_the_reference_does():
    """[1, 2, 3] in float16: exclusive [0, 1, 3], reverse [6, 5, 3], exclusive and reverse [5, 3, 0] (the spec's
    examples, exact in float16)."""
    from tests.reference_helpers import case, modelled

    x = ("FLOAT_16", np.array([1, 2, 3], np.float16), None)
    for params, want in (({"exclusive": True}, [0, 1, 3]), ({"reverse": True}, [6, 5, 3]),
                         ({"exclusive": True, "reverse": True}, [5, 3, 0])):  # fmt: skip
        c = case("CumulativeSum", [x], {"axis": 0, **params}, [("FLOAT_16", (3,), None)])
        np.testing.assert_array_equal(modelled(c, "float16-scan-ties-away")[0], want)
