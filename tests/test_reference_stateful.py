"""Buffer reference (reference/stateful.py) on the spec's own examples (mode text, 884-929)."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from cases.case import Case, Param, Tensor
from reference.stateful import blocked, buffer_sequence
from tests.reference_helpers import member

# the spec's numbers of the Buffer modes (cases carry numbers; the reference compares names)
BLOCKING, NON_BLOCKING_LEFT, NON_BLOCKING_RIGHT = (
    member("Buffer", "mode", m) for m in ("BLOCKING", "NON_BLOCKING_LEFT", "NON_BLOCKING_RIGHT"))


def frames(*values: float) -> list[list[np.ndarray]]:
    """One execution per value, each a single frame [1, 1] along buffer_dim 0."""
    return [[np.array([[v]])] for v in values]


def flat(outputs: list[np.ndarray]) -> list[list[float] | None]:
    return [None if blocked(o) else o.reshape(-1).tolist() for o in outputs]


def test_blocking_outputs_only_when_full_then_slides() -> None:
    outs = buffer_sequence(frames(1, 2, 3, 4), {"buffer_size": 3, "buffer_dim": 0, "mode": BLOCKING})
    assert flat(outs) == [None, None, [1, 2, 3], [2, 3, 4]], flat(outs)


def test_stride_two_evicts_two_frames_when_full() -> None:
    """'a fully populated buffer with 3 slots and a stride value of 2 will have the frames at slot 0
    and slot 1 removed and the frame at slot 2 will now be at slot 0. The incoming frame is then placed
    at slot 1. The next incoming frame will then be placed at slot 2.'"""
    params = {"buffer_size": 3, "buffer_dim": 0, "stride": 2, "mode": NON_BLOCKING_LEFT}
    outs = buffer_sequence(frames(1, 2, 3, 4, 5), params)
    assert flat(outs) == [[1, 0, 0], [1, 2, 0], [1, 2, 3], [3, 4, 0], [3, 4, 5]], flat(outs)
    params["mode"] = BLOCKING
    assert flat(buffer_sequence(frames(1, 2, 3, 4, 5), params)) == [None, None, [1, 2, 3], None, [3, 4, 5]]


def test_non_blocking_right_fills_from_the_end() -> None:
    params = {"buffer_size": 3, "buffer_dim": 0, "mode": NON_BLOCKING_RIGHT}
    assert flat(buffer_sequence(frames(1, 2, 3, 4), params)) == [[0, 0, 1], [0, 1, 2], [1, 2, 3], [2, 3, 4]]


def test_padding_counts_as_zero_frames_and_returns_after_reset() -> None:
    params = {"buffer_size": 3, "buffer_dim": 0, "mode": NON_BLOCKING_LEFT, "buffer_padding": 1}
    execs = frames(1, 2, 3, 4)
    execs[3].append(np.array(True))  # reset before the fourth frame
    assert flat(buffer_sequence(execs, params)) == [[0, 1, 0], [0, 1, 2], [1, 2, 3], [0, 4, 0]]


def test_several_frames_per_input_along_buffer_dim() -> None:
    """in[0] [1, 2, 1]: two frames per execution along axis 1; buffer of 4, stride 2."""
    execs = [[np.array([[[1.0], [2.0]]])], [np.array([[[3.0], [4.0]]])], [np.array([[[5.0], [6.0]]])]]
    outs = buffer_sequence(execs, {"buffer_size": 4, "buffer_dim": 1, "stride": 2, "mode": BLOCKING})
    assert outs[1].shape == (1, 4, 1), outs[1].shape
    assert flat(outs) == [None, [1, 2, 3, 4], [3, 4, 5, 6]], flat(outs)


def test_single_execution_form_is_a_fresh_buffer() -> None:
    params = {"buffer_size": 2, "buffer_dim": 0, "mode": NON_BLOCKING_LEFT}
    (out,) = reference.run("Buffer", [np.array([[7.0]])], params)
    assert out.reshape(-1).tolist() == [7.0, 0.0], out


@pytest.mark.parametrize("params", [
    {"buffer_size": 3, "buffer_dim": 0, "stride": 4},
    {"buffer_size": 3, "buffer_dim": 0, "buffer_padding": 4},
    {"buffer_size": 3, "buffer_dim": 2},
])  # fmt: skip
def test_refuses_invalid_configurations(params: dict) -> None:
    with pytest.raises(ValueError):
        buffer_sequence(frames(1), params)


# ---- a Buffer case is a sequence of executions (Case.steps), judged execution by execution ----------------


def _sequence_case(mode: int) -> Case:
    x = [np.array([[v]], np.float32) for v in (1, 2, 3, 4)]
    return Case("Buffer", [Tensor("in[0]", "FLOAT_32", (1, 1), x[0])],
                {"buffer_size": Param("buffer_size", "UINT_32", 3), "buffer_dim": Param("buffer_dim", "UINT_32", 0),
                 "mode": Param("mode", "UINT_32", mode)},
                [Tensor("out[0]", "FLOAT_32", (3, 1))], steps=[[v] for v in x[1:]])  # fmt: skip


def test_the_expectation_of_a_case_with_steps_carries_the_buffer_across_executions() -> None:
    from reference.expected import expected

    got = [o.reshape(-1).tolist() for o in expected(_sequence_case(NON_BLOCKING_RIGHT))]
    assert got == [[0, 0, 1], [0, 1, 2], [1, 2, 3], [2, 3, 4]], got


def test_a_buffer_sequence_passes_on_the_reference_backend_and_each_execution_is_judged() -> None:
    import adapters
    from conformance.execute import RunContext, execute

    case = _sequence_case(BLOCKING)
    rec = execute(case, RunContext(adapters.get("reference"), "reference"))
    assert rec.verdict == "PASS" and rec.metrics["executions"] == 4, (rec.verdict, rec.message, rec.metrics)
    assert rec.metrics["unconstrained"] == 2 * 3, "the two blocked executions leave their outputs to the backend"


def test_a_backend_that_forgets_the_buffer_between_executions_fails_at_the_execution_that_shows_it() -> None:
    from adapters.base import OK, Outcome
    from reference.compare import encode_outputs, judge
    from reference.expected import expected

    case = _sequence_case(NON_BLOCKING_LEFT)
    exp = expected(case)
    stateless = [np.array([[v], [0], [0]], np.float32) for v in (1, 2, 3, 4)]  # each execution from an empty buffer
    j = judge(case, exp, Outcome(OK, stateless).outputs)
    assert not j.passed and j.message.startswith("execution 2 of 4"), j.message
    assert judge(case, exp, encode_outputs(case, exp)).passed
