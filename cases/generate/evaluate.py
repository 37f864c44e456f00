"""Evaluating a spec's expressions (dims, bounds, checks) on what has been drawn so far."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from cases.generate.configurations import _first_index
from opdefs import OpDef, expr


def _eval_dim(d: Any, env: dict[str, Any]) -> int | None:
    """A dim expression's value: a whole number in [0, 2**31), else None. Unsigned parameter vectors
    (pad_amount, stride) take part as signed integers, so a size formula can go negative, not wrap."""
    if isinstance(d, int):
        return d
    signed = {k: v.astype(np.int64) if isinstance(v, np.ndarray) and v.dtype.kind == "u" else v for k, v in env.items()}
    try:
        v = np.asarray(expr.parse(str(d)).evaluate(signed), dtype=np.float64)
    except (expr.ExprError, expr.EvalError, TypeError, ValueError):
        return None
    if v.shape != () or not np.isfinite(v) or v != np.floor(v) or not 0 <= v < 2**31:
        return None
    return int(v)


def _same_shape_targets(op: OpDef) -> dict[str, str]:
    """tensor -> tensor it must have the same shape as (from 'shape(a) == shape(b)' checks)."""
    out = {}
    for c in op.constraints:
        pair = c.check.same_shape_pair() if c.check is not None else None
        if pair:
            out[pair[0]] = pair[1]
    return out


def _param_checks(op: OpDef, name: str) -> list[expr.Expr]:
    return [c.check for c in op.constraints if c.owner == name and c.check is not None]


def _ratio(source: Any) -> tuple[str, str] | None:
    try:
        return expr.parse(str(source)).ratio()
    except expr.ExprError:
        return None


def _unknown(condition: expr.Expr, env: dict[str, Any]) -> bool:
    try:
        expr.holds(condition, env)
    except expr.EvalError:
        return True
    return False


def _eval_int(e: expr.Expr, env: dict[str, Any]) -> int | None:
    try:
        v = np.asarray(e.evaluate(env), dtype=np.float64)
    except (expr.ExprError, expr.EvalError, TypeError, ValueError, IndexError, KeyError):
        return None
    return int(np.floor(v)) if v.shape == () and np.isfinite(v) else None


def _names_call(e: expr.Expr, fn: str, name: str) -> bool:
    """Whether a conjunct of ``e`` is ``fn(name)``."""
    return any(isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == fn and len(x.args) == 1
               and isinstance(x.args[0], ast.Name) and x.args[0].id == name for x in e.conjuncts())  # fmt: skip


def _declared_scalar(op: OpDef, name: str) -> bool:
    decl = next((d for d in reversed(op.output_specs) if d.first_index <= _first_index(name)), None)
    return bool(decl and (decl.shape.get("scalar") or decl.shape.get("rank") == 0))


def _holds(condition: expr.Expr, env: dict[str, Any]) -> bool:
    try:
        return bool(expr.holds(condition, env))
    except expr.EvalError:
        return False


def _fits(checks: list[expr.Expr], env: dict[str, Any]) -> bool:
    """No check is false here (one that cannot be decided yet counts as holding)."""
    for c in checks:
        try:
            if not expr.holds(c, env):
                return False
        except expr.EvalError:
            continue
    return True


def _curation_tables(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """enum parameter -> {member: curation} of a tensor's ``values``: ``by_param``, and ``by_operation`` as the
    table of ``operation``."""
    tables = dict(values.get("by_param") or {})
    if "by_operation" in values:
        tables["operation"] = values["by_operation"]
    return tables
