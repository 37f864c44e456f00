"""The model of the HTP's FLOAT_16 PoolAvg3d past its first 8 output rows (reference/pooling_models_b.py, finding
poolavg3d-f16-lower-height-tiles-repeat-the-first)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case  # noqa: E402
from reference.expected import expected  # noqa: E402
from reference.models import _modelled, check  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/PoolAvg3d/poolavg3d-f16-lower-height-tiles-repeat-the-first.json"
NAME = "lower-height-tiles-repeat-the-first"
MODEL = {"diagnosis": NAME}


def test_rows_past_8_repeat_the_first_block_in_columns_1_and_2_of_4_and_leave_column_3_open() -> None:
    c = Case.load(OWN_CASE)
    spec, model = expected(c)[0], _modelled(c, "diagnosis", NAME)[0]
    np.testing.assert_array_equal(model[:, :, :8], spec[:, :, :8])
    np.testing.assert_array_equal(model[:, :, 8:, [0, 4]], spec[:, :, 8:, [0, 4]])
    np.testing.assert_array_equal(model[:, :, 8:, [1, 2, 5, 6]], spec[:, :, :8, [1, 2, 5, 6]])
    assert np.isnan(model[:, :, 8:, 3]).all()


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 4's c123cbca609476df)."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_model_reproduces_the_findings_case_and_the_spec_does_not(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, MODEL)["matches"] is True
    assert check(c, [expected(c)[0].astype(np.float16)], MODEL)["matches"] is False


@pytest.mark.qnn
def test_the_model_refuses_rows_repeated_from_the_wrong_block(own_outputs) -> None:
    """Rows past 8 holding row h % 8 + 1's values, not row h % 8's: outside the float16 budget of the model."""
    c = Case.load(OWN_CASE)
    planted = np.array(own_outputs[0], copy=True)
    planted[:, :, 8:15, [1, 2, 5, 6]] = planted[:, :, 9:16, [1, 2, 5, 6]]
    assert check(c, [planted], MODEL)["matches"] is False
