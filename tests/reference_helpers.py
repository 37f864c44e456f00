"""What the reference test modules share besides the oracles (tests/onnx_oracle.py): calling the
reference with the spec's defaults, drawing data, and comparing exactly, so a failed check reads the
same in every module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import opdefs
import reference


def ref(op: str, inputs: list[np.ndarray], params: dict[str, Any] | None = None,
        out_shapes: Sequence[Any] | None = None, out_dtypes: Sequence[Any] | None = None,
        ) -> list[np.ndarray]:  # fmt: skip
    """The reference with omitted params at their spec defaults."""
    return reference.run(op, inputs, params or {}, out_shapes, out_dtypes)


def f32(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard-normal float32 data: what the float32 oracles take, exactly representable in float64."""
    return rng.standard_normal(shape).astype(np.float32)


def same(actual: Any, expected: Any, what: str) -> None:
    """Exact equality, shape first: layout and indexing ops move values, they never round them."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    np.testing.assert_array_equal(actual, expected, err_msg=what)


def assert_reading_recorded(op: str, about: str) -> None:
    """Where the MasterOpDef is unclear the reference takes a reading; the reading must stand in the
    op's YAML ``decisions:`` with the seed line it reads, or the matrix cannot say what was judged."""
    decisions = opdefs.load(op).decisions
    assert any(d["about"] == about and d.get("line") for d in decisions), f"{op}: no recorded decision on {about!r}"


def member(op: str, param: str, name: str) -> int:
    """The number ``op``'s spec gives enum member ``name`` of ``param``: tests name members, the YAML numbers them."""
    return opdefs.load(op).enum_value(param, name)


def case(op: str, inputs: Sequence[Any], params: dict[str, Any], outputs: Sequence[Any], config: str = "") -> Any:
    """A Case from plain values: inputs as arrays (FLOAT_16 or FLOAT_32 as stored, or (dtype, array[, encoding])),
    params as values (their QNN datatype read from the spec), outputs as (dtype, shape[, encoding])."""
    from cases.case import Case, Encoding, Param, Tensor

    def enc(e: Any) -> Encoding | None:
        return None if e is None else Encoding(tuple(e[0]), tuple(e[1]))

    spec = opdefs.load(op)
    ins = []
    for k, x in enumerate(inputs):
        dtype, data, e = (x + (None,))[:3] if isinstance(x, tuple) else (None, x, None)
        if dtype is None:
            dtype = "FLOAT_16" if np.asarray(data).dtype == np.float16 else "FLOAT_32"
        data = np.asarray(data, dtype=opdefs.dtypes.get(dtype).storage)
        ins.append(Tensor(f"in[{k}]", dtype, data.shape, data, enc(e)))
    ps = {name: Param(name, spec.params[name]["dtype"], np.asarray(v) if isinstance(v, list) else v)
          for name, v in params.items()}  # fmt: skip
    outs = [Tensor(f"out[{k}]", o[0], tuple(o[1]), None, enc(o[2] if len(o) > 2 else None))
            for k, o in enumerate(outputs)]  # fmt: skip
    return Case(op, ins, ps, outs, config=config or ins[0].dtype)


def modelled(c: Any, name: str | list[str]) -> list[np.ndarray]:
    """What a backend with the deviation a named model states (or a diagnosis list's, several at once) returns for
    case ``c`` (reference.models)."""
    from reference import models

    assert not models.problems({"diagnosis": name}, c.op), models.problems({"diagnosis": name}, c.op)
    return models._modelled(c, "diagnosis", name)
