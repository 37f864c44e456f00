"""TopK's symptom of the HTP simulator's signed zeros (reference/reduction_models_b.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from reference import models

# ---- TopK FLOAT_16 signed zeros (finding topk-f16-signed-zeros-out-of-tie-order) ---------------------------------
SIGNED_ZEROS = {"symptom": "signed-zeros-out-of-tie-order"}


def _top_k_case(rows: list[list[float]]) -> Any:
    from tests.reference_helpers import case

    x = np.array(rows, np.float16)
    return case("TopK", [x], {"k": 2}, [("FLOAT_16", (len(rows), 2)), ("UINT_32", (len(rows), 2))])


def test_top_k_signed_zeros_symptom_takes_the_simulators_order() -> None:
    """Measured on the simulator: [-0, -0.5, +0] gives indices [0, 2], [-0, -0, +0] [1, 0] (spec: [2, 0], [2, 1])."""
    c = _top_k_case([[-0.0, -0.5, 0.0], [-0.0, -0.0, 0.0]])
    values = np.array([[-0.0, 0.0], [-0.0, -0.0]], np.float16)
    assert models.check(c, [values, np.array([[0, 2], [1, 0]], np.uint32)], SIGNED_ZEROS)["matches"]


def test_top_k_signed_zeros_symptom_refuses_a_wrong_index_elsewhere() -> None:
    c = _top_k_case([[-0.0, -0.5, 0.0], [1.0, 2.0, 1.0]])
    values = np.array([[-0.0, 0.0], [2.0, 1.0]], np.float16)
    assert models.check(c, [values, np.array([[0, 2], [1, 2]], np.uint32)], SIGNED_ZEROS)["matches"]
    assert not models.check(c, [values, np.array([[0, 2], [1, 0]], np.uint32)], SIGNED_ZEROS)["matches"]  # tie 1.0


def test_top_k_signed_zeros_symptom_needs_a_row_with_both_zeros() -> None:
    c = _top_k_case([[0.0, -0.5, 0.0]])
    got = [np.array([[0.0, 0.0]], np.float16), np.array([[0, 2]], np.uint32)]
    assert not models.check(c, got, SIGNED_ZEROS)["matches"]
