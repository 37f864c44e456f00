"""Fixtures the suite's own test modules share."""

from __future__ import annotations

import pytest

import adapters


@pytest.fixture(scope="module")
def cpu():
    """ONNX Runtime's CPU execution provider, for the lowering tests; the module skips where it cannot run."""
    ad = adapters.get("onnxruntime")
    ok, why = ad.available()
    if not ok:
        pytest.skip(f"onnxruntime CPU EP not usable here: {why}")
    return ad
