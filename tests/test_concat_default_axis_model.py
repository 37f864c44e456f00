"""The model of finding concat-sfixed-default-axis-first-input-only (reference/datamovement_models_b.py): signed
fixed-point Concat with axis left out writes in[0] only."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cases.case import Case
from reference import load_families
from reference.models import check

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/Concat/concat-sfixed-default-axis-first-input-only.json"
MODEL = {"diagnosis": "first-input-only-rest-open"}


def _first_input_then(case: Case, rest: int) -> np.ndarray:
    """in[0]'s codes on out[0]'s grid in flat order, then ``rest`` in every other place (what the HTP simulator gave
    for the finding's case in a fresh process, rest = -128)."""
    from cases.quant import quantize
    from reference.expected import arguments

    inputs, _ = arguments(case)
    out = case.outputs[0]
    first = quantize(np.asarray(inputs[0], dtype=np.float64), out.encoding, out.dtype).ravel()
    codes = np.full(int(np.prod(out.shape)), rest, dtype=np.int8)
    codes[: first.size] = first
    return codes.reshape(out.shape)


def test_the_model_reproduces_the_findings_case_whatever_the_unwritten_places_hold() -> None:
    load_families()
    c = Case.load(OWN_CASE)
    assert check(c, [_first_input_then(c, -128)], MODEL)["matches"] is True
    assert check(c, [_first_input_then(c, 17)], MODEL)["matches"] is True


def test_the_model_refuses_the_spec_concatenation_on_the_last_axis() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    load_families()
    c = Case.load(OWN_CASE)
    right = quantize(np.asarray(expected(c)[0]), c.outputs[0].encoding, c.outputs[0].dtype)
    assert check(c, [right], MODEL)["matches"] is False


def test_the_model_refuses_in0_off_its_place() -> None:
    """in[0]'s values one place late (a planted shift) do not match."""
    load_families()
    c = Case.load(OWN_CASE)
    shifted = np.roll(_first_input_then(c, -128).ravel(), 1).reshape(c.outputs[0].shape)
    assert check(c, [shifted], MODEL)["matches"] is False
