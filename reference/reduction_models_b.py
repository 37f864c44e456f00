"""Models of the HTP simulator's reduction deviations (reference.models), continued: TopK's.

Kept beside ``reference/reduction.py`` and ``reference/reduction_models_a.py``, which hold the implementations and the
family's other models.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import register_symptom


@register_symptom("TopK", name="signed-zeros-out-of-tie-order")
def top_k_signed_zeros_out_of_tie_order(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP simulator's FLOAT_16 TopK (finding topk-f16-signed-zeros-out-of-tie-order): where a row holds both -0
    and +0 among the values it ranks, it does not take them as one tie (the spec's larger index first, 12745): [-0,
    -0.5, +0] gives indices [0, 2] where [2, 0] belongs, [-0, -0, +0] gives [1, 0] where [2, 1] belongs (the -0s
    first), [+0, +0, -0] gives [1, 0] (the +0s first); ties among ordinary values and among zeros of one sign follow the
    spec. Which zero comes first follows no rule found, so this is a symptom: out[0] is the reference's within the
    case's budget, out[1] differs from it only where out[0] is a zero of a row holding zeros of both signs, and every
    index there points at a zero of in[0]."""
    from reference.expected import expected
    from reference.models import real_outputs

    want_v, want_i = expected(case)
    got_v, got_i = real_outputs(case, stored)
    x = np.asarray(case.inputs[0].data, dtype=np.float64)
    zero = x == 0
    mixed = (zero & np.signbit(x)).any(axis=-1, keepdims=True) & (zero & ~np.signbit(x)).any(axis=-1, keepdims=True)
    if not mixed.any():
        return "no row holds both -0 and +0"
    j = judged([want_v, np.where(got_v == 0, got_i, want_i)])
    if not j.passed:
        return f"wrong away from the signed zeros: {j.message}"
    differ = got_i != want_i
    if not differ.any():
        return "the indices are the reference's"
    rows = np.broadcast_to(mixed, want_i.shape)
    idx = np.clip(got_i.astype(np.int64), 0, x.shape[-1] - 1)
    points_at_zero = np.take_along_axis(zero, idx, axis=-1)
    if np.any(differ & ~(rows & (want_v == 0) & points_at_zero)):
        return "an index differs where no zero of a mixed-sign row belongs"
    return None
