"""Whether the QNN HTP simulator (the onnxruntime-qnn wheel's libQnnHtp.so) is here, for the tests that
need it: they skip with the reason where it is not, and carry the ``qnn`` marker."""

from __future__ import annotations

import pytest

from adapters.qnn import bindings

try:
    bindings.default_library()
    MISSING = ""
except bindings.LibraryNotFound as e:
    MISSING = str(e)

NEEDS_SIMULATOR = [pytest.mark.qnn,
                   pytest.mark.skipif(bool(MISSING), reason=f"QNN HTP simulator not available: {MISSING}")]  # fmt: skip


def outputs_of(case_path) -> list:
    """The simulator's outputs for the saved case at ``case_path``, run alone in a new adapter (what a finding's model
    test compares against); skips where the simulator or its backend is not usable here."""
    if MISSING:
        pytest.skip(MISSING)
    from adapters.qnn import adapter as qnn_adapter
    from cases.case import Case

    with qnn_adapter.QnnAdapter(timeout=60) as ad:
        ok, why = ad.available()
        if not ok:
            pytest.skip(why)
        out = ad.run(Case.load(case_path))
    assert out.status == "ok", out.message
    return out.outputs
