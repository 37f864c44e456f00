"""Pluggable backends. ``get(name, options)`` builds an adapter by the name users pass to --backend.

Why entry points: a user's backend plugs in from its own package, without editing the suite. Every
adapter, the built-in ones included, is a factory ``make(options: dict) -> Adapter`` registered in the
``qnn_opdef_conformance.adapters`` entry-point group (pyproject.toml); ``--backend
package.module:factory`` names one for a single run without registering it. When the suite runs
from a checkout that was never installed there are no entry points, so the built-in names are also
known here directly.

Built-in names: ``reference`` (the numpy reference as a spec-following backend), ``qnn-htp`` (the QNN
HTP simulator from the onnxruntime-qnn wheel), ``qnn-cpu`` (the QNN CPU backend of the newest
onnxruntime-qnn release that ships it), ``qnn`` (any QNN backend library: --qnn-backend-lib or
$QNN_BACKEND_LIB), ``onnxruntime`` (ONNX Runtime CPU EP), ``ort-qnn`` (ONNX Runtime with the QNN EP).

``name@variant`` builds ``name`` with ``{"variant": variant}`` (``qnn-htp@2.47``, ``qnn-htp@v73``): a
release or a target that is a column of its own; the factory says which variants it takes.
Factories import their native dependencies lazily, so listing names costs nothing.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from adapters.base import Adapter, Outcome

GROUP = "qnn_opdef_conformance.adapters"
_BUILT_IN = {
    "reference": "adapters.reference:make",
    "qnn-htp": "adapters.qnn.adapter:make",
    "qnn": "adapters.qnn.adapter:make",
    "qnn-cpu": "adapters.qnn.adapter:make_cpu",
    "onnxruntime": "adapters.onnxruntime:make",
    "ort-qnn": "adapters.ort_qnn:make",
}
_ONE_OFF = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


class UnknownBackend(KeyError):
    """No registered adapter by that name, and not a ``package.module:factory`` reference."""

    def __str__(self) -> str:
        return str(self.args[0])


def registered() -> dict[str, str]:
    """Adapter name -> ``module:factory``: the entry-point group, over the built-in names."""
    found = dict(_BUILT_IN)
    from importlib.metadata import entry_points  # here: 22 ms a process, and a worker never asks

    for ep in entry_points(group=GROUP):
        found[ep.name] = ep.value
    return found


def names() -> list[str]:
    return sorted(registered())


def _load(reference: str) -> Callable[[dict[str, Any]], Adapter]:
    module_name, _, attr = reference.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{reference} is not callable")
    return obj


def get(name: str, options: dict[str, Any] | None = None) -> Adapter:
    """Build the adapter ``name`` with ``options``; the factory says which options it does not take."""
    table = registered()
    base, _, variant = name.partition("@")
    if variant and base in table and name not in table:
        return _load(table[base])({**dict(options or {}), "variant": variant})
    if name in table:
        factory = _load(table[name])
    elif _ONE_OFF.match(name):
        try:
            factory = _load(name)
        except ModuleNotFoundError as e:
            raise UnknownBackend(f"cannot import {name.partition(':')[0]}: {e}") from None
        except AttributeError:
            raise UnknownBackend(f"{name.partition(':')[0]} has no {name.partition(':')[2]}") from None
    else:
        raise UnknownBackend(f"unknown backend; choose from {', '.join(names())}, or package.module:factory")
    return factory(dict(options or {}))


__all__ = ["GROUP", "Adapter", "Outcome", "UnknownBackend", "get", "names", "registered"]
