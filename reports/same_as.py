"""``same_as: <findings file>:<finding id>``: an entry that is another backend's finding seen through a second route
takes that finding's selectors and evidence (``reports.expectations`` module docstring)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

from reports.expectations import _LOADER, ExpectationsError

# What an entry takes from the finding it is ``same_as``: the cases it selects and the evidence
FIELDS = ("op", "config", "kind", "verdicts", "tier", "params", "when", "model", "band", "scope", "class", "spec",
          "contradicts")  # fmt: skip


def taken_from(value: Any, source: str, where: str) -> dict[str, Any]:
    """``same_as: <file>:<id>``: the ``FIELDS`` of finding <id> in <file>.yaml beside ``source``."""
    name, _, fid = value.partition(":") if isinstance(value, str) else ("", "", "")
    if not name or not fid:
        raise ExpectationsError(f"{where}: 'same_as' must be <findings file>:<finding id> (qnn-htp:some-id)")
    items = _raw_items(str(Path(source).resolve().parent / f"{name}.yaml"))
    if items is None:
        raise ExpectationsError(f"{where}: same_as: there is no findings file {name}.yaml beside {source}")
    found = [i for i in items if isinstance(i, dict) and i.get("id") == fid]
    if not found:
        raise ExpectationsError(f"{where}: same_as: {name}.yaml has no finding {fid!r}")
    if found[0].get("same_as") is not None:
        raise ExpectationsError(f"{where}: same_as: {name}:{fid} is itself another finding's (name that one)")
    return {k: found[0][k] for k in FIELDS if k in found[0]}


@functools.cache
def _raw_items(path: str) -> list[Any] | None:
    """A findings file's entries as plain YAML (None when there is no such file), for ``same_as``."""
    try:
        data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_LOADER)  # noqa: S506 - a safe loader
    except OSError:
        return None
    data = data.get("expectations") if isinstance(data, dict) else data
    return data if isinstance(data, list) else []
