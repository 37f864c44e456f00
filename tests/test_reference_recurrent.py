"""Lstm and Gru references (reference/recurrent.py) against ONNX LSTM / GRU on onnxruntime CPU.

The translation from QNN's per-gate inputs to ONNX's packed tensors is done here: ONNX packs LSTM
gates as i, o, f, c and GRU gates as z, r, h, with W [dirs, gates*H, in], R [dirs, gates*H, H] and B
[dirs, 2*gates*H] (input biases then recurrent biases). ONNX cannot express Lstm's layer
normalization, projection or cell clipping (its ``clip`` acts on gate pre-activations), so those
have hand-computed cases from the spec's equations (8205-8214). ONNX's ``input_forget`` couples the
gates the other way round (f = 1 - i, measured on onnxruntime); QNN's CIFG (i = 1 - f) is expressed
by putting the negated forget-gate weights in ONNX's input-gate slot, since sigmoid(-a) = 1 - sigmoid(a).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference
from reference.recurrent import LSTM_LAYER_NORM_EPSILON, gru_sequence, lstm_sequence
from tests.onnx_oracle import F32, ort_node

RNG = np.random.default_rng(20240612)
LSTM_INPUTS = 25


def rand(*shape: int) -> np.ndarray:
    """float32-representable values, so onnxruntime sees exactly what the reference sees."""
    return RNG.uniform(-1.0, 1.0, shape).astype(np.float32).astype(np.float64)


def lstm_inputs(x: np.ndarray, n: int, *, cifg: bool = False, peephole: bool = False, state: bool = False,
                ) -> tuple[list[np.ndarray | None], dict[str, dict[str, np.ndarray]]]:  # fmt: skip
    """Random Lstm inputs in QNN's order, and the same weights by gate for the ONNX translation."""
    i_size = x.shape[-1]
    gates = "fco" if cifg else "ifco"
    w = {"x": {g: rand(n, i_size) for g in gates}, "h": {g: rand(n, n) for g in gates}}
    w["b"] = {g: rand(n) for g in gates}
    w["p"] = {g: rand(n) for g in ("fo" if cifg else "ifo")} if peephole else {}
    ins: list[np.ndarray | None] = [None] * LSTM_INPUTS
    ins[0] = x
    ins[1:4] = [w["x"][g] for g in "fco"]
    ins[4:7] = [w["h"][g] for g in "fco"]
    ins[7:10] = [w["b"][g] for g in "fco"]
    if not cifg:
        ins[16], ins[17], ins[21] = w["x"]["i"], w["h"]["i"], w["b"]["i"]
    if peephole:
        ins[19], ins[20] = w["p"]["f"], w["p"]["o"]
        if not cifg:
            ins[18] = w["p"]["i"]
    return ins, w


def onnx_lstm_weights(w: dict[str, dict[str, np.ndarray]], n: int, cifg: bool) -> list[np.ndarray]:
    """W, R, B, P for ONNX LSTM (one direction). Under CIFG the forget gate goes, negated, into ONNX's
    input slot and ``input_forget = 1`` makes ONNX's f = 1 - sigmoid(-F) = sigmoid(F)."""
    def slot(kind: str, g: str) -> np.ndarray:
        if not cifg:
            return w[kind][g]
        if g == "i":
            return -w[kind]["f"]
        if g == "f":
            return np.zeros_like(w[kind]["f"])
        return w[kind][g]

    packed_w = np.concatenate([slot("x", g) for g in "iofc"])[None]
    packed_r = np.concatenate([slot("h", g) for g in "iofc"])[None]
    packed_b = np.concatenate([slot("b", g) for g in "iofc"] + [np.zeros(4 * n)])[None]
    if w["p"]:
        zero = np.zeros(n)
        peep = {"i": -w["p"]["f"], "o": w["p"]["o"], "f": zero} if cifg else w["p"]
        packed_p = np.concatenate([peep[g] for g in "iof"])[None]
    else:
        packed_p = None
    return [a if a is None else a.astype(np.float32) for a in (packed_w, packed_r, packed_b, packed_p)]


LSTM_CONFIGS = [
    # (steps (0: 2-D input), batch, input_size, num_units, time_major, direction, cifg, peephole, state)
    (3, 2, 4, 5, True, 0, False, False, False),
    (4, 1, 3, 2, True, 0, False, False, True),
    (3, 2, 4, 3, False, 0, False, False, True),
    (5, 2, 3, 4, True, 1, False, False, True),
    (3, 3, 2, 4, False, 1, False, True, True),
    (4, 2, 3, 3, True, 0, False, True, False),
    (4, 2, 3, 3, True, 0, True, False, True),
    (3, 2, 5, 4, False, 1, True, True, True),
    (0, 3, 4, 5, True, 0, False, True, True),
    (0, 2, 3, 2, True, 0, True, False, False),
]


@pytest.mark.parametrize("steps,batch,i_size,n,time_major,direction,cifg,peephole,state", LSTM_CONFIGS)
@pytest.mark.parametrize("draw", range(3))
def test_lstm_matches_onnxruntime(steps: int, batch: int, i_size: int, n: int, time_major: bool, direction: int,
                                  cifg: bool, peephole: bool, state: bool, draw: int) -> None:  # fmt: skip
    x_tbi = rand(max(steps, 1), batch, i_size)
    x = x_tbi[0] if steps == 0 else (x_tbi if time_major else np.swapaxes(x_tbi, 0, 1).copy())
    ins, w = lstm_inputs(x, n, cifg=cifg, peephole=peephole)
    h0, c0 = (rand(batch, n), rand(batch, n)) if state else (None, None)
    ins[10], ins[11] = h0, c0
    params = {"time_major": time_major, "direction": direction}
    out, c_last, h_last = reference.run("Lstm", ins, params)
    packed_w, packed_r, packed_b, packed_p = onnx_lstm_weights(w, n, cifg)
    feeds = [x_tbi.astype(np.float32), packed_w, packed_r, packed_b, None,
             None if h0 is None else h0[None].astype(np.float32), None if c0 is None else c0[None].astype(np.float32),
             packed_p]  # fmt: skip
    y, y_h, y_c = ort_node("LSTM", feeds, [F32] * 3, hidden_size=n, direction=["forward", "reverse"][direction],
                           input_forget=int(cifg))  # fmt: skip
    want = y[:, 0] if (steps == 0 or time_major) else np.swapaxes(y[:, 0], 0, 1)
    if steps == 0:
        want = want[0]
    label = f"steps={steps} time_major={time_major} direction={direction} cifg={cifg} peephole={peephole}"
    np.testing.assert_allclose(out, want, atol=2e-6, err_msg=f"out[0] (h per step): {label}")
    np.testing.assert_allclose(c_last, y_c[0], atol=2e-6, err_msg=f"out[1] (cell state): {label}")
    np.testing.assert_allclose(h_last, y_h[0], atol=2e-6, err_msg=f"out[2] (last h): {label}")


def zero_lstm(n: int, i_size: int, batch: int = 1) -> list[np.ndarray | None]:
    """An Lstm whose weights and biases are all zero: every gate is sigmoid(0) = 0.5, the candidate 0."""
    ins: list[np.ndarray | None] = [None] * LSTM_INPUTS
    ins[0] = np.ones((batch, i_size))
    ins[1:4] = [np.zeros((n, i_size))] * 3
    ins[4:7] = [np.zeros((n, n))] * 3
    ins[7:10] = [np.zeros(n)] * 3
    ins[16], ins[17], ins[21] = np.zeros((n, i_size)), np.zeros((n, n)), np.zeros(n)
    return ins


def test_lstm_cell_clip_bounds_the_cell_state() -> None:
    """C_t = clip(f C_{t-1} + i g, t_cell): with i = f = 0.5, g = tanh(2) and C_{t-1} = [3, -3, 0.2]
    the unclipped cell is [1.5 + g/2, -1.5 + g/2, 0.1 + g/2]; t_cell = 1 clips the first two."""
    ins = zero_lstm(3, 1)
    ins[8] = np.full(3, 2.0)  # cell bias: g = tanh(2)
    ins[11] = np.array([[3.0, -3.0, 0.2]])
    half_g = 0.5 * math.tanh(2.0)
    _, c, h = reference.run("Lstm", ins, {"cell_clip_threshold": 1.0})
    want_c = np.array([[1.0, -1.0, 0.1 + half_g]])
    np.testing.assert_allclose(c, want_c, rtol=1e-12, err_msg="cell state not clipped to [-1, 1]")
    np.testing.assert_allclose(h, 0.5 * np.tanh(want_c), rtol=1e-12, err_msg="h must use the clipped cell")


def test_lstm_cell_clip_zero_disables_clipping() -> None:
    ins = zero_lstm(1, 1)
    ins[11] = np.array([[30.0]])
    _, c, _ = reference.run("Lstm", ins, {"cell_clip_threshold": 0.0})
    assert c[0, 0] == 15.0, f"cell {c[0, 0]} != 0.5 * 30 (clip 0.0 means no clipping, 8556)"


def test_lstm_projection_and_projection_clip() -> None:
    """h = clip(W_proj (o * tanh(C)) + b_proj, t_proj): C = 0.5 * [1, -1], o = 0.5, W_proj = [[2, 1]],
    b_proj = 0.1 gives h = 0.5 tanh(0.5) + 0.1 = 0.33106; t_proj = 0.3 clips it to 0.3."""
    ins = zero_lstm(2, 1)
    ins[4:7] = [np.zeros((2, 1))] * 3
    ins[17] = np.zeros((2, 1))
    ins[11] = np.array([[1.0, -1.0]])
    ins[22], ins[23] = np.array([[2.0, 1.0]]), np.array([0.1])
    _, _, h = reference.run("Lstm", ins, {})
    assert h.shape == (1, 1), f"projected h shape {h.shape} != [batch, output_size] = (1, 1)"
    assert h[0, 0] == pytest.approx(0.5 * math.tanh(0.5) + 0.1, rel=1e-12), f"projected h {h[0, 0]}"
    _, _, h = reference.run("Lstm", ins, {"output_clip_threshold": 0.3})
    assert h[0, 0] == pytest.approx(0.3, rel=1e-12), f"projection clip 0.3 not applied: {h[0, 0]}"


def test_lstm_output_clip_does_not_apply_without_projection() -> None:
    """The spec clips with t_proj only in the projection branch of h_t (8213)."""
    ins = zero_lstm(1, 1)
    ins[11] = np.array([[4.0]])
    _, _, h = reference.run("Lstm", ins, {"output_clip_threshold": 0.01})
    assert h[0, 0] == pytest.approx(0.5 * math.tanh(2.0), rel=1e-12), f"h {h[0, 0]} was clipped"


def test_lstm_layer_norm_normalizes_the_product_sum_then_adds_the_bias() -> None:
    """Every gate's product sum is W_x x = [1, 3] (mean 2, variance 1): normalized [-1, 1], times
    gamma [0.5, 2] gives [-0.5, 2], plus bias [0.5, -2] gives 0, so i = f = o = 0.5 and g = 0.
    With C_{t-1} = [2, -2]: C = [1, -1], h = 0.5 tanh(C). Adding the bias before normalizing
    (or omitting the normalization) gives other gate values."""
    ins = zero_lstm(2, 1)
    w_x, gamma, bias = np.array([[1.0], [3.0]]), np.array([0.5, 2.0]), np.array([0.5, -2.0])
    for k in (1, 2, 3, 16):
        ins[k] = w_x
    for k in (7, 8, 9, 21):
        ins[k] = bias
    for k in (12, 13, 14, 15):
        ins[k] = gamma
    ins[11] = np.array([[2.0, -2.0]])
    _, c, h = reference.run("Lstm", ins, {})
    scale = 1.0 / math.sqrt(1.0 + LSTM_LAYER_NORM_EPSILON)  # the normalized values are +-scale, not exactly +-1
    pre = np.array([-0.5 * scale + 0.5, 2.0 * scale - 2.0])
    gate = 1.0 / (1.0 + np.exp(-pre))
    want_c = gate * np.array([2.0, -2.0]) + gate * np.tanh(pre)
    np.testing.assert_allclose(c[0], want_c, rtol=1e-12, err_msg="cell state with layer normalization")
    np.testing.assert_allclose(c[0], [1.0, -1.0], atol=1e-7, err_msg="gates are not all 0.5")
    np.testing.assert_allclose(h[0], gate * np.tanh(want_c), rtol=1e-12, err_msg="h with layer normalization")


def test_lstm_cifg_layer_norm_takes_three_weights() -> None:
    """Under CIFG the input layer-norm weights are omitted (8306): three weights are accepted."""
    ins = zero_lstm(2, 1)
    ins[16] = ins[17] = ins[21] = None
    ins[13] = ins[14] = ins[15] = np.ones(2)
    out = reference.run("Lstm", ins, {})
    assert out[0].shape == (1, 2), out[0].shape


@pytest.mark.parametrize("drop", [
    pytest.param([17], id="input gate weights without recurrent-to-input weights"),
    pytest.param([20], id="cell-to-forget without cell-to-output"),
    pytest.param([18], id="peephole without CIFG but no cell-to-input weights"),
    pytest.param([12], id="layer norm without CIFG but no input layer-norm weights"),
])  # fmt: skip
def test_lstm_refuses_incomplete_optional_groups(drop: list[int]) -> None:
    ins = zero_lstm(2, 1)
    ins[18] = ins[19] = ins[20] = np.zeros(2)
    ins[12] = ins[13] = ins[14] = ins[15] = np.ones(2)
    for k in drop:
        ins[k] = None
    with pytest.raises(ValueError):
        reference.run("Lstm", ins, {})


def test_lstm_refuses_cell_to_input_weights_under_cifg() -> None:
    ins = zero_lstm(2, 1)
    ins[16] = ins[17] = ins[21] = None
    ins[18] = ins[19] = ins[20] = np.zeros(2)
    with pytest.raises(ValueError, match="cell-to-input"):
        reference.run("Lstm", ins, {})


def test_lstm_reverse_reports_the_last_processed_step() -> None:
    """REVERSE runs from the last time step to the first; out[2] ("the final time-step", 8688) is the
    state after processing time index 0, which is also out[0][0]."""
    ins, _ = lstm_inputs(rand(4, 2, 3), 3)
    out, _, h_last = reference.run("Lstm", ins, {"direction": 1})
    np.testing.assert_array_equal(h_last, out[0], err_msg="out[2] != out[0] at time index 0")


def test_lstm_optional_outputs_are_the_last_step_gates() -> None:
    ins, _ = lstm_inputs(rand(2, 1, 3), 2, peephole=True)
    shapes = [(2, 1, 2), (1, 2), (1, 2)] + [(1, 2)] * 5
    outs = reference.run("Lstm", ins, {}, out_shapes=shapes)
    assert len(outs) == 8, f"{len(outs)} outputs for 8 declared"
    i, f, g, o, hidden = outs[3:]
    _, c, h = outs[:3]
    np.testing.assert_allclose(hidden, o * np.tanh(c), rtol=1e-12, err_msg="out[7] != o * tanh(C)")
    np.testing.assert_allclose(h, hidden, rtol=1e-12, err_msg="without projection h is the hidden state")
    assert np.all((i > 0) & (i < 1) & (f > 0) & (f < 1) & (o > 0) & (o < 1)), "gates are sigmoids"
    assert np.all(np.abs(g) < 1), "the cell gate is a tanh"
    assert len(reference.run("Lstm", ins, {})) == 3, "undeclared optional outputs must not be produced"


def test_lstm_reset_false_continues_from_the_previous_execution() -> None:
    """Two executions of 2 steps with reset false on the second equal one execution of 4 steps."""
    x = rand(4, 2, 3)
    ins, _ = lstm_inputs(x, 3, peephole=True)
    ins[10], ins[11] = rand(2, 3), rand(2, 3)
    whole = reference.run("Lstm", ins, {})
    first, second = list(ins), list(ins)
    first[0], second[0] = x[:2], x[2:]
    second[24] = np.array(False)
    (a_out, _, _), (b_out, b_c, b_h) = lstm_sequence([first, second], {"time_major": True})
    np.testing.assert_allclose(np.concatenate([a_out, b_out]), whole[0], rtol=1e-12, err_msg="out[0] across executions")
    np.testing.assert_allclose(b_c, whole[1], rtol=1e-12, err_msg="cell state after the second execution")
    second[24] = np.array(True)
    (_, _, _), (b_out_reset, _, _) = lstm_sequence([first, second], {"time_major": True})
    assert not np.allclose(b_out_reset, b_out), "reset true must restart from in[10]/in[11]"


# ---- Gru ------------------------------------------------------------------------------------

GRU_CONFIGS = [
    # (steps, batch, input_size, hidden, time_major, direction, linear_before_reset, biases, initial_h)
    (3, 2, 4, 5, True, 0, 0, True, False),
    (4, 1, 3, 2, True, 0, 1, True, True),
    (3, 2, 4, 3, False, 0, 0, False, True),
    (5, 2, 3, 4, True, 1, 1, True, True),
    (3, 3, 2, 4, False, 1, 0, True, True),
    (1, 2, 3, 3, True, 0, 1, False, False),
]


@pytest.mark.parametrize("steps,batch,i_size,hidden,time_major,direction,lbr,biases,initial_h", GRU_CONFIGS)
@pytest.mark.parametrize("draw", range(3))
def test_gru_matches_onnxruntime(steps: int, batch: int, i_size: int, hidden: int, time_major: bool, direction: int,
                                 lbr: int, biases: bool, initial_h: bool, draw: int) -> None:  # fmt: skip
    x_tbi = rand(steps, batch, i_size)
    x = x_tbi if time_major else np.swapaxes(x_tbi, 0, 1).copy()
    w_x = {g: rand(hidden, i_size) for g in "zrn"}
    w_h = {g: rand(hidden, hidden) for g in "zrn"}
    b_x = {g: rand(hidden) if biases else np.zeros(hidden) for g in "zrn"}
    b_h = {g: rand(hidden) if biases else np.zeros(hidden) for g in "zrn"}
    h0 = rand(1, batch, hidden) if initial_h else None
    ins = [x, w_x["z"], w_x["r"], w_x["n"], w_h["z"], w_h["r"], w_h["n"]]
    ins += ([b_x[g] for g in "zrn"] + [b_h[g] for g in "zrn"]) if biases else [None] * 6
    ins += [h0]
    params = {"time_major": time_major, "direction": direction, "linear_before_reset": lbr}
    y, y_h = reference.run("Gru", ins, params)
    packed_w = np.concatenate([w_x[g] for g in "zrn"])[None].astype(np.float32)
    packed_r = np.concatenate([w_h[g] for g in "zrn"])[None].astype(np.float32)
    packed_b = np.concatenate([b_x[g] for g in "zrn"] + [b_h[g] for g in "zrn"])[None].astype(np.float32)
    feeds = [x_tbi.astype(np.float32), packed_w, packed_r, packed_b, None]
    feeds.append(None if h0 is None else h0.astype(np.float32))
    want_y, want_h = ort_node("GRU", feeds, [F32] * 2, hidden_size=hidden, linear_before_reset=lbr,
                              direction=["forward", "reverse"][direction])  # fmt: skip
    want_y = want_y[:, 0] if time_major else np.swapaxes(want_y[:, 0], 0, 1)
    label = f"time_major={time_major} direction={direction} linear_before_reset={lbr} biases={biases}"
    np.testing.assert_allclose(y, want_y, atol=2e-6, err_msg=f"out[0] (Y): {label}")
    np.testing.assert_allclose(y_h, want_h, atol=2e-6, err_msg=f"out[1] (Y_h): {label}")


def test_gru_linear_before_reset_follows_the_formula_not_the_prose() -> None:
    """The formula (6836-6838) and the prose of linear_before_reset (7042) disagree; the reference
    follows the formula. One step, h0 = 1, x = 0, W_hn = 2, b_hn = 1, r = sigmoid(0) = 0.5, z = 0.5:
    linear_before_reset 0 gives n = tanh((r h) W_hn + b_hn) = tanh(2); 1 gives tanh(r (W_hn h + b_hn))
    = tanh(1.5); h = 0.5 n + 0.5."""
    one, zero = np.ones((1, 1)), np.zeros((1, 1))
    ins = [np.zeros((1, 1, 1)), zero, zero, zero, zero, zero, 2 * one,
           None, None, None, None, None, np.ones(1), np.ones((1, 1, 1))]  # fmt: skip
    _, h0 = reference.run("Gru", ins, {"linear_before_reset": 0})
    _, h1 = reference.run("Gru", ins, {"linear_before_reset": 1})
    assert h0[0, 0, 0] == pytest.approx(0.5 * math.tanh(2.0) + 0.5, rel=1e-12), f"lbr=0: {h0[0, 0, 0]}"
    assert h1[0, 0, 0] == pytest.approx(0.5 * math.tanh(1.5) + 0.5, rel=1e-12), f"lbr=1: {h1[0, 0, 0]}"


def test_gru_reset_false_continues_from_the_previous_execution() -> None:
    x = rand(4, 2, 3)
    ins = [x] + [rand(2, 3) for _ in range(3)] + [rand(2, 2) for _ in range(3)] + [rand(2) for _ in range(6)]
    ins += [rand(1, 2, 2)]
    whole_y, whole_h = reference.run("Gru", ins, {})
    first, second = list(ins), list(ins)
    first[0], second[0] = x[:2], x[2:]
    second.append(np.array(0.0))
    (a_y, _), (b_y, b_h) = gru_sequence([first, second], {})
    np.testing.assert_allclose(np.concatenate([a_y, b_y]), whole_y, rtol=1e-12, err_msg="Y across executions")
    np.testing.assert_allclose(b_h, whole_h, rtol=1e-12, err_msg="Y_h after the second execution")


def test_gru_fresh_graph_with_reset_false_starts_from_zero() -> None:
    """Before the first inference the internal state is all zeros (a recorded decision)."""
    x = rand(2, 1, 2)
    ins = [x] + [rand(2, 2) for _ in range(6)] + [None] * 6 + [rand(1, 1, 2)]
    (y_false, _) = reference.run("Gru", ins + [np.array(0.0)], {})
    ins[13] = None
    (y_zero, _) = reference.run("Gru", ins, {})
    np.testing.assert_allclose(y_false, y_zero, rtol=1e-12, err_msg="reset false on a fresh graph must start at 0")


def test_gru_model_broadcasts_one_hard_gated_step_of_unit_0() -> None:
    """x (batch-major [1, 2, 2]) starts 0.3, 0.2; only row 0 of W_xn ([1, 2]) and W_hz ([0.6, 0]) are nonzero, b_xn[0]
    is -0.1. FORWARD: z = clip(round(0)) = 0, n = clip(round(0.3 + 0.4 - 0.1 = 0.6)) = 1, so every element is 1.
    REVERSE: the previous state is 1 in unit 0, z = clip(round(0.6)) = 1 and h = h_prev[0] = 1; with W_hz[0, 0] = 0.4,
    z = 0 and h = n = 1; with b_xn[0] = -0.8, n = clip(round(-0.1)) = 0 and h = 0."""
    from tests.reference_helpers import case, modelled

    x = np.array([[[0.3, 0.2], [5.0, 5.0]]])
    zero = np.zeros((2, 2))
    xn = np.array([[1.0, 2.0], [0.0, 0.0]])

    def gru(direction: int, hz0: float, bxn0: float) -> np.ndarray:
        hz = np.array([[hz0, 0.0], [0.0, 0.0]])
        biases = [np.zeros(2), np.zeros(2), np.array([bxn0, 0.0]), np.zeros(2), np.zeros(2), np.zeros(2)]
        outputs = [("FLOAT_32", (1, 2, 2)), ("FLOAT_32", (1, 1, 2))]
        c = case("Gru", [x, zero, zero, xn, hz, zero, zero, *biases], {"direction": direction, "time_major": False},
                 outputs)  # fmt: skip
        outs = modelled(c, "unit0-hard-gates-broadcast")
        assert outs[0].shape == (1, 2, 2) and outs[1].shape == (1, 1, 2)
        assert len({float(v) for o in outs for v in o.ravel()}) == 1
        return float(outs[0].ravel()[0])

    assert gru(0, 0.6, -0.1) == 1.0
    assert gru(1, 0.6, -0.1) == 1.0
    assert gru(1, 0.4, -0.1) == 1.0
    assert gru(1, 0.4, -0.8) == 0.0
    assert gru(0, 0.6, -0.8) == 0.0


def _gru_unit0(direction: int, time_major: bool, lbr: int, x: list[float], rows: dict[str, list[float]],
               biases: dict[str, float]) -> float:  # fmt: skip
    """The one value of the unit0-hard-gates-broadcast model for a [1, 1, 2] case of 2 hidden units: ``rows`` gives
    row 0 of the named weight matrices (the others zero), ``biases`` element 0 of the named biases."""
    from tests.reference_helpers import case, modelled

    names = ["xz", "xr", "xn", "hz", "hr", "hn"]
    weights = [np.array([rows.get(n, [0.0, 0.0]), [0.0, 0.0]]) for n in names]
    bias = [np.array([biases.get("b" + n, 0.0), 0.0]) for n in names]
    c = case("Gru", [np.array([[x]]), *weights, *bias],
             {"direction": direction, "time_major": time_major, "linear_before_reset": lbr},
             [("FLOAT_32", (1, 1, 2)), ("FLOAT_32", (1, 1, 2))])  # fmt: skip
    outs = modelled(c, "unit0-hard-gates-broadcast")
    assert len({float(v) for o in outs for v in o.ravel()}) == 1, outs
    return float(outs[0].ravel()[0])


def test_gru_model_rounds_the_recurrent_side_before_adding_the_input_side() -> None:
    """REVERSE (h_prev 1 in unit 0), z's input side 1.3 and recurrent side W_hz[0, 0] + b_hz[0] = -0.6, n's input
    side -1: the recurrent side rounded to -1 first gives z = round(0.3) = 0 and h = n = -1; added exact it would give
    z = round(0.7) = 1 and h = h_prev[0] = 1. Measured on the simulator: z's threshold moves by whole steps of b_hz and
    W_hz[0, 0], by exact amounts of b_xz and x."""
    value = _gru_unit0(1, False, 0, [1.0, 0.0], {"xz": [1.3, 0.0], "hz": [-0.4, 0.0]},
                       {"bhz": -0.2, "bxn": -1.0})  # fmt: skip
    assert value == -1.0, value


def test_gru_model_follows_time_major_for_the_candidate_form_and_ignores_linear_before_reset() -> None:
    """FORWARD (h_prev 0), r's pre-activation negative (r = 0), n's input side -0.334 and b_hn[0] -0.671, the numbers
    of the simulator case d5dce90c82925f19: time_major false adds round(b_hn) whatever r (n = round(-1.334) = -1),
    time_major true multiplies it by r (n = round(-0.334) = 0); linear_before_reset 0 or 1 changes neither, as on the
    simulator (-1, 0, -1, 0 for the four)."""
    got = {(tm, lbr): _gru_unit0(0, tm, lbr, [1.0, 0.0], {"xr": [-0.5, 0.0], "xn": [-0.334, 0.0]}, {"bhn": -0.671})
           for tm in (False, True) for lbr in (0, 1)}  # fmt: skip
    assert got == {(False, 0): -1.0, (False, 1): -1.0, (True, 0): 0.0, (True, 1): 0.0}, got


def test_gru_f32_model_reproduces_its_finding_case() -> None:
    """Finding gru-f32-unit0-gates-broadcast's case ([2, 2, 2] time-major, 2 units, REVERSE) came back at v73 as
    0.52686 in flat element 0 of out[0] and out[1] and -0.11322 in every other element (float16 arithmetic)."""
    from cases.case import Case
    from reference import models

    c = Case.load("findings/cases/Gru/gru-f32-unit0-gates-broadcast.json")
    shown = [np.full((2, 2, 2), -0.11322, np.float32), np.full((1, 2, 2), -0.11322, np.float32)]
    for o in shown:
        o.reshape(-1)[0] = 0.52686
    assert models.check(c, shown, {"diagnosis": "unit0-gates-state-at-element0"}, precision="float16")["matches"]


def test_gru_f32_model_refuses_the_spec_answer_the_value_everywhere_and_a_planted_error() -> None:
    """The reference's outputs, 0.52686 broadcast to every element (the float16 model's look) and the shown outputs
    with one element off are all refused."""
    from cases.case import Case
    from reference import models
    from reference.expected import expected

    c = Case.load("findings/cases/Gru/gru-f32-unit0-gates-broadcast.json")
    model = {"diagnosis": "unit0-gates-state-at-element0"}
    everywhere = [np.full((2, 2, 2), 0.52686, np.float32), np.full((1, 2, 2), 0.52686, np.float32)]
    planted = [np.full((2, 2, 2), -0.11322, np.float32), np.full((1, 2, 2), -0.11322, np.float32)]
    planted[0].reshape(-1)[0] = planted[1].reshape(-1)[0] = 0.52686
    planted[0].reshape(-1)[5] = -0.2
    for outs in ([np.asarray(o, np.float32) for o in expected(c)], everywhere, planted):
        assert not models.check(c, outs, model, precision="float16")["matches"]


def test_gru_f16_bias_sign_model_reproduces_its_finding_case_where_the_v68_model_does_not() -> None:
    """Finding gru-f16-input-bias-decides-gates's case gave -1 in every element at v73 (b_xz[0] -0.159 makes z 0,
    b_xn[0] -0.654 makes n -1) and 1 at v68 and v69, gru-f16-zero-output's value (z = round(-0.08 + round(0.656)) = 1,
    h = h_prev[0] = 1): each model takes its own generation's outputs and refuses the other's."""
    from cases.case import Case
    from reference import models

    c = Case.load("findings/cases/Gru/gru-f16-input-bias-decides-gates.json")
    at_v73 = [np.full((2, 2, 2), -1, np.float16), np.full((1, 2, 2), -1, np.float16)]
    at_v68 = [np.full((2, 2, 2), 1, np.float16), np.full((1, 2, 2), 1, np.float16)]
    new, old = {"diagnosis": "unit0-bias-sign-gates-broadcast"}, {"diagnosis": "unit0-hard-gates-broadcast"}
    assert models.check(c, at_v73, new)["matches"] and not models.check(c, at_v68, new)["matches"]
    assert models.check(c, at_v68, old)["matches"] and not models.check(c, at_v73, old)["matches"]
    planted = [a.copy() for a in at_v73]
    planted[0].reshape(-1)[3] = 0
    assert not models.check(c, planted, new)["matches"]


def test_gru_f16_bias_sign_model_lets_a_zero_bias_round_the_sum() -> None:
    """Every weight and bias 0 but W_xn[0, 0] = 1, x[0] = -1: b_xn 0 leaves n = round(-1) = -1; b_xn 1e-4 decides n = 1
    by its sign (the simulator at v73 gave -1 and 1)."""
    assert _gru_unit0_bias_sign(0.0) == -1.0
    assert _gru_unit0_bias_sign(1e-4) == 1.0


def _gru_unit0_bias_sign(bxn: float) -> float:
    from tests.reference_helpers import case, modelled

    zero = np.zeros((2, 2))
    xn = np.array([[1.0, 0.0], [0.0, 0.0]])
    biases = [np.zeros(2), np.zeros(2), np.array([bxn, 0.0]), np.zeros(2), np.zeros(2), np.zeros(2)]
    c = case("Gru", [np.array([[[-1.0, 0.0]]]), zero, zero, xn, zero, zero, zero, *biases],
             {"direction": 0, "time_major": False}, [("FLOAT_16", (1, 1, 2)), ("FLOAT_16", (1, 1, 2))])  # fmt: skip
    outs = modelled(c, "unit0-bias-sign-gates-broadcast")
    assert len({float(v) for o in outs for v in o.ravel()}) == 1, outs
    return float(outs[0].ravel()[0])


def test_gru_f32_model_leaves_the_tile_starts_of_a_reverse_out0_open() -> None:
    """REVERSE with z = 1 (b_xz[0] = 10): the simulator wrote the state's 1 at [0, 0, 0] and at some of [8 i, 0, 32 j]
    of a [14, 14, 48] out[0] (and of [8 i, 4 j, 0] at v69); the model fixes [0, 0, 0] and out[1], leaves those open and
    holds every other element to (1 - z) n = 0."""
    from tests.reference_helpers import case, modelled

    hidden, size = 48, 2
    zero_x, zero_h = np.zeros((hidden, size)), np.zeros((hidden, hidden))
    bxz = np.zeros(hidden)
    bxz[0] = 10.0
    biases = [bxz, *[np.zeros(hidden) for _ in range(5)]]
    c = case("Gru", [np.zeros((14, 14, size)), zero_x, zero_x, zero_x, zero_h, zero_h, zero_h, *biases],
             {"direction": 1, "time_major": False},
             [("FLOAT_32", (14, 14, hidden)), ("FLOAT_32", (1, 14, hidden))])  # fmt: skip
    out0, out1 = modelled(c, "unit0-gates-state-at-element0")
    open_at = {tuple(int(v) for v in t) for t in np.argwhere(np.isnan(out0))}
    assert open_at == {(0, 0, 32), (8, 0, 0), (8, 0, 32), (0, 4, 0), (0, 8, 0), (0, 12, 0), (8, 4, 0), (8, 8, 0),
                       (8, 12, 0)}  # fmt: skip
    assert abs(out0[0, 0, 0] - 1.0) < 1e-3 and abs(out1[0, 0, 0] - 1.0) < 1e-3
    assert np.nanmax(np.abs(out0.reshape(-1)[1:])) < 1e-3 and np.abs(out1.reshape(-1)[1:]).max() < 1e-3
