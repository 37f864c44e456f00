"""Op families: a coarse grouping so a matrix of every op can be filtered to the ops one person owns.

The family is a fact of the op, so it lives once, as ``family:`` in the op's spec (the schema lists
the families); reports read it from ``opdefs/<Op>.yaml`` rather than keep a second table that a new op
would have to be added to. The spec file is read as data, not through ``opdefs`` (as the catalogues
do): a results file from another machine only needs this checkout's specs. An op with no spec here
(a newer SDK's op in someone else's results) is "other".
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

SPECS = Path(__file__).resolve().parents[1] / "opdefs"
OTHER = "other"
# `family:` is a top-level scalar the schema restricts to a few words; one line says it
_FAMILY_LINE = re.compile(r"^family:\s*['\"]?([a-z][a-z ]*[a-z])['\"]?\s*$", re.M)


@functools.cache
def family_of(op: str) -> str:
    """The ``family:`` of ``op``'s spec; ``"other"`` when there is no spec or it names none."""
    path = SPECS / f"{op}.yaml"
    try:
        m = _FAMILY_LINE.search(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):  # no spec here, or a name no file can have
        return OTHER
    return m.group(1) if m else OTHER


@functools.cache
def families() -> list[str]:
    """Every family the spec schema allows, ``"other"`` last: the order filters and legends use."""
    schema = json.loads((SPECS / "schema" / "opdef.schema.json").read_text(encoding="utf-8"))
    return [*schema["properties"]["family"]["enum"], OTHER]


# ---------------------------------------------------------------------------------------------
# Datatype families: the matrix columns, so a backend is six columns instead of forty combinations
# ---------------------------------------------------------------------------------------------
FLOAT32, FLOAT16, BITS8, BITS16, MIXED, INTEGER = "float32", "float16", "8-bit", "16-bit", "mixed", "integer"
DTYPE_FAMILIES: tuple[str, ...] = (FLOAT32, FLOAT16, BITS8, BITS16, MIXED, INTEGER)
SHORT_DTYPE_FAMILY = {FLOAT32: "f32", FLOAT16: "f16", BITS8: "8b", BITS16: "16b", MIXED: "mix", INTEGER: "int"}

# The precision class of one QNN datatype; None for the index, mask and bias types (INT_32, UINT_32,
# BOOL_8, 32-bit fixed point) that ride along with a data type without deciding what a user calls it.
_DATA_CLASS = {
    "FLOAT_32": FLOAT32, "FLOAT_16": FLOAT16,
    "UFIXED_POINT_8": BITS8, "SFIXED_POINT_8": BITS8, "UFIXED_POINT_16": BITS16, "SFIXED_POINT_16": BITS16,
    "UFIXED_POINT_4": "4-bit", "SFIXED_POINT_4": "4-bit",
}  # fmt: skip


def dtype_family(config: str) -> str:
    """The datatype family of a configuration label ("UFIXED_POINT_8+SFIXED_POINT_8/axis+SFIXED_POINT_32").

    Index, mask and bias types beside a data type do not change its family (Gather's FLOAT_32+INT_32
    is float32, a quantized Conv2d with 32-bit bias is 8-bit); two data precisions in one configuration
    (16-bit activations with 8-bit weights, Quantize from FLOAT_32) make it mixed; only integer and
    bool types make it integer."""
    types = [t.split("/", 1)[0] for t in config.split("+") if t]
    classes = {_DATA_CLASS[t] for t in types if t in _DATA_CLASS}
    if any("/bw4" in t for t in config.split("+")):  # 4-bit values in an 8-bit container (a bit-width encoding)
        classes.add("4-bit")
    if any(t.endswith("FIXED_POINT_32") for t in types) and not classes & {BITS8, BITS16, "4-bit"}:
        classes.add("32-bit")  # no narrower fixed-point type beside it: the 32-bit one is data, not a bias
    if not classes:
        return INTEGER
    if len(classes) > 1 or (types and types[0] not in _DATA_CLASS and not types[0].endswith("FIXED_POINT_32")):
        return MIXED  # two precisions, or integer data converted to or from a data type (Cast INT_32 -> FLOAT_32)
    family = classes.pop()
    return family if family in DTYPE_FAMILIES else MIXED  # 4-bit or 32-bit data on its own


def family_sort_key(family: str) -> tuple[int, str]:
    """The table's order for the known op families, then any other name (from a spec's ``family:``),
    ``"other"`` last."""
    order = [f for f in families() if f != OTHER]
    if family in order:
        return (0, f"{order.index(family):03d}")
    return (2, family) if family == OTHER else (1, family)
