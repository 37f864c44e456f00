"""The symptom of the HTP's 16x8 weight requantization rounding near-half codes either way (reference/
convolution_models_b.py, findings conv2d-/conv3d-/transposeconv2d-16x8-zero-point-below-128-near-half-codes and
matmul-16x8-bias-ignored-near-half-codes)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case  # noqa: E402
from cases.quant import quantize  # noqa: E402
from reference.convolution_models_b import _matmul_without_bias, _near_half_flips  # noqa: E402
from reference.models import check  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "findings/cases"
MATMUL = CASES / "MatMul/matmul-16x8-bias-ignored-near-half-codes.json"
CONV2D = CASES / "Conv2d/conv2d-16x8-zero-point-below-128-near-half-codes.json"
CONV3D = CASES / "Conv3d/conv3d-16x8-zero-point-below-128-near-half-codes.json"
TCONV2D = CASES / "TransposeConv2d/transposeconv2d-16x8-zero-point-below-128-near-half-codes.json"
MODEL = {"symptom": "htp-16x8-weights-requantized-near-half-codes-either-way"}


def _codes(c: Case, real: np.ndarray) -> np.ndarray:
    return quantize(real, c.outputs[0].encoding, c.outputs[0].dtype)


def test_the_matmul_case_has_the_code_measured_near_a_half_in_its_column_of_maximum_149() -> None:
    c = Case.load(MATMUL)  # in[1][0, 5, :, 1] is q - z = [-31, -44, 16, 149, -89]: -44 x 127/149 = -37.503
    flips = [index for _, index, _ in _near_half_flips(c)]
    assert (0, 5, 1, 1) in flips


def test_the_model_with_a_near_half_code_at_its_other_neighbour_shows_the_symptom() -> None:
    c = Case.load(MATMUL)
    _, index, change = next(f for f in _near_half_flips(c) if f[1] == (0, 5, 1, 1))
    model = _matmul_without_bias(c)[0].copy()
    x = c.inputs[0]
    from cases.quant import real_value

    model[0, 5, :, 1] += real_value(x)[0, 5, :, 1] * change  # in[0][0, 5, :, k = 1] times the code's change
    assert check(c, [_codes(c, model)], MODEL)["matches"] is True


def test_an_output_off_elsewhere_than_the_near_half_codes_reach_does_not_show_it() -> None:
    c = Case.load(MATMUL)
    model = _matmul_without_bias(c)[0].copy()
    model[1, 0, 2, 0] += 100 * float(c.outputs[0].encoding.scales[0])  # 100 steps where no near-half code reaches
    assert check(c, [_codes(c, model)], MODEL)["matches"] is False


def test_a_zero_point_of_128_or_more_is_not_this_symptom() -> None:
    c = Case.load(MATMUL)
    w = c.inputs[1]
    above = replace(c, inputs=[c.inputs[0], replace(w, encoding=replace(w.encoding, offsets=(-130,))), *c.inputs[2:]])
    assert check(above, [_codes(c, _matmul_without_bias(c)[0])], MODEL)["matches"] is False


@pytest.mark.qnn
@pytest.mark.parametrize("path", [MATMUL, CONV2D, CONV3D, TCONV2D],
                         ids=["MatMul", "Conv2d", "Conv3d", "TransposeConv2d"])
def test_the_symptom_shows_on_the_findings_cases(path: Path) -> None:
    c = Case.load(path)
    assert check(c, outputs_of(path), MODEL)["matches"] is True


@pytest.mark.qnn
def test_the_symptom_refuses_the_backends_output_planted_off_outside_the_reach() -> None:
    c = Case.load(MATMUL)
    planted = np.array(outputs_of(MATMUL)[0], copy=True).astype(np.int64)
    planted[1, 0, 2, 0] += 150
    assert check(c, [planted.astype(np.uint16)], MODEL)["matches"] is False


def test_the_transposeconv2d_case_has_one_near_half_code() -> None:
    """Seed 1's f7c711a69e4c2ff7 (zero point 91): filter code at (1, 2, 1, 0) of group 2 lies within 2^-11 of a half."""
    c = Case.load(TCONV2D)
    assert [index for _, index, _ in _near_half_flips(c)] == [(1, 2, 1, 0)]


def test_the_specs_answer_for_the_transposeconv2d_case_does_not_show_it() -> None:
    from reference.compare import encode_outputs
    from reference.expected import expected

    c = Case.load(TCONV2D)
    assert check(c, encode_outputs(c, expected(c)), MODEL)["matches"] is False


@pytest.mark.qnn
def test_the_symptom_refuses_the_transposeconv2d_output_planted_off() -> None:
    c = Case.load(TCONV2D)
    planted = np.array(outputs_of(TCONV2D)[0], copy=True).astype(np.int64)
    planted[0, 0, 0, 1] += 150 if planted[0, 0, 0, 1] < 65000 else -150
    assert check(c, [planted.astype(np.uint16)], MODEL)["matches"] is False
