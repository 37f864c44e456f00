"""The pooling references (reference/pooling.py) against onnxruntime CPU and the spec text.

ONNX pools take NCHW and pads as [begins..., ends...]; QNN's are NHWC with [[before, after], ...].
Where ONNX and our reading of the MasterOpDef agree (padded cells ignored by max, the average divisor
with and without the pad cells, L2 as the square root of a sum) the comparison is direct; the CEIL
windows that run past the padding are compared only where ONNX computes the same output shape.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference
from cases import quant
from tests.onnx_oracle import ort_node

RNG_SEED = 20240613
N_RANDOM = 12


def u32(v) -> np.ndarray:
    return np.array(v, np.uint32)


def onnx_pads(pads: np.ndarray) -> list[int]:
    p = np.asarray(pads).reshape(-1, 2)
    return [int(v) for v in p[:, 0]] + [int(v) for v in p[:, 1]]


def pool_config(rng: np.random.Generator, n: int, ceil: bool) -> dict:
    """A random pool whose output size is the same under QNN's formula and ONNX's (ONNX drops a CEIL
    window that would start in the after-padding; such configurations are redrawn)."""
    while True:
        spatial = tuple(int(v) for v in rng.integers(2, 7, size=n))
        f = tuple(int(v) for v in rng.integers(1, 4, size=n))
        s = tuple(int(v) for v in rng.integers(1, 3, size=n))
        pads = np.array([[int(rng.integers(0, f[i])), int(rng.integers(0, f[i]))] for i in range(n)])  # ONNX: pad < f
        padded = [spatial[i] + pads[i].sum() for i in range(n)]
        if any(padded[i] < f[i] for i in range(n)):
            continue
        rnd = math.ceil if ceil else math.floor
        out = [rnd((padded[i] - f[i]) / s[i] + 1) for i in range(n)]
        if ceil and any((out[i] - 1) * s[i] >= spatial[i] + pads[i][0] for i in range(n)):
            continue
        return dict(spatial=spatial, f=f, s=s, pads=pads, batch=int(rng.integers(1, 3)), ch=int(rng.integers(1, 4)))


def run_both(op: str, onnx_op: str, n: int, i: int, ceil: bool, qnn_extra: dict, onnx_extra: dict,
             positive: bool = False) -> tuple[np.ndarray, np.ndarray, dict]:  # fmt: skip
    rng = np.random.default_rng([RNG_SEED, sum(op.encode()), n, i, ceil])
    c = pool_config(rng, n, ceil)
    lo = 0.1 if positive else -3.0
    x = rng.uniform(lo, 3.0, (c["batch"], *c["spatial"], c["ch"])).astype(np.float32)
    if i % 4 == 3:  # every fourth random case on UFIXED_POINT_8 reals (quantized through cases.quant)
        enc = quant.encoding_for_range(float(x.min()), float(x.max()), "UFIXED_POINT_8")
        x = quant.dequantize(quant.quantize(x, enc, "UFIXED_POINT_8"), enc).astype(np.float32)
    params = {"filter_size": u32(c["f"]), "stride": u32(c["s"]), "pad_amount": u32(c["pads"]), **qnn_extra}
    if ceil:
        params["rounding_mode"] = 1
    (got,) = reference.run(op, [x.astype(np.float64)], params)
    attrs = {"kernel_shape": list(c["f"]), "strides": list(c["s"]), "pads": onnx_pads(c["pads"]), **onnx_extra}
    if ceil:
        attrs["ceil_mode"] = 1
    (want,) = ort_node(onnx_op, [np.moveaxis(x, -1, 1).copy()], **attrs)
    return got, np.moveaxis(want, 1, -1), c


MAX_CASES = [(op, n, i, ceil) for op, n in (("PoolMax2d", 2), ("PoolMax3d", 3)) for i in range(N_RANDOM)
             for ceil in (False, True)]  # fmt: skip


@pytest.mark.parametrize("op,n,i,ceil", MAX_CASES)
def test_pool_max_matches_onnxruntime_max_pool(op: str, n: int, i: int, ceil: bool) -> None:
    """Negative inputs included: padded cells must not raise a negative maximum to 0."""
    got, want, c = run_both(op, "MaxPool", n, i, ceil, {}, {})
    np.testing.assert_allclose(got, want, rtol=0, atol=0, err_msg=f"{op} ceil={ceil} {c}")


AVG_CASES = [(op, n, i, ceil, cp) for op, n in (("PoolAvg2d", 2), ("PoolAvg3d", 3)) for i in range(N_RANDOM // 2)
             for ceil in (False, True) for cp in (False, True)]  # fmt: skip


@pytest.mark.parametrize("op,n,i,ceil,count_pad", AVG_CASES)
def test_pool_avg_matches_onnxruntime_average_pool(op: str, n: int, i: int, ceil: bool, count_pad: bool) -> None:
    """Except, with count_pad_for_edges, CEIL windows that run past the after-pad: ONNX divides them by their cells
    inside the padded input, the spec by the whole filter (PoolAvg2d.yaml decisions; the next test)."""
    got, want, c = run_both(op, "AveragePool", n, i, ceil, {"count_pad_for_edges": count_pad},
                            {"count_include_pad": int(count_pad)})  # fmt: skip
    if ceil and count_pad:
        inside = np.ones(got.shape[1:-1], dtype=bool)
        for k in range(n):
            ends = np.arange(got.shape[1 + k]) * c["s"][k] + c["f"][k]
            fits = ends <= c["spatial"][k] + c["pads"][k].sum()
            inside &= fits.reshape([-1 if j == k else 1 for j in range(n)])
        got, want = got[:, inside], want[:, inside]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{op} ceil={ceil} count_pad={count_pad} {c}")


@pytest.mark.parametrize("i", range(N_RANDOM))
def test_l2_pool_matches_onnxruntime_lp_pool_p2(i: int) -> None:
    """ONNX LpPool(p=2) is sqrt(sum x^2) over the zero-padded window, the spec's formula (seed 7766)."""
    got, want, c = run_both("L2Pool2d", "LpPool", 2, i, False, {}, {"p": 2})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"L2Pool2d {c}")


def test_pool_avg2d_quantized_within_one_step_of_onnxruntime() -> None:
    """UFIXED_POINT_8 in and out: the reference on dequantized inputs against onnxruntime's float
    average of the same reals, both quantized with the output encoding."""
    rng = np.random.default_rng(RNG_SEED + 1)
    x = rng.uniform(0.0, 4.0, (1, 6, 5, 3))
    enc = quant.encoding_for_range(0.0, 4.0, "UFIXED_POINT_8")
    real = quant.dequantize(quant.quantize(x, enc, "UFIXED_POINT_8"), enc)
    params = {"filter_size": u32([3, 2]), "stride": u32([2, 1]), "pad_amount": u32([[1, 1], [0, 1]])}
    (got,) = reference.run("PoolAvg2d", [real], params)
    (want,) = ort_node("AveragePool", [np.moveaxis(real, -1, 1).astype(np.float32)], kernel_shape=[3, 2],
                       strides=[2, 1], pads=[1, 0, 1, 1])  # fmt: skip
    q_got = quant.quantize(got, enc, "UFIXED_POINT_8").astype(int)
    q_want = quant.quantize(np.moveaxis(want, 1, -1), enc, "UFIXED_POINT_8").astype(int)
    assert np.max(np.abs(q_got - q_want)) <= 1, f"codes differ by more than one step: {q_got - q_want}"


# ---- hand cases from the spec text and the decisions --------------------------------------------


def row(op: str, vals: list[float], f: int, s: int, pad: list[int], **extra) -> np.ndarray:
    """Pool a single row [1, 1, W, 1] with a 1 x f window."""
    x = np.array(vals).reshape(1, 1, -1, 1)
    p = {"filter_size": u32([1, f]), "stride": u32([1, s]), "pad_amount": u32([[0, 0], pad]), **extra}
    return reference.run(op, [x], p)[0].ravel()


def test_pool_max_ignores_padded_cells() -> None:
    """[-1, -2, -4, -8], window 2, stride 2, pad 1 each side: windows (pad,-1), (-2,-4), (-8,pad)."""
    np.testing.assert_array_equal(row("PoolMax2d", [-1, -2, -4, -8], 2, 2, [1, 1]), [-1, -2, -8],
                                  err_msg="a padded 0 won over negative inputs")  # fmt: skip


def test_pool_max_window_without_input_cells_is_minus_infinity() -> None:
    """CEIL with stride > filter: H 5, f 1, s 3 gives ceil(4/3 + 1) = 3 windows; the third starts at 6 and holds no
    input cell: the maximum over no cell (PoolMax2d.yaml decisions)."""
    np.testing.assert_array_equal(row("PoolMax2d", [-1, -2, -4, -8, -16], 1, 3, [0, 0], rounding_mode=1),
                                  [-1, -8, -np.inf], err_msg="empty window")  # fmt: skip


def test_pool_max_window_wholly_in_the_padding_is_minus_infinity() -> None:
    """A 1-wide window on a before-pad cell reads no input cell."""
    np.testing.assert_array_equal(row("PoolMax2d", [-1, -2], 1, 1, [1, 0]), [-np.inf, -1, -2])


def test_pool_avg_divisor_counts_input_cells_unless_count_pad_for_edges() -> None:
    """[1, 2, 4, 8], window 2, stride 2, pad 1: (pad,1), (2,4), (8,pad)."""
    np.testing.assert_array_equal(row("PoolAvg2d", [1, 2, 4, 8], 2, 2, [1, 1]), [1, 3, 8], err_msg="count_pad 0")
    np.testing.assert_array_equal(row("PoolAvg2d", [1, 2, 4, 8], 2, 2, [1, 1], count_pad_for_edges=True),
                                  [0.5, 3, 4], err_msg="count_pad 1")  # fmt: skip


def test_pool_avg_ceil_overhang_is_left_out_without_count_pad_and_counted_like_pad_with_it() -> None:
    """[1, 2, 4, 8], window 3, stride 2, pad [1, 1], CEIL: windows [pad,1,2], [2,4,8], [8,pad,past]; the cell past the
    after-pad adds nothing; with count_pad_for_edges every window divides by the filter size ("Number of elements to
    average = filter_size[0]*filter_size[1]", seed line 9682), the overhang counted like pad."""
    np.testing.assert_allclose(row("PoolAvg2d", [1, 2, 4, 8], 3, 2, [1, 1], rounding_mode=1), [1.5, 14 / 3, 8],
                               err_msg="count_pad 0")  # fmt: skip
    np.testing.assert_allclose(row("PoolAvg2d", [1, 2, 4, 8], 3, 2, [1, 1], rounding_mode=1, count_pad_for_edges=True),
                               [1, 14 / 3, 8 / 3], err_msg="count_pad 1")  # fmt: skip


def test_pool_avg_ceil_output_size_follows_the_spec_formula() -> None:
    """ROUND = ceil: (0 + 5 + 0 - 1) / 3 + 1 = 2.33 -> 3 windows, even though the last starts past the
    input (ONNX and PyTorch would drop it); it has no cell to divide by, so its average is 0 / 0, open (NaN)."""
    np.testing.assert_array_equal(row("PoolAvg2d", [1, 2, 4, 8, 16], 1, 3, [0, 0], rounding_mode=1), [1, 8, np.nan],
                                  err_msg="CEIL windows")  # fmt: skip


def test_pool_avg_window_wholly_in_the_padding_is_open_without_count_pad_and_zero_with_it() -> None:
    """A 1-wide window on a before-pad cell: no input cell to divide by (open, NaN); counting the pad, 0 / 1 = 0."""
    np.testing.assert_array_equal(row("PoolAvg2d", [1, 2], 1, 1, [1, 0]), [np.nan, 1, 2])
    np.testing.assert_array_equal(row("PoolAvg2d", [1, 2], 1, 1, [1, 0], count_pad_for_edges=True), [0, 1, 2])


def test_l2_pool_is_the_root_of_a_sum_not_a_mean() -> None:
    """[3, 4] -> 5 (sqrt(9 + 16)); NNAPI's mean reading would give sqrt(12.5)."""
    np.testing.assert_allclose(row("L2Pool2d", [3, 4, 0, 12], 2, 2, [0, 0]), [5, 12], err_msg="L2 sum")


def test_pool_3d_hand_case() -> None:
    """2x2x2 cube 1..8, 2x2x2 window: max 8, mean 4.5."""
    x = np.arange(1.0, 9.0).reshape(1, 2, 2, 2, 1)
    p = {"filter_size": u32([2, 2, 2]), "stride": u32([1, 1, 1]), "pad_amount": u32([[0, 0]] * 3)}
    assert reference.run("PoolMax3d", [x], p)[0].ravel().tolist() == [8.0]
    assert reference.run("PoolAvg3d", [x], p)[0].ravel().tolist() == [4.5]


# ---- models of known deviations (reference.models): what a backend with that bug returns ---------------------


def test_pool_avg2d_model_moves_the_before_pads_after_the_input() -> None:
    """[[1, 2], [3, 4]], a 2 x 2 window, stride 2, height pad [1, 1], count_pad off: the first window holds the whole
    input (2.5), the second only padding (0), where [1.5, 3.5] belongs."""
    from tests.reference_helpers import case, modelled

    x = np.array([1.0, 2.0, 3.0, 4.0], np.float16).reshape(1, 2, 2, 1)
    c = case("PoolAvg2d", [x], {"filter_size": [2, 2], "stride": [2, 2], "pad_amount": [[1, 1], [0, 0]],
                                "count_pad_for_edges": False}, [("FLOAT_16", (1, 2, 1, 1))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "before-pad-moved-after")[0].ravel(), [2.5, 0.0])


def test_pool_avg2d_model_counts_the_column_past_each_row() -> None:
    """A [1, 4, 6, 1] ramp 0 .. 23, 2 x 2 windows, stride 2, pads [1, 1] on both axes, count_pad off: the before-pads
    move after the input; the window wholly in the width pad averages the column past rows 0 and 1, i.e. the next
    rows' first pixels 6 and 12 (9); the one past rows 2 and 3 reads row 3's past column, past the input (open), as
    does the row of windows past the last row."""
    from tests.reference_helpers import case, modelled

    x = np.arange(24, dtype=np.float16).reshape(1, 4, 6, 1)
    c = case("PoolAvg2d", [x], {"filter_size": [2, 2], "stride": [2, 2], "pad_amount": [[1, 1], [1, 1]],
                                "count_pad_for_edges": False}, [("FLOAT_16", (1, 3, 4, 1))])  # fmt: skip
    got = modelled(c, "before-pad-moved-after-column-past-row")[0][0, :, :, 0]
    np.testing.assert_array_equal(got[0], [3.5, 5.5, 7.5, 9.0])
    np.testing.assert_array_equal(got[1, :3], [15.5, 17.5, 19.5])
    assert np.isnan(got[1, 3]) and np.isnan(got[2]).all()


def test_pool_avg3d_model_moves_the_width_before_pad_after_the_row() -> None:
    """[0.5, -1, -2], window 2, width pad [1, 0], count_pad on: [-0.25, -1.5, -1] for [0.25, -0.25, -1.5]."""
    from tests.reference_helpers import case, modelled

    x = np.array([0.5, -1.0, -2.0], np.float16).reshape(1, 1, 1, 3, 1)
    c = case("PoolAvg3d", [x], {"filter_size": [1, 1, 2], "stride": [1, 1, 1], "pad_amount": [[0, 0], [0, 0], [1, 0]],
                                "count_pad_for_edges": True}, [("FLOAT_16", (1, 1, 1, 3, 1))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "width-before-pad-moved-after")[0].ravel(), [-0.25, -1.5, -1.0])


def test_pool_avg2d_model_reads_a_counted_width_before_pad_as_four_cells() -> None:
    """[8, 16, .., 72] in one row, window 2, before-pad 1, count_pad on: three leading zeros, then the windows of four
    pad cells and the row, [0, 0, 0, 4, 12, ...] for [4, 12, 20, ...]."""
    from tests.reference_helpers import case, modelled

    x = (8.0 * np.arange(1, 10, dtype=np.float16)).reshape(1, 1, 9, 1)
    c = case("PoolAvg2d", [x], {"filter_size": [1, 2], "stride": [1, 1], "pad_amount": [[0, 0], [1, 0]],
                                "count_pad_for_edges": True}, [("FLOAT_16", (1, 1, 9, 1))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "count-pad-width-before-pad-as-4")[0].ravel(),
                                  [0, 0, 0, 4, 12, 20, 28, 36, 44])  # fmt: skip


def test_pool_avg2d_model_leaves_the_last_input_column_out() -> None:
    """A 3 x 3 ramp 1..9, a 3 x 3 window, pads top and left 1, count_pad off: the last output column averages columns
    0 and 1 only, repeating the first: [[3, 3], [4.5, 4.5]] for [[3, 3.5], [4.5, 5]]."""
    from tests.reference_helpers import case, modelled

    x = np.arange(1.0, 10.0).reshape(1, 3, 3, 1)
    params = {"filter_size": [3, 3], "stride": [1, 1], "pad_amount": [[1, 0], [1, 0]], "count_pad_for_edges": False}
    c = case("PoolAvg2d", [x], params, [("FLOAT_32", (1, 2, 2, 1))])
    np.testing.assert_array_equal(modelled(c, "last-input-column-dropped")[0].reshape(2, 2), [[3, 3], [4.5, 4.5]])


def test_pool_max2d_model_takes_pad_cells_as_zero() -> None:
    """[-1, -2, -4, -8], window 2, stride 2, pads [1, 1]: [0, -2, 0] where [-1, -2, -8] belongs."""
    from tests.reference_helpers import case, modelled

    x = np.array([-1.0, -2.0, -4.0, -8.0]).reshape(1, 1, 4, 1)
    c = case("PoolMax2d", [x], {"filter_size": [1, 2], "stride": [1, 2], "pad_amount": [[0, 0], [1, 1]]},
             [("FLOAT_32", (1, 1, 3, 1))])  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "pad-cells-as-zero")[0].ravel(), [0, -2, 0])


def test_l2pool_model_is_the_root_mean_square_over_the_cells_inside_the_input() -> None:
    """A 2 x 2 window of ones gives 1 (the spec's root of the sum: 2); with a 1 x 2 window and a width before-pad of 1,
    [3, 4] gives sqrt(9 / 1) = 3 for the window [pad, 3] (the padded cell counted out) and sqrt(25 / 2) for [3, 4]."""
    from tests.reference_helpers import case, modelled

    ones = case("L2Pool2d", [np.ones((1, 2, 2, 1))],
                {"filter_size": [2, 2], "stride": [1, 1], "pad_amount": [[0, 0], [0, 0]]},
                [("FLOAT_32", (1, 1, 1, 1))])  # fmt: skip
    np.testing.assert_allclose(modelled(ones, "root-mean-square")[0].ravel(), [1.0])
    padded = case("L2Pool2d", [np.array([3.0, 4.0]).reshape(1, 1, 2, 1)],
                  {"filter_size": [1, 2], "stride": [1, 1], "pad_amount": [[0, 0], [1, 0]]},
                  [("FLOAT_32", (1, 1, 2, 1))])  # fmt: skip
    np.testing.assert_allclose(modelled(padded, "root-mean-square")[0].ravel(), [3.0, np.sqrt(12.5)])


def test_pool_avg3d_model_clips_each_plane_to_the_output_range() -> None:
    """Two depth planes [3, 3] and [-1, -1], one 2 x 1 x 2 window, out[0] covering [-1, 1.55]: the planes average to 3
    and -1, 3 is held at 1.55, so (1.55 - 1) / 2 = 0.275 where the whole window's mean is 1."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([4, 4, 0, 0]).reshape(1, 2, 1, 2, 1), ([1.0], [-1]))
    c = case("PoolAvg3d", [x], {"filter_size": [2, 1, 2], "stride": [1, 1, 1], "pad_amount": [[0, 0]] * 3},
             [("UFIXED_POINT_8", (1, 1, 1, 1, 1), ([0.01], [-100]))])  # fmt: skip
    np.testing.assert_allclose(expected(c)[0].ravel(), [1.0])
    np.testing.assert_allclose(modelled(c, "depth-average-of-clipped-planes")[0].ravel(), [0.275])


def test_htp_pool_avg3d_model_averages_the_whole_depth_into_one_output_slice() -> None:
    """Depth planes 1, 2, 6, window depth 2, stride 2: one output slice, which the model averages over all three
    planes ((1 + 2 + 6) / 3 = 3) where the window's two belong ((1 + 2) / 2 = 1.5)."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    c = case("PoolAvg3d", [np.array([1.0, 2.0, 6.0], np.float32).reshape(1, 3, 1, 1, 1)],
             {"filter_size": [2, 1, 1], "stride": [2, 1, 1], "pad_amount": [[0, 0]] * 3, "count_pad_for_edges": True},
             [("FLOAT_32", (1, 1, 1, 1, 1))])  # fmt: skip
    np.testing.assert_allclose(expected(c)[0].ravel(), [1.5])
    np.testing.assert_allclose(modelled(c, "htp-count-pad-average")[0].ravel(), [3.0])


def test_htp_pool_avg3d_model_divides_a_ceil_overhang_window_by_the_whole_filter_as_the_reference_does() -> None:
    """[1, 2, 4], window 2, stride 2, CEIL, count_pad_for_edges: the last window holds 4 and one cell past the input;
    the model and the reference both divide by 2 (2.0), the spec's number of elements to average (seed line 9788)."""
    from reference.expected import expected
    from tests.reference_helpers import case, member, modelled

    c = case("PoolAvg3d", [np.array([1.0, 2.0, 4.0], np.float32).reshape(1, 1, 1, 3, 1)],
             {"filter_size": [1, 1, 2], "stride": [1, 1, 2], "pad_amount": [[0, 0]] * 3, "count_pad_for_edges": True,
              "rounding_mode": member("PoolAvg3d", "rounding_mode", "CEIL")},
             [("FLOAT_32", (1, 1, 1, 2, 1))])  # fmt: skip
    np.testing.assert_allclose(expected(c)[0].ravel(), [1.5, 2.0])
    np.testing.assert_allclose(modelled(c, "htp-count-pad-average")[0].ravel(), [1.5, 2.0])


@pytest.mark.parametrize("dtype, moved", [("UFIXED_POINT_8", True), ("SFIXED_POINT_8", False)])
def test_htp_pool_avg3d_model_moves_the_width_before_pad_except_in_signed_8_bit(dtype: str, moved: bool) -> None:
    """[1, 2, 4], window 2, width pad [1, 0]: [1.5, 3, 2] with the before-pad moved after the row (the unsigned
    kernel), the reference's [0.5, 1.5, 3] in SFIXED_POINT_8."""
    from tests.reference_helpers import case, modelled

    x = (dtype, np.array([2, 4, 8]).reshape(1, 1, 1, 3, 1), ([0.5], [0]))
    c = case("PoolAvg3d", [x], {"filter_size": [1, 1, 2], "stride": [1, 1, 1], "pad_amount": [[0, 0], [0, 0], [1, 0]],
                                "count_pad_for_edges": True}, [(dtype, (1, 1, 1, 3, 1), ([0.05], [0]))])  # fmt: skip
    want = [1.5, 3.0, 2.0] if moved else [0.5, 1.5, 3.0]
    np.testing.assert_allclose(modelled(c, "htp-count-pad-average")[0].ravel(), want)


def test_htp_pool_avg3d_model_clips_the_planes_and_refuses_without_count_pad() -> None:
    """The depth-average-of-clipped-planes example (planes 3 and -1, out[0] covering [-1, 1.55]: 0.275); the same
    case without count_pad_for_edges is not modelled."""
    from reference import models
    from tests.reference_helpers import case, modelled

    x = ("UFIXED_POINT_8", np.array([4, 4, 0, 0]).reshape(1, 2, 1, 2, 1), ([1.0], [-1]))
    params = {"filter_size": [2, 1, 2], "stride": [1, 1, 1], "pad_amount": [[0, 0]] * 3, "count_pad_for_edges": True}
    c = case("PoolAvg3d", [x], params, [("UFIXED_POINT_8", (1, 1, 1, 1, 1), ([0.01], [-100]))])
    np.testing.assert_allclose(modelled(c, "htp-count-pad-average")[0].ravel(), [0.275])
    c = case("PoolAvg3d", [x], {**params, "count_pad_for_edges": False},
             [("UFIXED_POINT_8", (1, 1, 1, 1, 1), ([0.01], [-100]))])  # fmt: skip
    with pytest.raises(ValueError, match="not measured"):
        models._modelled(c, "diagnosis", "htp-count-pad-average")


def test_l2pool_ep_model_rescales_the_shifted_windows_root_mean_square() -> None:
    """[[1, 2], [3, 4]], a 2 x 2 window, stride 2, height pad [1, 0]: the window where the output belongs holds 1 and
    2 (sqrt(5)); the model's window, shifted by the before-pad, holds all four (mean of squares 7.5), rescaled by the
    2 input cells of the right window: sqrt(7.5 * 2) = sqrt(15)."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    c = case("L2Pool2d", [np.array([[1.0, 2.0], [3.0, 4.0]], np.float16).reshape(1, 2, 2, 1)],
             {"filter_size": [2, 2], "stride": [2, 2], "pad_amount": [[1, 0], [0, 0]]},
             [("FLOAT_16", (1, 1, 1, 1))])  # fmt: skip
    np.testing.assert_allclose(expected(c)[0].ravel(), [np.sqrt(5.0)], rtol=1e-6)
    np.testing.assert_allclose(modelled(c, "ep-average-with-before-pads-moved-after")[0].ravel(), [np.sqrt(15.0)])


def test_pool_avg3d_one_depth_slice_model_counts_the_pad_without_count_pad() -> None:
    """count_pad_for_edges false, one output depth slice: [1, 2, 1, 2, 1] of ones and twos (depth 0: 1 1, depth 1: 2 2),
    filter [2, 2, 2], stride 1, height pad [1, 0] (output [1, 1, 1, 1, 1]): the window's 4 input cells sum to 6, the
    reference averages them (1.5), the model divides by the full filter's 8 (0.75). Two output depth slices, and
    SFIXED_POINT_8, are not modelled."""
    from reference import models
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x = np.array([1.0, 1.0, 2.0, 2.0], np.float32).reshape(1, 2, 1, 2, 1)
    params = {"filter_size": [2, 2, 2], "stride": [1, 1, 1], "pad_amount": [[0, 0], [1, 0], [0, 0]],
              "count_pad_for_edges": False}  # fmt: skip
    c = case("PoolAvg3d", [x], params, [("FLOAT_32", (1, 1, 1, 1, 1))])
    np.testing.assert_allclose(expected(c)[0].ravel(), [1.5])
    np.testing.assert_allclose(modelled(c, "one-depth-slice-count-pad-ignored")[0].ravel(), [0.75])
    c = case("PoolAvg3d", [x], {**params, "filter_size": [1, 2, 2]}, [("FLOAT_32", (1, 2, 1, 1, 1))])
    with pytest.raises(ValueError, match="more than one output depth slice"):
        models._modelled(c, "diagnosis", "one-depth-slice-count-pad-ignored")
    s8 = ("SFIXED_POINT_8", np.array([2, 2, 4, 4]).reshape(1, 2, 1, 2, 1), ([0.5], [0]))
    c = case("PoolAvg3d", [s8], params, [("SFIXED_POINT_8", (1, 1, 1, 1, 1), ([0.05], [0]))])
    with pytest.raises(ValueError, match="SFIXED_POINT_8"):
        models._modelled(c, "diagnosis", "one-depth-slice-count-pad-ignored")


def test_pool_avg3d_top_pad_rows_model_halves_only_the_rows_in_the_top_pad() -> None:
    """count_pad_for_edges false, [1, 3, 2, 1, 1] of ones, filter [2, 2, 1], stride 1, height pad [1, 0]: output rows
    0 of both depth slices hold 2 input cells (the reference's 1.0), the model divides them by the filter's 4 (0.5);
    row 1 is the reference's. With a depth pad before, the first depth slice's window reaches it and stays right."""
    from reference.expected import expected
    from tests.reference_helpers import case, modelled

    x = np.ones((1, 3, 2, 1, 1), np.float32)
    params = {"filter_size": [2, 2, 1], "stride": [1, 1, 1], "pad_amount": [[0, 0], [1, 0], [0, 0]],
              "count_pad_for_edges": False}  # fmt: skip
    c = case("PoolAvg3d", [x], params, [("FLOAT_32", (1, 2, 2, 1, 1))])
    np.testing.assert_allclose(expected(c)[0].ravel(), [1, 1, 1, 1])
    np.testing.assert_allclose(modelled(c, "top-pad-rows-divided-by-full-filter")[0].ravel(), [0.5, 1, 0.5, 1])
    c = case("PoolAvg3d", [x], {**params, "pad_amount": [[1, 0], [1, 0], [0, 0]]}, [("FLOAT_32", (1, 3, 2, 1, 1))])
    np.testing.assert_allclose(modelled(c, "top-pad-rows-divided-by-full-filter")[0].ravel(), [1, 1, 0.5, 1, 0.5, 1])


def test_pool_avg_last_row_past_input_model_leaves_only_that_row_open() -> None:
    """A [1, 4, 6, 1] ramp, 3 x 3 window, stride 2, pads [[0, 1], [1, 0]], count_pad_for_edges false: the last output
    row's window (input rows 2-4) reaches past row 3, so the model leaves that row open and holds row 0 to the
    reference (finding poolavg2d-8bit-last-row-past-input-wrong). Outputs with anything in the last row match; the same
    with a planted error in row 0 do not; a case whose last window ends inside the input is another bug (no model)."""
    from reference import models
    from tests.reference_helpers import case, modelled

    x = np.arange(24.0).reshape(1, 4, 6, 1)
    params = {"filter_size": [3, 3], "stride": [2, 2], "pad_amount": [[0, 1], [1, 0]], "count_pad_for_edges": False}
    c = case("PoolAvg2d", [x], params, [("FLOAT_32", (1, 2, 3, 1))])
    got = modelled(c, "last-row-past-input-open")[0]
    ref = reference.run("PoolAvg2d", [x], params)[0]
    np.testing.assert_array_equal(got[0, 0], ref[0, 0])
    assert np.isnan(got[0, 1]).all()
    model = {"diagnosis": "last-row-past-input-open"}
    shown = ref.astype(np.float32)
    shown[0, 1] = -7.0
    assert models.check(c, [shown], model)["matches"]
    planted = shown.copy()
    planted[0, 0, 1, 0] += 1.0
    assert not models.check(c, [planted], model)["matches"]
    inside = case("PoolAvg2d", [np.arange(30.0).reshape(1, 5, 6, 1)], params, [("FLOAT_32", (1, 2, 3, 1))])
    assert "error" in models.check(inside, [np.zeros((1, 2, 3, 1), np.float32)], model)


def test_pool_max_pad_cells_as_zero_model_reads_a_ceil_overhang_as_zero() -> None:
    """[-1, -2, -3] with a 1 x 2 window, width stride 2, CEIL, no pad: the last window holds -3 and the cell past the
    input; the spec's maximum is -3, the model's 0 (seed 2's FLOAT_32 edge case)."""
    from tests.reference_helpers import case, modelled

    x = np.array([-1.0, -2.0, -3.0]).reshape(1, 1, 3, 1)
    params = {"filter_size": [1, 2], "stride": [1, 2], "pad_amount": [[0, 0], [0, 0]], "rounding_mode": 1}
    c = case("PoolMax2d", [x], params, [("FLOAT_32", (1, 1, 2, 1))])
    np.testing.assert_array_equal(reference.run("PoolMax2d", [x], params)[0].ravel(), [-1, -3])
    np.testing.assert_array_equal(modelled(c, "pad-cells-as-zero")[0].ravel(), [-1, 0])


def test_pool_avg_ceil_overhang_model_leaves_only_the_overhanging_windows_open() -> None:
    """A [1, 4, 3, 1] ramp, 2 x 2 window, stride [1, 2], CEIL, no pad: the last column's windows reach past the input
    (finding poolavg2d-ceil-overhang-windows-wrong), so the model leaves that column open and holds the first to the
    reference. Outputs with anything there match; a planted error in the first column does not; a case whose windows
    all end inside the input is another bug (no model)."""
    from reference import models
    from tests.reference_helpers import case, modelled

    x = np.arange(12.0).reshape(1, 4, 3, 1)
    params = {"filter_size": [2, 2], "stride": [1, 2], "pad_amount": [[0, 0], [0, 0]], "rounding_mode": 1,
              "count_pad_for_edges": True}
    c = case("PoolAvg2d", [x], params, [("FLOAT_32", (1, 3, 2, 1))])
    got = modelled(c, "ceil-overhang-windows-open")[0]
    ref = reference.run("PoolAvg2d", [x], params)[0]
    np.testing.assert_array_equal(got[0, :, 0], ref[0, :, 0])
    assert np.isnan(got[0, :, 1]).all()
    model = {"diagnosis": "ceil-overhang-windows-open"}
    shown = ref.astype(np.float32)
    shown[0, :, 1] = 2.05e5
    assert models.check(c, [shown], model)["matches"]
    planted = shown.copy()
    planted[0, 1, 0, 0] += 1.0
    assert not models.check(c, [planted], model)["matches"]
    inside = case("PoolAvg2d", [np.arange(16.0).reshape(1, 4, 4, 1)], params, [("FLOAT_32", (1, 3, 2, 1))])
    assert "error" in models.check(inside, [np.zeros((1, 3, 2, 1), np.float32)], model)
