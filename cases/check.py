"""Evaluate an op's checkable constraints on a concrete Case.

This is the same evaluator lint validates expressions for; generation uses it to accept cases and
negative-case construction uses it to prove a mutation breaks exactly one constraint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from cases.case import Case, Tensor
from opdefs import OpDef, expr

TRUE, FALSE, UNKNOWN = "true", "false", "unknown"


def tensor_info(t: Tensor | None, with_data: bool = True) -> expr.TensorInfo:
    if t is None:
        return expr.TensorInfo((), "", present=False)
    data = t.data if with_data and t.data is not None and t.encoding is None else None
    return expr.TensorInfo(tuple(t.shape), t.dtype, data)


def environment(op: OpDef, case: Case) -> dict[str, Any]:
    """Names an expression may use, bound from the case: tensors, params, dims, rank symbols, enums."""
    env: dict[str, Any] = dict(op.enum_names())
    env["_in"] = [tensor_info(t) for t in case.inputs]
    env["_out"] = [tensor_info(t) for t in case.outputs]
    absent = []
    defaults = op.param_defaults()
    for name in op.params:
        if name in case.params:
            env[name] = case.params[name].value
        else:
            absent.append(name)
            if name in defaults:
                env[name] = defaults[name]
    env["__absent__"] = tuple(absent)
    # dims and rank symbols: the first tensor (inputs, then outputs) that declares one binds it
    for decl, t in _declared_tensors(op, case):
        if t is None:
            continue
        sh = decl.get("shape") or {}
        r = sh.get("rank")
        if isinstance(r, str) and r.isidentifier() and r not in env:
            env[r] = len(t.shape)
        dims = sh.get("dims") or []
        tail = sh.get("trailing") or []
        if tail and not dims and len(tail) <= len(t.shape):  # [.., channel]: the last dims are named
            dims = [None] * (len(t.shape) - len(tail)) + list(tail)
        if len(dims) == len(t.shape):
            for d, size in zip(dims, t.shape, strict=True):
                if isinstance(d, str) and d.isidentifier() and d not in env:
                    env[d] = int(size)
    for name, p in op.params.items():  # "[M]"-shaped params bind M to their length
        dims = (p.get("shape") or {}).get("dims") or []
        if len(dims) == 1 and isinstance(dims[0], str) and re.fullmatch(r"[A-Z]", dims[0]) and name in env:
            env.setdefault(dims[0], int(np.asarray(env[name]).size))
    k, v = expr.function_binding("num_inputs", lambda: sum(t is not None for t in case.inputs))
    env[k] = v
    k, v = expr.function_binding("num_outputs", lambda: len(case.outputs))
    env[k] = v
    return env


def _declared_tensors(op: OpDef, case: Case) -> list[tuple[dict, Tensor | None]]:
    out: list[tuple[dict, Tensor | None]] = []
    for decls, tensors in ((op.inputs, case.inputs), (op.outputs, case.outputs)):
        for decl in decls:
            first = int(re.match(r"^\w+\[(\d+)", decl["name"]).group(1))
            out.append((decl, tensors[first] if first < len(tensors) else None))
    return out


@dataclass
class Result:
    constraint_id: str
    status: str  # TRUE / FALSE / UNKNOWN
    why: str = ""


def evaluate(op: OpDef, case: Case, constraints: list | None = None) -> list[Result]:
    """Every checkable constraint of the op (or of ``constraints``, a subset) on the case."""
    env = environment(op, case)
    out = []
    for c in op.constraints if constraints is None else constraints:
        if c.check is None:
            continue
        owner_absent = _owner_absent(op, case, c.owner)
        if owner_absent:
            out.append(Result(c.id, TRUE, "constrained tensor or parameter absent"))
            continue
        try:
            out.append(Result(c.id, TRUE if expr.holds(c.check, env) else FALSE))
        except expr.EvalError as e:
            out.append(Result(c.id, UNKNOWN, str(e)))
    return out


def _owner_absent(op: OpDef, case: Case, owner: str) -> bool:
    m = re.match(r"^(in|out)\[(\d+)", owner)
    if m:
        seq = case.inputs if m.group(1) == "in" else case.outputs
        i = int(m.group(2))
        return i >= len(seq) or seq[i] is None
    return False


def violations(op: OpDef, case: Case, constraints: list | None = None) -> list[str]:
    return [r.constraint_id for r in evaluate(op, case, constraints) if r.status == FALSE]
