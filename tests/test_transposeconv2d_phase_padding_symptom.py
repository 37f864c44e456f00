"""The symptom of the HTP's FLOAT_32 TransposeConv2d at NaN and infinite values (reference/specials_models.py, finding
transposeconv2d-f32-phase-padding-times-specials-nan): NaN where such a value meets the zeros of a per-stride-phase
convolution (the input's padding under a real tap, a zero tap over a real input cell), the elements the specials decide
open, every other element the reference's."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from cases.case import Case  # noqa: E402
from reference.expected import expected  # noqa: E402
from reference.models import check  # noqa: E402
from reference.specials_models import PHASE_PADDING_NAN, phase_padding_nan, touched  # noqa: E402
from tests.simulator import outputs_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/TransposeConv2d/transposeconv2d-f32-phase-padding-times-specials-nan.json"
SYMPTOM = {"symptom": PHASE_PADDING_NAN}
# The own case: in[0] [1, 3, 3, 2] with in[0][1, 1, 0] = NaN, filter [3, 3, 2, 2] with w[2, 2, 0, 1] = +inf, stride 2.


def _shown(c: Case) -> np.ndarray:
    with np.errstate(all="ignore"):
        return phase_padding_nan(c) & ~touched(c)[0]


def _as_the_symptom_says(c: Case) -> np.ndarray:
    """The reference with NaN at the phase zeros and at every element the specials decide."""
    with np.errstate(all="ignore"):
        ref = np.asarray(expected(c)[0], dtype=np.float64)
        return np.where(phase_padding_nan(c) | touched(c)[0], np.nan, ref).astype(np.float32)


def test_a_special_tap_over_the_padding_gives_nan_in_the_channel_it_feeds() -> None:
    """w[2, 2, 0, 1] = +inf over row -1 or column -1 of in[0]: row 0 and column 0 of the output on the stride grid, in
    channel 1 only (channel 1 also has the input's cells, next test)."""
    c = Case.load(OWN_CASE)
    tap_cells = {(0, 0), (0, 2), (0, 4), (0, 6), (2, 0), (4, 0), (6, 0)}
    shown = _shown(c)[0]
    assert tap_cells <= {tuple(p) for p in np.argwhere(shown[:, :, 1]).tolist()}
    assert not any(shown[p, q, 0] for p, q in tap_cells)


def test_a_special_input_under_a_zero_tap_gives_nan_in_every_channel_of_its_group() -> None:
    """in[0][1, 1] = NaN under tap 3 (past the 3-tap filter) of phase 1: rows and columns 2-5 next to its own cells."""
    c = Case.load(OWN_CASE)
    shown = _shown(c)[0]
    expected_cells = [[2, 5], [3, 5], [4, 5], [5, 2], [5, 3], [5, 4], [5, 5]]
    assert np.argwhere(shown[:, :, 0]).tolist() == expected_cells
    assert all(shown[p, q, 1] for p, q in expected_cells)


def test_outputs_as_the_symptom_says_show_it() -> None:
    c = Case.load(OWN_CASE)
    assert check(c, [_as_the_symptom_says(c)], SYMPTOM)["matches"] is True


def test_the_spec_s_values_at_the_phase_zeros_do_not_show_it() -> None:
    c = Case.load(OWN_CASE)
    out = _as_the_symptom_says(c)
    with np.errstate(all="ignore"):
        ref = np.asarray(expected(c)[0], dtype=np.float32)
    out[_shown(c)] = ref[_shown(c)]
    assert check(c, [out], SYMPTOM)["matches"] is False


def test_an_element_no_special_decides_planted_off_does_not_show_it() -> None:
    c = Case.load(OWN_CASE)
    out = _as_the_symptom_says(c)
    assert np.isfinite(out[0, 6, 6, 0])
    out[0, 6, 6, 0] += 0.01
    assert check(c, [out], SYMPTOM)["matches"] is False


def test_a_case_without_nan_or_infinity_is_refused() -> None:
    c = Case.load(OWN_CASE)
    x, w = c.inputs[0], c.inputs[1]
    plain = replace(c, inputs=[replace(x, data=np.nan_to_num(x.data, nan=0.5)),
                               replace(w, data=np.nan_to_num(w.data, posinf=0.5))])  # fmt: skip
    assert phase_padding_nan(plain) is None
    assert check(plain, [np.asarray(expected(plain)[0], np.float32)], SYMPTOM)["matches"] is False


def test_a_float16_case_is_refused() -> None:
    c = Case.load(OWN_CASE)
    c16 = replace(c, config="FLOAT_16",
                  inputs=[replace(t, dtype="FLOAT_16", data=t.data.astype(np.float16)) for t in c.inputs],
                  outputs=[replace(c.outputs[0], dtype="FLOAT_16")])  # fmt: skip
    assert check(c16, [_as_the_symptom_says(c16).astype(np.float16)], SYMPTOM)["matches"] is False


@pytest.fixture(scope="module")
def own_outputs():
    """The backend's outputs for the finding's case (seed 1's edge 40379e4c70192fa5 cut to one NaN and one +inf)."""
    return outputs_of(OWN_CASE)


@pytest.mark.qnn
def test_the_symptom_shows_on_the_findings_case(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    assert check(c, own_outputs, SYMPTOM)["matches"] is True


@pytest.mark.qnn
def test_the_symptom_refuses_the_backend_s_output_with_a_right_element_planted_off(own_outputs) -> None:
    c = Case.load(OWN_CASE)
    planted = np.array(own_outputs[0], copy=True)
    planted[0, 6, 6, 0] += np.float32(0.01)
    assert check(c, [planted], SYMPTOM)["matches"] is False
