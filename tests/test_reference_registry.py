"""The registry's verification claims: declared where an op is registered, and held to account here.

``@register(op, verified_by=...)`` is what ``python -m reference status`` counts. A claim of an
independent implementation must be backed by a test module that names the op and uses that oracle;
a claim of ``hand`` by a test module that names the op. (Which spec ops have a reference at all is
tests/test_op_coverage.py's column.)
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import reference

TESTS = Path(__file__).resolve().parent
SOURCES = {p.name: p.read_text(encoding="utf-8") for p in sorted(TESTS.glob("test_reference_*.py"))}
# what a test module must contain to count as using an oracle
ORACLE_MARKERS = {
    "onnxruntime": ("onnx_oracle", "InferenceSession", "onnxruntime"),
    "onnx.reference": ("onnx_reference_node", "ReferenceEvaluator", "onnx.reference"),
    "scipy": ("scipy",),
    "numpy": ("numpy",),
}


def _covers(name: str) -> set[str]:
    """Ops a test module derives rather than spells out (its ``COVERS`` set, e.g. the dedicated
    element-wise ops built from the spec's operation names)."""
    if "COVERS" not in SOURCES[name]:
        return set()
    return set(getattr(importlib.import_module(f"tests.{name[:-3]}"), "COVERS", ()))


@pytest.mark.parametrize("op", reference.implemented())
def test_each_verification_claim_is_backed_by_a_test_module(op: str) -> None:
    how = reference.verified_by(op)
    assert how, f"{op}: registered without verified_by"
    naming = [name for name, src in SOURCES.items() if re.search(rf"\b{re.escape(op)}\b", src) or op in _covers(name)]
    assert naming, f"{op}: no tests/test_reference_*.py names it"
    if how == reference.HAND:
        return
    assert how in ORACLE_MARKERS, f"{op}: unknown oracle {how!r}"
    using = [name for name in naming if any(marker in SOURCES[name] for marker in ORACLE_MARKERS[how])]
    assert using, f"{op}: claims {how}, but no test module naming it uses {how} ({naming})"
