"""Models of the HTP simulator's elementwise precision deviations (reference.models): what a backend with the bug
returns. Kept beside ``reference/elementwise.py``, which holds the implementations and the older models.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reference.models import real_outputs, register_model, register_symptom


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


# The exponent grid of 16-bit Power: 2^-8 (measured: exponents swept over [-1.05, 0.05] in 45 steps fall on it).
POWER_EXPONENT_STEPS = 256
# The result comes out low by about 0.75 float16 ULPs on average, spread over [-2, 0] ULPs (measured over every
# input code at exponents 1, 0.5, 2, -1, -0.5: means -0.69 to -0.81 ULP): the model takes the middle of that spread,
# so that the rest lies within the 16-bit budget (1 step + 2^-10 of full scale) of it.
POWER_RESULT_BIAS = 1.0 - 2.0**-11


def power_exponent_on_grid(b: np.ndarray) -> np.ndarray:
    """The exponent 16-bit Power computes with: rounded to a 256th, and one 256th nearer zero again when negative
    (-0.25 is computed as -63/256, -0.1 as -25/256, 0.025 as 6/256)."""
    b = np.asarray(b, dtype=np.float64)
    return (np.round(b * POWER_EXPONENT_STEPS) + (b < 0)) / POWER_EXPONENT_STEPS


@register_model("ElementWisePower", name="exponent-on-a-256th-grid-negative-one-step-up")
def power_exponent_on_a_256th_grid(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 16-bit Power (finding power-u16-inaccurate): the exponent is rounded to a multiple of 1/256
    and, when negative, moved one 256th towards zero (-0.4225 is computed as -107/256 = -0.41797), so the result is
    in[0] ^ that exponent: off by about |ln in[0]| / 256 relative where the exponent is negative (1% of full scale at
    a base of 0.1), by the rounding alone (at most 1/512 of the exponent) where it is positive. The result itself is
    about 0.75 float16 ULPs low (spread over [-2, 0] ULPs), which the model centres on."""
    from reference.expected import arguments

    inputs, _ = arguments(case)
    a = np.asarray(inputs[0], dtype=np.float64)
    b = power_exponent_on_grid(inputs[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        return [np.power(a, b) * POWER_RESULT_BIAS]


# The grid 16-bit Power carries in[0]'s real value on: 2^-15, truncated (floor), as 15 fractional bits of fixed point.
# Measured with the exponent 1 (the result is then the base): every octave of bases from 2^-11 to 2^-4 shows a sawtooth
# that resets every 2^-15 (16 teeth in [2^-11, 2^-10], 32 in [2^-10, 2^-9]), 2^-15 deep, the result below the base;
# rounding to 2^-15, or a floor to 2^-16 or 2^-14, leaves 200-2000 steps where the floor to 2^-15 leaves 34 at most.
POWER_BASE_STEPS = 2**15


@register_model("ElementWisePower", "ElementWiseBinary", name="base-floored-to-a-32768th-exponent-on-a-256th-grid")
def power_base_floored_exponent_on_a_256th_grid(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 16-bit Power (finding power-u16-inaccurate): ``exponent-on-a-256th-grid-negative-one-step-
    up`` with the base floored to a multiple of 2^-15 first. The floor shows below a base of about 1/16: 0.017563
    (seed 1's edge case 74118e8b9a829787) is taken as 575/32768 = 0.017548, and to the power -830/256 that is 0.29%
    above the exponent grid's result (196 steps of that case's output); a base under 2^-15 is taken as 0.
    ElementWiseBinary with operation POWER computes the same (finding binary-power-u16-inaccurate); its other
    operations are not this model's."""
    import opdefs
    from reference.expected import arguments

    inputs, params = arguments(case)
    if case.op == "ElementWiseBinary" and opdefs.load(case.op).enum_name("operation", params["operation"]) != "POWER":
        raise ValueError("ElementWiseBinary: POWER only")
    a = np.floor(np.asarray(inputs[0], dtype=np.float64) * POWER_BASE_STEPS) / POWER_BASE_STEPS
    b = power_exponent_on_grid(inputs[1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return [np.power(a, b) * POWER_RESULT_BIAS]


# 16-bit SquareRoot's reciprocal square root of the mantissa m in [1, 4) of the input's code (code = m x 4^q): one line
# r = a + b (m - c) per 1/16 of m, c the middle of its 16th, (a, b) in the order of the 16ths from m = 1. Measured on
# the simulator (every input code of a 2^-12 grid, the lines that pick the same 1024th of r as the backend in every
# element, the middle of the range that does; /work/notes/s18/d/NOTES.md): runs of 1-4 neighbouring 16ths share one
# line (3.0625-3.25 is the tangent at 3.15625), so the table is not rsqrt's tangent in every 16th; no rule for the
# runs was found, hence the measured coefficients.
# fmt: off
SQRT_RSQRT_LINES = np.array([
    (0.98473302, -0.47690015), (0.95616776, -0.43308271), (0.92988930, -0.41192412),
    (0.90581850, -0.37209302), (0.88336483, -0.35324675), (0.86264366, -0.31735537),
    (0.84327422, -0.30034130), (0.82512019, -0.28402367), (0.80808637, -0.26815642),
    (0.79207629, -0.25307557), (0.77699532, -0.23841060), (0.76275402, -0.22444890),
    (0.74926804, -0.21092279), (0.73645020, -0.19801980), (0.72422359, -0.18565401),
    (0.71261919, -0.18565401), (0.70164423, -0.17391304), (0.69106750, -0.16255443),
    (0.68091192, -0.16243655), (0.67134510, -0.15151515), (0.66200844, -0.14134276),
    (0.65317588, -0.14128035), (0.64462149, -0.13141684), (0.63640526, -0.13145540),
    (0.62851105, -0.12200436), (0.62087908, -0.12198221), (0.61352988, -0.11315417),
    (0.60645774, -0.11315417), (0.59953916, -0.10457516), (0.59299777, -0.10471204),
    (0.58645695, -0.10474632), (0.58036893, -0.09657948), (0.57433021, -0.09661836),
    (0.56843951, -0.08901252), (0.56287759, -0.08901252), (0.55731629, -0.08898776),
    (0.55198074, -0.08177172), (0.54686835, -0.08177172), (0.54175761, -0.08177172),
    (0.53683493, -0.07494145), (0.53215109, -0.07494145), (0.52746496, -0.07494145),
    (0.52282270, -0.06852248), (0.51853796, -0.06852248), (0.51425432, -0.06857143),
    (0.50997056, -0.06852248), (0.50585747, -0.06250000), (0.50195122, -0.06250000),
])
# fmt: on
# r is used as a multiple of 1/1024 (measured: got / input for the codes of one line is constant in runs, and the
# runs' values step by 2^-10 where m^-1/2 lies in [1/2, 1)).
SQRT_RSQRT_STEPS = 1024


def sqrt_of_codes(v: np.ndarray) -> np.ndarray:
    """16-bit SquareRoot of integer codes v (the input's code plus its offset): v x r x 2^-q where v = m x 4^q (m in
    [1, 4)) and r is m^-1/2 read from the line table and rounded to a 1024th; 0 at 0 and undefined (NaN) below."""
    v = np.asarray(v, dtype=np.float64)
    pos = v > 0
    vp = np.where(pos, v, 1.0)
    e = np.floor(np.log2(vp))
    q = (e - e % 2) / 2
    m = vp / 4.0**q
    cell = np.clip(np.floor((m - 1) * 16).astype(int), 0, len(SQRT_RSQRT_LINES) - 1)
    a, b = SQRT_RSQRT_LINES[cell, 0], SQRT_RSQRT_LINES[cell, 1]
    r = np.round((a + b * (m - (1 + (cell + 0.5) / 16))) * SQRT_RSQRT_STEPS) / SQRT_RSQRT_STEPS
    return np.where(pos, vp * r * 2.0**-q, np.where(v == 0, 0.0, np.nan))


@register_model("ElementWiseSquareRoot", "ElementWiseUnary", name="code-times-rsqrt-from-a-line-table-on-a-1024th-grid")
def sqrt_code_times_rsqrt_from_a_line_table(case: Any) -> list[np.ndarray]:
    """The HTP simulator's 16-bit SquareRoot (finding squareroot-16bit-inaccurate; ElementWiseUnary SQRT gives the same
    codes, unary-sqrt-16bit-inaccurate): it works on in[0]'s code v (real value / scale, an integer), not on the real
    value: v = m x 4^q with m in [1, 4), r = m^-1/2 from a table of 48 lines (one per 1/16 of m) rounded to a multiple
    of 1/1024, and out[0] = sqrt(scale) x v x r x 2^-q. r's 1024th is up to 2^-10 relative off sqrt, which is the
    error the spec's result shows (3.8047 for sqrt 3.8092 near the top of [0, 4)); the model is within 2 steps of
    every positive input code of five encodings (in[0]'s scale 3.7e-5 to 1.6e-3, offsets 0 and -5000, UFIXED and
    SFIXED). Negative inputs are undefined (MasterOpDef line 5483) and left open."""
    import opdefs
    from reference.expected import arguments

    inputs, params = arguments(case)
    if case.op == "ElementWiseUnary" and opdefs.load(case.op).enum_name("operation", params["operation"]) != "SQRT":
        raise ValueError("ElementWiseUnary: SQRT only")
    enc = case.inputs[0].encoding
    if enc is None or len(enc.scales) != 1:
        raise ValueError("in[0] has no per-tensor encoding: not a fixed-point input")
    scale = float(enc.scales[0])
    v = np.round(np.asarray(inputs[0], dtype=np.float64) / scale)
    return [np.sqrt(scale) * sqrt_of_codes(v)]


@register_model("ElementWiseUnary", name="reciprocal-numerator-on-input-grid")
def reciprocal_numerator_on_input_grid(case: Any) -> list[np.ndarray]:
    """The ONNX Runtime QNN EP's fixed-point Reciprocal (finding ep-reciprocal-one-on-input-grid), which it hands to the
    HTP as ElementWiseDivide of a static 1 by in[0], the 1 quantized with in[0]'s encoding: the numerator is 1 rounded
    to in[0]'s grid and clamped to its range (the grid's largest value where 1 lies past it), so the result is that
    value / in[0]."""
    import opdefs
    from cases.quant import dequantize, quantize
    from reference.expected import arguments

    inputs, params = arguments(case)
    if opdefs.load(case.op).enum_name("operation", params["operation"]) != "RECIPROCAL":
        raise ValueError("RECIPROCAL only")
    x = case.inputs[0]
    if x.encoding is None:
        raise ValueError("in[0] has no encoding: not a fixed-point input")
    one = float(dequantize(quantize(np.array([1.0]), x.encoding, x.dtype), x.encoding)[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        return [one / np.asarray(inputs[0], dtype=np.float64)]


# The grid UFIXED_POINT_16 Round carries in[0]'s real value on before rounding it: 2^-16 (16 fractional bits). Measured
# on the simulator with inputs a known distance from a half: 6.76e-6 (2^-17.2) and less off a half round as the half
# (to even), 8.6e-6 (2^-16.8) and more round as the spec says; round to nearest on that grid, not floor (which would
# take 8.6e-6 above a half down to the half).
ROUND_INPUT_GRID = 2.0**16


@register_model("ElementWiseRound", name="input-on-a-65536th-grid")
def round_input_on_a_65536th_grid(case: Any) -> list[np.ndarray]:
    """The HTP simulator's UFIXED_POINT_16 Round (finding elementwiseround-u16-near-halves-as-halves): in[0]'s real
    value, scale x (code + offset), is first rounded to a multiple of 2^-16, and that rounded to the nearest integer,
    halves to even (line 4875): an input within 2^-17 of a half (4.5000003, code 55288 at scale 1.5375e-4) is taken as
    the half and goes to the even neighbour (4, where 5 is nearest). Every input code of five encodings (scales 4e-5 to
    5e-4) matches it; 8-bit Round rounds such inputs as the spec says."""
    import reference
    from reference.expected import arguments

    inputs, params = arguments(case)
    if case.inputs[0].encoding is None:
        raise ValueError("in[0] has no encoding: not a fixed-point input")
    x = np.rint(np.asarray(inputs[0], dtype=np.float64) * ROUND_INPUT_GRID) / ROUND_INPUT_GRID
    return reference.run(case.op, [x], params)


# Where a FLOAT_16 result rounds to infinity (IEEE round to nearest: 65520 and past it).
F16_OVERFLOW = 65520.0


@register_symptom("ElementWiseExp", "ElementWisePower", name="float16-overflow-as-nan")
def float16_overflow_as_nan(case: Any, stored: list[np.ndarray], judged: Any) -> str | None:
    """The HTP simulator's FLOAT_16 Exp and Power where the result is past float16's range (findings
    exp-f16-overflow-nan, power-f16-overflow-nan): NaN (Power: or the infinity) where IEEE arithmetic gives the
    infinity; every other element is held to the reference within the case's budget. Measured: exp(11.09375) = 65825
    and beyond come out NaN, exp(11.078125) = 64736 is right; 10 ^ 4.82 = 66117, 10 ^ 5, 300 ^ 2 and 0.5 ^ -17 come out
    NaN, 2 ^ 16 and 256 ^ 2 (65536 exactly) inf."""
    from reference.expected import expected

    if case.outputs[0].dtype != "FLOAT_16":
        return "not a FLOAT_16 output"
    with np.errstate(all="ignore"):
        ref = np.asarray(expected(case)[0], dtype=np.float64)
    over = np.isfinite(ref) & (np.abs(ref) >= F16_OVERFLOW)  # a finite real result that float16 cannot hold
    if not over.any():
        return "no result is past float16's range"
    actual = np.asarray(real_outputs(case, stored)[0], dtype=np.float64)
    if actual.shape != ref.shape:
        return f"out[0] has shape {actual.shape}, not {ref.shape}"
    if not np.isnan(actual[over]).any():
        return "no result past float16's range came out NaN"
    if not (np.isnan(actual[over]) | (actual[over] == np.sign(ref[over]) * np.inf)).all():
        return "a result past float16's range is neither NaN nor its infinity"
    j = judged([np.where(over, actual, ref)])
    return None if j.passed else f"an element within float16's range is wrong too: {j.message}"
