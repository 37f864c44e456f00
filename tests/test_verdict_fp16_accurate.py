"""FP16_ACCURATE: a float32 result outside binary32's budget and inside binary16's, on a backend that documents
float16 arithmetic for float32 graphs, is neither a pass nor a deviation."""

from __future__ import annotations

import numpy as np
import pytest

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


@pytest.mark.parametrize(("ops", "verdict"), [(["LayerNorm"], "FAIL"), (["LayerNorm", "Softmax"], "FP16_ACCURATE")])
def test_float16_declared_for_some_ops_relaxes_those_ops_only(ops: list[str], verdict: str):
    """The HTP at v68 computes FLOAT_32 in float32 but for a few ops: a declaration naming its ops relaxes none else."""
    case = _softmax()
    declared = {"arithmetic": {"FLOAT_32": {**FLOAT16_DECLARED["arithmetic"]["FLOAT_32"], "ops": ops}}}
    rec = execute(case, RunContext(Canned(_as_float16(case), capabilities=declared), "fake"))
    assert rec.verdict == verdict, (ops, rec.verdict, rec.message)


def test_worse_than_float16_is_a_failure_whatever_the_backend_documents():
    case = _softmax()
    off = [(expected(case)[0] * 1.05).astype(np.float32)]
    assert execute(case, RunContext(_backend(off, declares=True), "fake")).verdict == "FAIL"


@pytest.mark.parametrize(("library", "soc", "declared"), [
    ("libQnnHtp.so", 43, ("float16", None)), ("libQnnHtp.so", None, ("float16", "FLOAT16_AT_V68")),
    ("libQnnCpu.so", 43, (None, None))])
def test_the_ort_qnn_route_declares_float16_arithmetic_on_htp_for_every_op_from_v69(tmp_path, library, soc, declared):
    """ort-qnn runs on the same libQnnHtp.so as qnn-htp: FLOAT_32 is computed at float16 there for every op from v69
    (SoC 36) on, and at the default SoC (v68) for the few ops measured so, as on qnn-htp
    (adapters.qnn.targets.float32_declaration); a non-HTP backend library declares nothing."""
    from adapters.ort_qnn import OrtQnnAdapter
    from adapters.qnn import targets

    lib = tmp_path / library
    lib.write_bytes(b"")
    ad = OrtQnnAdapter(library=lib, soc=soc)
    try:
        got = (ad.capabilities().get("arithmetic") or {}).get("FLOAT_32") or {}
    finally:
        ad.close()
    ops = list(getattr(targets, declared[1])) if declared[1] else None
    assert (got.get("computes_in"), got.get("ops")) == (declared[0], ops), (library, soc, got)


@pytest.mark.parametrize(("soc", "arch", "arithmetic"), [
    (None, None, "float32"), (30, None, "float32"), (36, None, "float16"), (43, None, "float16"),
    (87, None, "float16"), (None, 68, "float32"), (None, 73, "float16"), (99, None, "float16")])
def test_the_htp_computes_float32_in_float16_from_v69_and_in_float32_at_v68(soc, arch, arithmetic):
    """Measured: v68 gives FLOAT_32 Softmax within a few float32 ulps, v69 on within binary16's budget only; a SoC the
    table does not name keeps Qualcomm's documented float16."""
    from adapters.qnn.targets import float32_arithmetic

    assert float32_arithmetic(soc, arch) == arithmetic
