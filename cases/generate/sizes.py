"""Sizes as deployed models have them, in the typical tier: batch 1, and tensors that fill the HTP's vectors.

Why: the typical tier is "the op as converters and real models use it", and its sizes were not. Measured on the
main job's drawn cells (seed 0): the largest input of a typical case had a median of 60 elements and a 90th
percentile of 288, with free dims in 2..6 and no size-1 axis; among cases of rank 3 or more 15% had a leading dim
of 1. The HTP works in 128-byte vectors (128 8-bit, 64 16-bit or 32 32-bit elements) and tiles channels by 32, so
almost no case reached a kernel's main loop with a tail after it, where vector-loop, tiling and accumulation bugs
live; and batch 1 with [1, C, 1, 1] features, the commonest deployed shape, was never typical.

What a typical case now draws, besides what it drew before (the draws are made in every tier, so a case has as
many choices whatever it turns out to be: hypothesis' mutator copies choices between cases):
- a coin for batch 1: a dim the spec names as a batch (``BATCH_NAMES``) is 1, and so is the leading dim of an
  input drawn with a free rank of 3 or more;
- a size regime: ``SMALL`` (the moderate sizes as before) or, for a third of the cases, ``VECTOR``: one dim the
  case's tensors are built on grows to a deployed size. Which dim is drawn among the op's growable ones
  (``growable``): the dims its inputs name that have no curated range, and the curated ones whose names say
  channel or space, and the last dim of an input drawn with a free rank. A dim that is the last of some input
  (a channel, an innermost axis) takes one of ``CHANNELS``, below and above 32 and 128, multiples and not, as
  layers have them; a spatial one one of ``SPATIAL``. A tensor of a ``VECTOR`` case may hold up to
  ``LARGE_ELEMENTS``.
Nothing here names an op: the roles come from the spec's own dim names and layouts.
"""

from __future__ import annotations

import re

from opdefs import OpDef

SMALL, VECTOR = "small", "vector"
DEPLOYED_SHARE = 3  # one typical case in this many is drawn at a deployed size (``parts``)
SPLIT_FROM = 10  # cells of fewer cases draw batch 1 and size per case (``parts``)
# sizes in the order their picks take them: hypothesis draws small picks most (its simplest example is all zeros),
# so the middle of the range comes first, not its smallest
# an innermost axis: below and above 32 and 128, whole multiples and not (a main loop with a tail: 40, 136, 48 first)
CHANNELS = (40, 136, 96, 48, 64, 256, 24, 128, 16, 32)
LATER_CHANNELS = (48, 24, 40, 32, 16)  # a second channel count of the same case (``grown_size``)
SPATIAL = (14, 8, 16, 7, 13)
LARGE_ELEMENTS = 65536  # per tensor of a VECTOR case (a SMALL case keeps Settings.max_elements)
FREE_OUTER_MAX = 12  # the outer axes of a free-rank activation whose innermost axis grew: 2..12, not 2..6
FREE_TARGETS = (2048, 4096, 8192, 16384)  # the least elements such an activation holds (``filled``)
FREE = "__free__"  # the grown dim is the last dim of the first input drawn with a free rank
BATCH_NAMES = frozenset({"batch", "batches", "b"})
# curated dims that may grow: a curated range of another kind (boxes, classes, anchors, filter taps, block sizes)
# says something about the op, not about the simulator's speed
_GROWS = re.compile(r"^(channel|channels|channel_in|channel_out|height|width|depth)$")


def _input_dims(op: OpDef) -> list[list[str]]:
    """The named dims of each input's shape (its ``dims`` list, else its ``trailing`` names), names only."""
    out = []
    for decl in op.input_specs:
        sh = decl.shape
        names = sh.get("dims") or sh.get("trailing") or []
        out.append([d for d in names if isinstance(d, str) and d.isidentifier()])
    return out


def last_dims(op: OpDef) -> frozenset[str]:
    """Dims that are the last of some input's shape: channels and innermost axes."""
    return frozenset(names[-1] for names in _input_dims(op) if names)


def growable(op: OpDef) -> tuple[str, ...]:
    """The dims a ``VECTOR`` case may grow, in a fixed order (``FREE`` last where some input has a free rank)."""
    curated = op.dims
    named: list[str] = []
    for names in _input_dims(op):
        for name in names:
            if name in named or name in BATCH_NAMES or name in op.derived:
                continue
            if name in curated and not _GROWS.match(name):
                continue
            named.append(name)
    free = any(not (d.shape.get("dims") or d.shape.get("trailing") or d.shape.get("scalar") or d.shape_from)
               for d in op.input_specs)  # fmt: skip
    return (*named, FREE) if free else tuple(named)


def grown_size(innermost: bool, pick: int, later: bool = False) -> int:
    """The deployed size of a grown dim: a channel's where it is the last dim of some input (or the last of a
    free-rank input), a spatial one's otherwise. A later channel of the same case (a layer's second channel count,
    a matrix's other side) takes one of the smaller counts, so that the layer's weights, which hold both, stay
    within ``LARGE_ELEMENTS``."""
    sizes = (LATER_CHANNELS if later else CHANNELS) if innermost else SPATIAL
    return sizes[pick % len(sizes)]


def input_dims(op: OpDef) -> tuple[tuple[str, ...], ...]:
    """The named dims of each input's shape (``_input_dims``), for ``room``."""
    return tuple(tuple(names) for names in _input_dims(op))


def room(name: str, inputs: tuple[tuple[str, ...], ...], known: dict[str, int], least: dict[str, int],
         cap: int) -> int | None:  # fmt: skip
    """The largest size ``name`` may take so that every input naming it stays within ``cap`` elements, its other dims
    at their sizes (``known``) or, for those still to be drawn, at their least (``least``: a grown channel at the size
    it will grow to); None where no input names it. Why: a case at a deployed size grows every growable dim, each on
    its own pick, and a 5-D convolution's three spatial dims and channel went past the cap in most of its draws, each
    refused after it was built (TransposeConv3d: 792 refused draws for 360 cases; Conv3d 420 for 560; PoolAvg3d 336
    for 240). A dim drawn within the room leaves room for those after it."""
    out = None
    for names in inputs:
        if name not in names:
            continue
        rest = 1
        for other in names:
            if other != name:
                rest *= max(1, int(known.get(other, least.get(other, 1))))
        out = cap // rest if out is None else min(out, cap // rest)
    return out


def filled(shape: tuple[int, ...], free: int, pick: int) -> tuple[int, ...]:
    """A shape whose innermost axis grew, with the last of its ``free`` leading axes (those no name ties to another
    tensor) widened until the tensor holds at least one of ``FREE_TARGETS`` elements (within ``LARGE_ELEMENTS``):
    a deployed activation is never [1, 2, 96]. The leading axis of a rank-3-or-more shape is its batch and stays."""
    at = free - 1
    if at < 0 or (at == 0 and len(shape) >= 3):
        return shape
    target = FREE_TARGETS[(pick // len(CHANNELS)) % len(FREE_TARGETS)]
    others = 1
    for k, dim in enumerate(shape):
        others *= 1 if k == at else dim
    need = -(-target // others)
    return shape if shape[at] >= need else (*shape[:at], min(need, LARGE_ELEMENTS // others), *shape[at + 1:])


def has_batch(op: OpDef) -> bool:
    """Whether batch 1 means anything for the op: it names a batch dim, or an input has a free rank (drawn 2..4 in
    the typical tier, so of 3 or more in some cases)."""
    named = any(name in BATCH_NAMES for names in _input_dims(op) for name in names)
    free = any(not (d.shape.get("dims") or d.shape.get("scalar") or d.shape_from) for d in op.input_specs)
    return named or free


def parts(n: int, batched: bool = True, grows: bool = True) -> list[tuple[bool | None, bool | None, int]]:
    """How a typical cell's ``n`` cases split: (batch 1, at a deployed size, how many), half of them batch 1 where
    the op has a batch and a third at a deployed size where it has a dim to grow, the deployed ones first. Why a
    split, not a coin per case: hypothesis draws are not fair coins (its first examples are its simplest, and later
    ones copy earlier choices in runs: a batch-1 coin came up in a fifth of Conv2d's cases and in 8 of MatMul's
    96, a coin read off the data seed likewise), and a decision made per case from a schedule outside the draws
    changes what the case draws after it, which hypothesis refuses as inconsistent data generation. Each part is
    a strategy of its own with its sizes fixed."""
    if n < SPLIT_FROM:  # parts of one case would each draw hypothesis' simplest example, the same case: coins then
        return [(None, None, n)]
    deployed = round(n / DEPLOYED_SHARE) if grows else 0
    ones_deployed = (deployed + 1) // 2 if batched else deployed
    ones_small = ((n + 1) // 2 - ones_deployed) if batched else n - deployed
    out = [(True, True, ones_deployed), (False, True, deployed - ones_deployed),
           (True, False, ones_small), (False, False, n - deployed - ones_small)]
    return [p for p in out if p[2] > 0]
