"""The comparator and its budgets: what a verdict holds a backend to, and what it refuses to judge."""

from __future__ import annotations

import numpy as np
import pytest

from cases.case import Case, Encoding, Param, Tensor
from reference.compare import judge, judge_output
from reference.tolerance import DEFAULTS, budget_for


def out(dtype: str, shape: tuple[int, ...], enc: Encoding | None = None) -> Tensor:
    return Tensor("out[0]", dtype, shape, None, enc)


U8 = Encoding((8 / 255,), (-128,))  # about [-4, 4]
U16 = Encoding((8 / 65535,), (-32768,))


# ---- budgets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(DEFAULTS))
def test_every_default_budget_names_its_source(key: str) -> None:
    assert DEFAULTS[key].source, f"{key}: a default budget without a written reason"


def test_a_16_bit_grid_gets_more_steps_than_an_8_bit_one() -> None:
    b8, b16 = budget_for("UFIXED_POINT_8"), budget_for("UFIXED_POINT_16")
    assert b8.steps == 1 and not b8.range_rtol, b8
    assert b16.range_rtol > 0, "a 16-bit output must not be held to the 8-bit budget of one step"


def test_an_accumulation_length_scales_float_budgets_and_leaves_fixed_point_alone() -> None:
    op_tol = {"accumulation": "K"}
    plain, long = budget_for("FLOAT_32"), budget_for("FLOAT_32", op_tol, 36)
    assert long.rtol == pytest.approx(36 * plain.rtol) and long.atol == pytest.approx(36 * plain.atol)
    assert budget_for("UFIXED_POINT_8", op_tol, 36).steps == 1, "integer accumulators are exact"


def test_an_accumulation_length_may_name_a_derived_dim_of_the_spec() -> None:
    """Stft's accumulation is n_fft, a derived dim (frame_length here): it is worked out from the case, not left
    unbound (which kept seed 2's 5-sample FLOAT_16 frames at the unscaled float16 budget)."""
    import opdefs
    from conformance.execute import accumulation_length

    x = np.linspace(-1, 1, 10, dtype=np.float16).reshape(1, 10, 1)
    window = Tensor("in[1]", "FLOAT_16", (5,), np.ones(5, np.float16), static=True)
    c = Case("Stft", [Tensor("in[0]", "FLOAT_16", (1, 10, 1), x), window],
             {"frame_length": Param("frame_length", "UINT_32", 5), "frame_step": Param("frame_step", "UINT_32", 1),
              "onesided": Param("onesided", "BOOL_8", False)},
             [Tensor("out[0]", "FLOAT_16", (1, 6, 5, 2))])  # fmt: skip
    assert accumulation_length(opdefs.load("Stft"), c) == 5


def test_an_op_override_replaces_the_default_and_keeps_its_reason() -> None:
    b = budget_for("FLOAT_16", {"float16": {"ulp": 10, "reason": "sigmoid: WebNN allows 10 ulp"}})
    assert b.ulp == 10 and "sigmoid" in b.source


# ---- fixed point -------------------------------------------------------------------------------------


def test_one_step_off_passes_and_two_steps_fail_on_an_8_bit_grid() -> None:
    expected = np.array([0.0])  # code 128
    assert judge_output(expected, np.array([129], np.uint8), out("UFIXED_POINT_8", (1,), U8)).passed
    j = judge_output(expected, np.array([130], np.uint8), out("UFIXED_POINT_8", (1,), U8))
    assert not j.passed and j.metrics["max_steps"] == 2, j


def test_a_failure_message_gives_both_values_in_real_units_and_codes() -> None:
    j = judge_output(np.array([0.0]), np.array([140], np.uint8), out("UFIXED_POINT_8", (1,), U8))
    assert "expected 0 (code 128), got code 140 (= 0.376" in j.message, j.message


def test_a_16_bit_output_may_be_off_by_its_full_scale_share_but_not_more() -> None:
    expected = np.array([0.0])  # code 32768; full scale 4 -> 2^-10 * 4 / (8/65535) = 32 steps + 1
    assert judge_output(expected, np.array([32768 + 30], np.uint16), out("UFIXED_POINT_16", (1,), U16)).passed
    assert not judge_output(expected, np.array([32768 + 40], np.uint16), out("UFIXED_POINT_16", (1,), U16)).passed


def test_nan_expected_on_a_fixed_point_output_is_not_checkable_not_failed() -> None:
    j = judge_output(np.array([np.nan, 1.0]), np.array([255, 160], np.uint8), out("UFIXED_POINT_8", (2,), U8))
    assert j.passed and j.checked == 1 and j.metrics["not_checkable"] == 1, j


def test_an_integer_divide_by_zero_is_not_checkable() -> None:
    j = judge_output(np.array([np.inf, 3.0]), np.array([7, 3], np.int32), out("INT_32", (2,)))
    assert j.passed and j.metrics["not_checkable"] == 1, j


# ---- float ---------------------------------------------------------------------------------------------


def test_float_nan_expected_is_checked_as_ieee() -> None:
    j = judge_output(np.array([np.nan]), np.array([-np.inf], np.float32), out("FLOAT_32", (1,)))
    assert not j.passed, "a float output has an IEEE answer for log(-1): NaN"


def test_float32_within_the_nnapi_budget_passes() -> None:
    e = np.array([1.0])
    assert judge_output(e, np.array([1.0 + 4e-7], np.float32), out("FLOAT_32", (1,))).passed
    assert not judge_output(e, np.array([1.001], np.float32), out("FLOAT_32", (1,))).passed


def _float32_case() -> Case:
    return Case("ElementWiseAdd", [], {}, [out("FLOAT_32", (1,))])


def test_a_float32_output_of_a_float16_graph_is_held_to_the_float16_budget() -> None:
    """3.8e-5 off at 4.0: outside float32's budget, inside float16's (a graph the backend ran at float16)."""
    want, got = [np.array([4.0])], [np.array([4.000038], np.float32)]
    assert not judge(_float32_case(), want, got).passed, "float32 arithmetic: 3.8e-5 at 4.0 is too far"
    j = judge(_float32_case(), want, got, precision="float16")
    assert j.passed, j.message


def test_the_graph_precision_never_touches_a_float16_or_a_fixed_point_budget() -> None:
    for dtype in ("FLOAT_16", "UFIXED_POINT_8", "UFIXED_POINT_16", "INT_32"):
        assert budget_for(dtype, precision="float16") == budget_for(dtype), dtype
    assert budget_for("FLOAT_32", precision="float32") == budget_for("FLOAT_32")


def test_nan_means_any_leaves_those_elements_to_the_backend() -> None:
    j = judge_output(np.array([np.nan, 2.0]), np.array([0.3, 2.0], np.float32), out("FLOAT_32", (2,)),
                     nan_means_any=True)  # fmt: skip
    assert j.passed and j.metrics["unconstrained"] == 1 and j.checked == 1, j


def test_every_judgement_records_the_budget_it_used() -> None:
    case = Case("ElementWiseAdd", [], {}, [out("FLOAT_16", (1,))])
    j = judge(case, [np.array([1.0])], [np.array([1.0], np.float16)])
    assert j.metrics["tolerance"] and j.metrics["budget"]["source"], j.metrics


# ---- random ops: judged as a sample ----------------------------------------------------------------


def _random_case(n: int) -> Case:
    from cases.case import Param

    return Case("RandomUniformLike", [], {"low": Param("low", "FLOAT_32", 2.0), "high": Param("high", "FLOAT_32", 4.0)},
                [out("FLOAT_32", (n,))])  # fmt: skip


RANDOM_TOL = {"nan_means_any": True, "distribution": {"kind": "uniform", "low": "low", "high": "high", "alpha": 1e-4}}


def test_a_uniform_sample_in_range_passes() -> None:
    sample = np.random.default_rng(5).uniform(2.0, 4.0, 400).astype(np.float32)
    j = judge(_random_case(400), [np.full(400, np.nan)], [sample], RANDOM_TOL)
    assert j.passed, j.message


def test_a_constant_output_fails_the_distribution_test() -> None:
    j = judge(_random_case(400), [np.full(400, np.nan)], [np.full(400, 3.0, np.float32)], RANDOM_TOL)
    assert not j.passed and "KS distance" in j.message, j.message


def test_a_value_outside_low_high_fails() -> None:
    sample = np.random.default_rng(6).uniform(2.0, 4.0, 50).astype(np.float32)
    sample[0] = 4.5
    j = judge(_random_case(50), [np.full(50, np.nan)], [sample], RANDOM_TOL)
    assert not j.passed and "outside" in j.message, j.message


def test_a_rank_0_16_bit_output_is_judged_like_any_other() -> None:
    j = judge_output(np.array(0.0), np.array(32768 + 30, np.uint16), out("UFIXED_POINT_16", (), U16))
    assert j.passed and j.checked == 1, j


# ---- data-dependent output lengths (valid_rows) --------------------------------------------------------

# An NMS-like op: out[0] boxes [batch, capacity, 4], out[1] scores [batch, capacity], out[2] the valid count per
# batch element. The declarations are what an op's spec says in `valid_rows`.
FREE = {"count": "out[2]", "axis": 1, "order": "free"}
FIXED = {"count": "out[2]", "axis": 1, "order": "fixed"}


def _nms_case(capacity: int = 4) -> Case:
    outs = [Tensor("out[0]", "FLOAT_32", (1, capacity, 4)), Tensor("out[1]", "FLOAT_32", (1, capacity)),
            Tensor("out[2]", "UINT_32", (1,))]
    return Case("Nms", [], {}, outs)


def _nms_expected() -> list[np.ndarray]:
    boxes = np.zeros((1, 4, 4))
    boxes[0, :3] = [[0, 0, 1, 1], [2, 2, 3, 3], [5, 5, 6, 6]]
    return [boxes, np.array([[0.9, 0.7, 0.5, 0.0]]), np.array([3])]


def _as_backend(real: list[np.ndarray]) -> list[np.ndarray]:
    return [real[0].astype(np.float32), real[1].astype(np.float32), real[2].astype(np.uint32)]


def test_valid_rows_in_another_order_pass_where_the_spec_leaves_the_order_free() -> None:
    exp = _nms_expected()
    act = _as_backend(exp)
    perm = [2, 0, 1, 3]
    act[0][0], act[1][0] = act[0][0][perm], act[1][0][perm]
    j = judge(_nms_case(), exp, act, rows={0: FREE, 1: FREE})
    assert j.passed, j.message


def test_valid_rows_in_another_order_fail_where_the_order_is_fixed() -> None:
    exp = _nms_expected()
    act = _as_backend(exp)
    perm = [2, 0, 1, 3]
    act[0][0], act[1][0] = act[0][0][perm], act[1][0][perm]
    j = judge(_nms_case(), exp, act, rows={0: FIXED, 1: FIXED})
    assert not j.passed and "out[0]" in j.message, j.message


def test_free_order_still_pairs_each_box_with_its_own_score() -> None:
    exp = _nms_expected()
    act = _as_backend(exp)
    act[1][0, :3] = act[1][0, [1, 0, 2]]  # the scores of two boxes swapped, the boxes left in place
    j = judge(_nms_case(), exp, act, rows={0: FREE, 1: FREE})
    assert not j.passed, "rows were matched output by output instead of jointly"


def test_equal_valid_rows_in_either_order_pass() -> None:
    exp = _nms_expected()
    exp[0][0, 1], exp[1][0, 1] = exp[0][0, 0], exp[1][0, 0]  # a tie: two identical rows
    act = _as_backend(exp)
    act[0][0, :3], act[1][0, :3] = act[0][0, [1, 0, 2]], act[1][0, [1, 0, 2]]
    assert judge(_nms_case(), exp, act, rows={0: FREE, 1: FREE}).passed


def test_rows_past_the_valid_count_are_not_checked_and_are_counted() -> None:
    exp = _nms_expected()
    act = _as_backend(exp)
    act[0][0, 3], act[1][0, 3] = [9, -9, 1e30, np.nan], 123.0  # garbage in the padding row
    j = judge(_nms_case(), exp, act, rows={0: FIXED, 1: FIXED})
    assert j.passed, j.message
    assert j.metrics["past_count"] == 4 + 1, j.metrics


def test_a_wrong_valid_count_fails_with_a_message_giving_both_counts() -> None:
    exp = _nms_expected()
    act = _as_backend(exp)
    act[2][0] = 2
    j = judge(_nms_case(), exp, act, rows={0: FREE, 1: FREE})
    assert not j.passed and "out[2]: valid count expected [3], got [2]" in j.message, j.message


def _open_count_model() -> list[np.ndarray]:
    """A model that knows two rows (0.9 and 0.5) and leaves the others and the count open: NaN."""
    exp = _nms_expected()
    boxes, scores = exp[0].copy(), exp[1].copy()
    boxes[0, 1], scores[0, 1] = boxes[0, 2], scores[0, 2]
    boxes[0, 2:], scores[0, 2:] = np.nan, np.nan
    return [boxes, scores, np.array([np.nan])]


def test_an_open_count_takes_the_backends_count_and_finds_the_known_rows_among_its_rows() -> None:
    """A model's NaN count (nan_means_any): the backend's 3 rows hold the 2 the model knows, in another order, and one
    of its own; the same rows without one the model knows, or with fewer rows than it knows, fail."""
    act = _as_backend(_nms_expected())
    act[0][0, :3], act[1][0, :3] = act[0][0, [2, 1, 0]], act[1][0, [2, 1, 0]]
    tol = {"nan_means_any": True}
    j = judge(_nms_case(), _open_count_model(), act, tol, rows={0: FREE, 1: FREE})
    assert j.passed and j.checked > 0, j.message
    wrong = [a.copy() for a in act]
    wrong[1][0, 2] = 0.6  # the 0.9 row's score changed
    assert not judge(_nms_case(), _open_count_model(), wrong, tol, rows={0: FREE, 1: FREE}).passed
    short = [a.copy() for a in act]
    short[2][0] = 1
    j = judge(_nms_case(), _open_count_model(), short, tol, rows={0: FREE, 1: FREE})
    assert not j.passed and "out[2]: valid count expected at least [2], got [1]" in j.message, j.message
    # without nan_means_any a NaN count is no count: nothing is lined up with it, nothing is checked
    assert judge(_nms_case(), _open_count_model(), act, rows={0: FREE, 1: FREE}).checked == 0


def test_rows_past_the_count_are_checked_where_the_spec_names_the_fill() -> None:
    exp = _nms_expected()
    act = _as_backend(exp)
    act[1][0, 3] = 0.25  # the spec says zero padding
    padded = {**FREE, "beyond": "checked"}
    assert not judge(_nms_case(), exp, act, rows={0: padded, 1: padded}).passed


def test_valid_rows_sorted_by_score_may_not_rise() -> None:
    exp = _nms_expected()
    act = _as_backend(exp)
    act[0][0, :3], act[1][0, :3] = act[0][0, [1, 0, 2]], act[1][0, [1, 0, 2]]
    by_score = {**FREE, "sorted_by": "out[1]"}
    j = judge(_nms_case(), exp, act, rows={0: by_score, 1: by_score})
    assert not j.passed and "descending order" in j.message, j.message



def test_valid_rows_sorted_by_score_follow_a_model_whose_own_rows_rise() -> None:
    """A model of a backend that lays its rows out in another order (MultiClassNms box by box) is held to its own
    rows: the same rising rows pass against it and fail against the spec's sorted ones."""
    model = _nms_expected()
    model[0][0, :3], model[1][0, :3] = model[0][0, [1, 0, 2]], model[1][0, [1, 0, 2]]
    act = _as_backend(model)
    by_score = {**FREE, "sorted_by": "out[1]"}
    assert judge(_nms_case(), model, act, rows={0: by_score, 1: by_score}).passed
    assert not judge(_nms_case(), _nms_expected(), act, rows={0: by_score, 1: by_score}).passed

def test_a_current_dimension_is_the_count_and_fewer_rows_than_declared_pass() -> None:
    case = Case("Proposals", [], {}, [Tensor("out[0]", "FLOAT_32", (5, 4))])
    exp = [np.arange(8.0).reshape(2, 4)]
    current = {0: {"count": "current", "axis": 0, "order": "free"}}
    assert judge(case, exp, [exp[0][::-1].astype(np.float32)], rows=current).passed
    j = judge(case, exp, [np.zeros((3, 4), np.float32)], rows=current)
    assert not j.passed and "valid count (current dim 0) expected 2, got 3" in j.message, j.message


# ---- sequences of executions (steps) -----------------------------------------------------------------


def test_each_execution_of_a_case_with_steps_is_judged_and_a_failure_names_it() -> None:
    x = Tensor("in[0]", "FLOAT_32", (2,), np.zeros(2, np.float32))
    case = Case("Buffer", [x], {}, [Tensor("out[0]", "FLOAT_32", (2,))],
                steps=[[np.ones(2, np.float32)], [np.ones(2, np.float32)]])  # fmt: skip
    exp = [np.zeros(2), np.ones(2), np.full(2, 2.0)]
    good = [e.astype(np.float32) for e in exp]
    assert judge(case, exp, good, rows={}).passed
    bad = [good[0], good[1], np.zeros(2, np.float32)]
    j = judge(case, exp, bad, rows={})
    assert not j.passed and j.message.startswith("execution 3 of 3: out[0]"), j.message
    assert "backend returned 2 outputs for 3 executions" in judge(case, exp, good[:2], rows={}).message


def test_outputs_with_their_own_current_dimension_may_differ_in_length_where_the_order_is_fixed() -> None:
    case = Case("Levels", [], {}, [Tensor("out[0]", "FLOAT_32", (3, 2)), Tensor("out[1]", "FLOAT_32", (3, 2))])
    exp = [np.ones((2, 2)), np.zeros((0, 2))]  # one level holds two rows, the other none
    own = {"count": "current", "axis": 0}
    j = judge(case, exp, [e.astype(np.float32) for e in exp], rows={0: own, 1: own})
    assert j.passed, j.message


# ---- a sum of products whose terms cancel: the budget is relative to the terms' magnitudes --------------------------
def _cancelling_matmul() -> tuple[Case, np.ndarray]:
    """[1, 2] x [2, 1]: 30000.5 * 1 - 30000 * 1 = 0.5, computed by float32 arithmetic as 0.5 exactly but by any
    rounding of a partial sum of 3e4 to within 2^-9 of it."""
    a = Tensor("in[0]", "FLOAT_32", (1, 2), np.array([[30000.5, -30000.0]], np.float32))
    b = Tensor("in[1]", "FLOAT_32", (2, 1), np.array([[1.0], [1.0]], np.float32))
    params = {"transpose_in0": Param("transpose_in0", "BOOL_8", False),
              "transpose_in1": Param("transpose_in1", "BOOL_8", False)}  # fmt: skip
    return Case("MatMul", [a, b], params, [Tensor("out[0]", "FLOAT_32", (1, 1))]), np.array([[0.5]])


MAGNITUDE = {"magnitude": "absolute-operands"}


@pytest.mark.parametrize(("op_tol", "passes"), [({}, False), (MAGNITUDE, True)])
def test_a_float_sum_whose_terms_cancel_is_judged_against_the_terms_magnitudes(op_tol: dict, passes: bool) -> None:
    """0.5 + 2^-10 from terms of 3e4: 2000 ulps of the result, a 1.6e-8 share of the terms' 60000.5 magnitude."""
    case, expected = _cancelling_matmul()
    got = [np.array([[0.5 + 2.0**-10]], np.float32)]
    j = judge(case, [expected], got, op_tol, accumulation=2)
    assert j.passed is passes, j.message


def test_an_error_past_the_terms_magnitude_budget_still_fails() -> None:
    case, expected = _cancelling_matmul()
    got = [np.array([[0.5 + 0.25]], np.float32)]
    j = judge(case, [expected], got, MAGNITUDE, accumulation=2)
    assert not j.passed and j.metrics.get("magnitude"), j.message


def test_the_terms_magnitude_is_not_taken_for_a_fixed_point_case() -> None:
    from reference.compare import operand_magnitudes

    case, _ = _cancelling_matmul()
    enc = Encoding(scales=(1.0,), offsets=(0,))
    codes = [Tensor(t.name, "SFIXED_POINT_16", t.shape, t.data.astype(np.int16), enc) for t in case.inputs]
    fixed = Case(case.op, codes, case.params, case.outputs)
    assert operand_magnitudes(fixed) is None
    assert operand_magnitudes(case)[0].tolist() == [[60000.5]]
