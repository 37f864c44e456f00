"""Pins, by running the HTP simulator, which sign the quantization offset has.

Finding (QNN 2.51 HTP simulator, x86_64): the backend uses the C API convention
    real = scale * (q + offset)          (offset = -zero_point)
for Dequantize, Quantize and ElementWiseAdd alike. The MasterOpDef text writes Dequantize as
``(input - offset) * scale`` and Quantize as ``round(input / scale) + offset``: there "offset" means
the zero point, i.e. minus the API's offset field. Cases and the reference must use the API form.

Two more behaviours pinned here because a reference has to match them or report them:
  - Quantize rounds halves away from zero (0.5 -> 1, 2.5 -> 3, -0.5 -> -1), not to even.
  - Dequantize of UFIXED_POINT_8 reads the offset modulo 256 as an 8-bit zero point: an offset
    outside [-255, 0] wraps (offset +10 behaves as -246). Quantize, ElementWiseAdd, SFIXED_POINT_8
    and UFIXED_POINT_16 Dequantize take a positive offset at face value. This is a backend
    deviation to report, not a convention.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from adapters.qnn.adapter import QnnAdapter  # noqa: E402
from cases.case import Case, Encoding, Tensor  # noqa: E402
from tests.simulator import NEEDS_SIMULATOR  # noqa: E402

pytestmark = NEEDS_SIMULATOR

STORAGE = {"UFIXED_POINT_8": np.uint8, "SFIXED_POINT_8": np.int8, "UFIXED_POINT_16": np.uint16}


@pytest.fixture(scope="module")
def qnn():
    ad = QnnAdapter()
    ok, why = ad.available()
    if not ok:
        pytest.skip(f"QNN backend not usable here: {why}")
    yield ad
    ad.close()


def _dequantize(qnn, dtype, codes, scale, offset):
    q = np.array(codes, STORAGE[dtype])
    case = Case("Dequantize", [Tensor("x", dtype, q.shape, q, Encoding((scale,), (offset,)))], {},
                [Tensor("y", "FLOAT_32", q.shape)])
    out = qnn.run(case)
    assert out.status == "ok", out.message
    return out.outputs[0].tolist()


def _quantize(qnn, dtype, values, scale, offset):
    x = np.array(values, np.float32)
    case = Case("Quantize", [Tensor("x", "FLOAT_32", x.shape, x)], {},
                [Tensor("y", dtype, x.shape, encoding=Encoding((scale,), (offset,)))])
    out = qnn.run(case)
    assert out.status == "ok", out.message
    return out.outputs[0].tolist()


def test_qnn_offset_convention(qnn):
    # API convention: 0.5 * (q - 10). The MasterOpDef's literal (q - offset) * scale would give 5, 10, 15, 132.5.
    assert _dequantize(qnn, "UFIXED_POINT_8", [0, 10, 20, 255], 0.5, -10) == [-5.0, 0.0, 5.0, 122.5]
    # Quantize: q = round(x / 0.5) - (-10), clamped to [0, 255].
    assert _quantize(qnn, "UFIXED_POINT_8", [-5, 0, 5, 100, 130], 0.5, -10) == [0, 10, 20, 210, 255]
    # Signed and 16-bit storage follow the same rule.
    assert _dequantize(qnn, "SFIXED_POINT_8", [-128, 0, 10, 127], 0.5, -10) == [-69.0, -5.0, 0.0, 58.5]
    assert _dequantize(qnn, "SFIXED_POINT_8", [-128, 0, 10, 127], 0.5, 10) == [-59.0, 5.0, 10.0, 68.5]
    assert _quantize(qnn, "SFIXED_POINT_8", [-5, 0, 5, 100, -70], 0.5, 10) == [-20, -10, 0, 127, -128]
    np.testing.assert_allclose(_dequantize(qnn, "UFIXED_POINT_16", [0, 1000, 65535], 0.01, -1000),
                               [-10.0, 0.0, 645.35], rtol=1e-6)


def test_qnn_offset_convention_inside_an_op(qnn):
    # Inputs with offset +10 (zero point -10): codes 0, 10, 20 are 10, 20, 30; a + a = 20, 40, 60 at scale 1.
    a = np.array([0, 10, 20], np.uint8)
    enc = Encoding((1.0,), (10,))
    case = Case("ElementWiseAdd", [Tensor("a", "UFIXED_POINT_8", (3,), a, enc),
                                   Tensor("b", "UFIXED_POINT_8", (3,), a, enc)], {},
                [Tensor("o", "UFIXED_POINT_8", (3,), encoding=Encoding((1.0,), (0,)))])
    out = qnn.run(case)
    assert out.status == "ok", out.message
    assert out.outputs[0].tolist() == [20, 40, 60]


def test_quantize_rounds_half_away_from_zero(qnn):
    values = [-0.25, -0.75, -1.25, 0.25, 0.75, 1.25]  # x / 0.5 = -0.5, -1.5, -2.5, 0.5, 1.5, 2.5
    assert _quantize(qnn, "SFIXED_POINT_8", values, 0.5, 0) == [-1, -2, -3, 1, 2, 3]


def test_dequantize_ufixed8_wraps_offsets_outside_the_8bit_zero_point_range(qnn):
    """A deviation: the API convention would give 0.5 * (q + 10) = 5, 10, 15, 132.5."""
    assert _dequantize(qnn, "UFIXED_POINT_8", [0, 10, 20, 255], 0.5, 10) == [-123.0, -118.0, -113.0, 4.5]
    assert _dequantize(qnn, "UFIXED_POINT_8", [0, 10, 20, 255], 0.5, -300) == [-22.0, -17.0, -12.0, 105.5]
    # Quantize to the same encoding does not wrap: q = round(x / 0.5) - 10.
    assert _quantize(qnn, "UFIXED_POINT_8", [-5, 0, 5, 100, 130], 0.5, 10) == [0, 0, 0, 190, 250]
