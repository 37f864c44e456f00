"""Tensor shapes: ranks, dims tied or sized by checks and formulas, broadcasting."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from cases import check
from cases.case import Case, Param, Tensor
from cases.generate import sizes
from cases.generate.configurations import Settings
from cases.generate.draws import _BOOL, _int_list, _ints
from cases.generate.evaluate import _eval_dim, _eval_int, _fits, _holds, _unknown
from opdefs import OpDef, TensorSpec, expr

if TYPE_CHECKING:
    from cases.generate.strategy import CaseDrawing
from cases.case import TYPICAL


def _typical_presence(op: OpDef, shapers: set[str]) -> list[expr.TensorInfo]:
    """Which inputs a typical case gives (mandatory ones, weights and biases, shapers), known before any is
    drawn: a condition on ``present(in[k])`` can then steer the dims drawn earlier."""
    out: list[expr.TensorInfo] = []
    stop = False  # as the drawing goes: after an optional input left out, the later ones are left out too
    for decl in op.input_specs:
        idx = decl.first_index
        weights = decl.given_static or decl.name in shapers
        given = not decl.optional or (not stop and weights)
        stop = stop or (decl.optional and not given)
        while len(out) <= idx:
            out.append(expr.TensorInfo((), "", present=False))
        out[idx] = expr.TensorInfo((), "", present=bool(given) and not decl.repeated)
    return out


def _tied_to(draw: st.DrawFn, name: str, tied: list, env: dict[str, Any]) -> int | None:
    """The size of a dim already drawn that a check makes ``name`` equal to, where its condition holds (or
    cannot be told yet - an input not drawn: then on a coin, equal being valid either way), else None."""
    for cond, a, b in tied:
        other = b if name == a else a if name == b else None
        if cond is not None and cond.tensor_refs() and "_in" not in env and "__presence__" in env:
            env = {**env, "_in": env["__presence__"]}  # the typical tier knows which inputs it will give
        if other is None or not isinstance(env.get(other), int | np.integer):
            continue
        if cond is None:
            return int(env[other])
        try:
            met = bool(expr.holds(cond, env))
        except expr.EvalError:  # mostly equal: that holds whatever the condition turns out to be
            met = draw(_ints(0, 3), label=f"{name} = {other}") > 0
        if met:
            return int(env[other])
    return None


def _sizes_that_fit(name: str, sizes: list[int], formulas: Sequence[expr.Expr], env: dict[str, Any],
                    checks: Sequence[expr.Expr] = ()) -> list[int] | None:  # fmt: skip
    """The sizes of ``name`` for which every derived dim computable now comes out a positive whole number
    (Conv's height_out, DepthWiseConv2d's depth_multiplier) and every check on dims and parameters
    computable now holds, or None where that rules none out: the last dim a formula or check reads is drawn
    where it fits instead of being refused after. Sizes are drawn as before wherever nothing is ruled out."""
    usable = [f for f in formulas if all(n == name or n in env for n in f.names())]
    holding = [c for c in checks if all(n == name or n in env for n in c.names())]
    if not usable and not holding:
        return None
    fit = [v for v in sizes if all((d := _eval_dim(f.source, {**env, name: v})) is not None and d > 0 for f in usable)
           and _fits(holding, {**env, name: v})]  # fmt: skip
    return fit if len(fit) < len(sizes) else None


def _one_of_options(draw: st.DrawFn, name: str, options: list[expr.Expr], env: dict[str, Any],
                    dim_value: Callable[[str], int], symbols: frozenset[str]) -> int:  # fmt: skip
    """A dim a check allows only a few values of: draw which option, then its value (a dim it names is
    drawn now if it was not yet)."""
    option = options[draw(_ints(0, len(options) - 1), label=f"{name} option")]
    for other in sorted(option.names() & symbols):
        if other != name and other not in env:
            dim_value(other)
    v = _eval_dim(option.source, env)
    assume(v is not None and v > 0)
    return v


def _least_count(op: OpDef, first: int, lo: int, hi: int) -> int:
    """The fewest tensors of a repeated input starting at ``first`` that the ``num_inputs()`` checks allow."""
    checks = [c.check for c in op.constraints if c.check is not None and "num_inputs" in c.check.source]
    for n in range(lo, hi + 1):
        k, fn = expr.function_binding("num_inputs", lambda n=n: first + n)
        if all(_holds(c, {k: fn}) or _unknown(c, {k: fn}) for c in checks):
            return n
    return lo


def _shape_from(op: OpDef, source: str, inputs: list[Tensor | None], params: dict[str, Param],
                env: dict[str, Any]) -> tuple[int, ...] | None:  # fmt: skip
    partial = Case(op.name, list(inputs), params, [])
    try:
        value = expr.parse(source).evaluate({**env, **check.environment(op, partial)})
    except (expr.ExprError, expr.EvalError, TypeError, ValueError, IndexError):
        return None
    shape = tuple(int(x) for x in np.atleast_1d(value)) if np.ndim(value) else (int(value),)
    return shape if all(x > 0 for x in shape) else None


def _rank_limits(op: OpDef) -> dict[str, tuple[int, int]]:
    """tensor -> the constant rank bounds its checks give (``rank(in[0]) > 2``: InstanceNorm's [3, inf))."""
    out = {}
    for decl in op.input_specs:
        ref = f"in[{decl.first_index}]"
        lows, highs = [], []
        for c in op.constraints:
            if c.check is not None and "rank" in c.check.source:
                lo_e, hi_e = c.check.bounds(f"rank({ref})")
                lows += [v for v in (_eval_int(e, {}) for e in lo_e) if v is not None]
                highs += [v for v in (_eval_int(e, {}) for e in hi_e) if v is not None]
        if lows or highs:
            out[ref] = (max(lows, default=0), min(highs, default=2**31))
    return out


def _last_dim_limits(op: OpDef) -> dict[str, tuple[list[expr.Expr], list[expr.Expr]]]:
    """tensor -> the bounds its checks put on its last dim (``0 < shape(in[1])[k - 1] <= n - batch_dims``, k its
    rank symbol), for tensors of a drawn rank: GatherNd's and ScatterNd's index depth."""
    out = {}
    for decl in op.input_specs:
        sh = decl.shape
        if sh.get("dims") or sh.get("trailing") or sh.get("scalar") or decl.shape_from:
            continue  # a named last dim is drawn where its own checks say (it may be shared)
        ref = f"in[{decl.first_index}]"
        rank = sh.get("rank")
        names = [f"shape({ref})[-1]"] + ([f"shape({ref})[{rank} - 1]"] if isinstance(rank, str) else [])
        lows, highs = [], []
        for c in op.constraints:
            if c.check is not None and ref in c.check.tensor_refs():
                for name in names:
                    lo_e, hi_e = c.check.bounds(name)
                    lows += lo_e
                    highs += hi_e
        if lows or highs:
            out[ref] = (lows, highs)
    return out


def _fold_last(shape: tuple[int, ...], limits: tuple[list[expr.Expr], list[expr.Expr]], env: dict[str, Any],
               settings: Settings) -> tuple[int, ...]:  # fmt: skip
    """The shape with its last dim moved inside the bounds its checks give (parameters not drawn yet at their
    defaults), by wrapping the drawn size around the allowed range: one draw either way, spread as the draw
    was. Unchanged where the bounds cannot be worked out yet or allow nothing."""
    typical = settings.tier == TYPICAL
    lo, hi = settings.typical_dims if typical else (1, settings.max_dim)
    lows = [v for v in (_eval_int(e, env) for e in limits[0]) if v is not None]
    highs = [v for v in (_eval_int(e, env) for e in limits[1]) if v is not None]
    b_lo, b_hi = max([lo, *lows]), min([hi, *highs])
    if b_lo > b_hi:  # the tier's range misses the checks' (a depth of 1 with typical dims from 2): the checks win
        b_lo, b_hi = max([1, *lows]), min([hi, *highs])
    last = shape[-1]
    if b_lo > b_hi or b_lo <= last <= b_hi:
        return shape
    return shape[:-1] + (b_lo + (last - b_lo) % (b_hi - b_lo + 1),)


def _draw_shape(d: CaseDrawing, decl: TensorSpec, ref: str,
                rank_limit: tuple[int, int] | None = None) -> tuple[int, ...] | None:  # fmt: skip
    """The shape of input ``ref`` (declared as ``decl``): its spec's dims, or a rank and dims drawn - like in[0]'s, or
    broadcasting onto the input that leads ``broadcast``, or free - with the named trailing dims the spec gives."""
    draw, env, shapes, first_shape, rank_shapes, dim_value = d.draw, d.env, d.shapes, d.first_shape, d.rank_shapes, \
        d.dim_value  # fmt: skip
    same_shape, settings, broadcast = d.plan.same_shape, d.plan.settings, d.plan.broadcast
    if ref in same_shape and same_shape[ref] in shapes:
        return shapes[same_shape[ref]]
    sh = decl.shape
    if d.row is not None and ref in d.row.shapes:  # the model tier: the layer's shape, its names bound to its sizes
        shape = d.row.shapes[ref]
        rank = sh.get("rank")
        if isinstance(rank, str) and rank.isidentifier():
            env.setdefault(rank, len(shape))
            rank_shapes.setdefault(rank, shape)
        return shape
    dims = sh.get("dims")
    if dims:
        out = []
        for dim in dims:
            if isinstance(dim, str) and dim.isidentifier():
                out.append(dim_value(dim))
            else:
                for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", str(dim)):
                    if name not in env and name not in ("in", "out"):
                        dim_value(name)
                v = _eval_dim(dim, env)
                if v is None or v == 0:
                    return None
                out.append(v)
        return tuple(out)
    rank = sh.get("rank")
    if sh.get("scalar"):
        return ()
    sym = rank if isinstance(rank, str) and rank.isidentifier() else None
    if sym and sym in rank_shapes:  # the same rank: the same leading dims, its own named last dims (MatMul's k, n)
        shared, tail = rank_shapes[sym], sh.get("trailing") or []
        if not tail or len(tail) > len(shared):
            return shared
        return shared[: len(shared) - len(tail)] + tuple(dim_value(n) for n in tail)
    if sym and sym in env:
        r = int(env[sym])
    else:
        lo_r, hi_r = settings.typical_ranks if settings.tier == TYPICAL else (1, settings.max_rank)
        if rank_limit:  # the tensor's own rank checks narrow the range (never past them)
            lo2, hi2 = max(lo_r, rank_limit[0]), min(hi_r, rank_limit[1])
            if lo2 > hi2:  # the tier's range misses the checks' entirely: the nearest rank they allow
                lo2 = hi2 = rank_limit[0] if rank_limit[0] > hi_r else rank_limit[1]
            lo_r, hi_r = lo2, hi2
        r = draw(_ints(lo_r, hi_r), label=f"rank {ref}")
        if sym:
            env[sym] = r
    lead = broadcast[0] if ref in broadcast[1:] and broadcast[0] in shapes else None
    if lead is not None and settings.onto and r > len(shapes[lead]):
        r = len(shapes[lead])
        if sym:
            env[sym] = r
    like_first = first_shape is not None and not broadcast and draw(_BOOL, label=f"{ref} like in[0]")
    # a free input after one whose innermost axis grew takes in[0]'s trailing dims: a free draw never meets 136
    like_first = like_first or (first_shape is not None and not broadcast and sizes.FREE in d.grown)
    # as many draws whatever the rank (the first r of them used), and as many in either branch: the mutator
    # copies a rank, or the coin above, from one draw to another, and the choices after it then still line up
    width = max(r, settings.max_rank)
    if lead is not None or like_first:
        # broadcast-friendly: the trailing dims of the first input, some set to 1 (one way, so it also
        # holds where only the later input stretches: Prelu's slope); a dim is 1 where its pick is 0
        base = shapes[lead] if lead is not None else first_shape
        tail = list(base[-r:]) if r <= len(base) else [1] * (r - len(base)) + list(base)
        keep = draw(_int_list(0, 3, width), label=f"{ref} ones")
        shape = tuple(1 if k == 0 else t for t, k in zip(tail, keep, strict=False))
    else:
        lo, hi = settings.typical_dims if settings.tier == TYPICAL else (1, settings.max_dim)
        if sizes.FREE in d.grown and first_shape is None:
            hi = max(hi, sizes.FREE_OUTER_MAX)  # a deployed activation: its outer axes wider too
        shape = tuple(draw(_int_list(lo, hi, width), label=f"{ref} dims")[:r])
        if d.plan.typical:  # deployed sizes (``sizes``): batch 1, and the innermost axis grown
            if d.batch_one and len(shape) >= 3:
                shape = (1, *shape[1:])
            if sizes.FREE in d.grown and first_shape is None and shape:
                pick = d.grow_picks[sizes.FREE]
                shape = sizes.filled((*shape[:-1], sizes.grown_size(True, pick)), len(shape) - 1, pick)
    tail = sh.get("trailing") or []
    if tail:  # [.., channel]: the named last dims take their (shared, divisible...) values
        free = max(0, len(shape) - len(tail))
        shape = shape[:free] + tuple(dim_value(n) for n in tail)
        if sym:
            env[sym] = len(shape)
        if d.grown and first_shape is None and set(tail) & set(d.grown) and not (lead is not None or like_first):
            # a deployed activation [.., channel]: its free outer axes widened with it ([1, 2, 48] is no feature map)
            shape = sizes.filled(shape, free, sum(d.grow_picks.values()))
    if sym:
        rank_shapes[sym] = shape
    return shape
