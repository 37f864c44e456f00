"""Named sets of datatype configurations (``opdefs/presets/*.yaml``) that specs reference by name.

Why: the mixed-precision configurations converters emit (16-bit activations beside 8-bit weights, 4-bit
weights in an 8-bit container, 32-bit biases) are the same for every op of a family. Written into each
spec they were copied six times, and a new convention had to be added to every copy. A spec now says
``generate: {extra_configs: [{preset: weights-8bit}]}`` (or ``extra_configs: {preset: weights-8bit}``)
and the configurations live once, with the sources they come from.

The preset files are data: read as YAML, never executed.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent / "presets"


class UnknownPreset(KeyError):
    """A spec names a preset no preset file defines."""

    def __str__(self) -> str:
        return str(self.args[0])


@functools.cache
def _load(directory: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for name, body in (data.get("presets") or {}).items():
            if name in out:
                raise ValueError(f"{path}: preset {name!r} is defined twice")
            out[name] = {**body, "file": str(path)}
    return out


def presets(directory: Path = HERE) -> dict[str, dict[str, Any]]:
    """Every preset: name -> {configs, applies_to, file}."""
    return _load(str(directory))


def names(directory: Path = HERE) -> list[str]:
    return sorted(presets(directory))


def expand(extra: Any, directory: Path = HERE) -> list[dict[str, Any]]:
    """A spec's ``extra_configs`` as a plain list of configurations: each ``{preset: NAME}`` item (or the
    whole block written as one) replaced by the preset's configurations, in order."""
    if not extra:
        return []
    items = [extra] if isinstance(extra, dict) else list(extra)
    out: list[dict[str, Any]] = []
    known = presets(directory)
    for item in items:
        if isinstance(item, dict) and set(item) == {"preset"}:
            name = str(item["preset"])
            if name not in known:
                raise UnknownPreset(f"no preset {name!r} (known: {', '.join(sorted(known))})")
            out += [dict(c) for c in known[name].get("configs") or []]
        else:
            out.append(item)
    return out


def problems(extra: Any, tensor_names: set[str], directory: Path = HERE) -> list[str]:
    """What is wrong with a spec's ``extra_configs`` once its presets are expanded: an unknown preset, or a
    configuration naming a tensor the op does not declare (a preset meant for another family)."""
    try:
        configs = expand(extra, directory)
    except UnknownPreset as e:
        return [str(e)]
    out = []
    for c in configs:
        named = {k for k in c if k not in ("per_axis", "why", "bitwidth")}
        named |= set(c.get("per_axis") or ()) | set(c.get("bitwidth") or {})
        unknown = sorted(named - tensor_names)
        if unknown:
            out.append(f"configuration {c.get('why', c)!r} names {', '.join(unknown)}, which the op does not declare")
    return out
