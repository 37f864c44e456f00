"""What a case runs with: ``OpDef.resolved_params`` (the one place defaults are resolved) and the enum
members of a parameter by name and number (the numbering lives in the YAML only)."""

from __future__ import annotations

import pytest

import opdefs

SPECS = opdefs.load_all()
ENUM_PARAMS = [(op.name, p) for op in SPECS.values() for p, d in op.params.items() if d.get("values")]


def test_a_given_value_wins_over_every_kind_of_default() -> None:
    softmax, neuron = SPECS["Softmax"], SPECS["ElementWiseNeuron"]
    assert softmax.resolved_params({"axis": 0, "beta": 2.0}, [3])["axis"] == 0, "symbolic default beat a given axis"
    elu = neuron.enum_value("operation", "ELU")
    got = neuron.resolved_params({"operation": elu, "alpha": 0.5}, [2])["alpha"]
    assert got == 0.5, "by_operation beat a given alpha"


@pytest.mark.parametrize(
    ("operation", "name", "value"),
    [("ELU", "alpha", 1.0), ("HARD_SIGMOID", "alpha", 0.2), ("HARD_SIGMOID", "beta", 0.5), ("SOFTPLUS", "beta", 1.0)],
)
def test_a_per_operation_default_follows_the_operation(operation: str, name: str, value: float) -> None:
    """ElementWiseNeuron's alpha and beta defaults per operation (seed 4582-4583, 4601-4602)."""
    neuron = SPECS["ElementWiseNeuron"]
    got = neuron.resolved_params({"operation": neuron.enum_value("operation", operation)}, [2]).get(name)
    assert got == value, f"{operation}: {name} resolved to {got}, the seed says {value}"


def test_an_operation_without_a_per_operation_default_gets_none() -> None:
    neuron = SPECS["ElementWiseNeuron"]
    got = neuron.resolved_params({"operation": neuron.enum_value("operation", "RELU")}, [2])
    assert "alpha" not in got and "beta" not in got, f"RELU was given {got}"


@pytest.mark.parametrize(
    ("op", "param", "rank", "value"),
    [("Softmax", "axis", 4, 3), ("Concat", "axis", 2, 1), ("OneHot", "axis", 2, 2), ("Shape", "end", 3, 3)],
)
def test_a_symbolic_default_is_evaluated_on_the_input_rank(op: str, param: str, rank: int, value: int) -> None:
    got = SPECS[op].resolved_params({}, [rank]).get(param)
    assert got == value, f"{op}.{param} on a rank-{rank} input resolved to {got}, expected {value}"


def test_a_symbolic_default_without_the_ranks_it_needs_stays_absent() -> None:
    assert "axis" not in SPECS["Softmax"].resolved_params({}, []), "N-1 resolved with no rank known"


def test_concrete_defaults_are_filled_in() -> None:
    op = SPECS["Softmax"]
    assert op.resolved_params({}, [2])["beta"] == op.params["beta"]["default"]


@pytest.mark.parametrize(("op", "param"), ENUM_PARAMS, ids=[f"{o}.{p}" for o, p in ENUM_PARAMS])
def test_every_enum_member_maps_to_its_number_and_back(op: str, param: str) -> None:
    spec = SPECS[op]
    for name, number in spec.enum(param).items():
        assert spec.enum_value(param, name) == number and spec.enum_name(param, number) == name, f"{op}.{param} {name}"


def test_a_value_that_is_no_member_names_the_members() -> None:
    with pytest.raises(ValueError, match=r"Pad: scheme 9 is not one of CONSTANT \(0\)"):
        SPECS["Pad"].enum_name("scheme", 9)


def test_a_parameter_that_is_no_enum_says_so() -> None:
    with pytest.raises(KeyError, match="not an enum parameter"):
        SPECS["Softmax"].enum("beta")
