"""Recurrent layers: Lstm (MasterOpDef 8194-8734) and Gru (6821-7084).

Both ops are stateful across executions when their reset input is false: the state a graph keeps
between inferences is modelled explicitly. ``lstm_sequence`` / ``gru_sequence`` run a list of
executions and carry the state; the registered single-execution form is the first execution of a
freshly built graph, whose internal state is all zeros (the spec never says what it holds before
the first inference). With the default reset = true the single form is exact and needs no history.

Everything is computed in float64 on the real values. The quantization parameters of Lstm
(``*_qscale``, ``hidden_state_offset``) describe how a quantized backend stores intermediates; the
reference ignores them, and the tolerance absorbs the intermediate rounding they cause.

Gate equations are the spec's; shapes follow it: weights are [units, inputs] and act on a column
vector (``W x``), so for a batch of row vectors a gate term is ``x @ W.T``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from reference import member, register, register_sequence, resolved
from reference.models import register_model

FORWARD, REVERSE = "FORWARD", "REVERSE"  # direction members, as the spec names them
# Layer normalization inside Lstm: the spec names the weights but gives no epsilon; NNAPI's LSTM
# (the op the spec cites, 8311) and TFLite's kernel use 1e-8 inside the square root.
LSTM_LAYER_NORM_EPSILON = 1e-8
N_LSTM_INPUTS = 25
N_LSTM_MANDATORY_OUTPUTS = 3
N_GRU_INPUTS = 15


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function written through tanh: no overflow warning for large |x|."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _flag(v: Any, default: bool) -> bool:
    """A BOOL_8 scalar input or param arrives as an array, a bool or a number: non-zero is true."""
    if v is None:
        return default
    return bool(np.asarray(v).reshape(-1)[0] != 0)


def _pad(inputs: list[np.ndarray | None], n: int) -> list[np.ndarray | None]:
    ins = list(inputs) + [None] * (n - len(inputs))
    if len(ins) > n:
        raise ValueError(f"{len(ins)} inputs given, the op has {n}")
    return [None if a is None else np.asarray(a, dtype=np.float64) for a in ins]


def _to_time_major(x: np.ndarray, time_major: bool) -> np.ndarray:
    return x if time_major else np.swapaxes(x, 0, 1)


# ---- Lstm -----------------------------------------------------------------------------------


@dataclass
class LstmWeights:
    """The 24 weight inputs of Lstm sorted into groups; absent groups are None."""

    w_x: dict[str, np.ndarray]  # gate -> [num_units, input_size]; "i" absent under CIFG
    w_h: dict[str, np.ndarray]  # gate -> [num_units, output_size]
    bias: dict[str, np.ndarray]  # gate -> [num_units]
    peephole: dict[str, np.ndarray]  # gate -> [num_units]; empty without peephole
    layer_norm: dict[str, np.ndarray]  # gate -> [num_units]; empty without layer normalization
    w_proj: np.ndarray | None
    b_proj: np.ndarray | None

    @property
    def cifg(self) -> bool:
        return "i" not in self.w_x

    @property
    def num_units(self) -> int:
        return int(self.w_x["f"].shape[0])

    @property
    def output_size(self) -> int:
        return int(self.w_h["f"].shape[1])


def _all_or_none(ins: list[np.ndarray | None], idx: list[int], what: str) -> bool:
    present = [ins[i] is not None for i in idx]
    if any(present) and not all(present):
        given = [f"in[{i}]" for i, p in zip(idx, present, strict=True) if p]
        raise ValueError(f"{what}: in{idx} must all be given or all be absent, only {given} are")
    return all(present)


def lstm_weights(ins: list[np.ndarray | None]) -> LstmWeights:
    """Sort the inputs into groups and refuse the combinations the spec's prose forbids (8290-8309)."""
    has_input_gate = _all_or_none(ins, [16, 17, 21], "input gate (CIFG when absent)")
    peephole = _all_or_none(ins, [19, 20], "peephole (cell-to-forget and cell-to-output)")
    if peephole and has_input_gate and ins[18] is None:
        raise ValueError("peephole without CIFG needs the cell-to-input weights in[18]")
    if ins[18] is not None and not (peephole and has_input_gate):
        raise ValueError("cell-to-input weights in[18] are allowed only with peephole and without CIFG")
    layer_norm = _all_or_none(ins, [13, 14, 15], "layer normalization weights")
    if has_input_gate and layer_norm and ins[12] is None:
        raise ValueError("layer normalization without CIFG needs the input-gate weights in[12]")
    if ins[12] is not None and not (has_input_gate and layer_norm):
        raise ValueError("input layer normalization weights in[12] need the other three and no CIFG")
    if ins[23] is not None and ins[22] is None:
        raise ValueError("projection bias in[23] without projection weights in[22]")
    gates = ["i", "f", "c", "o"] if has_input_gate else ["f", "c", "o"]
    w_x = {"f": ins[1], "c": ins[2], "o": ins[3]}
    w_h = {"f": ins[4], "c": ins[5], "o": ins[6]}
    bias = {"f": ins[7], "c": ins[8], "o": ins[9]}
    if has_input_gate:
        w_x["i"], w_h["i"], bias["i"] = ins[16], ins[17], ins[21]
    pp = {"f": ins[19], "o": ins[20]} if peephole else {}
    if peephole and has_input_gate:
        pp["i"] = ins[18]
    ln_inputs = {"i": ins[12], "f": ins[13], "c": ins[14], "o": ins[15]}
    ln = {g: ln_inputs[g] for g in gates} if layer_norm else {}
    w = LstmWeights(w_x, w_h, bias, pp, ln, ins[22], ins[23])
    n, p = w.num_units, w.output_size
    if w.w_proj is None and p != n:
        raise ValueError(f"without projection output_size ({p}) must equal num_units ({n})")
    if w.w_proj is not None and w.w_proj.shape != (p, n):
        raise ValueError(f"projection weights {w.w_proj.shape} != [output_size, num_units] = {[p, n]}")
    return w


@dataclass
class LstmStep:
    """One time step's state and the intermediates the optional outputs 3..7 report."""

    h: np.ndarray  # [batch, output_size]
    c: np.ndarray  # [batch, num_units]
    gates: dict[str, np.ndarray]  # "i", "f", "c" (the candidate, after tanh), "o"
    hidden: np.ndarray  # o * tanh(C): the input of the projection


def _layer_norm(a: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    mean = a.mean(axis=-1, keepdims=True)
    var = ((a - mean) ** 2).mean(axis=-1, keepdims=True)
    return (a - mean) / np.sqrt(var + LSTM_LAYER_NORM_EPSILON) * gamma


def lstm_step(w: LstmWeights, x: np.ndarray, h: np.ndarray, c: np.ndarray, cell_clip: float,
              proj_clip: float) -> LstmStep:  # fmt: skip
    """The spec's equations (8205-8214) for one step of a batch; layer normalization acts on the
    matrix-product sum (the ``*_gate_qscale`` params name exactly that sum as its input) and the
    gate bias is added after it, as in NNAPI's layer-normalized LSTM."""

    def pre(g: str, cell: np.ndarray | None) -> np.ndarray:
        a = x @ w.w_x[g].T + h @ w.w_h[g].T
        if cell is not None and g in w.peephole:
            a = a + cell * w.peephole[g]
        if w.layer_norm:
            a = _layer_norm(a, w.layer_norm[g])
        return a + w.bias[g]

    f = sigmoid(pre("f", c))
    i = 1.0 - f if w.cifg else sigmoid(pre("i", c))
    g = np.tanh(pre("c", None))
    c_new = f * c + i * g
    if cell_clip > 0:
        c_new = np.clip(c_new, -cell_clip, cell_clip)
    o = sigmoid(pre("o", c_new))
    hidden = o * np.tanh(c_new)
    if w.w_proj is None:
        h_new = hidden
    else:
        h_new = hidden @ w.w_proj.T
        if w.b_proj is not None:
            h_new = h_new + w.b_proj
        if proj_clip > 0:
            h_new = np.clip(h_new, -proj_clip, proj_clip)
    return LstmStep(h_new, c_new, {"i": i, "f": f, "c": g, "o": o}, hidden)


def _threshold(params: dict[str, Any], name: str) -> float:
    t = float(params.get(name) or 0.0)
    if t < 0:
        raise ValueError(f"{name} = {t}: the clipping interval [-t, t] is empty for a negative threshold")
    return t


def lstm_execute(ins: list[np.ndarray | None], params: dict[str, Any], n_outputs: int = N_LSTM_MANDATORY_OUTPUTS,
                 state: tuple[np.ndarray, np.ndarray] | None = None,
                 ) -> tuple[list[np.ndarray], tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """One execution of Lstm. ``state`` is the (h, C) the graph kept from the previous execution
    (None: a fresh graph, all zeros); it is used only for a 3-D input whose reset is false.
    Returns the outputs and the state the graph keeps afterwards."""
    ins = _pad(ins, N_LSTM_INPUTS)
    w = lstm_weights(ins)
    x = ins[0]
    if x is None or x.ndim not in (2, 3):
        raise ValueError("in[0] must be 2-D or 3-D")
    time_major = _flag(params.get("time_major"), True)
    direction = member("Lstm", resolved("Lstm", params, []), "direction")  # sequences pass raw params
    cell_clip = _threshold(params, "cell_clip_threshold")
    proj_clip = _threshold(params, "output_clip_threshold")
    steps = x[None] if x.ndim == 2 else _to_time_major(x, time_major)
    n_steps, batch = steps.shape[0], steps.shape[1]
    n, p = w.num_units, w.output_size
    h0 = np.zeros((batch, p)) if ins[10] is None else ins[10].reshape(batch, p)
    c0 = np.zeros((batch, n)) if ins[11] is None else ins[11].reshape(batch, n)
    if x.ndim == 3 and not _flag(ins[24], True):
        h0, c0 = state if state is not None else (np.zeros((batch, p)), np.zeros((batch, n)))
    order = range(n_steps) if direction == FORWARD else range(n_steps - 1, -1, -1)
    hs = np.zeros((n_steps, batch, p))
    h, c = h0, c0
    last: LstmStep | None = None
    for t in order:
        last = lstm_step(w, steps[t], h, c, cell_clip, proj_clip)
        h, c = last.h, last.c
        hs[t] = h
    assert last is not None
    out0 = hs[0] if x.ndim == 2 else _to_time_major(hs, time_major)
    outs = [out0, last.c, last.h]
    optional = [last.gates["i"], last.gates["f"], last.gates["c"], last.gates["o"], last.hidden]
    outs += optional[: max(0, n_outputs - N_LSTM_MANDATORY_OUTPUTS)]
    return outs, (h, c)


@register("Lstm", verified_by="onnxruntime")
def lstm(inputs, params, out_shapes, out_dtypes, *, op):
    """Outputs 3..7 (gate values of the last step) only when the case declares them: their meaning
    is a recorded decision, and cases that do not declare them do not depend on it."""
    n_out = len(out_shapes) if out_shapes else N_LSTM_MANDATORY_OUTPUTS
    outs, _ = lstm_execute(inputs, params, n_out)
    return outs


@register_sequence("Lstm")
def lstm_executions(executions, params, out_shapes, out_dtypes, *, op):
    return lstm_sequence(executions, params, len(out_shapes) if out_shapes else N_LSTM_MANDATORY_OUTPUTS)


def lstm_sequence(executions: list[list[np.ndarray | None]], params: dict[str, Any],
                  n_outputs: int = N_LSTM_MANDATORY_OUTPUTS) -> list[list[np.ndarray]]:  # fmt: skip
    """Outputs of consecutive executions of one Lstm graph: a 3-D execution with reset false starts
    from the state the previous execution left (the first one from zeros)."""
    state: tuple[np.ndarray, np.ndarray] | None = None
    results = []
    for ins in executions:
        outs, state = lstm_execute(ins, params, n_outputs, state)
        results.append(outs)
    return results


# ---- Gru ------------------------------------------------------------------------------------


def gru_step(x: np.ndarray, h: np.ndarray, w: dict[str, np.ndarray], linear_before_reset: bool) -> np.ndarray:
    """The spec's equations (6832-6840). With linear_before_reset = 0 the reset gate scales h before
    the recurrent product (ONNX's default GRU); otherwise it scales the product plus b_hn."""
    r = sigmoid(x @ w["xr"].T + h @ w["hr"].T + w["bxr"] + w["bhr"])
    z = sigmoid(x @ w["xz"].T + h @ w["hz"].T + w["bxz"] + w["bhz"])
    if linear_before_reset:
        n = np.tanh(x @ w["xn"].T + r * (h @ w["hn"].T + w["bhn"]) + w["bxn"])
    else:
        n = np.tanh(x @ w["xn"].T + (r * h) @ w["hn"].T + w["bxn"] + w["bhn"])
    return (1.0 - z) * n + z * h


def gru_execute(ins: list[np.ndarray | None], params: dict[str, Any], state: np.ndarray | None = None,
                ) -> tuple[list[np.ndarray], np.ndarray]:  # fmt: skip
    """One execution of Gru; ``state`` is the h the graph kept from the previous execution."""
    ins = _pad(ins, N_GRU_INPUTS)
    x = ins[0]
    if x is None or x.ndim != 3:
        raise ValueError("in[0] must be 3-D")
    time_major = _flag(params.get("time_major"), True)
    direction = member("Gru", resolved("Gru", params, []), "direction")
    lbr = int(params.get("linear_before_reset") or 0) != 0
    steps = _to_time_major(x, time_major)
    n_steps, batch = steps.shape[0], steps.shape[1]
    hidden = ins[1].shape[0]
    zero = np.zeros(hidden)
    w = {"xz": ins[1], "xr": ins[2], "xn": ins[3], "hz": ins[4], "hr": ins[5], "hn": ins[6]}
    for k, name in enumerate(["bxz", "bxr", "bxn", "bhz", "bhr", "bhn"]):
        w[name] = zero if ins[7 + k] is None else ins[7 + k]
    h = np.zeros((batch, hidden)) if ins[13] is None else ins[13].reshape(batch, hidden)
    if not _flag(ins[14], True):
        h = state if state is not None else np.zeros((batch, hidden))
    order = range(n_steps) if direction == FORWARD else range(n_steps - 1, -1, -1)
    ys = np.zeros((n_steps, batch, hidden))
    for t in order:
        h = gru_step(steps[t], h, w, lbr)
        ys[t] = h
    return [_to_time_major(ys, time_major), h[None]], h


@register("Gru", verified_by="onnxruntime")
def gru(inputs, params, out_shapes, out_dtypes, *, op):
    outs, _ = gru_execute(inputs, params)
    return outs


@register_sequence("Gru")
def gru_executions(executions, params, out_shapes, out_dtypes, *, op):
    return gru_sequence(executions, params)


def gru_sequence(executions: list[list[np.ndarray | None]], params: dict[str, Any]) -> list[list[np.ndarray]]:
    """Outputs of consecutive executions of one Gru graph (state carried where reset is false)."""
    state: np.ndarray | None = None
    results = []
    for ins in executions:
        outs, state = gru_execute(ins, params, state)
        results.append(outs)
    return results


def _hard(pre: float, low: float) -> float:
    """A gate the HTP simulator's FLOAT_16 Gru rounds: the pre-activation rounded to an integer (half to even), clipped
    to the gate's range (a sigmoid to [0, 1], a tanh to [-1, 1])."""
    return float(np.clip(np.round(pre), low, 1.0))


@register_model("Gru", name="unit0-hard-gates-broadcast")
def gru_unit0_hard_gates_broadcast(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 Gru without an initial state (finding gru-f16-zero-output): every execution writes
    one value to every element of out[0] and out[1], one step of hidden unit 0 on the first input vector in memory
    (in[0] flat elements 0 .. input_size - 1), from row 0 of each weight matrix and element 0 of each bias, measured
    gate by gate on the simulator (threshold sweeps of one bias or weight at a time):

    - each gate's input side (W_x[0] . x + b_x[0]) is exact, its recurrent side (W_h[0] . h + b_h[0]) is rounded to an
      integer before the two are added, and the sum is rounded and clipped (z, r to [0, 1], n to [-1, 1]);
    - the candidate's form follows time_major, not linear_before_reset: time_major true gives n = x side + r *
      round(W_hn[0] . h + b_hn[0]) (the linear-before-reset form), false gives n = x side + round((r h) . W_hn[0] +
      b_hn[0]); linear_before_reset changes nothing;
    - the previous state is 0 with FORWARD and 1 in unit 0 (0 elsewhere) with REVERSE: h = (1 - z) n + z h_prev[0]."""
    return _unit0_broadcast(case, lambda wx, bx, recurrent: wx + bx + recurrent)


@register_model("Gru", name="unit0-bias-sign-gates-broadcast")
def gru_unit0_bias_sign_gates_broadcast(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_16 Gru at v73 and later (finding gru-f16-input-bias-decides-gates): unit0-hard-gates-
    broadcast's one value, except that a gate whose input-side bias b_x[0] is not 0 is decided by that bias's sign
    alone (z, r: 1 or 0; n: 1 or -1), as if it were scaled without bound: measured with every weight and bias 0 but
    one, b_xn 1e-4 outweighs W_xn[0, 0] x = -100, b_xz 0.01 and -0.01 give z = 1 and 0 whatever b_hz (-1.6 to 1.6).
    A gate whose b_x[0] is 0 is the rounded sum as before."""
    return _unit0_broadcast(case, lambda wx, bx, recurrent: np.copysign(np.inf, bx) if bx else wx + recurrent)


def _unit0_step(case: Any, k: int) -> tuple[dict[str, Any], np.ndarray, list[np.ndarray], list[float], np.ndarray]:
    """What one step of hidden unit 0 reads in execution ``k`` (the HTP's Gru models): the resolved params, the first
    input vector, row 0 of each weight matrix (xz, xr, xn, hz, hr, hn), element 0 of each bias, and the previous state
    (0, or 1 in unit 0 with REVERSE)."""
    from reference.expected import _real_inputs

    ins = _pad(_real_inputs(case.step_inputs(k)), N_GRU_INPUTS)
    params = resolved("Gru", {n: p.value for n, p in case.params.items()}, ins)
    hidden, size = np.shape(ins[1])
    x = np.asarray(ins[0], dtype=np.float64).reshape(-1)[:size]
    w = [np.asarray(ins[i], dtype=np.float64)[0] for i in range(1, 7)]
    b = [0.0 if ins[i] is None else float(np.asarray(ins[i]).reshape(-1)[0]) for i in range(7, 13)]
    h = np.zeros(hidden)
    if member("Gru", params, "direction") == REVERSE:
        h[0] = 1.0
    return params, x, w, b, h


def _unit0_broadcast(case: Any, pre: Any) -> list[np.ndarray]:
    """One step of hidden unit 0 as unit0-hard-gates-broadcast describes it, each gate rounded and clipped from
    ``pre(W_x[0] . x, b_x[0], the rounded recurrent side)``, its value written to every element of every output of
    each execution."""
    outs: list[np.ndarray] = []
    for k in range(case.executions):
        params, x, w, b, h = _unit0_step(case, k)
        r = _hard(pre(w[1] @ x, b[1], np.round(w[4] @ h + b[4])), 0.0)
        z = _hard(pre(w[0] @ x, b[0], np.round(w[3] @ h + b[3])), 0.0)
        if _flag(params.get("time_major"), True):
            n = _hard(pre(w[2] @ x, b[2], r * np.round(w[5] @ h + b[5])), -1.0)
        else:
            n = _hard(pre(w[2] @ x, b[2], np.round((r * h) @ w[5] + b[5])), -1.0)
        value = (1.0 - z) * n + z * h[0]
        outs += [np.full(t.shape, value) for t in case.outputs]
    return outs


def _sigmoid(v: float) -> float:
    return float(0.5 * (1.0 + np.tanh(0.5 * v)))  # 1 / (1 + e^-v) without overflow


@register_model("Gru", name="unit0-gates-state-at-element0")
def gru_unit0_gates_state_at_element0(case: Any) -> list[np.ndarray]:
    """The HTP simulator's FLOAT_32 Gru after v68 (finding gru-f32-unit0-gates-broadcast): the gates of one step of
    hidden unit 0 on the first input vector in memory, as gru-f16-zero-output's model reads them (row 0 of each weight
    matrix, element 0 of each bias; the previous state 0 with FORWARD, 1 in unit 0 with REVERSE; the candidate's form
    follows time_major, not linear_before_reset), but with the spec's sigmoid and tanh instead of rounded gates. Every
    element of out[0] and out[1] of each execution is (1 - z) n, and flat element 0 of each adds z h_prev[0]: the
    previous state's term lands on the first element only, and with REVERSE perhaps on other tile starts of out[0]: the
    elements [8 i, 0, 32 j] and [8 i, 4 j, 0] are open (NaN), since which of them take it depends on how the backend
    splits the op, per generation (measured with z = 1: at v73 all 9 [8 i, 0, 32 j] of a [17, 17, 96] out[0], none past
    [0, 0, 0] of a [9, 3, 40] one, [8, 0, 0] but not [0, 0, 32] of a [16, 2, 64] one; at v69 [8 i, 4 j, 0] of a [14,
    14, 48] one; never another element, and only [0, 0, 0] of out[1]). Executions after the first
    are open too: each starts from the state the previous one left in memory, and two runs of one case differ there
    (4.05 and 0.99 where the first execution's rule gives 0.97 and 0.81, at v79 and v81)."""
    outs: list[np.ndarray] = []
    for k in range(case.executions):
        params, x, w, b, h = _unit0_step(case, k)
        r = _sigmoid(w[1] @ x + b[1] + w[4] @ h + b[4])
        z = _sigmoid(w[0] @ x + b[0] + w[3] @ h + b[3])
        if _flag(params.get("time_major"), True):
            n = float(np.tanh(w[2] @ x + b[2] + r * (w[5] @ h + b[5])))
        else:
            n = float(np.tanh(w[2] @ x + b[2] + (r * h) @ w[5] + b[5]))
        for i, t in enumerate(case.outputs):
            out = np.full(t.shape, (1.0 - z) * n if k == 0 else np.nan)
            if i == 0 and h[0] and out.ndim == 3:  # tile starts that may hold the state's 1 as well
                out[::8, 0, ::32] = out[::8, ::4, 0] = np.nan
            out.reshape(-1)[0] = (1.0 - z) * n + z * h[0] if k == 0 else np.nan
            outs.append(out)
    return outs
