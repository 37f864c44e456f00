"""Planted bugs: the suite's power to find a bug, measured.

A mutant is a backend with one bug planted (``bench.mutants.catalogue``), built on the public adapter
interface: ``--backend bench.mutants:qnn_htp.softmax_beta_ignored`` runs the conformance suite on the HTP
simulator with Softmax computing every beta as 1, and ``bench.mutants:reference.<name>`` on the numpy
reference (fast: what CI runs). ``python -m bench mutants`` runs every mutant beside its unmutated base on the
same cases and says which the suite kills, which a finding swallows and which it misses (``bench.mutants.run``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class On:
    """The mutants of one base backend, as factories: ``qnn_htp.<mutant>`` is ``make(options)`` for --backend."""

    def __init__(self, backend: str) -> None:
        self.backend = backend

    def __getattr__(self, name: str) -> Callable[[dict[str, Any] | None], Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        from bench.mutants import adapter, catalogue

        catalogue.get(name)  # an unknown name is an AttributeError here, at the door
        return functools.partial(adapter.make, self.backend, name)


# the bases a mutant wraps by name: a registered adapter name, spelled as a Python identifier
reference = On("reference")
qnn_htp = On("qnn-htp")
qnn = On("qnn")
onnxruntime = On("onnxruntime")
ort_qnn = On("ort-qnn")


def factory(base: str, mutant: str) -> str:
    """The --backend text that runs ``mutant`` on ``base``."""
    return f"bench.mutants:{base.replace('-', '_')}.{mutant}"
