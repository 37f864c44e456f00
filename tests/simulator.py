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
