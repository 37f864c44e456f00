"""Pluggable backends. ``get(name, options)`` builds an adapter by the name users pass to --backend.

Names: ``reference`` (the numpy reference as a spec-following backend), ``qnn-htp`` (the QNN HTP
simulator from the onnxruntime-qnn wheel), ``qnn`` (any QNN backend library: --qnn-backend-lib or
$QNN_BACKEND_LIB). Adapters import their native dependencies lazily, so listing names costs nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

from adapters.base import Adapter, Outcome

_FACTORIES = {
    "reference": "adapters.reference",
    "qnn-htp": "adapters.qnn.adapter",
    "qnn": "adapters.qnn.adapter",
    "onnxruntime": "adapters.onnxruntime",
    "ort-qnn": "adapters.ort_qnn",
}


def names() -> list[str]:
    return sorted(_FACTORIES)


def get(name: str, options: dict[str, Any] | None = None) -> Adapter:
    try:
        module = importlib.import_module(_FACTORIES[name])
    except KeyError:
        raise KeyError(f"unknown backend {name!r}; known: {', '.join(names())}") from None
    return module.make(dict(options or {}))


__all__ = ["Adapter", "Outcome", "get", "names"]
