"""QNN adapter pieces that need no backend library: layouts, version gate, case shaping, options."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from adapters.qnn import adapter as qnn_adapter  # noqa: E402
from adapters.qnn import bindings as b  # noqa: E402
from adapters.qnn import graph as g  # noqa: E402
from cases.case import Case, Encoding, Param, Tensor  # noqa: E402


def test_struct_layouts_match_the_measured_abi():
    assert ctypes.sizeof(b.Tensor) == 144
    assert ctypes.sizeof(b.TensorV2) == 136
    assert ctypes.sizeof(b.Param) == 160
    assert ctypes.sizeof(b.OpConfig) == 80
    assert ctypes.sizeof(b.QuantizeParams) == 40
    assert ctypes.sizeof(b.Scalar) == 16
    assert ctypes.sizeof(b.HtpDeviceCustomConfig) == 16
    assert b.InterfaceHead.apiVersion.offset == 16 and ctypes.sizeof(b.InterfaceHead) == 40
    v2 = b.TensorV2
    offsets = (v2.quantizeParams.offset, v2.rank.offset, v2.dimensions.offset, v2.memType.offset, v2.mem.offset,
               v2.isDynamicDimensions.offset, v2.sparseParams.offset, v2.isProduced.offset)
    assert offsets == (32, 72, 80, 88, 96, 112, 120, 132)
    assert len(b.FUNCTION_TABLE) == 56
    assert [b.FUNCTION_TABLE[i][0] for i in (3, 4, 7, 18, 21, 48)] == [
        "backendGetApiVersion", "backendGetBuildId", "backendValidateOpConfig", "graphAddNode", "graphExecute",
        "errorGetMessage",
    ]


@pytest.mark.parametrize("version", [(2, 36, 0), (2, 37, 0), (2, 38, 0), (2, 39, 0), (2, 40, 0)])
def test_version_gate_accepts_every_measured_api(version):
    """The core APIs of onnxruntime-qnn 2.3.0 (QNN 2.47) to 2.7.0 (QNN 2.51)."""
    b.check_api_version(version)


def test_version_gate_accepts_a_later_minor():
    b.check_api_version((2, 41, 3))  # later minors append entries; the known prefix keeps its order


@pytest.mark.parametrize("version", [(3, 0, 0), (1, 14, 0), (2, 13, 0), (2, 35, 9)])
def test_version_gate_refuses_unknown_api(version):
    with pytest.raises(b.UnsupportedApiVersion) as info:
        b.check_api_version(version)
    text = str(info.value)
    assert ".".join(map(str, version)) in text and "2.36+" in text
    assert info.value.found == version


def test_version_gate_on_a_fake_provider_struct():
    """The same check as at load time, fed from an interface head laid out in memory."""
    head = b.InterfaceHead(6, b"FAKE", b.ApiVersion(b.Version(3, 1, 0), b.Version(5, 0, 0)))
    read = b.InterfaceHead.from_address(ctypes.addressof(head))
    with pytest.raises(b.UnsupportedApiVersion, match=r"3\.1\.0"):
        b.check_api_version(read.apiVersion.core.tuple())


def test_missing_library_is_reported_not_raised(tmp_path, monkeypatch):
    monkeypatch.setenv(b.ENV_LIBRARY, str(tmp_path / "libQnnNothing.so"))
    ad = qnn_adapter.QnnAdapter()
    ok, why = ad.available()
    assert not ok and "libQnnNothing.so" in why
    assert ad.name == "qnn:libQnnNothing.so"
    out = ad.run(Case("ElementWiseAdd", [], {}, []))
    assert out.status == "error" and "unavailable" in out.message
    ad.close()


def test_absent_inputs():
    t = Tensor("a", "FLOAT_32", (1,), np.zeros(1, np.float32))
    assert g.present_inputs(Case("Op", [t, None, None], {}, [])) == [t]
    with pytest.raises(g.Unexpressible, match="input 1 is absent"):
        g.present_inputs(Case("Op", [t, None, t], {}, []))


def test_precision_auto_follows_the_case():
    f16 = Tensor("a", "FLOAT_16", (1,), np.zeros(1, np.float16))
    f32 = Tensor("a", "FLOAT_32", (1,), np.zeros(1, np.float32))
    auto = g.GraphOptions()
    assert auto.precision_for(Case("Op", [f16], {}, [f16])) == "float16"
    assert auto.precision_for(Case("Op", [f32], {}, [f32])) == "float32"
    assert g.GraphOptions("none").precision_for(Case("Op", [f16], {}, [f16])) is None
    with pytest.raises(ValueError):
        g.GraphOptions("float8")


def test_builder_sizes_buffers_from_the_declared_shape():
    bld = g._Builder()
    t = bld.tensor("x", "UFIXED_POINT_8", (2, 3), b.TENSOR_STATIC, Encoding((0.5,), (-3,)), np.zeros((2, 3), np.uint8))
    v = t.u.v1
    assert (v.rank, v.dimensions[0], v.dimensions[1], v.mem.clientBuf.dataSize) == (2, 2, 3, 6)
    assert v.quantizeParams.encodingDefinition == b.ENCODING_DEF_DEFINED
    assert v.quantizeParams.u.scaleOffset.offset == -3
    per_axis = bld.tensor("w", "SFIXED_POINT_8", (1, 2), b.TENSOR_STATIC, Encoding((0.5, 0.25), (0, 0), axis=1))
    q = per_axis.u.v1.quantizeParams
    assert q.quantizationEncoding == b.QUANT_AXIS_SCALE_OFFSET
    assert (q.u.axisScaleOffset.axis, q.u.axisScaleOffset.numScaleOffsets) == (1, 2)
    assert q.u.axisScaleOffset.scaleOffset[1].scale == 0.25
    with pytest.raises(g.Unexpressible, match="data shape"):
        bld.buffer("x", "FLOAT_32", (4,), np.zeros(3, np.float32))
    f = bld.tensor("f", "FLOAT_32", (2,), b.TENSOR_APP_WRITE)
    assert f.u.v1.quantizeParams.encodingDefinition == b.UNDEFINED


def test_scalar_params_use_the_declared_dtype():
    bld = g._Builder()
    p, is_tensor = bld.param(Param("axis", "UINT_32", 3))
    assert not is_tensor and p.u.scalar.dataType == 0x0132 and p.u.scalar.value.u32 == 3
    p, _ = bld.param(Param("beta", "FLOAT_32", 0.5))
    assert p.u.scalar.dataType == 0x0232 and p.u.scalar.value.f32 == 0.5
    p, _ = bld.param(Param("keep_dims", "BOOL_8", True))
    assert p.u.scalar.dataType == 0x0508 and p.u.scalar.value.b8 == 1
    p, is_tensor = bld.param(Param("perm", "UINT_32", np.array([1, 0], np.uint32)))
    assert is_tensor and p.u.tensor.u.v1.type == b.TENSOR_STATIC and p.u.tensor.u.v1.dimensions[0] == 2


def test_make_reads_options_and_refuses_typos(tmp_path):
    lib = tmp_path / "libQnnCpu.so"
    lib.write_bytes(b"")
    ad = qnn_adapter.make({"library": str(lib), "precision": "float16", "soc": "43", "timeout": "5"})
    assert ad.name == "qnn:libQnnCpu.so"
    assert (ad.options.precision, ad.options.soc, ad.timeout) == ("float16", 43, 5.0)
    with pytest.raises(ValueError, match="precison"):
        qnn_adapter.make({"precison": "float16"})
