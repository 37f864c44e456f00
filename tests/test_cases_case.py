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


# ---- sequences of executions (stateful ops) ------------------------------------------------------------


def _buffer_case(**kw) -> Case:
    enc = Encoding((0.5,), (-128,))
    return Case("Buffer", [Tensor("in[0]", "UFIXED_POINT_8", (1, 2), np.array([[3, 200]], np.uint8), enc),
                           Tensor("in[1]", "BOOL_8", (), np.array(False))],
                {"buffer_size": Param("buffer_size", "UINT_32", 4), "buffer_dim": Param("buffer_dim", "UINT_32", 1)},
                [Tensor("out[0]", "UFIXED_POINT_8", (1, 4), None, enc)], config="UFIXED_POINT_8", seed=3,
                **kw)  # fmt: skip


def test_a_case_without_steps_keeps_the_id_it_had_before_steps_existed():
    # 51d0cf018ede3621 is what cases/case.py computed for this case before the Case type had steps
    case = _buffer_case()
    assert case.case_id() == "51d0cf018ede3621", "a one-execution case changed its id: old records no longer match"
    assert "steps" not in case.to_json(), "a one-execution case's JSON gained a 'steps' key"


def test_a_case_with_steps_round_trips_with_every_step_bit_exact(tmp_path):
    steps = [[np.array([[7, 9]], np.uint8), np.array(True)], [np.array([[1, 2]], np.uint8), None]]
    case = _buffer_case(steps=steps)
    back = Case.load(case.save(tmp_path / "s"))
    assert back.executions == 3 and back.to_json() == case.to_json()
    for k in (1, 2):
        for a, b in zip(case.step_inputs(k), back.step_inputs(k), strict=True):
            assert a.data.dtype == b.data.dtype and a.data.tobytes() == b.data.tobytes(), f"step {k}: {a.name} changed"
    kept = back.step_inputs(2)[1].data.tobytes() == case.inputs[1].data.tobytes()
    assert kept, "an input a step gives no data keeps execution 0's"


def test_steps_are_part_of_a_case_s_identity():
    one = _buffer_case(steps=[[np.array([[7, 9]], np.uint8), None]])
    other = _buffer_case(steps=[[np.array([[7, 8]], np.uint8), None]])
    assert len({_buffer_case().case_id(), one.case_id(), other.case_id()}) == 3


def test_step_data_of_another_shape_is_refused():
    with pytest.raises(ValueError, match="data shape"):
        _buffer_case(steps=[[np.array([7, 9, 1], np.uint8), None]])
