"""Models of a deviation (reference/models.py): what a backend with a known bug returns, judged in the case's budget."""

from __future__ import annotations

import numpy as np

from cases.case import Case, Encoding, Param, Tensor
from reference import models
from reference.compare import encode_outputs
from reference.expected import expected


def _softmax(beta: float) -> Case:
    x = Tensor("in[0]", "FLOAT_32", (2, 5), np.linspace(-2, 2, 10, dtype=np.float32).reshape(2, 5))
    return Case("Softmax", [x], {"beta": Param("beta", "FLOAT_32", beta)}, [Tensor("out[0]", "FLOAT_32", (2, 5))])


def test_a_parameter_model_matches_a_backend_that_computes_with_that_value():
    case = _softmax(2.0)
    as_if_one = encode_outputs(case, expected(_softmax(1.0)))
    assert models.check(case, as_if_one, {"params": {"beta": 1.0}})["matches"] is True
    assert models.check(case, encode_outputs(case, expected(case)), {"params": {"beta": 1.0}})["matches"] is False


def test_a_without_model_matches_a_backend_that_drops_the_bias():
    x = Tensor("in[0]", "FLOAT_32", (2, 3), np.ones((2, 3), np.float32))
    w = Tensor("in[1]", "FLOAT_32", (4, 3), np.full((4, 3), 0.5, np.float32), static=True)
    b = Tensor("in[2]", "FLOAT_32", (4,), np.arange(4, dtype=np.float32), static=True)
    case = Case("FullyConnected", [x, w, b], {}, [Tensor("out[0]", "FLOAT_32", (2, 4))])
    without_bias = [np.full((2, 4), 1.5, np.float32)]
    assert models.check(case, without_bias, {"without": ["in[2]"]})["matches"] is True
    assert models.check(case, encode_outputs(case, expected(case)), {"without": ["in[2]"]})["matches"] is False


def test_the_input_codes_model_is_a_copy_of_codes_between_two_grids():
    codes = np.array([[0, 10, 200]], np.uint8)
    x = Tensor("in[0]", "UFIXED_POINT_8", (1, 3), codes, Encoding((0.1,), (0,)))
    out = Tensor("out[0]", "UFIXED_POINT_8", (3, 1), None, Encoding((0.2,), (-5,)))
    case = Case("Reshape", [x], {}, [out])
    assert models.check(case, [codes.reshape(3, 1)], {"outputs": "input-codes"})["matches"] is True
    assert models.check(case, encode_outputs(case, expected(case)), {"outputs": "input-codes"})["matches"] is False


def test_the_float16_model_takes_float16_accuracy_and_nothing_worse():
    case = _softmax(1.0)
    exact = expected(case)[0]
    assert models.check(case, [exact.astype(np.float16).astype(np.float32)], {"arithmetic": "float16"})["matches"]
    assert not models.check(case, [(exact * 1.1).astype(np.float32)], {"arithmetic": "float16"})["matches"]


def test_an_unknown_model_is_a_problem_and_matches_nothing():
    assert models.problems({"guess": 1}) and models.problems({"outputs": "ones"})
    assert models.check(_softmax(1.0), [np.zeros((2, 5), np.float32)], {"guess": 1})["matches"] is False


def test_a_model_key_is_the_same_whatever_the_order_of_its_fields():
    assert models.key({"params": {"a": 1, "b": 2}}) == models.key({"params": {"b": 2, "a": 1}})


def test_the_input_codes_model_reads_only_quantized_inputs_as_codes():
    """Select with a BOOL_8 condition: in[1] codes 10 and in[2] codes 20 at scale 0.1 copied onto out[0] at scale 0.2
    (read as 2 and 4, where 1 and 2 belong); the condition stays a condition."""
    cond = Tensor("in[0]", "BOOL_8", (2,), np.array([True, False]))
    a = Tensor("in[1]", "UFIXED_POINT_8", (2,), np.array([10, 10], np.uint8), Encoding((0.1,), (0,)))
    b = Tensor("in[2]", "UFIXED_POINT_8", (2,), np.array([20, 20], np.uint8), Encoding((0.1,), (0,)))
    out = Tensor("out[0]", "UFIXED_POINT_8", (2,), None, Encoding((0.2,), (0,)))
    case = Case("ElementWiseSelect", [cond, a, b], {}, [out])
    assert models.check(case, [np.array([10, 20], np.uint8)], {"outputs": "input-codes"})["matches"] is True
    assert models.check(case, encode_outputs(case, expected(case)), {"outputs": "input-codes"})["matches"] is False


def _space_to_depth(block: tuple[int, int]) -> Case:
    x = Tensor("in[0]", "FLOAT_32", (1, 6, 6, 2), np.arange(1, 73, dtype=np.float32).reshape(1, 6, 6, 2))
    oh, ow = 6 // block[0], 6 // block[1]
    return Case("SpaceToDepth", [x], {"block_size": Param("block_size", "UINT_32", np.array(block, np.uint32))},
                [Tensor("out[0]", "FLOAT_32", (1, oh, ow, 2 * block[0] * block[1]))])


def test_a_symptom_of_reading_outside_the_input_takes_values_no_input_has():
    case = _space_to_depth((2, 3))
    got = expected(case)[0].copy()
    got.reshape(-1)[:5] = [70656, 103, 447, 495, 503]  # what the HTP gave for a 1..72 ramp
    assert models.check(case, [got], {"symptom": "values-from-outside-the-input"})["matches"] is True


def test_a_symptom_of_reading_outside_the_input_refuses_input_values_misplaced():
    case = _space_to_depth((2, 3))
    misplaced = expected(case)[0][..., ::-1].copy()  # every value an input value, at another place: another bug
    result = models.check(case, [misplaced], {"symptom": "values-from-outside-the-input"})
    assert result["matches"] is False and "every output value is an input value" in result["message"], result


def test_a_symptom_no_family_registers_is_a_problem():
    assert models.problems({"symptom": "made-up"}, "SpaceToDepth")
    assert not models.problems({"symptom": "values-from-outside-the-input"}, "SpaceToDepth")


def _reruns(*outputs: list[np.ndarray]):
    """A backend whose runs of one case give these outputs in turn (the first already stored), counting its runs."""
    pending = list(outputs)
    calls = []

    def rerun() -> list[np.ndarray] | None:
        calls.append(1)
        return pending.pop(0) if pending else None

    return rerun, calls


def test_outputs_that_change_between_runs_show_the_changes_between_runs_symptom():
    case = _softmax(1.0)
    first = encode_outputs(case, expected(case))
    other = [first[0] + np.float32(0.5)]
    rerun, calls = _reruns(first, other)
    result = models.check(case, first, {"symptom": "changes-between-runs"}, rerun=rerun)
    assert result["matches"] is True and result["runs"] == 3 and len(calls) == 2, result


def test_a_deterministic_backend_never_shows_the_changes_between_runs_symptom_whatever_its_bug():
    case = _softmax(2.0)
    wrong = encode_outputs(case, expected(_softmax(1.0)))  # beta ignored, the same every run
    rerun, calls = _reruns(*[wrong] * models.RERUNS)
    result = models.check(case, wrong, {"symptom": "changes-between-runs"}, rerun=rerun)
    assert result["matches"] is False and len(calls) == models.RERUNS, result
    assert "gave the same outputs" in result["message"], result


def test_a_difference_within_the_budget_is_no_change_between_runs():
    case = _softmax(1.0)
    first = encode_outputs(case, expected(case))
    nudged = [np.nextafter(first[0], np.float32(2))]  # one ulp: inside any float32 budget
    rerun, _ = _reruns(*[nudged] * models.RERUNS)
    assert models.check(case, first, {"symptom": "changes-between-runs"}, rerun=rerun)["matches"] is False


def test_the_changes_between_runs_symptom_without_the_backend_covers_nothing():
    case = _softmax(1.0)
    result = models.check(case, encode_outputs(case, expected(case)), {"symptom": "changes-between-runs"})
    assert result["matches"] is False and "needs the backend" in result["error"], result


def test_changes_between_runs_is_a_symptom_of_every_op():
    assert not models.problems({"symptom": "changes-between-runs"}, "Softmax")
    assert not models.problems({"symptom": "changes-between-runs"}, "DetectionOutput")
