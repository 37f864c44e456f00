"""FP16_ACCURATE: a float32 result outside binary32's budget and inside binary16's, on a backend that documents
float16 arithmetic for float32 graphs, is neither a pass nor a deviation."""

from __future__ import annotations

import numpy as np

from cases.case import Case, Param, Tensor
from conformance.execute import RunContext, execute
from reference.expected import expected
from tests.fake_backends import Canned


def _softmax() -> Case:
    x = Tensor("in[0]", "FLOAT_32", (2, 5), np.linspace(-2, 2, 10, dtype=np.float32).reshape(2, 5))
    return Case("Softmax", [x], {"beta": Param("beta", "FLOAT_32", 1.0)}, [Tensor("out[0]", "FLOAT_32", (2, 5))])


FLOAT16_DECLARED = {"arithmetic": {"FLOAT_32": {"computes_in": "float16", "source": "the vendor's manual"}}}


def _backend(outputs: list[np.ndarray], declares: bool) -> Canned:
    """Returns fixed outputs; declares float16 arithmetic for FLOAT_32 where told to."""
    return Canned(outputs, capabilities=FLOAT16_DECLARED if declares else {})


def _as_float16(case: Case) -> list[np.ndarray]:
    return [expected(case)[0].astype(np.float16).astype(np.float32)]


def test_float16_accuracy_on_a_backend_that_documents_it_is_its_own_verdict():
    case = _softmax()
    rec = execute(case, RunContext(_backend(_as_float16(case), declares=True), "fake"))
    assert rec.verdict == "FP16_ACCURATE", (rec.verdict, rec.message)
    assert "the vendor's manual" in rec.message, rec.message


def test_float16_accuracy_on_a_backend_that_promises_float32_is_a_failure():
    case = _softmax()
    assert execute(case, RunContext(_backend(_as_float16(case), declares=False), "fake")).verdict == "FAIL"


def test_worse_than_float16_is_a_failure_whatever_the_backend_documents():
    case = _softmax()
    off = [(expected(case)[0] * 1.05).astype(np.float32)]
    assert execute(case, RunContext(_backend(off, declares=True), "fake")).verdict == "FAIL"


def test_the_ort_qnn_route_on_htp_declares_float16_arithmetic_and_on_another_library_does_not(tmp_path):
    """ort-qnn runs on the same libQnnHtp.so as qnn-htp, with the EP's enable_htp_fp16_precision at its default:
    FLOAT_32 is computed at float16 there (findings/routes.yaml's LayerNorm FLOAT_32 route case, replayed by
    tests/test_routes.py, is FP16_ACCURATE); a non-HTP backend library declares nothing."""
    from adapters.ort_qnn import OrtQnnAdapter

    htp, cpu = tmp_path / "libQnnHtp.so", tmp_path / "libQnnCpu.so"
    htp.write_bytes(b""), cpu.write_bytes(b"")
    for lib, declared in ((htp, "float16"), (cpu, None)):
        ad = OrtQnnAdapter(library=lib)
        try:
            got = ((ad.capabilities().get("arithmetic") or {}).get("FLOAT_32") or {}).get("computes_in")
        finally:
            ad.close()
        assert got == declared, (lib.name, got)
