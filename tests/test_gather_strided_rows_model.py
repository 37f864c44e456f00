"""The model of the HTP's 8-bit Gather of a [d0, d1, W] table on its last axis with indices shaped [1, n]
(reference/indexing.py, finding gather-8bit-last-axis-row-indices-strided-rows): out row r is the table's row r * d1
gathered, for r < min(d0, d1); the rows past those are open."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case  # noqa: E402
from reference.compare import encode_outputs  # noqa: E402
from reference.expected import expected  # noqa: E402
from reference.models import check  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/Gather/gather-8bit-last-axis-row-indices-strided-rows.json"
MODEL = {"diagnosis": "leading-rows-strided-rest-open"}


def _strided_codes(c: Case) -> np.ndarray:
    """The look measured on the simulator: rows r < min(d0, d1) from the table's row r * d1, zeros after."""
    spec = encode_outputs(c, expected(c))[0]
    d0, d1 = c.inputs[0].shape[:2]
    rows = spec.reshape(d0 * d1, -1)
    out = np.zeros_like(rows)
    k = min(d0, d1)
    out[:k] = rows[np.arange(k) * d1]
    return out.reshape(spec.shape)


def test_rows_gathered_from_every_d1th_table_row_then_zeros_match() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, [_strided_codes(c)], MODEL)["matches"] is True


def test_the_specs_answer_does_not_match() -> None:
    """Row 1 of the spec's out[0] is the table's row 1, not its row d1."""
    c = Case.load(OWN_CASE)
    assert check(c, encode_outputs(c, expected(c)), MODEL)["matches"] is False


def test_a_leading_row_two_codes_off_does_not_match() -> None:
    c = Case.load(OWN_CASE)
    codes = _strided_codes(c).astype(np.int64)
    codes.reshape(-1, codes.shape[-1])[0, 0] += 2 if codes.reshape(-1, codes.shape[-1])[0, 0] < 250 else -2
    assert check(c, [codes.astype(np.uint8)], MODEL)["matches"] is False


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 3's typical faaeda64727dd755: [2, 6, 4] by [1, 4])."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_model_reproduces_the_findings_case(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, MODEL)["matches"] is True
