"""Hypothesis strategies the drawing uses, each built once per distinct argument."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st


def _elements(shape: Sequence[int]) -> int:
    """Elements of a shape in Python integers: in int64 the product of 65536**4 wraps to 0 and passes any cap."""
    return math.prod(int(d) for d in shape)


# ---- hypothesis strategies, each built once per distinct argument ---------------------------------------
# Building ``st.integers(lo, hi)`` costs ~30 us (hypothesis keys its own cache on the arguments' types and
# values), nearly what drawing from it costs, and a case draws about a dozen values. The strategies are the
# ones hypothesis would build: the same draws, the same cases.
@functools.lru_cache(maxsize=4096, typed=True)
def _ints(lo: int | None, hi: int | None) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


_BOOL = st.booleans()


def _pick(values: Sequence[Any]) -> st.SearchStrategy[Any]:
    key = tuple(values)
    try:
        hash(key)
    except TypeError:  # unhashable choices (lists): built afresh
        return st.sampled_from(values)
    return _picks(key, repr(key))


@functools.lru_cache(maxsize=4096)
def _picks(values: tuple, spelling: str) -> st.SearchStrategy[Any]:
    """``spelling``, the values' repr, is part of the key: ``(False,) == (0,)`` with equal hashes (and
    ``(1.0,) == (1,)``), so a cache keyed on the values alone handed a boolean parameter the ``sampled_from((0,))``
    another op had asked for first, and the cases of a cell depended on which cells the process drew before
    (Conv2d's after Concat's; ``tests/test_cases_generation.py``)."""
    return st.sampled_from(values)


# Sequences of a fixed length are tuples of independent draws, not lists with min_size == max_size: a list
# draws a (forced) "one more?" choice per element and every list of ints shares one span label whatever its
# length, so hypothesis' mutator, which copies a span onto another of the same label, copied a 2-list onto a
# 4-list and left the case short of choices (an overrun: a refused draw). A tuple's label names its length.
@functools.lru_cache(maxsize=4096)
def _n_of(element: st.SearchStrategy[Any], n: int) -> st.SearchStrategy[tuple[Any, ...]]:
    """``n`` independent draws of ``element``, built once per (strategy, n): the element strategies come from
    the caches above, so equal values share one object and the key is that object."""
    return st.tuples(*[element] * n)


def _int_list(lo: int, hi: int, n: int) -> st.SearchStrategy[tuple[int, ...]]:
    return _n_of(_ints(lo, hi), n)


def _bool_list(n: int) -> st.SearchStrategy[tuple[bool, ...]]:
    return _n_of(_BOOL, n)


def _pick_list(values: tuple, n: int) -> st.SearchStrategy[tuple[Any, ...]]:
    return _n_of(_pick(values), n)


@functools.lru_cache(maxsize=4096)
def _permutation_picks(n: int) -> st.SearchStrategy[tuple[int, ...]]:
    return st.tuples(*[_ints(0, n - 1 - i) for i in range(n - 1)])


def _permutation(draw: st.DrawFn, values: Sequence[Any]) -> list[Any]:
    """A permutation of ``values`` as ``st.permutations`` gives one (shrinking towards the given order), drawn
    as a tuple of n - 1 picks among the values left: a fixed number of choices under a label that names n, so
    the mutator never copies a permutation of 3 onto one of 5 (hypothesis' permutations share one label)."""
    pool = list(values)
    out = [pool.pop(j) for j in draw(_permutation_picks(len(pool)))] if pool else []
    return out + pool


@functools.lru_cache(maxsize=4096, typed=True)
def _default_or(default: Any, other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The default itself (converters write it out) on a coin, else ``other``. A coin and a value are drawn
    either way: ``one_of(just(default), other)`` drew one choice for the default and two otherwise, so the
    mutator's copy of one such span onto another left the case a choice short (a refused draw)."""
    return st.tuples(_BOOL, other).map(lambda t: t[1] if t[0] else default)
