"""matmul-16x8-bias-ignored-zero-point-below-128-edge: its case (a 16x8 MatMul whose bias is given at run time with a
32-bit offset) is the bias-dropped, in[1]-requantized model's within the case's own budget, with no band; the model
refuses the spec's answer and an output planted off."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cases.case import Case
from reference import models

REPO = Path(__file__).resolve().parents[1]
MODEL = {"diagnosis": "htp-16x8-weights-requantized-without-bias-zero-point-below-128"}
# the finding's case on the simulator (seed 1's edge 4ccc564158a52e73), out[0]'s codes
CODES = np.array([35525, 45229, 26019, 3940, 33545, 26549, 31960, 54516, 26913, 11101, 65535, 23511, 18249, 31302,
                  27137, 21902, 3481, 29009], np.uint16).reshape(3, 2, 3)  # fmt: skip


def finding_case() -> Case:
    return Case.load(REPO / "findings/cases/MatMul/matmul-16x8-bias-ignored-zero-point-below-128-edge.json")


def test_the_bias_is_given_at_run_time_with_an_offset() -> None:
    b = finding_case().inputs[2]
    assert not b.static and b.encoding.offsets[0] != 0


def test_the_model_takes_the_case_within_its_own_budget() -> None:
    got = models.check(finding_case(), [CODES], MODEL)
    assert got["matches"] and got["max_steps"] <= 13, got


def test_the_model_refuses_the_spec_answer_and_an_output_planted_off() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    c = finding_case()
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], MODEL)["matches"]
    planted = CODES.astype(np.int64)
    planted[1, 0, 1] += 60  # 60 steps more on one element (budget 40)
    assert not models.check(c, [planted.astype(np.uint16)], MODEL)["matches"]
