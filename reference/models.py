"""Models of a deviation: what a backend with a known bug returns, so a finding covers only the cases that show it.

A finding of wrong numbers names its model (``model:`` in ``findings/<backend>.yaml``); a failing case is that
finding's only when the backend's outputs match the model within the case's own budget. A different bug in the
same cell then stays a failure: Softmax computing every beta as 1 does not match a model of "small betas off".

A model is data, read by the interpreter below, never code from a file:

    model: {params: {beta: 1.0}}          # the op computed as if these parameters held (a parameter ignored)
    model: {without: [in[2]]}             # the op computed without these optional inputs (a bias dropped)
    model: {arithmetic: float16}          # the reference's values within float16's budget (float16 arithmetic)
    model: {outputs: zeros}               # every output element 0
    model: {outputs: input-codes}         # the op moved in[0]'s stored codes, never requantized to out[0]'s grid
    model: {diagnosis: NAME}              # a named model the op's family module registers (register_model)
    model: {diagnosis: [NAME, NAME2]}     # NAME's bug with others already filed beside it, each where the case
                                          # meets its condition (the family's register_combination says how)
    model: {symptom: NAME}                # what the bug's outputs look like where which values it gives cannot be
                                          # predicted (a read past a buffer): a test of the outputs (register_symptom)

Bugs add up: a fixed-point DetectionOutput case with share_location false shows its score codes and its unshared
anchor rows at once, and no single model matches it. A diagnosis list is the first name's bug (the finding's own,
always applied) with the others where the case meets their conditions, computed by the op's family module: only
it knows how its bugs combine. A case none of the others apply to is the first model's alone.

A named model returns NaN for an element whose value the bug leaves undetermined (a kernel reading past its buffer,
a floor of an inexact reciprocal at an integral quotient): any value matches there, every other element is held to
the case's budget.

A symptom is the weakest model, for a bug measured to give outputs of one look whose values no rule found predicts
(a data movement kernel's output holding values no input element has). It is a test of the backend's outputs against
the case, still held to the case's budget, and still falsifiable: input values merely misplaced do not show it. A
symptom stays only where ``python -m bench mutants`` still kills the op's planted bugs in the typical tier: one of
"-1, 0 or 1 broadcast" for FLOAT_16 Gru was tried and withdrawn, because a Gru computing REVERSE as FORWARD gives
that look too (gru_direction_ignored went unseen in the typical tier). A finding with a symptom says so in its
reason; where a rule is found, a named model replaces it.

One symptom holds for every op, ``changes-between-runs``: the case run again (up to ``RERUNS`` times) gives
outputs that differ from the first run's beyond the case's own budget, the rerun taken as the expectation. It is the
look of a kernel reading memory it does not own (DetectionOutput's FAST NMS reading scores past in[0]), and it is
falsifiable: a deterministic backend never shows it, whatever its bug, and an element the backend leaves unwritten
does not either (the QNN adapter's output buffers start as zeros, and what the spec leaves open, such as rows past a
count, is outside the budget's comparison). It needs the backend: ``check`` is given ``rerun`` by the run
(``conformance.execute``); without it the symptom covers nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from cases.case import Case
from opdefs import dtypes

KINDS = ("params", "without", "arithmetic", "outputs", "diagnosis", "symptom")
OUTPUTS = ("zeros", "input-codes")

# op -> name -> fn(case) -> the real outputs the backend with that bug gives
_NAMED: dict[str, dict[str, Callable[[Case], list[np.ndarray]]]] = {}
# op -> fn(case, names) -> the real outputs with those named bugs at once (a diagnosis list)
_COMBINED: dict[str, Callable[[Case, list[str]], list[np.ndarray]]] = {}
# A judge of real outputs against the stored ones with the case's own budget (``reference.compare.judge`` bound to the
# case): what a symptom uses to say "within the budget of".
Judged = Callable[[list[np.ndarray]], Any]
# op -> name -> fn(case, stored outputs, judged) -> None when the outputs show the symptom, else why they do not
_SYMPTOMS: dict[str, dict[str, Callable[[Case, list[np.ndarray], Judged], str | None]]] = {}
# The backend's stored outputs of the case run once more (None: it did not run): what ``changes-between-runs`` uses.
Rerun = Callable[[], "list[np.ndarray] | None"]
CHANGES_BETWEEN_RUNS = "changes-between-runs"
# How many times ``changes-between-runs`` runs a case again before it says the outputs do not change. Why 10: on the
# 16 fixed-point FAST DetectionOutput cases with share_location false and several rows per anchor of seeds 0-4, the
# least changeable one (afa493b9be5ae0d4) differed from its first run in 2 of 7 runs, 10 runs leave it (5/7)^10 = 3%
# to stay a failure beside its finding; a deterministic case costs 10 runs, only where such a finding is near.
RERUNS = 10


class ModelError(ValueError):
    """A model that names nothing this interpreter knows."""


def register_model(*ops: str, name: str) -> Callable[[Callable[[Case], list[np.ndarray]]], Callable]:
    """A named model for a bug no generic model states (DetectionOutput decoding batch b against batch 0's
    anchors): a function of the case giving the real outputs such a backend returns."""

    def deco(fn: Callable[[Case], list[np.ndarray]]) -> Callable[[Case], list[np.ndarray]]:
        for op in ops:
            _NAMED.setdefault(op, {})[name] = fn
        return fn

    return deco


def register_combination(*ops: str) -> Callable[[Callable[[Case, list[str]], list[np.ndarray]]], Callable]:
    """How an op's named models combine (a diagnosis list): a function of the case and the names giving the real
    outputs of a backend with the first name's bug and the others where the case meets their conditions."""

    def deco(fn: Callable[[Case, list[str]], list[np.ndarray]]) -> Callable[[Case, list[str]], list[np.ndarray]]:
        for op in ops:
            _COMBINED[op] = fn
        return fn

    return deco


def register_symptom(*ops: str, name: str) -> Callable[[Callable[..., str | None]], Callable[..., str | None]]:
    """A named symptom (module docstring): a function of the case, the backend's stored outputs and the case's judge,
    giving None when the outputs look as the bug makes them, else one line saying why they do not."""

    def deco(fn: Callable[..., str | None]) -> Callable[..., str | None]:
        for op in ops:
            _SYMPTOMS.setdefault(op, {})[name] = fn
        return fn

    return deco


def key(model: dict[str, Any]) -> str:
    """The text a record keeps a model's result under: the same model always gives the same key."""
    return json.dumps(model, sort_keys=True, separators=(",", ":"))


def describe(model: dict[str, Any], op: str | None = None) -> str:
    """The model in one sentence, for a reader outside the suite (an upstream bug report): what the backend's outputs
    are instead of the spec's, within the case's own budget. A named model or symptom is told by the first sentence
    of its function's docstring, where its family module states the bug."""
    if not isinstance(model, dict) or len(model) != 1:
        return f"an unreadable model: {model!r}"
    (kind, value), = model.items()
    if kind == "params":
        held = ", ".join(f"{k} = {v}" for k, v in value.items())
        return f"The backend computes the op as if {held}, whatever the case gives."
    if kind == "without":
        return f"The backend computes the op without {', '.join(value)}, as if the input were not given."
    if kind == "arithmetic":
        return f"The backend's values are the spec's computed in {value} arithmetic."
    if kind == "outputs":
        return {"zeros": "Every output element the backend returns is 0.",
                "input-codes": "The backend moves in[0]'s stored codes into out[0] without requantizing them to "
                               "out[0]'s grid."}.get(value, f"The backend's outputs are {value}.")  # fmt: skip
    names = value if isinstance(value, list) else [value]
    if kind == "symptom" and names[0] == CHANGES_BETWEEN_RUNS:
        return "The backend's outputs for the same case change from one run to the next (a read of memory it does " \
               "not own)."
    import reference

    reference.load_families()
    table = _SYMPTOMS if kind == "symptom" else _NAMED
    fn = table.get(op or "", {}).get(str(names[0]))
    doc = " ".join((fn.__doc__ or "").split()) if fn is not None else ""
    import re

    first = re.split(r"(?<=[\w)\]])\. (?=[A-Z])", doc)[0].rstrip(".") + "." if doc else \
        f"The backend's bug named {names[0]!r}."
    return first + (f" (With {', '.join(map(str, names[1:]))} where the case meets their conditions.)"
                    if len(names) > 1 else "")  # fmt: skip


def problems(model: Any, op: str | None = None) -> list[str]:
    """What is wrong with a model as written (for lint): [] when the interpreter can read it."""
    if not isinstance(model, dict) or len(model) != 1:
        return [f"a model is one of {', '.join(KINDS)} (a mapping with one of them), not {model!r}"]
    (kind, value), = model.items()
    if kind not in KINDS:
        return [f"unknown model {kind!r} (one of {', '.join(KINDS)})"]
    if kind == "params" and not (isinstance(value, dict) and value):
        return ["model params: a mapping of parameter names to the values the backend computes with"]
    if kind == "without" and not (isinstance(value, list) and value and all(
            isinstance(v, str) and v.startswith("in[") for v in value)):  # fmt: skip
        return ["model without: a list of inputs, e.g. [in[2]]"]
    if kind == "arithmetic" and value != "float16":
        return ["model arithmetic: float16 is the one arithmetic modelled"]
    if kind == "outputs" and value not in OUTPUTS:
        return [f"model outputs: one of {', '.join(OUTPUTS)}"]
    if kind == "diagnosis":
        import reference

        names = value if isinstance(value, list) else [value]
        if not (names and all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names)):
            return ["model diagnosis: a name, or a list of different names (the finding's own first)"]
        reference.load_families()  # the family modules register their named models
        if op is None:
            return []
        for name in names:
            if name not in _NAMED.get(op, {}):
                return [f"model diagnosis: {op} registers no model {name!r} (known: {sorted(_NAMED.get(op, {}))})"]
        if isinstance(value, list) and len(names) > 1 and op not in _COMBINED:
            return [f"model diagnosis: {op} registers no combination of its models (register_combination)"]
    if kind == "symptom":
        import reference

        if not (isinstance(value, str) and value):
            return ["model symptom: the name of a symptom the op's family registers (register_symptom)"]
        reference.load_families()
        if op is not None and value != CHANGES_BETWEEN_RUNS and value not in _SYMPTOMS.get(op, {}):
            return [f"model symptom: {op} registers no symptom {value!r} (known: {sorted(_SYMPTOMS.get(op, {}))})"]
    return []


def check(case: Case, actual: list[np.ndarray], model: dict[str, Any], op_tolerance: dict | None = None,
          accumulation: float | None = None, precision: str | None = None,
          rerun: Rerun | None = None) -> dict[str, Any]:  # fmt: skip
    """Whether a backend's stored outputs are what the model says, within the case's own budget:
    ``{"matches": bool, "message": ..., "max_steps"/...}``; ``{"matches": False, "error": ...}`` where the model
    cannot be computed for this case (it then covers nothing). ``rerun`` runs the case again on the backend, for
    ``changes-between-runs``."""
    from reference.compare import judge

    bad = problems(model, case.op)
    if bad:
        return {"matches": False, "error": bad[0]}
    (kind, value), = model.items()
    if kind == "symptom":
        def judged(expected: list[np.ndarray]) -> Any:
            return judge(case, expected, actual, op_tolerance, accumulation, precision=precision)

        if value == CHANGES_BETWEEN_RUNS:
            return _changes_between_runs(case, judged, rerun)
        try:
            why = _SYMPTOMS[case.op][value](case, actual, judged)
        except Exception as e:  # noqa: BLE001 - a symptom that cannot be tested on this case does not cover it
            return {"matches": False, "error": f"{type(e).__name__}: {e}"[:300]}
        return {"matches": True} if why is None else {"matches": False, "message": why[:300]}
    try:
        if kind == "arithmetic":
            expected, precision = _reference(case), "float16"
        else:
            expected = _modelled(case, kind, value)
        if kind == "diagnosis":  # NaN: a value the bug leaves undetermined (module docstring)
            op_tolerance = {**(op_tolerance or {}), "nan_means_any": True}
        j = judge(case, expected, actual, op_tolerance, accumulation, precision=precision)
    except Exception as e:  # noqa: BLE001 - a model that cannot be computed for this case does not cover it
        return {"matches": False, "error": f"{type(e).__name__}: {e}"[:300]}
    out: dict[str, Any] = {"matches": bool(j.passed) and j.checked > 0}  # a model that checks nothing says nothing
    if not j.passed:
        out["message"] = j.message[:300]
    for k in ("max_steps", "max_abs_err", "mismatches"):
        if k in j.metrics:
            out[k] = j.metrics[k]
    return out


def _changes_between_runs(case: Case, judged: Judged, rerun: Rerun | None) -> dict[str, Any]:
    """The ``changes-between-runs`` symptom (module docstring): each rerun's outputs as the expectation of the first
    run's, judged with the case's budget; the first that fails shows the symptom."""
    if rerun is None:
        return {"matches": False, "error": f"{CHANGES_BETWEEN_RUNS} needs the backend to run the case again"}
    for k in range(1, RERUNS + 1):
        try:
            again = rerun()
        except Exception as e:  # noqa: BLE001 - a rerun that fails is no second output to compare
            return {"matches": False, "error": f"run {k + 1}: {type(e).__name__}: {e}"[:300]}
        if again is None:
            return {"matches": False, "error": f"run {k + 1} of the case did not complete"}
        j = judged(real_outputs(case, again))
        if not j.passed:
            return {"matches": True, "runs": k + 1, "message": f"run {k + 1} differs from run 1: {j.message}"[:300]}
    return {"matches": False, "runs": RERUNS + 1,
            "message": f"{RERUNS + 1} runs gave the same outputs within the budget: no sign of a read past a buffer"}


def real_outputs(case: Case, stored: list[np.ndarray]) -> list[np.ndarray]:
    """The real values of a backend's stored outputs (codes through their encodings), for a symptom to compare."""
    from cases.quant import dequantize

    return [dequantize(a, t.encoding) if t.encoding is not None and dtypes.get(t.dtype).quantized
            else np.asarray(a, dtype=np.float64)
            for a, t in zip(stored, case.outputs_per_execution, strict=True)]  # fmt: skip


def nearest_of(pool: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each of ``values`` replaced by the element of ``pool`` nearest to it (NaN where the pool has no finite value):
    judged against the backend's outputs, "every value is one the pool holds, within the budget"."""
    flat = np.sort(np.asarray(pool, dtype=np.float64).ravel())
    flat = flat[np.isfinite(flat)]
    v = np.asarray(values, dtype=np.float64)
    if flat.size == 0:
        return np.full(v.shape, np.nan)
    hi = np.clip(np.searchsorted(flat, v), 0, flat.size - 1)
    lo = np.clip(hi - 1, 0, flat.size - 1)
    with np.errstate(invalid="ignore"):
        out = np.where(np.abs(flat[lo] - v) <= np.abs(flat[hi] - v), flat[lo], flat[hi])
    return np.where(np.isfinite(v), out, v)


def _reference(case: Case) -> list[np.ndarray]:
    from reference.expected import expected

    return expected(case)


def _modelled(case: Case, kind: str, value: Any) -> list[np.ndarray]:
    from cases.case import Param

    if kind == "params":
        params = dict(case.params)
        for name, v in value.items():
            old = params.get(name)
            kind_ = old.dtype if old is not None else _param_dtype(case.op, name)
            params[name] = Param(name, kind_, np.asarray(v) if isinstance(v, list) else v)
        return _reference(replace(case, params=params))
    if kind == "without":
        inputs = list(case.inputs)
        for ref in value:
            i = int(ref[3:-1])
            if i < len(inputs):
                inputs[i] = None
        while inputs and inputs[-1] is None:
            inputs.pop()
        return _reference(replace(case, inputs=inputs))
    if kind == "outputs" and value == "zeros":
        return [np.zeros(t.shape) for t in case.outputs]
    if kind == "outputs" and value == "input-codes":
        return _input_codes(case)
    import reference

    reference.load_families()
    if isinstance(value, list) and len(value) > 1:
        return _COMBINED[case.op](case, list(value))
    return _NAMED[case.op][value[0] if isinstance(value, list) else value](case)


def _input_codes(case: Case) -> list[np.ndarray]:
    """The op run on in[0]'s stored codes as if they were the values, its result read through out[0]'s encoding:
    what a data movement kernel returns when it copies codes between two grids without requantizing. Only quantized
    tensors are read as their codes: a BOOL_8 condition or an INT_32 index is the same value either way."""
    from cases.quant import dequantize

    coded = [t if t is None or not dtypes.get(t.dtype).quantized else
             replace(t, dtype=_float_of(t.dtype), data=t.data.astype(np.float32), encoding=None)
             for t in case.inputs]  # fmt: skip
    outs = [replace(t, dtype=_float_of(t.dtype), encoding=None) if dtypes.get(t.dtype).quantized else t
            for t in case.outputs]  # fmt: skip
    moved = _reference(replace(case, inputs=coded, outputs=outs))
    return [dequantize(m, t.encoding) if t.encoding is not None else m for m, t in zip(moved, case.outputs,
                                                                                        strict=False)]  # fmt: skip


def _float_of(dtype: str) -> str:
    return "FLOAT_32" if dtypes.get(dtype).quantized else dtype


def _param_dtype(op: str, name: str) -> str:
    import opdefs

    return opdefs.load(op).params[name]["dtype"]
