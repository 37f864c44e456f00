"""Every spec op, end to end: what the suite has for it, or where its spec says why not.

One row per op and one test per column, so a new op that misses something fails with the op's name
and the column: the spec loads; it names a known family; it has a reference (or ``reference: {why}``)
that declares how it is verified; it has an ONNX lowering (or ``onnx: {lowering, why}``); it
generates cases (or ``generate.skip``). A reason that outlives what it excuses fails too, so the specs
never claim a gap the code has closed. The op list and every count come from ``opdefs/``.
"""

from __future__ import annotations

import pytest

import opdefs
import reference
from cases import generate
from opdefs import spec

lowering = pytest.importorskip("adapters.onnx", reason="the ONNX adapters' extra is not installed")

OPS = sorted(p.stem for p in spec.spec_files())
FAMILIES = set(spec.schema()["properties"]["family"]["enum"])


@pytest.mark.parametrize("op", OPS)
def test_spec_loads(op: str) -> None:
    assert opdefs.load(op).name == op, f"{op}.yaml names another op"


@pytest.mark.parametrize("op", OPS)
def test_op_is_in_a_known_family(op: str) -> None:
    family = opdefs.load(op).family
    assert family in FAMILIES, f"{op}: family {family!r}, expected one of {sorted(FAMILIES)} (family: in its YAML)"


@pytest.mark.parametrize("op", OPS)
def test_op_has_a_reference_or_its_spec_says_why_not(op: str) -> None:
    why = opdefs.load(op).no_reference
    if reference.has(op):
        assert not why, f"{op}: has a reference, but its spec still says why not ({why!r}): drop reference:"
    else:
        assert why, f"{op}: no reference registered and no reference: {{why: ...}} in its spec"


@pytest.mark.parametrize("op", [op for op in OPS if reference.has(op)])
def test_reference_declares_how_it_is_verified(op: str) -> None:
    assert reference.verified_by(op), f"{op}: registered without verified_by= (an oracle's name, or 'hand')"


@pytest.mark.parametrize("op", OPS)
def test_op_has_an_onnx_lowering_or_its_spec_says_why_not(op: str) -> None:
    note = opdefs.load(op).no_onnx_lowering
    if op in lowering.supported():  # a LOWERINGS entry, or the general op its spec's computed_as names
        assert not note, f"{op}: lowered, but its spec still says why not ({note!r}): drop onnx:"
    else:
        assert note, f"{op}: not lowered (no LOWERINGS entry, no computed_as) and no onnx: {{lowering, why}}"


def test_every_lowered_op_is_a_spec_op() -> None:
    stray = sorted(set(lowering.LOWERINGS) - set(OPS))
    assert not stray, f"lowerings for ops without a spec: {stray}"


@pytest.mark.parametrize("op", sorted(lowering.LOWERINGS))
def test_lowering_lives_in_the_module_of_its_family(op: str) -> None:
    family = opdefs.load(op).family
    home = [m.__name__ for m in lowering.FAMILY_MODULES if op in m.LOWERINGS]
    owner = [m.__name__ for m in lowering.FAMILY_MODULES if family in m.FAMILIES]
    assert home == owner, f"{op} (family {family!r}) is lowered in {home}, its family's module is {owner}"


@pytest.mark.parametrize("op", sorted(lowering.LOWERINGS))
def test_lowered_op_has_a_reference(op: str) -> None:
    """A lowered op without a reference would run on ONNX Runtime with nothing to judge it by."""
    assert reference.has(op), f"{op}: lowered for ONNX Runtime but has no reference"


@pytest.mark.parametrize("op", OPS)
def test_op_generates_cases_or_its_spec_says_why_not(op: str) -> None:
    definition = opdefs.load(op)
    if not generate.skip_reason(definition):
        assert generate.configs(definition), f"{op}: no datatype configuration and no generate.skip reason"
