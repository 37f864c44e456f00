"""Models of the HTP simulator's element-wise deviations found in the edge tier (``reference.models``); the older
models of the family live in ``reference.elementwise``."""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import register_model


@register_model("ElementWiseBinary", name="truth-as-one-step")
def binary_truth_as_one_step(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 8-bit ElementWiseBinary with a logical or comparison operation written to a fixed-point
    output (finding binary-8bit-compare-fixed-output-one-step): a true result is the output's zero point plus one code,
    one step of out[0]'s grid (0.0039 on a [0, 1] grid), where the real value 1 belongs; false is 0 as it should be."""
    from reference.expected import expected

    truth = np.asarray(expected(case)[0], dtype=np.float64)
    enc = case.outputs[0].encoding
    if enc is None:
        raise ValueError("out[0] has no encoding: not a fixed-point output")
    return [np.where(truth != 0, float(enc.scales[0]), 0.0)]
