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
