"""The dilation-phases model of the HTP's FLOAT_32 DepthWiseConv2d with a depth multiplier (reference/convolution.py,
finding depthwiseconv2d-f32-dilation-phases-overlap) with a height dilation: each pixel placed channel_in x
(h x wf + w) into its batch's place, so the next phase row's first pixel overwrites the end of the row before."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

import reference  # noqa: E402
from cases.case import Case, Param, Tensor  # noqa: E402
from reference.expected import expected  # noqa: E402
from reference.models import check  # noqa: E402

MODEL = {"diagnosis": "dilation-phases-channel-in-apart"}
# The HTP simulator's out[0] for the probe below, pixel by pixel (row 0, then row 1), measured by
# /work/notes/s17/e/probes/d5.py: pixel (0, 3) is [7, 0, 13, 0], its last channel_in values row 1's first pixel's.
MEASURED = [[1, 0, 3, 0], [3, 0, 0, 0], [0, 0, 7, 0], [7, 0, 13, 0],
            [13, 0, 15, 0], [15, 0, 0, 0], [0, 0, 19, 0], [19, 0, 0, 0]]


def _probe() -> Case:
    """A [1, 4, 6, 2] ramp (1..48), a 2 x 2 filter of multiplier 2 with only tap (0, 0) of channel 0 set, dilation
    [2, 2], no padding: out[0] is [1, 2, 4, 4]."""
    x = (np.arange(48, dtype=np.float32) + 1).reshape(1, 4, 6, 2)
    w = np.zeros((2, 2, 1, 4), np.float32)
    w[0, 0, 0, 0] = 1.0
    u32 = np.uint32
    params = {"dilation": Param("dilation", "UINT_32", np.array([2, 2], u32)),
              "stride": Param("stride", "UINT_32", np.array([1, 1], u32)),
              "pad_amount": Param("pad_amount", "UINT_32", np.zeros((2, 2), u32))}
    ins = [Tensor("in[0]", "FLOAT_32", x.shape, x), Tensor("in[1]", "FLOAT_32", w.shape, w, static=True),
           Tensor("in[2]", "FLOAT_32", (4,), np.zeros(4, np.float32), static=True)]
    return Case("DepthWiseConv2d", ins, params, [Tensor("out[0]", "FLOAT_32", (1, 2, 4, 4))])


def _measured() -> np.ndarray:
    return np.asarray(MEASURED, np.float32).reshape(1, 2, 4, 4)


def test_the_model_gives_what_the_htp_gave_with_dilation_2_by_2() -> None:
    reference.load_families()
    assert check(_probe(), [_measured()], MODEL)["matches"] is True


def test_the_specs_answer_does_not_match_the_model() -> None:
    reference.load_families()
    c = _probe()
    assert check(c, expected(c), MODEL)["matches"] is False


def test_the_end_of_row_0_holding_its_own_values_does_not_match() -> None:
    """A planted error: pixel (0, 3) with its own channel 2 (0) where row 1's first pixel wrote 13."""
    reference.load_families()
    got = _measured()
    got[0, 0, 3, 2] = 0.0
    assert check(_probe(), [got], MODEL)["matches"] is False
