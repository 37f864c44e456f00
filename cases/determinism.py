"""Cases that depend on the spec, the configuration, the tier and the seed, and on nothing else.

Hypothesis (6.131 and later) mixes constants it finds in the caller's own source files into about one
draw in twenty: every integer, float and string literal of every non-library module imported so far.
For this suite that made the cases of one seed depend on two things that have nothing to do with the
spec. First, on which modules the process happened to have imported: StridedSlice's FLOAT_32 edge cell
drew another case set, with 111 refused draws instead of 63, once the reference families and the
adapters were loaded, so an xdist worker, ``pytest --op X`` and ``python -m bench`` each drew their
own cases for the same seed, and the benchmark's per-op refusal counts moved between runs. Second, on
every number written anywhere in the code base: importing one module of 40 literals changed 5 of 120
cases of three ops. The suite's generator already aims at the spec's boundaries itself (the edge tier),
so it gives up nothing by leaving these constants out.

Hypothesis has no setting for it; this replaces the internal function that collects them with one that
collects none, and does nothing on a Hypothesis without that function (where the feature does not exist).
"""

from __future__ import annotations


def pin_hypothesis_constants() -> bool:
    """Turn off the draws of constants found in local source files; True where there was something to turn off."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis laid out otherwise
        return False
    collect = getattr(providers, "_get_local_constants", None)
    empty = getattr(providers, "_local_constants", None)
    if collect is None or empty is None:
        return False
    if getattr(collect, "_pinned", False):
        return True

    def no_local_constants():  # the module's own empty set, never filled
        return empty

    no_local_constants._pinned = True  # type: ignore[attr-defined]
    providers._get_local_constants = no_local_constants
    return True
