"""QNN backends through the QNN C API (ctypes), the HTP simulator of the onnxruntime-qnn wheel by default.

Exports are resolved lazily so that ``python -m adapters.qnn.worker`` does not import the worker
module twice (once through the package, once as ``__main__``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["QnnAdapter", "make"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import adapter

        return getattr(adapter, name)
    raise AttributeError(name)
