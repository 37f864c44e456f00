"""Models of the HTP simulator's activation precision deviations (reference.models): what a backend with the bug
returns. Kept beside ``reference/activation.py``, which holds the implementations and the older models.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import register_model, register_symptom

# The factors on beta that 16-bit Softmax was measured to compute with: 0.986-0.999 on the 16-bit typical failures
# of seeds 0-2, 0.9915-1.0004 on built cases (in[0]'s scale 5e-5 to 2e-4, beta 0.03-1), 0.972 at beta 0.05 with
# in[0]'s scale 1.156e-4; the grid the factor is fitted on, finer than a 16-bit step of any typical case's output.
SOFTMAX_BETA_FACTORS = np.round(np.arange(0.97, 1.0015, 0.0005), 4)


@register_symptom("Softmax", name="beta-scaled-down-by-up-to-3-percent")
def softmax_beta_scaled_down(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP simulator's 16-bit Softmax (finding softmax-16bit-beta-scaled): the outputs are the spec's Softmax
    computed with beta times a factor of 0.97 to 1.0015 (beta 0.1 at in[0]'s scale 1.156e-4 is computed as 0.0986,
    1.4% low): the exponent's multiplier, beta x in[0]'s scale, is held in a form that loses up to 0.84% of some
    values and nothing of others (exact at 2e-5 and 4e-5 with in[0] scales of 5e-5 to 2e-4), so which factor a case
    gets follows no rule found. The symptom takes the factor of the grid above that fits, and holds every element to
    the case's budget around that Softmax; a result that no beta fits (a short exponential table, a dropped low byte,
    beta ignored) does not show it."""
    import reference
    from reference.expected import arguments

    inputs, params = arguments(case)
    beta = float(params.get("beta", 1.0))
    best = None
    for k in SOFTMAX_BETA_FACTORS:
        j = judged(reference.run(case.op, list(inputs), {**params, "beta": beta * float(k)}))
        if j.passed:
            return None
        steps = j.metrics.get("max_steps", np.inf)
        if best is None or steps < best[1]:
            best = (float(k), steps)
    assert best is not None
    return f"no factor on beta in [0.97, 1.0015] fits: the best, {best[0]}, leaves {best[1]} steps"



# The polynomial the HTP simulator's SOFTPLUS evaluates on (-2, 5), lowest power first: a least-squares fit to its
# FLOAT_16 outputs at every 256th in [-2, 5) (beta 1), which it meets within 0.72 float16 ULPs (1.0 after rounding).
SOFTPLUS_POLYNOMIAL = (0.703104, 0.512727, 0.108828, -0.004618, -0.000665)
SOFTPLUS_POLYNOMIAL_RANGE = (-2.0, 5.0)


def htp_softplus(z: np.ndarray) -> np.ndarray:
    """ln(e^z + 1) as the HTP simulator computes it: e^z up to z = -2, the polynomial above between -2 and 5, z from
    5 on (0.703125 at 0 for ln 2, 0.3032 at -1 for 0.3133, e^-2 = 0.1353 at -2 for 0.1269)."""
    z = np.asarray(z, dtype=np.float64)
    lo, hi = SOFTPLUS_POLYNOMIAL_RANGE
    poly = np.polynomial.polynomial.polyval(z, SOFTPLUS_POLYNOMIAL)
    with np.errstate(over="ignore"):
        return np.where(z <= lo, np.exp(np.minimum(z, lo)), np.where(z >= hi, z, poly))


@register_model("ElementWiseNeuron", name="softplus-polynomial-between-minus-2-and-5")
def neuron_softplus_polynomial(case: Any) -> list[np.ndarray]:
    """The HTP simulator's SOFTPLUS (findings neuron-softplus-inaccurate, -beta-half-, -beta-tenth-): ln(e^z + 1) at
    z = beta x in[0] is e^z up to z = -2, a degree-4 polynomial between -2 and 5 (0.703104 + 0.512727 z + 0.108828 z^2
    - 0.004618 z^3 - 0.000665 z^4, measured) and z from 5 on, divided by beta; up to 0.0127 from the spec's in z
    (0.703125 for ln 2 at 0), so beta 0.1 makes it ten times that in out[0]. Where beta x in[0] > threshold the spec's
    linear branch (in[0]) holds as the spec says; the backend's own threshold bug is
    neuron-softplus-linear-at-threshold's."""
    from reference.activation import softplus_arguments

    x, beta, threshold = softplus_arguments(case)
    z = beta * x
    out = htp_softplus(z) / beta
    return [np.where((threshold >= 0) & (z > threshold), x, out)]


# The grid 8-bit Softmax takes out[0]'s scale on: a whole number of 2^-16 (finding softmax-8bit-output-scale-floored).
SOFTMAX_8BIT_SCALE_GRID = 2.0**-16


@register_model("Softmax", name="output-scale-floored-to-a-65536th")
def softmax_output_scale_floored(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 8-bit Softmax (finding softmax-8bit-output-scale-floored): the spec's Softmax, quantized with
    out[0]'s scale rounded down to a whole number of 2^-16, so every output comes back too large by the factor scale /
    floor(scale x 2^16) x 2^-16: 4.1% at a scale of 3.813e-4 (24.99 / 24), 9.6% at 6.69e-5 (4.38 / 4), exact at a
    multiple of 2^-16. Measured on the simulator with one case's rows (UFIXED_POINT_8 [1, 8, 64, 16], beta 0.1) and
    out[0]'s scale at 12.1, 12.4, 12.5, 12.6, 12.75, 12.9, 13, 13.3, 19.6, 24.7 and 40.9 x 2^-15: the rows' sums give an
    effective scale of 12, 12, 12.5, 12.5, 12.5, 12.5, 13, 13, 19.5, 24.5, 40.5 x 2^-15. A scale below 2^-16: not
    modelled (it would be 0)."""
    from reference.expected import expected

    out = case.outputs[0]
    if out.dtype not in ("UFIXED_POINT_8", "SFIXED_POINT_8") or out.encoding is None or out.encoding.per_axis:
        raise ValueError("output-scale-floored-to-a-65536th: an 8-bit out[0] with one scale only")
    scale = float(out.encoding.scales[0])
    floored = np.floor(scale / SOFTMAX_8BIT_SCALE_GRID) * SOFTMAX_8BIT_SCALE_GRID
    if floored <= 0:
        raise ValueError(f"output-scale-floored-to-a-65536th: out[0]'s scale {scale:g} is below 2^-16")
    return [y * (scale / floored) for y in expected(case)]
