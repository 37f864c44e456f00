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
