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
    plan = _plan(op)
    env: dict[str, Any] = dict(op.enum_names())
    env["_in"] = [tensor_info(t) for t in case.inputs]
    env["_out"] = [tensor_info(t) for t in case.outputs]
    absent = []
    for name in plan.params:
        if name in case.params:
            env[name] = case.params[name].value
        else:
            absent.append(name)
            if name in plan.defaults:
                env[name] = plan.defaults[name]
    env["__absent__"] = tuple(absent)
    # dims and rank symbols: the first tensor (inputs, then outputs) that declares one binds it
    for is_input, first, rank, dims, tail in plan.declared:
        tensors = case.inputs if is_input else case.outputs
        t = tensors[first] if first < len(tensors) else None
        if t is None:
            continue
        if rank is not None and rank not in env:
            env[rank] = len(t.shape)
        if tail and not dims and len(tail) <= len(t.shape):  # [.., channel]: the last dims are named
            dims = [None] * (len(t.shape) - len(tail)) + tail
        if len(dims) == len(t.shape):
            for d, size in zip(dims, t.shape, strict=True):
                if isinstance(d, str) and d.isidentifier() and d not in env:
                    env[d] = int(size)
    for name, letter in plan.length_dims:  # "[M]"-shaped params bind M to their length
        if name in env:
            env.setdefault(letter, int(np.asarray(env[name]).size))
    k, v = expr.function_binding("num_inputs", lambda: sum(t is not None for t in case.inputs))
    env[k] = v
    k, v = expr.function_binding("num_outputs", lambda: len(case.outputs))
    env[k] = v
    return env


@dataclass(frozen=True)
class _Plan:
    """What ``environment`` reads from the spec, worked out once per op: it runs several times per draw."""

    params: tuple[str, ...]
    defaults: dict[str, Any]
    declared: tuple[tuple[bool, int, str | None, list, list], ...]  # (input?, first index, rank symbol, dims, trailing)
    length_dims: tuple[tuple[str, str], ...]
    owners: dict[str, tuple[bool, int] | None]  # constraint owner -> (input?, index) when it names a tensor


def _plan(op: OpDef) -> _Plan:
    return op._once("check.plan", lambda: _make_plan(op))


def _make_plan(op: OpDef) -> _Plan:
    declared = []
    for is_input, decls in ((True, op.input_specs), (False, op.output_specs)):
        for decl in decls:
            first = decl.first_index
            sh = decl.shape
            r = sh.get("rank")
            rank = r if isinstance(r, str) and r.isidentifier() else None
            declared.append((is_input, first, rank, list(sh.get("dims") or []), list(sh.get("trailing") or [])))
    length_dims = []
    for name, p in op.param_specs.items():
        dims = p.dims
        if len(dims) == 1 and isinstance(dims[0], str) and re.fullmatch(r"[A-Z]", dims[0]):
            length_dims.append((name, dims[0]))
    owners = {c.owner: _tensor_owner(c.owner) for c in op.constraints}
    return _Plan(tuple(op.params), op.param_defaults(), tuple(declared), tuple(length_dims), owners)


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


def _tensor_owner(owner: str) -> tuple[bool, int] | None:
    m = re.match(r"^(in|out)\[(\d+)", owner)
    return (m.group(1) == "in", int(m.group(2))) if m else None


def _owner_absent(op: OpDef, case: Case, owner: str) -> bool:
    owners = _plan(op).owners
    where = owners[owner] if owner in owners else _tensor_owner(owner)
    if where is None:
        return False
    seq = case.inputs if where[0] else case.outputs
    return where[1] >= len(seq) or seq[where[1]] is None


def violations(op: OpDef, case: Case, constraints: list | None = None) -> list[str]:
    return [r.constraint_id for r in evaluate(op, case, constraints) if r.status == FALSE]
