"""A Case saves to JSON + npz and loads back bit-exactly, for every datatype and both encodings."""

import numpy as np
import pytest

from cases.case import Case, Encoding, Param, Tensor
from opdefs import dtypes

STORABLE = [d.name for d in dtypes.DTYPES.values() if d.storage is not None]


def _data(name: str, shape=(2, 3)) -> np.ndarray:
    d = dtypes.get(name)
    rng = np.random.default_rng(7)
    if d.kind == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind == "float":
        v = rng.normal(0, 3, shape)
        v.flat[0], v.flat[1] = np.nan, -0.0
        return v.astype(d.storage)
    return rng.integers(d.qmin, min(d.qmax, 2**62), shape, endpoint=True, dtype=np.int64).astype(d.storage)


def _enc(name: str):
    return Encoding((0.125,), (-3,)) if dtypes.get(name).quantized else None


@pytest.mark.parametrize("dtype", STORABLE)
def test_round_trip_is_bit_exact(dtype, tmp_path):
    case = Case("ElementWiseAdd", [Tensor("in[0]", dtype, (2, 3), _data(dtype), _enc(dtype)), None],
                {"axis": Param("axis", "UINT_32", 2), "perm": Param("perm", "UINT_32", np.array([1, 0], np.uint32)),
                 "beta": Param("beta", "FLOAT_32", 0.5)},
                [Tensor("out[0]", dtype, (2, 3), encoding=_enc(dtype))], config=dtype, seed=42,
                strategy="generate:ordinary", decisions=["x"])  # fmt: skip
    back = Case.load(case.save(tmp_path / "c"))
    assert back.to_json() == case.to_json(), "metadata differs after a round trip"
    a, b = case.inputs[0].data, back.inputs[0].data
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), f"{dtype} data changed: {a!r} -> {b!r}"
    assert back.params["perm"].value.dtype == np.uint32 and back.inputs[1] is None


def test_per_axis_encoding_round_trips(tmp_path):
    w = np.arange(24, dtype=np.int8).reshape(1, 2, 3, 4)
    enc = Encoding((0.5, 0.25, 0.125, 1.0), (0, 0, 0, 0), axis=3)
    case = Case("Conv2d", [Tensor("in[1]", "SFIXED_POINT_8", w.shape, w, enc, static=True)], {}, [])
    back = Case.load(case.save(tmp_path / "w.json"))
    assert back.inputs[0].encoding == enc and back.inputs[0].static
    assert back.inputs[0].data.tobytes() == w.tobytes()


def test_negative_case_keeps_its_broken_constraint(tmp_path):
    case = Case("Softmax", [], {}, [], broken="axis_value")
    assert Case.load(case.save(tmp_path / "n")).broken == "axis_value"


def test_data_of_the_wrong_storage_type_is_refused():
    with pytest.raises(TypeError, match="stored as"):
        Tensor("in[0]", "UFIXED_POINT_8", (2,), np.zeros(2, np.float32))
