"""The QNN adapter on the HTP simulator: hand-computed cases, rejections, crash and timeout isolation.

Expected numbers are written out by hand (worked in the comments), not computed by the reference,
so these tests check the adapter's plumbing independently of the rest of the suite.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from adapters.qnn.adapter import QnnAdapter  # noqa: E402
from cases.case import Case, Encoding, Param, Tensor  # noqa: E402
from tests.simulator import NEEDS_SIMULATOR  # noqa: E402

pytestmark = NEEDS_SIMULATOR

U8 = "UFIXED_POINT_8"
FLOATS = {"FLOAT_32": np.float32, "FLOAT_16": np.float16}


@pytest.fixture(scope="module")
def qnn():
    ad = QnnAdapter(debug_hooks=True, timeout=20)
    ok, why = ad.available()
    if not ok:
        pytest.skip(f"QNN backend not usable here: {why}")
    yield ad
    ad.close()


def _ok(outcome):
    assert outcome.status == "ok", (outcome.status, outcome.message, outcome.details)
    return outcome.outputs


# ---- ElementWiseAdd --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_add_float_with_broadcast(qnn, dtype):
    st = FLOATS[dtype]
    a = np.array([[1.5, -2.0, 0.25], [3.0, 4.0, -0.5]], st)
    b = np.array([10.0, 20.0, 30.0], st)
    case = Case("ElementWiseAdd", [Tensor("a", dtype, (2, 3), a), Tensor("b", dtype, (3,), b)], {},
                [Tensor("o", dtype, (2, 3))])
    (out,) = _ok(qnn.run(case))
    assert out.dtype == st and out.shape == (2, 3)
    np.testing.assert_array_equal(out, np.array([[11.5, 18.0, 30.25], [13.0, 24.0, 29.5]], st))


def test_add_ufixed8(qnn):
    # a: scale 0.5, offset -100 -> codes 100,102,110,90 are 0, 1, 5, -5
    # b: scale 0.25, offset -20 -> codes 20,24,40,0 are 0, 1, 5, -5
    # sum 0, 2, 10, -10 -> out scale 0.1, offset -128: q = sum/0.1 + 128 = 128, 148, 228, 28
    a = np.array([100, 102, 110, 90], np.uint8)
    b = np.array([20, 24, 40, 0], np.uint8)
    case = Case(
        "ElementWiseAdd",
        [Tensor("a", U8, (4,), a, Encoding((0.5,), (-100,))), Tensor("b", U8, (4,), b, Encoding((0.25,), (-20,)))],
        {},
        [Tensor("o", U8, (4,), encoding=Encoding((0.1,), (-128,)))],
    )
    (out,) = _ok(qnn.run(case))
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, [128, 148, 228, 28])


# ---- Softmax ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,atol", [("FLOAT_32", 1e-6), ("FLOAT_16", 2e-3)])
def test_softmax_float(qnn, dtype, atol):
    # beta=2 on [1,2,3] is softmax([2,4,6]) = [e^-4, e^-2, 1] / 1.15365092; a zero row gives 1/3 each.
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], FLOATS[dtype])
    params = {"axis": Param("axis", "UINT_32", 1), "beta": Param("beta", "FLOAT_32", 2.0)}
    (out,) = _ok(qnn.run(Case("Softmax", [Tensor("x", dtype, (2, 3), x)], params, [Tensor("o", dtype, (2, 3))])))
    expected = [[0.01587624, 0.11731043, 0.86681333], [1 / 3, 1 / 3, 1 / 3]]
    np.testing.assert_allclose(out.astype(np.float64), expected, atol=atol, rtol=0)


def test_softmax_ufixed8(qnn):
    # codes 20,40,60 at scale 0.05 are 1,2,3: softmax = 0.09003057, 0.24472847, 0.66524096;
    # out scale 1/256 offset 0: 23.05 -> 23, 62.65 -> 63, 170.30 -> 170; zero row: 85.33 -> 85.
    x = np.array([[20, 40, 60], [0, 0, 0]], np.uint8)
    case = Case("Softmax", [Tensor("x", U8, (2, 3), x, Encoding((0.05,), (0,)))],
                {"axis": Param("axis", "UINT_32", 1), "beta": Param("beta", "FLOAT_32", 1.0)},
                [Tensor("o", U8, (2, 3), encoding=Encoding((1 / 256,), (0,)))])
    (out,) = _ok(qnn.run(case))
    np.testing.assert_array_equal(out, [[23, 63, 170], [85, 85, 85]])


def test_softmax_non_last_axis_is_rejected_by_htp(qnn):
    """The spec allows any axis in [0, N-1]; this HTP build validates only the last one."""
    x = np.zeros((2, 3), np.float32)
    case = Case("Softmax", [Tensor("x", "FLOAT_32", (2, 3), x)], {"axis": Param("axis", "UINT_32", 0)},
                [Tensor("o", "FLOAT_32", (2, 3))])
    out = qnn.run(case)
    assert out.status == "rejected" and out.details["code"] == 3110


# ---- Transpose -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["FLOAT_32", "FLOAT_16", U8])
def test_transpose(qnn, dtype):
    # x[a, 0, c] -> out[c, a, 0] with perm [2, 0, 1]
    st = FLOATS.get(dtype, np.uint8)
    enc = Encoding((0.1,), (-5,)) if dtype == U8 else None
    x = np.array([[[1, 2, 3]], [[4, 5, 6]]], st)
    case = Case("Transpose", [Tensor("x", dtype, (2, 1, 3), x, enc)],
                {"perm": Param("perm", "UINT_32", np.array([2, 0, 1], np.uint32))},
                [Tensor("o", dtype, (3, 2, 1), encoding=enc)])
    (out,) = _ok(qnn.run(case))
    assert out.dtype == st and out.shape == (3, 2, 1)
    np.testing.assert_array_equal(out, np.array([[[1], [4]], [[2], [5]], [[3], [6]]], st))


# ---- Conv2d ----------------------------------------------------------------------------------------
# Input 1..9 as a 3x3 image; stride 2, pad 0 before / 1 after in both axes, so windows start at 0, 2:
#   1 2 3 0        out channel 0, diagonal filter [[1,0],[0,1]]:      1+5=6  3+0=3 / 7+0=7  9+0=9
#   4 5 6 0        out channel 1, anti-diagonal filter [[0,1],[1,0]]: 2+4=6  0+6=6 / 8+0=8  0+0=0
#   7 8 9 0
#   0 0 0 0
_X = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
_W = np.zeros((2, 2, 1, 2), np.float32)
_W[0, 0, 0, 0] = _W[1, 1, 0, 0] = 1
_W[0, 1, 0, 1] = _W[1, 0, 0, 1] = 1
_CONV_PARAMS = {
    "stride": Param("stride", "UINT_32", np.array([2, 2], np.uint32)),
    "pad_amount": Param("pad_amount", "UINT_32", np.array([[0, 1], [0, 1]], np.uint32)),
}


def _channels_first(out):
    return out[0].transpose(2, 0, 1)


@pytest.mark.parametrize("dtype", FLOATS)
def test_conv2d_float(qnn, dtype):
    # bias [0.5, -1]: channel 0 [[6.5, 3.5], [7.5, 9.5]], channel 1 [[5, 5], [7, -1]]
    st = FLOATS[dtype]
    case = Case(
        "Conv2d",
        [
            Tensor("x", dtype, _X.shape, _X.astype(st)),
            Tensor("w", dtype, _W.shape, _W.astype(st), static=True),
            Tensor("b", dtype, (2,), np.array([0.5, -1.0], st), static=True),
        ],
        _CONV_PARAMS,
        [Tensor("o", dtype, (1, 2, 2, 2))],
    )
    (out,) = _ok(qnn.run(case))
    assert out.dtype == st and out.shape == (1, 2, 2, 2)
    np.testing.assert_array_equal(_channels_first(out), [[[6.5, 3.5], [7.5, 9.5]], [[5, 5], [7, -1]]])


@pytest.mark.parametrize("wdtype", [U8, "SFIXED_POINT_8"])
def test_conv2d_ufixed8(qnn, wdtype):
    # input scale 0.5 offset -4: code = 2*x + 4 (the padding is real 0, i.e. code 4, not code 0)
    # weights UFIXED_8 scale 0.5 offset -2 (1 -> 4, 0 -> 2) or SFIXED_8 scale 0.5 offset 0 (1 -> 2)
    # bias SFIXED_32 scale 0.25 offset 0: real [1, -1] -> codes [4, -4]
    # real out: channel 0 [[7, 4], [8, 10]], channel 1 [[5, 5], [7, -1]];
    # out scale 0.5 offset -10: code = 2*real + 10 -> [[24, 18], [26, 30]] and [[20, 20], [24, 8]]
    if wdtype == U8:
        wq, wenc = np.where(_W > 0, 4, 2).astype(np.uint8), Encoding((0.5,), (-2,))
    else:
        wq, wenc = np.where(_W > 0, 2, 0).astype(np.int8), Encoding((0.5,), (0,))
    case = Case(
        "Conv2d",
        [
            Tensor("x", U8, _X.shape, (2 * _X + 4).astype(np.uint8), Encoding((0.5,), (-4,))),
            Tensor("w", wdtype, _W.shape, wq, wenc, static=True),
            Tensor("b", "SFIXED_POINT_32", (2,), np.array([4, -4], np.int32), Encoding((0.25,), (0,)), static=True),
        ],
        _CONV_PARAMS,
        [Tensor("o", U8, (1, 2, 2, 2), encoding=Encoding((0.5,), (-10,)))],
    )
    (out,) = _ok(qnn.run(case))
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(_channels_first(out), [[[24, 18], [26, 30]], [[20, 20], [24, 8]]])


# ---- refusals, skips, failures --------------------------------------------------------------------
def test_wrong_output_shape_is_rejected_at_validation(qnn):
    a = np.ones((2, 3), np.float32)
    case = Case("ElementWiseAdd", [Tensor("a", "FLOAT_32", (2, 3), a), Tensor("b", "FLOAT_32", (2, 3), a)], {},
                [Tensor("o", "FLOAT_32", (3, 2))])
    out = qnn.run(case)
    assert out.status == "rejected"
    assert out.details["code"] == 3110 and out.details["stage"] == "validate"
    assert "3110" in out.message and "validation" in out.message.lower()


def test_unknown_op_is_rejected(qnn):
    a = np.ones((2,), np.float32)
    out = qnn.run(Case("NoSuchOp", [Tensor("a", "FLOAT_32", (2,), a)], {}, [Tensor("o", "FLOAT_32", (2,))]))
    assert out.status == "rejected" and out.details["code"] == 4005


def test_gap_in_optional_inputs_is_skipped(qnn):
    a = np.ones((2,), np.float32)
    t = Tensor("a", "FLOAT_32", (2,), a)
    out = qnn.run(Case("ElementWiseAdd", [t, None, t], {}, [Tensor("o", "FLOAT_32", (2,))]))
    assert out.status == "skip" and "absent" in out.message


def _add_case():
    a = np.array([1.0, 2.0], np.float32)
    return Case("ElementWiseAdd", [Tensor("a", "FLOAT_32", (2,), a), Tensor("b", "FLOAT_32", (2,), a)], {},
                [Tensor("o", "FLOAT_32", (2,))])


@pytest.mark.parametrize("hook,signal_name", [("__debug_abort__", "SIGABRT"), ("__debug_segv__", "SIGSEGV")])
def test_worker_crash_is_one_case_and_the_next_passes(qnn, hook, signal_name):
    starts = qnn.worker_starts
    out = qnn.run(Case(hook, [], {}, []))
    assert out.status == "crash"
    assert out.details["signal_name"] == signal_name and signal_name in out.message
    (nxt,) = _ok(qnn.run(_add_case()))
    np.testing.assert_array_equal(nxt, [2.0, 4.0])
    assert qnn.worker_starts == starts + 1


def test_restarting_the_worker_after_a_crash_is_timed_apart_from_the_cases(qnn):
    """The benchmark keeps worker start-up out of the harness's share: the adapter must count it."""
    qnn.run(_add_case())
    before = qnn.worker_start_seconds
    qnn.run(Case("__debug_segv__", [], {}, []))
    qnn.run(_add_case())  # starts a new worker
    after = qnn.worker_start_seconds
    assert after > before, f"worker start seconds went from {before} to {after} over a crash and a restart"


def test_a_record_says_how_many_cases_its_worker_ran_before_it(qnn):
    qnn.run(Case("__debug_segv__", [], {}, []))  # a fresh worker from here on
    ages = [qnn.run(_add_case()).details.get("worker_age") for _ in range(3)]
    crashed = qnn.run(Case("__debug_segv__", [], {}, []))
    after = qnn.run(_add_case()).details.get("worker_age")
    assert ages == [0, 1, 2] and crashed.details.get("worker_age") == 3 and after == 0, (ages, crashed.details, after)


def test_worker_exit_code_is_reported(qnn):
    out = qnn.run(Case("__debug_exit__", [], {}, []))
    assert out.status == "crash" and out.details["exit_code"] == 3
    _ok(qnn.run(_add_case()))


def test_debug_ops_are_ordinary_unknown_ops_without_the_option():
    ad = QnnAdapter()
    try:
        out = ad.run(Case("__debug_abort__", [], {}, [Tensor("o", "FLOAT_32", (1,))]))
        assert out.status == "rejected" and out.details["code"] == 4005
    finally:
        ad.close()


def test_timeout_kills_the_worker_and_the_next_case_runs():
    ad = QnnAdapter(debug_hooks=True, timeout=2)
    try:
        _ok(ad.run(_add_case()))
        pid = ad.worker_pid
        t0 = time.monotonic()
        out = ad.run(Case("__debug_hang__", [], {}, []))
        assert out.status == "timeout" and time.monotonic() - t0 < 10
        assert str(pid) in out.message
        _ok(ad.run(_add_case()))
        assert ad.worker_pid != pid
    finally:
        ad.close()


# ---- identity ---------------------------------------------------------------------------------------
def test_info_and_capabilities(qnn):
    info = qnn.info()
    assert qnn.name == "qnn-htp"
    assert info["library"].endswith("libQnnHtp.so")
    assert info["core_api"].startswith("2.") and info["provider"] == "HTP_QTI_AISW"
    assert info["build_id"]
    ops = qnn.capabilities()["ops"]
    assert {"ElementWiseAdd", "Softmax", "Transpose", "Conv2d"} <= set(ops)


def test_library_banner_stays_off_stdout(capfd):
    ad = QnnAdapter()
    try:
        assert ad.available()[0]
        _ok(ad.run(_add_case()))
    finally:
        ad.close()
    captured = capfd.readouterr()
    assert "LIBNATIVE" not in captured.out and "LIBNATIVE" not in captured.err


def test_conv2d_per_axis_weights(qnn):
    # SFIXED_8 weights per output channel (axis 3): scale 0.5 (1 -> code 2) and 0.25 (1 -> code 4);
    # bias SFIXED_32 per channel with scale in*w = 0.25 and 0.125: real [1, -1] -> codes [4, -8].
    # Same real numbers as test_conv2d_ufixed8, so the same output codes.
    wq = np.zeros(_W.shape, np.int8)
    wq[..., 0] = (_W[..., 0] * 2).astype(np.int8)
    wq[..., 1] = (_W[..., 1] * 4).astype(np.int8)
    case = Case(
        "Conv2d",
        [
            Tensor("x", U8, _X.shape, (2 * _X + 4).astype(np.uint8), Encoding((0.5,), (-4,))),
            Tensor("w", "SFIXED_POINT_8", _W.shape, wq, Encoding((0.5, 0.25), (0, 0), axis=3), static=True),
            Tensor("b", "SFIXED_POINT_32", (2,), np.array([4, -8], np.int32), Encoding((0.25, 0.125), (0, 0), axis=0),
                   static=True),
        ],
        _CONV_PARAMS,
        [Tensor("o", U8, (1, 2, 2, 2), encoding=Encoding((0.5,), (-10,)))],
    )
    (out,) = _ok(qnn.run(case))
    np.testing.assert_array_equal(_channels_first(out), [[[24, 18], [26, 30]], [[20, 20], [24, 8]]])


def test_soc_option_reaches_the_device():
    """Default SoC (SM8350, no FP16): FLOAT_32 is computed in float32. SoC 43 (SM8550) enables the
    HTP's relaxed float path for FLOAT_32 graphs even with precision="float32" (measured: the
    precision graph option changes nothing in this build), so 1.0001 + 1.0001 is not 2.0002 there."""
    a = np.array([1.0001, 3.0], np.float32)
    case = Case("ElementWiseAdd", [Tensor("a", "FLOAT_32", (2,), a), Tensor("b", "FLOAT_32", (2,), a)], {},
                [Tensor("o", "FLOAT_32", (2,))])
    results = {}
    for soc in (None, 43):
        ad = QnnAdapter(soc=soc, precision="float32")
        try:
            (results[soc],) = _ok(ad.run(case))
        finally:
            ad.close()
    np.testing.assert_array_equal(results[None], a + a)
    assert abs(float(results[43][0]) - float(a[0] + a[0])) > 1e-5


def test_unknown_api_version_is_refused_when_loading():
    """The real library (core API 2.40) against bindings that pretend to know only 3.x."""
    ad = QnnAdapter()
    ad._worker.config["known_core_api"] = {3: 0}
    try:
        ok, why = ad.available()
        assert not ok
        assert "UnsupportedApiVersion" in why and "2.40.0" in why and "3.0+" in why
        out = ad.run(_add_case())
        assert out.status == "error" and out.details["stage"] == "worker-start"
    finally:
        ad.close()


# ---- sequences of executions (Case.steps) ---------------------------------------------------------------
def test_a_case_with_steps_executes_the_graph_once_per_step_and_returns_every_execution(qnn):
    # ElementWiseAdd keeps no state, so execution k must give exactly step k's a + b: 1+10, 2+10, 3+10;
    # the static b keeps its data in every execution
    a = [np.array([v], np.float32) for v in (1.0, 2.0, 3.0)]
    b = Tensor("b", "FLOAT_32", (1,), np.array([10.0], np.float32), static=True)
    case = Case("ElementWiseAdd", [Tensor("a", "FLOAT_32", (1,), a[0]), b], {}, [Tensor("o", "FLOAT_32", (1,))],
                steps=[[a[1], None], [a[2], None]])  # fmt: skip
    outcome = qnn.run(case)
    outs = _ok(outcome)
    assert [float(o[0]) for o in outs] == [11.0, 12.0, 13.0], outs
    assert outcome.details["executions"] == 3


# ---- cases piped one after another (a request queued while the worker runs the one before) -----------
def _summary(outcome):
    """What a verdict is made of: status, crash signal or exit, worker age, stage and outputs."""
    d = outcome.details
    outputs = [o.tolist() for o in outcome.outputs] if outcome.outputs else None
    return (outcome.status, d.get("signal_name"), d.get("exit_code"), d.get("worker_age"), d.get("stage"), outputs)


def test_piped_cases_get_the_outcomes_they_get_one_at_a_time(qnn):
    cases = [_add_case(), Case("__debug_segv__", [], {}, []), _add_case(), Case("__debug_raise__", [], {}, []),
             _add_case(), Case("__debug_exit__", [], {}, []), _add_case(), _add_case()]
    qnn.run(Case("__debug_segv__", [], {}, []))  # both passes start from a fresh worker
    alone = [_summary(qnn.run(c)) for c in cases]
    qnn.run(Case("__debug_segv__", [], {}, []))
    piped = [_summary(o) for o in qnn.run_each(cases)]
    assert piped == alone, "\n".join(f"case {k}: alone {a} piped {p}" for k, (a, p) in
                                     enumerate(zip(alone, piped, strict=True)) if a != p)


def test_a_hung_batch_waits_its_budget_and_its_hang_then_gets_its_own_case_budget_alone():
    from adapters.base import BATCH_FLOOR_SECONDS, CASE_FLOOR_SECONDS

    ad = QnnAdapter(debug_hooks=True, timeout=30, batch_size=8)
    try:
        cases = [_add_case(), Case("__debug_hang__", [], {}, []), _add_case()]
        t0 = time.perf_counter()
        outs = ad.run_many(cases)
        took = time.perf_counter() - t0
        assert [o.status for o in outs] == ["ok", "timeout", "ok"], [(o.status, o.message) for o in outs]
        assert f"exceeded {CASE_FLOOR_SECONDS:g} s" in outs[1].message, \
            f"a tiny hung case waited more than its size's budget, not the 30 s cap: {outs[1].message}"
        assert took < BATCH_FLOOR_SECONDS + CASE_FLOOR_SECONDS + 3, f"a tiny hang cost {took:.1f} s"
        assert {o.details["batch"]["alone"] for o in outs} == {"the batch timed out"}
    finally:
        ad.close()


def test_a_hang_among_piped_cases_costs_that_case_only():
    ad = QnnAdapter(debug_hooks=True, timeout=2)
    try:
        t0 = time.monotonic()
        outs = ad.run_each([_add_case(), Case("__debug_hang__", [], {}, []), _add_case(), _add_case()])
        assert [o.status for o in outs] == ["ok", "timeout", "ok", "ok"], [(o.status, o.message) for o in outs]
        assert time.monotonic() - t0 < 10
        assert [o.details.get("worker_age") for o in outs] == [0, 1, 0, 1]
    finally:
        ad.close()


def test_a_case_budget_grows_with_its_size_up_to_the_cap():
    from adapters.base import CASE_FLOOR_SECONDS, ELEMENTS_PER_SECOND, case_seconds

    def add(n: int) -> Case:
        x = np.zeros(n, np.float32)
        return Case("ElementWiseAdd", [Tensor("in[0]", "FLOAT_32", (n,), x), Tensor("in[1]", "FLOAT_32", (n,), x)], {},
                    [Tensor("out[0]", "FLOAT_32", (n,))])  # fmt: skip

    assert case_seconds(add(4), 30) < CASE_FLOOR_SECONDS + 0.01
    big = 3 * 200_000 / ELEMENTS_PER_SECOND
    assert case_seconds(add(200_000), 30) == CASE_FLOOR_SECONDS + big, "the budget is the floor and the size's share"
    assert case_seconds(add(200_000), 5) == 5, "the run's --case-timeout caps every budget"


def test_params_go_to_the_backend_in_the_specs_order_whatever_order_the_case_holds(qnn):
    """HARD_SIGMOID (operation 2) with beta 0.1 and alpha left out (0.2): max(0, min(1, 0.2 x + 0.1)). The HTP reads
    ElementWiseNeuron's params by position: sent beta before operation, every output came back 0.1. A saved case
    lists its params by name, so the adapter sends the spec's order (operation, alpha, beta) for either."""
    x = np.array([[-0.9316, 0.0, 1.0, 4.0]], np.float16)  # 0.2 x + 0.1: -0.086 -> 0, 0.1, 0.3, 0.9
    ins = [Tensor("in[0]", "FLOAT_16", (1, 4), x)]
    outs = [Tensor("out[0]", "FLOAT_16", (1, 4))]
    beta, operation = Param("beta", "FLOAT_32", 0.1), Param("operation", "UINT_32", 2)
    for params in ({"beta": beta, "operation": operation}, {"operation": operation, "beta": beta}):
        got = _ok(qnn.run(Case("ElementWiseNeuron", ins, params, outs)))[0]
        np.testing.assert_allclose(got.astype(np.float32), [[0.0, 0.1, 0.3, 0.9]], atol=2e-3,
                                   err_msg=f"params in the order {list(params)}")  # fmt: skip
