"""The ONNX Runtime adapters: hand-computed cases on the CPU EP (and on the QNN EP where it loads).

Expected numbers are written out by hand (worked in the comments), not computed by the reference, so
these tests check the lowering and the adapters' plumbing independently of the rest of the suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

import adapters  # noqa: E402
import opdefs  # noqa: E402
from adapters import onnx as lowering  # noqa: E402
from adapters.onnx import elementwise  # noqa: E402
from adapters.onnxruntime import OrtCpuAdapter  # noqa: E402
from cases.case import Case, Encoding, Param, Tensor  # noqa: E402

U8 = "UFIXED_POINT_8"
F32 = "FLOAT_32"


@pytest.fixture(scope="module")
def cpu():
    ad = OrtCpuAdapter()
    ok, why = ad.available()
    if not ok:
        pytest.skip(f"onnxruntime CPU EP not usable here: {why}")
    return ad


def _ok(outcome):
    assert outcome.status == "ok", (outcome.status, outcome.message, outcome.details)
    return outcome.outputs


# ---- the cases, shared by the CPU and QNN EP tests -------------------------------------------------
def add_f32() -> Case:
    a = np.array([[1.5, -2.0, 0.25], [3.0, 4.0, -0.5]], np.float32)
    b = np.array([10.0, 20.0, 30.0], np.float32)
    return Case(
        "ElementWiseAdd", [Tensor("a", F32, (2, 3), a), Tensor("b", F32, (3,), b)], {}, [Tensor("o", F32, (2, 3))]
    )


ADD_F32 = [[11.5, 18.0, 30.25], [13.0, 24.0, 29.5]]


def add_u8() -> Case:
    # a: scale 0.5, offset -100 (zero point 100) -> codes 100,102,110,90 are 0, 1, 5, -5
    # b: scale 0.25, offset -20 (zero point 20) -> codes 20,24,40,0 are 0, 1, 5, -5
    # sum 0, 2, 10, -10 -> out scale 0.1, offset -128: q = sum/0.1 + 128 = 128, 148, 228, 28
    a = np.array([100, 102, 110, 90], np.uint8)
    b = np.array([20, 24, 40, 0], np.uint8)
    return Case(
        "ElementWiseAdd",
        [Tensor("a", U8, (4,), a, Encoding((0.5,), (-100,))), Tensor("b", U8, (4,), b, Encoding((0.25,), (-20,)))],
        {},
        [Tensor("o", U8, (4,), encoding=Encoding((0.1,), (-128,)))],
    )


ADD_U8 = [128, 148, 228, 28]


def softmax_f32() -> Case:
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32)
    params = {"axis": Param("axis", "UINT_32", 1), "beta": Param("beta", F32, 2.0)}
    return Case("Softmax", [Tensor("x", F32, (2, 3), x)], params, [Tensor("o", F32, (2, 3))])


# beta=2 on [1,2,3] is softmax([2,4,6]) = [e^-4, e^-2, 1] / 1.15365092; a zero row gives 1/3 each.
SOFTMAX_F32 = [[0.01587624, 0.11731043, 0.86681333], [1 / 3, 1 / 3, 1 / 3]]


def softmax_u8() -> Case:
    # codes 20,40,60 at scale 0.05 are 1,2,3: softmax = 0.09003057, 0.24472847, 0.66524096;
    # out scale 1/256 offset 0: 23.05 -> 23, 62.65 -> 63, 170.30 -> 170; zero row: 85.33 -> 85.
    x = np.array([[20, 40, 60], [0, 0, 0]], np.uint8)
    return Case(
        "Softmax",
        [Tensor("x", U8, (2, 3), x, Encoding((0.05,), (0,)))],
        {"axis": Param("axis", "UINT_32", 1), "beta": Param("beta", F32, 1.0)},
        [Tensor("o", U8, (2, 3), encoding=Encoding((1 / 256,), (0,)))],
    )


SOFTMAX_U8 = [[23, 63, 170], [85, 85, 85]]


def transpose(dtype: str) -> Case:
    # x[a, 0, c] -> out[c, a, 0] with perm [2, 0, 1]; quantized codes move unchanged
    st = np.uint8 if dtype == U8 else np.float32
    enc = Encoding((0.1,), (-5,)) if dtype == U8 else None
    x = np.array([[[1, 2, 3]], [[4, 5, 6]]], st)
    return Case(
        "Transpose",
        [Tensor("x", dtype, (2, 1, 3), x, enc)],
        {"perm": Param("perm", "UINT_32", np.array([2, 0, 1], np.uint32))},
        [Tensor("o", dtype, (3, 2, 1), encoding=enc)],
    )


TRANSPOSED = [[[1], [4]], [[2], [5]], [[3], [6]]]

# Conv2d: input 1..9 as a 3x3 NHWC image; stride 2, pad 0 before / 1 after in both axes, so the
# windows start at 0 and 2:
#   1 2 3 0        out channel 0, diagonal filter [[1,0],[0,1]]:      1+5=6  3+0=3 / 7+0=7  9+0=9
#   4 5 6 0        out channel 1, anti-diagonal filter [[0,1],[1,0]]: 2+4=6  0+6=6 / 8+0=8  0+0=0
#   7 8 9 0
#   0 0 0 0
# QNN filter layout [fh, fw, cin, cout]: W[0,0,0,0] = W[1,1,0,0] = 1 (channel 0), W[0,1,0,1] = W[1,0,0,1] = 1.
_X = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
_W = np.zeros((2, 2, 1, 2), np.float32)
_W[0, 0, 0, 0] = _W[1, 1, 0, 0] = 1
_W[0, 1, 0, 1] = _W[1, 0, 0, 1] = 1
CONV_PARAMS = {
    "stride": Param("stride", "UINT_32", np.array([2, 2], np.uint32)),
    "pad_amount": Param("pad_amount", "UINT_32", np.array([[0, 1], [0, 1]], np.uint32)),
}
CONV_F32 = [[[[6, 6], [3, 6]], [[7, 8], [9, 0]]]]  # out[0, row, col, channel]


def conv_f32(static: bool = True, bias: bool = False) -> Case:
    ins = [Tensor("x", F32, (1, 3, 3, 1), _X), Tensor("w", F32, (2, 2, 1, 2), _W, static=static)]
    if bias:
        ins.append(Tensor("b", F32, (2,), np.array([0.5, -1.0], np.float32), static=True))
    return Case("Conv2d", ins, dict(CONV_PARAMS), [Tensor("o", F32, (1, 2, 2, 2))])


def conv_u8(per_axis: bool = False) -> Case:
    # x codes 2..18 at scale 0.5 (offset 0) are 1..9. Weights: u8 codes 10/20 at scale 0.1, offset -10
    # (zero point 10) are 0/1; or s8 codes 0/10 at scale 0.1 per output channel (axis 3). Output
    # scale 0.5 offset 0: the sums above doubled: 12 12 / 6 12 / 14 16 / 18 0.
    x = Tensor("x", U8, (1, 3, 3, 1), (_X * 2).astype(np.uint8), Encoding((0.5,), (0,)))
    if per_axis:
        w = Tensor("w", "SFIXED_POINT_8", (2, 2, 1, 2), (_W * 10).astype(np.int8),
                   Encoding((0.1, 0.1), (0, 0), axis=3), static=True)  # fmt: skip
    else:
        w = Tensor("w", U8, (2, 2, 1, 2), (_W * 10 + 10).astype(np.uint8), Encoding((0.1,), (-10,)), static=True)
    return Case("Conv2d", [x, w], dict(CONV_PARAMS), [Tensor("o", U8, (1, 2, 2, 2), encoding=Encoding((0.5,), (0,)))])


CONV_U8 = [[[[12, 12], [6, 12]], [[14, 16], [18, 0]]]]


# ---- CPU EP ----------------------------------------------------------------------------------------
def test_add_float_with_broadcast(cpu):
    (out,) = _ok(cpu.run(add_f32()))
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(out, np.array(ADD_F32, np.float32))


def test_add_ufixed8_qdq(cpu):
    (out,) = _ok(cpu.run(add_u8()))
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, ADD_U8)


def test_add_float16_model_tensors(cpu):
    case = add_f32()
    for t in [*case.inputs, *case.outputs]:
        t.dtype = "FLOAT_16"
        if t.data is not None:
            t.data = t.data.astype(np.float16)
    (out,) = _ok(cpu.run(case))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.array(ADD_F32, np.float16))


def test_softmax_float_with_beta(cpu):
    (out,) = _ok(cpu.run(softmax_f32()))
    np.testing.assert_allclose(out, SOFTMAX_F32, atol=1e-6, rtol=0)


def test_softmax_ufixed8_qdq(cpu):
    (out,) = _ok(cpu.run(softmax_u8()))
    np.testing.assert_array_equal(out, SOFTMAX_U8)


@pytest.mark.parametrize("dtype", [F32, U8])
def test_transpose(cpu, dtype):
    (out,) = _ok(cpu.run(transpose(dtype)))
    assert out.shape == (3, 2, 1)
    np.testing.assert_array_equal(out, TRANSPOSED)


@pytest.mark.parametrize("static", [True, False], ids=["static-weights", "graph-input-weights"])
def test_conv2d_float_nhwc(cpu, static):
    (out,) = _ok(cpu.run(conv_f32(static)))
    assert out.shape == (1, 2, 2, 2)
    np.testing.assert_array_equal(out, CONV_F32)


def test_conv2d_float_bias_per_output_channel(cpu):
    (out,) = _ok(cpu.run(conv_f32(bias=True)))
    np.testing.assert_array_equal(out, np.array(CONV_F32) + [0.5, -1.0])


@pytest.mark.parametrize("per_axis", [False, True], ids=["u8-weights", "s8-per-axis-weights"])
def test_conv2d_ufixed8_qdq(cpu, per_axis):
    (out,) = _ok(cpu.run(conv_u8(per_axis)))
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, CONV_U8)


def test_full_reduction_has_the_declared_rank(cpu):
    # ONNX reduces [2, 3] over both axes to a scalar; QNN declares [1]. Mean of the add_f32 inputs:
    # (1.5 - 2 + 0.25 + 3 + 4 - 0.5) / 6 = 6.25 / 6.
    x = add_f32().inputs[0]
    case = Case("ReduceMean", [x], {"axes": Param("axes", "UINT_32", np.array([0, 1], np.uint32))},
                [Tensor("o", F32, (1,))])  # fmt: skip
    (out,) = _ok(cpu.run(case))
    assert out.shape == (1,)
    np.testing.assert_allclose(out, [6.25 / 6], rtol=1e-6)


def test_argmax_index_type_is_the_declared_one(cpu):
    x = add_f32().inputs[0]
    case = Case("Argmax", [x], {"axis": Param("axis", "UINT_32", 1)}, [Tensor("o", "UINT_32", (2,))])
    (out,) = _ok(cpu.run(case))
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, [0, 1])  # row maxima 1.5 (index 0) and 4.0 (index 1)


def test_op_without_lowering_is_skip(cpu):
    case = Case("NonZero", [Tensor("x", F32, (2,), np.zeros(2, np.float32))], {}, [Tensor("o", F32, (1,))])
    out = cpu.run(case)
    assert out.status == "skip"
    assert out.message == "no ONNX lowering for NonZero"


def test_model_ort_refuses_is_rejected(cpu):
    # ONNX Sin has no integer form: ORT refuses the model while building the session.
    case = Case("ElementWiseSin", [Tensor("x", "INT_32", (2,), np.array([1, 2], np.int32))], {},
                [Tensor("o", "INT_32", (2,))])  # fmt: skip
    out = cpu.run(case)
    assert out.status == "rejected"
    assert "INVALID_GRAPH" in out.message and out.details["stage"] == "session"


def test_mixed_operand_types_are_rejected_not_cast(cpu):
    case = add_f32()
    case.inputs[1] = Tensor("b", "FLOAT_16", (3,), case.inputs[1].data.astype(np.float16))
    out = cpu.run(case)
    assert out.status == "rejected", out.message
    assert "bound to different types" in out.message


def test_declared_output_shape_is_checked(cpu):
    case = add_f32()
    case.outputs[0] = Tensor("o", F32, (3, 2))
    out = cpu.run(case)
    assert out.status == "rejected" and "ShapeInferenceError" in out.message


def test_failure_while_running_is_error(cpu):
    # group 2 with one output channel: ORT's Conv kernel checks the group split only when it runs.
    case = Case("Conv2d",
                [Tensor("x", F32, (1, 1, 1, 2), np.ones((1, 1, 1, 2), np.float32)),
                 Tensor("w", F32, (1, 1, 1, 1), np.ones((1, 1, 1, 1), np.float32), static=True)],
                {"stride": Param("stride", "UINT_32", np.array([1, 1], np.uint32)),
                 "group": Param("group", "UINT_32", 2)},
                [Tensor("o", F32, (1, 1, 1, 1))])  # fmt: skip
    out = cpu.run(case)
    assert out.status == "error" and out.details["stage"] == "run", (out.status, out.message)


def test_a_kernel_refusing_its_data_type_as_it_runs_is_rejected(cpu):
    """ORT's ScatterND checks its type only when it runs (float16 with reduction 'add'): a missing kernel, as a
    refusal at session creation is, not a failure of the backend."""
    data = np.zeros((2, 3), np.float16)
    case = Case("ScatterNd",
                [Tensor("d", "FLOAT_16", (2, 3), data), Tensor("i", "INT_32", (1, 1), np.array([[1]], np.int32)),
                 Tensor("u", "FLOAT_16", (1, 3), np.ones((1, 3), np.float16))],
                {"reduction": Param("reduction", "UINT_32", 1)},
                [Tensor("o", "FLOAT_16", (2, 3))])  # fmt: skip
    out = cpu.run(case)
    assert out.status == "rejected" and out.details["stage"] == "run", (out.status, out.message)


def _dequantize_s32(codes: list[int], offset: int) -> Case:
    data = np.array(codes, np.int32)
    return Case("Dequantize", [Tensor("x", "SFIXED_POINT_32", data.shape, data, Encoding((1e-9,), (offset,)))], {},
                [Tensor("o", F32, data.shape)], config="FLOAT_32+SFIXED_POINT_32")  # fmt: skip


def test_32_bit_codes_that_would_wrap_against_the_zero_point_are_not_lowered(cpu):
    """ORT's DequantizeLinear subtracts the zero point in 32-bit integers: a case where that wraps would judge ORT
    by an overflow the lowering brought in, so it says so (SKIP)."""
    out = cpu.run(_dequantize_s32([-2_100_000_000, 5], -400_000_000))  # zero point 4e8: -2.1e9 - 4e8 wraps
    assert out.status == "skip" and "32-bit" in out.message, (out.status, out.message)


def test_32_bit_codes_near_their_zero_point_are_lowered(cpu):
    out = cpu.run(_dequantize_s32([-2_000, 5], -400))
    assert out.status == "ok", (out.status, out.message)


def test_zero_point_outside_the_type_is_skip(cpu):
    case = add_u8()
    case.inputs[0].encoding = Encoding((0.5,), (-300,))  # zero point 300 does not fit uint8
    out = cpu.run(case)
    assert out.status == "skip" and "zero points outside" in out.message


def test_quantize_to_sfixed4(cpu):
    # scale 0.5, offset 0: 0, 1, -5, 3.3 -> round(x / 0.5) = 0, 2, -10, 6.6 -> 0, 2, -8 (saturated), 7 (saturated)
    x = Tensor("x", F32, (4,), np.array([0.0, 1.0, -5.0, 3.3], np.float32))
    case = Case("Quantize", [x], {}, [Tensor("o", "SFIXED_POINT_4", (4,), encoding=Encoding((0.5,), (0,)))])
    (out,) = _ok(cpu.run(case))
    assert out.dtype == np.int8  # one 4-bit code per byte, as cases store them
    np.testing.assert_array_equal(out, [0, 2, -8, 7])


def test_dequantize_from_sfixed4(cpu):
    # scale 0.25, offset -1 (zero point 1): codes -8, 7, 1 are 0.25 * (q - 1) = -2.25, 1.5, 0
    x = Tensor("x", "SFIXED_POINT_4", (3,), np.array([-8, 7, 1], np.int8), Encoding((0.25,), (-1,)))
    (out,) = _ok(cpu.run(Case("Dequantize", [x], {}, [Tensor("o", F32, (3,))])))
    np.testing.assert_array_equal(out, [-2.25, 1.5, 0.0])


# ---- the lowering itself ---------------------------------------------------------------------------
def _model(case: Case) -> onnx.ModelProto:
    return onnx.load_from_string(lowering.lower(case).model)


def test_qdq_zero_point_is_minus_offset():
    m = _model(add_u8())
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    dq = [n for n in m.graph.node if n.op_type == "DequantizeLinear"]
    q = [n for n in m.graph.node if n.op_type == "QuantizeLinear"]
    assert [n.op_type for n in m.graph.node] == ["DequantizeLinear", "DequantizeLinear", "Add", "QuantizeLinear"]
    assert [(float(inits[n.input[1]]), int(inits[n.input[2]])) for n in dq] == [(0.5, 100), (0.25, 20)]
    assert inits[q[0].input[2]].dtype == np.uint8 and int(inits[q[0].input[2]]) == 128


def test_conv_filter_is_transposed_and_per_axis_axis_follows():
    m = _model(conv_u8(per_axis=True))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    assert inits["in1"].shape == (2, 1, 2, 2)  # [cout, cin/group, fh, fw]
    np.testing.assert_array_equal(inits["in1"][0, 0], [[10, 0], [0, 10]])
    (wdq,) = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and n.input[0] == "in1"]
    assert {a.name: a.i for a in wdq.attribute} == {"axis": 0}
    (conv,) = [n for n in m.graph.node if n.op_type == "Conv"]
    attrs = {a.name: list(a.ints) for a in conv.attribute if a.ints}
    assert attrs["pads"] == [0, 0, 1, 1] and attrs["strides"] == [2, 2]


def test_every_lowered_op_has_a_spec():
    assert set(lowering.LOWERINGS) <= set(opdefs.load_all())


@pytest.mark.parametrize(("op", "table"), [("ElementWiseUnary", "UNARY"), ("ElementWiseBinary", "BINARY"),
                                           ("ElementWiseNeuron", "NEURON")])  # fmt: skip
def test_operation_table_has_an_entry_for_every_member_the_spec_lists(op, table):
    listed, lowered = set(opdefs.load(op).enum("operation")), set(getattr(elementwise, table))
    assert lowered == listed, f"{op}: members without a lowering {sorted(listed - lowered)}, " \
                              f"lowerings for no member {sorted(lowered - listed)}"


def test_registry_and_options():
    assert {"onnxruntime", "ort-qnn"} <= set(adapters.names())
    ad = adapters.get("onnxruntime", {"library": None, "precision": "auto"})  # what the conformance fixture passes
    assert ad.name == "onnxruntime" and "ElementWiseAdd" in ad.capabilities()["ops"]
    info = ad.info()
    assert info["onnxruntime"] and info["providers"] == ["CPUExecutionProvider"]
    with pytest.raises(ValueError):
        adapters.get("onnxruntime", {"bogus": 1})


@pytest.mark.parametrize(("given", "expected"), [(None, True), ("0", False), ("false", False), ("off", False),
                                                  ("1", True), ("yes", True), (False, False)])
def test_ort_qnn_keep_warm_option_reads_yes_and_no(given, expected):
    from adapters import ort_qnn

    opts = {"library": str(Path(__file__))} | ({} if given is None else {"keep_warm": given})
    ad = ort_qnn.make(opts)  # any existing file as the library: the worker is not started
    assert ad.keep_warm is expected, f"keep_warm={given!r} read as {ad.keep_warm}"


def test_ort_qnn_restarts_its_worker_less_often_when_the_simulator_stays_warm():
    """Cold, the worker grew about 540 kB a session (restart every 500); warm, about 3 kB (every 5000)."""
    from adapters import ort_qnn

    lib = {"library": str(Path(__file__))}
    assert ort_qnn.make(lib).recycle_every == 5000
    assert ort_qnn.make(lib | {"keep_warm": False}).recycle_every == 500
    assert ort_qnn.make(lib | {"recycle_every": 7}).recycle_every == 7, "an explicit count wins"


def test_ort_qnn_keep_warm_option_refuses_what_is_neither_yes_nor_no():
    from adapters import ort_qnn

    with pytest.raises(ValueError, match="keep_warm"):
        ort_qnn.make({"library": str(Path(__file__)), "keep_warm": "flase"})


# ---- QNN EP on HTP ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qnn():
    from adapters.ort_qnn import OrtQnnAdapter

    ad = OrtQnnAdapter(debug_hooks=True, timeout=60)
    ok, why = ad.available()
    if not ok:
        ad.close()
        pytest.skip(f"ONNX Runtime QNN EP not usable here: {why}")
    yield ad
    ad.close()


@pytest.mark.qnn
def test_qnn_info_names_the_qnn_build(qnn):
    info = qnn.info()
    assert info["providers"] == ["QNNExecutionProvider"] and info["backend_path"].endswith("libQnnHtp.so")
    assert info.get("qnn_build_id", "").startswith("v"), info


QNN_CASES = {
    "add-f32": (add_f32, ADD_F32),
    "add-u8": (add_u8, ADD_U8),
    "softmax-u8": (softmax_u8, SOFTMAX_U8),
    "transpose-u8": (lambda: transpose(U8), TRANSPOSED),
    "conv2d-f32": (conv_f32, CONV_F32),
    "conv2d-u8": (conv_u8, CONV_U8),
}


@pytest.mark.qnn
@pytest.mark.parametrize("make,expected", list(QNN_CASES.values()), ids=list(QNN_CASES))
def test_qnn_hand_computed(qnn, make, expected):
    (out,) = _ok(qnn.run(make()))
    np.testing.assert_array_equal(out, expected)


@pytest.mark.qnn
def test_qnn_softmax_float(qnn):
    (out,) = _ok(qnn.run(softmax_f32()))
    np.testing.assert_allclose(out, SOFTMAX_F32, atol=1e-6, rtol=0)


@pytest.mark.qnn
def test_qnn_refusal_is_rejected_with_the_eps_reason(qnn):
    """CPU fallback is off, so a node the EP declines refuses the session; the EP's log says why."""
    case = Case("ElementWiseAsin", [Tensor("x", F32, (2,), np.array([0.1, 0.2], np.float32))], {},
                [Tensor("o", F32, (2,))])  # fmt: skip
    out = qnn.run(case)
    assert out.status == "rejected", (out.status, out.message)
    assert "fallback to CPU EP" in out.message and "[QNN EP:" in out.message


@pytest.mark.qnn
def test_qnn_worker_survives_a_crash(qnn):
    pid = qnn.worker_pid
    _ok(qnn.run(add_f32()))
    assert qnn.worker_pid == pid  # one worker across cases
    crash = Case("__debug_segv__", [], {}, [])
    out = qnn.run(crash)
    assert out.status == "crash" and out.details.get("signal_name") == "SIGSEGV", (out.status, out.message)
    (res,) = _ok(qnn.run(add_f32()))
    np.testing.assert_array_equal(res, ADD_F32)
    assert qnn.worker_pid != pid


@pytest.mark.qnn
def test_qnn_worker_is_recycled_after_the_configured_count(qnn):
    saved, qnn.recycle_every, qnn._sessions = qnn.recycle_every, 2, 0
    try:
        _ok(qnn.run(add_f32()))
        pid = qnn.worker_pid
        _ok(qnn.run(add_f32()))
        assert qnn.worker_pid == pid
        _ok(qnn.run(add_f32()))
        assert qnn.worker_pid != pid
    finally:
        qnn.recycle_every = saved


def test_a_sequence_of_executions_is_skipped_not_run_once(cpu):
    # an ONNX Runtime session keeps no state between runs, so a case with steps has nothing to show there
    case = add_f32()
    case.steps = [[d.data.copy() if d is not None and not d.static else None for d in case.inputs]]
    outcome = cpu.run(case)
    assert outcome.status == "skip" and "executions" in outcome.message, (outcome.status, outcome.message)


def _asin_cell(n: int = 6) -> list:
    """FLOAT_32 ElementWiseAsin cases: the QNN EP refuses every one (the HTP validates no Asin on FLOAT_32)."""
    from cases.case import Case, Tensor

    out = []
    for k in range(n):
        x = np.linspace(-0.5, 0.5, 4 * (k + 2), dtype=np.float32).reshape(2, k + 2, 2)
        out.append(Case("ElementWiseAsin", [Tensor("in[0]", "FLOAT_32", x.shape, x)], {},
                        [Tensor("out[0]", "FLOAT_32", x.shape)], config="FLOAT_32", tier="typical"))  # fmt: skip
    return out


def test_a_cell_refused_alone_is_settled_from_one_session_with_each_cases_own_reason():
    from adapters import refusal

    ad = adapters.get("ort-qnn")
    ok, why = ad.available()
    if not ok:
        pytest.skip(f"ort-qnn not available here: {why}")
    try:
        cases = _asin_cell()
        together = ad.run_many(cases)
        alone = [ad.run(c) for c in cases]
    finally:
        ad.close()
    assert [o.status for o in together] == [o.status for o in alone] == ["rejected"] * len(cases)
    settled = [o for o in together if (o.details.get("batch") or {}).get("refused_with")]
    assert settled, "no refusal was settled from the cell's one session: every case still ran alone"
    reasons = {refusal.explain(o.details.get("log") or [], o.message)["reason"] for o in together + alone}
    assert len(reasons) == 1, f"a settled case reads otherwise than alone: {reasons}"
