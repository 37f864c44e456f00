"""Negative cases: a valid case changed so that exactly one checkable constraint breaks.

Mutations are generic (retype a tensor, reshape it, push a parameter out of range, duplicate a
vector's values, push an index past a dimension); each candidate is kept only if the evaluator says
the labelled constraint is now false and every other checkable constraint still holds or cannot be
decided. A constraint no mutation can break alone gets no negative case, and the test says so.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np

from cases import check
from cases.case import Case, Encoding, Param, Tensor
from opdefs import OpDef, dtypes
from opdefs.spec import Constraint

_RETYPE = ("FLOAT_32", "FLOAT_16", "UFIXED_POINT_8", "INT_32", "BOOL_8", "SFIXED_POINT_8")


def _retype(t: Tensor, dtype: str) -> Tensor:
    d = dtypes.get(dtype)
    data = None
    if t.data is not None:
        data = np.zeros(t.shape, d.storage) if d.storage is not None else None
    enc = None
    if d.quantized:
        enc = Encoding((0.05,), (-(d.qmin + d.qmax + 1) // 2,) if d.kind == "ufixed" else (0,))
    return Tensor(t.name, dtype, t.shape, data, enc, t.static)


def _reshape(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    d = dtypes.get(t.dtype)
    data = None if t.data is None else np.zeros(shape, d.storage)
    return Tensor(t.name, t.dtype, shape, data, t.encoding, t.static)


def _tensor_mutations(t: Tensor) -> Iterator[Tensor]:
    for dt in _RETYPE:
        if dt != t.dtype:
            yield _retype(t, dt)
    s = t.shape
    if s:
        yield _reshape(t, s[:-1] + (s[-1] + 1,))
        yield _reshape(t, s[1:])
        if s[-1] > 1:
            yield _reshape(t, s[:-1] + (s[-1] - 1,))
    yield _reshape(t, (1,) + s)
    if s:
        yield _reshape(t, ())
    if t.data is not None and t.data.size and dtypes.get(t.dtype).kind in ("int", "uint"):
        big = t.data.copy()
        big.flat[0] = min(dtypes.get(t.dtype).qmax, 1000)
        yield Tensor(t.name, t.dtype, t.shape, big, t.encoding, t.static)


def _param_mutations(p: Param, rank: int) -> Iterator[Param]:
    v = p.value
    if isinstance(v, np.ndarray):
        if v.size:
            for bad in (0, rank, rank + 5, -1):
                w = v.copy()
                try:
                    w.flat[0] = bad
                except (OverflowError, ValueError):
                    continue
                yield Param(p.name, p.dtype, w)
            if v.size > 1:
                w = v.copy()
                w.flat[1] = w.flat[0]
                yield Param(p.name, p.dtype, w)
        yield Param(p.name, p.dtype, np.concatenate([v.ravel(), v.ravel()[:1]]).astype(v.dtype))
        if v.ndim == 1 and v.size:
            yield Param(p.name, p.dtype, v[:0].copy())
    elif isinstance(v, bool):
        yield Param(p.name, p.dtype, not v)
    elif isinstance(v, int):
        for bad in (rank, rank + 1, 0, v + 1, 1000, -1):
            if bad != v and not (bad < 0 and p.dtype.startswith("UINT")):
                yield Param(p.name, p.dtype, bad)
    elif isinstance(v, float):
        for bad in (0.0, -1.0, 1e6, v + 1.0):
            if bad != v:
                yield Param(p.name, p.dtype, bad)


def _candidates(case: Case) -> Iterator[Case]:
    rank = max((len(t.shape) for t in case.inputs if t is not None), default=1)
    for i, t in enumerate(case.inputs):
        if t is None:
            continue
        for m in _tensor_mutations(t):
            c = copy.copy(case)
            c.inputs = list(case.inputs)
            c.inputs[i] = m
            yield c
            if len(m.shape) != len(t.shape):  # the same, with the per-dimension parameter vectors (perm) following
                bound = {k: p for k, p in case.params.items() if p.is_tensor and p.value.shape == (len(t.shape),)}
                if bound:
                    c = copy.copy(c)
                    c.params = dict(case.params)
                    for k, p in bound.items():
                        grown = np.arange(len(m.shape), dtype=p.value.dtype)
                        c.params[k] = Param(p.name, p.dtype, grown)
                    yield c
    for i, t in enumerate(case.outputs):
        for m in _tensor_mutations(t):
            c = copy.copy(case)
            c.outputs = list(case.outputs)
            c.outputs[i] = Tensor(m.name, m.dtype, m.shape, None, m.encoding)
            yield c
    present = [i for i, t in enumerate(case.inputs) if t is not None]
    if len(present) > 1:  # one input fewer (variadic counts, optional inputs)
        c = copy.copy(case)
        c.inputs = list(case.inputs[: present[-1]])
        yield c
    for name in case.params:  # a parameter left out (required ones must be given)
        c = copy.copy(case)
        c.params = {k: v for k, v in case.params.items() if k != name}
        yield c
    for name, p in case.params.items():
        for m in _param_mutations(p, rank):
            c = copy.copy(case)
            c.params = dict(case.params)
            c.params[name] = m
            yield c


UNMODELLED = ("sparse(", "dynamic(")  # properties generated cases never have: no negative case can toggle them


def negatable(c: Constraint) -> bool:
    return c.check is not None and not any(f in c.check.source for f in UNMODELLED)


def break_one(op: OpDef, case: Case, target: Constraint) -> Case | None:
    """A copy of ``case`` violating ``target`` and no other checkable constraint, or None."""
    for cand in _candidates(case):
        results = check.evaluate(op, cand)
        false = [r.constraint_id for r in results if r.status == check.FALSE]
        if false == [target.id]:
            cand.broken = target.id
            cand.strategy = f"negative:{target.id}"
            return cand
    return None
