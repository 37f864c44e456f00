"""The symptom of the HTP's RmsNorm on rank-4 inputs taller than 8 rows (reference/normalization.py, finding
rmsnorm-rank4-taller-than-8-pixels-wrong): whole pixels wrong, every other pixel right."""

from __future__ import annotations

import sys
from dataclasses import replace
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
OWN_CASE = REPO / "findings/cases/RmsNorm/rmsnorm-rank4-taller-than-8-pixels-wrong.json"
MODEL = {"symptom": "whole-pixels-normalized-wrong"}


def _spec_codes(c: Case) -> np.ndarray:
    return encode_outputs(c, expected(c))[0]


def test_one_pixel_zeroed_beside_right_ones_shows_the_symptom() -> None:
    c = Case.load(OWN_CASE)
    codes = _spec_codes(c).copy()
    codes[0, 8] = 0
    assert check(c, [codes], MODEL)["matches"] is True


def test_a_pixel_at_another_scale_shows_the_symptom_even_where_few_channels_are_off() -> None:
    c = Case.load(OWN_CASE)
    real = expected(c)[0]
    no_beta = expected(replace(c, inputs=list(c.inputs[:2])))[0]
    beta = real - no_beta
    real = real.copy()
    real[0, 8] = no_beta[0, 8] * 1.03 + beta[0, 8]  # a normalizer 3% off, as one measured pixel had
    assert check(c, encode_outputs(c, [real]), MODEL)["matches"] is True


def test_every_pixel_right_does_not_show_it() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, [_spec_codes(c)], MODEL)["matches"] is False


def test_most_pixels_wrong_beside_a_sixteenth_right_shows_the_symptom() -> None:
    """The wrong pixels of a batch of 8 change from run to run, up to nine in ten of them (seed 3's [8, 11, 11, 16])."""
    c = Case.load(OWN_CASE)
    codes = _spec_codes(c).copy()
    pixels = codes.reshape(-1, codes.shape[-1])
    pixels[:-1] = 0  # every pixel but the last
    assert pixels.shape[0] <= 16, "the finding's case has more pixels than this test assumes"
    assert check(c, [codes], MODEL)["matches"] is True


def test_every_pixel_zeroed_does_not_show_it() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, [np.zeros_like(_spec_codes(c))], MODEL)["matches"] is False


def test_beta_dropped_everywhere_does_not_show_it() -> None:
    """A bug of every pixel: not a sixteenth of the pixels is right."""
    c = Case.load(OWN_CASE)
    codes = encode_outputs(c, expected(replace(c, inputs=list(c.inputs[:2]))))[0]
    assert check(c, [codes], MODEL)["matches"] is False


def test_single_elements_two_steps_off_do_not_show_it() -> None:
    """A rounding bug: pixels off in a channel or two, not as a whole and not at one scale."""
    c = Case.load(OWN_CASE)
    codes = _spec_codes(c).astype(np.int64)
    codes[0, 2, 0, 5] += 3
    codes[0, 6, 0, 11] -= 3
    assert check(c, [np.clip(codes, 0, 255).astype(np.uint8)], MODEL)["matches"] is False


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 2's fc677de3c6b6f828 cut to [1, 9, 1, 32])."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_symptom_shows_on_the_findings_case(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, MODEL)["matches"] is True


@pytest.mark.qnn
def test_the_symptom_refuses_a_right_pixel_planted_off_by_two_steps(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    planted = np.array(own_outputs[0], copy=True).astype(np.int64)
    planted[0, 3, 0, 7] += 2 if planted[0, 3, 0, 7] < 250 else -2
    assert check(c, [planted.astype(np.uint8)], MODEL)["matches"] is False


def test_a_rank_3_input_with_a_pixel_zeroed_shows_the_symptom() -> None:
    """Rank 3 over the last axis is the HTP's [1, H, W, C] with H = dim 0 (seed 1's [9, 15, 32] cases): the own case
    as [9, 1, 32] with axes [2], pixel 8 zeroed."""
    from cases.case import Param

    c = Case.load(OWN_CASE)
    x = c.inputs[0]
    c3 = replace(c, inputs=[replace(x, shape=(9, 1, 32), data=np.asarray(x.data).reshape(9, 1, 32))]
                 + list(c.inputs[1:]), outputs=[replace(c.outputs[0], shape=(9, 1, 32))],
                 params={**c.params, "axes": Param("axes", "UINT_32", np.array([2], np.uint32))})
    codes = _spec_codes(c3).copy()
    codes[8] = 0
    assert check(c3, [codes], MODEL)["matches"] is True
    assert check(c3, [_spec_codes(c3)], MODEL)["matches"] is False
