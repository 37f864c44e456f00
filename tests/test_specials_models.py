"""The specials-open symptom (reference/specials_models.py, finding float-specials-not-ieee): a float kernel wrong only
where NaN, infinities, subnormals or values past float16's range decide the result."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cases.case import Case, Param, Tensor
from reference import models
from reference.expected import expected
from reference.specials_models import SPECIALS_OPEN, special_mask, touched

REPO = Path(__file__).resolve().parents[1]
SYMPTOM = {"symptom": SPECIALS_OPEN}


def _relu(values: list[float], dtype: str = "FLOAT_32") -> Case:
    storage = np.float16 if dtype == "FLOAT_16" else np.float32
    x = np.array(values, dtype=storage)
    return Case("Relu", [Tensor("in[0]", dtype, x.shape, x)], {}, [Tensor("out[0]", dtype, x.shape)])


def test_nan_infinities_subnormals_and_values_past_float16_are_specials_on_float32():
    x = np.array([np.nan, np.inf, -np.inf, 1e-45, 3.4e38, 1.0, 0.0, -65504.0], np.float32)
    assert special_mask(x, "FLOAT_32").tolist() == [True, True, True, True, True, False, False, False]


def test_an_element_is_touched_only_where_a_special_decides_it():
    case = _relu([np.nan, 2.0, -np.inf, -3.0])
    assert touched(case)[0].tolist() == [True, False, True, False]


def test_the_symptom_reproduces_the_findings_case_relu_of_nan_as_zero():
    """The finding's case: Relu FLOAT_32 with NaN, infinities, subnormals and 3.4e38 among ordinary values; the HTP
    gave 0 for relu(NaN) (measured, seed 1 edge); every other element as the float16-range kernel gives it."""
    case = Case.load(REPO / "findings" / "cases" / "Relu" / "float-specials-not-ieee.json")
    x = case.inputs[0].data.astype(np.float64)
    with np.errstate(invalid="ignore"):
        htp = np.where(np.isnan(x), 0.0, np.where(x > 65504.0, np.inf, np.maximum(x, 0.0)))
    htp[(np.abs(x) < 1.2e-38)] = 0.0  # subnormals read as zero
    assert np.isnan(x).any()
    assert models.check(case, [htp.astype(np.float32)], SYMPTOM)["matches"] is True


def test_the_symptom_refuses_a_wrong_element_no_special_touches():
    case = _relu([np.nan, 2.0, -np.inf, -3.0])
    got = np.array([0.0, 2.5, 0.0, 0.0], np.float32)  # relu(2) = 2.5: a planted error on an ordinary value
    result = models.check(case, [got], SYMPTOM)
    assert result["matches"] is False and "do not touch is wrong too" in result["message"], result


def test_the_symptom_refuses_a_case_without_specials():
    case = _relu([1.0, -2.0])
    result = models.check(case, [np.array([7.0, 0.0], np.float32)], SYMPTOM)
    assert result["matches"] is False and "no float input holds" in result["message"], result


def test_a_max_that_a_special_could_win_is_touched():
    """max(-inf, 1, 2, 3) is 3, but 3e4 in the place of -inf would win: a kernel that misreads -inf decides it, so it is
    open (an argmax over [2.6, inf, NaN] likewise: the HTP takes the infinity, numpy the NaN)."""
    x = np.array([-np.inf, 1.0, 2.0, 3.0], np.float32).reshape(1, 2, 2, 1)
    axes = Param("axes", "UINT_32", np.array([0, 1, 2, 3], np.uint32))
    out = Tensor("out[0]", "FLOAT_32", (1,))
    case = Case("ReduceMax", [Tensor("in[0]", "FLOAT_32", x.shape, x)], {"axes": axes}, [out])
    assert float(expected(case)[0].reshape(-1)[0]) == 3.0
    assert touched(case)[0].tolist() == [True]




def test_a_nan_result_of_finite_inputs_is_open_and_the_rest_is_held():
    """log(-1) is NaN (undefined) with no special input: the HTP's finite value there is the symptom's; a wrong log(2)
    beside it is not."""
    x = np.array([-1.0, 2.0], np.float32)
    case = Case("ElementWiseLog", [Tensor("in[0]", "FLOAT_32", (2,), x)], {}, [Tensor("out[0]", "FLOAT_32", (2,))])
    assert models.check(case, [np.array([-12.0, np.log(2.0)], np.float32)], SYMPTOM)["matches"] is True
    assert models.check(case, [np.array([-12.0, 0.5], np.float32)], SYMPTOM)["matches"] is False
