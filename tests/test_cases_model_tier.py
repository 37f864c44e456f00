"""The model tier: layer shapes of public models (``generate.model_layers``) drawn as typical cases at their size."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, Phase, given, settings

import opdefs
from cases import generate
from cases.case import MODEL
from cases.generate.model_rows import model_row, rows_for_cell
from reference.expected import infer

SPECS, _ = opdefs.load_each()
ROWS = [(name, k) for name, op in sorted(SPECS.items()) for k in range(len(op.model_layers))]


def _draw(op, row: dict, config_index: int = 0):
    config = generate.configs(op)[config_index]
    s = generate.Settings(infer=infer, tier=generate.TYPICAL, stratify=False, model_row=row)
    got = []

    @settings(max_examples=1, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(generate.case_strategy(op, config, s))
    def run(case) -> None:
        got.append(case)

    run()
    return got[0]


def test_some_spec_lists_model_layers():
    assert ROWS, "no spec lists a model layer: the tests below check nothing"


@pytest.mark.parametrize("op_name, k", ROWS)
def test_every_listed_layer_is_a_case_with_the_rows_shapes_and_parameters(op_name, k):
    op = SPECS[op_name]
    row = op.model_layers[k]
    case = _draw(op, row)
    assert case.tier == MODEL
    for ref, shape in row["shapes"].items():
        got = case.inputs[int(ref[3:-1])]
        assert got is not None and list(got.shape) == shape, f"{op_name} {row['model']}: {ref} is {got}"
    usable = model_row(op, row)
    for name, value in usable.params.items():
        assert name in case.params, f"{op_name} {row['model']}: {name} left out"
        assert (case.params[name].value == value).all() if hasattr(value, "shape") else \
            case.params[name].value == value, f"{op_name} {row['model']}: {name} = {case.params[name].value}"


def test_each_next_configuration_takes_the_next_layers_so_the_cells_run_every_row():
    op = SPECS["Conv2d"]
    taken = {tuple(sorted(r["shapes"]["in[0]"])) for k in range(len(generate.configs(op)))
             for r in rows_for_cell(op, k, 1)}  # fmt: skip
    assert len(taken) == len(op.model_layers)


def test_a_layer_is_deployed_size_not_a_drawn_one():
    for name in ("Conv2d", "MatMul", "Softmax", "LayerNorm", "FullyConnected"):
        sizes = sorted(max(math.prod(s) for s in r["shapes"].values()) for r in SPECS[name].model_layers)
        assert sizes[len(sizes) // 2] >= 16384, f"{name}: median largest input {sizes[len(sizes) // 2]}"


def test_a_row_naming_no_member_is_a_clear_error():
    op = SPECS["Resize"]
    bad = {**op.model_layers[0], "params": {"interpolation_mode": "BICUBIC"}}
    with pytest.raises(ValueError, match="not a member name"):
        model_row(op, bad)
