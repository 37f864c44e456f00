"""Generated cases: every op that has a datatype configuration generates, every case satisfies every
checkable constraint of its spec, and the same hypothesis seed gives the same cases.

``pytest -m slow tests/test_cases_generation.py`` runs the 200-case version (skipped otherwise).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hyp_seed
from hypothesis.errors import Unsatisfiable

import opdefs
import reference
from cases import check, generate
from cases.case import Case
from reference.expected import expected

SPECS = opdefs.load_all()
WITH_CONFIGS = sorted(name for name, op in SPECS.items() if generate.configs(op))
EVERY_CONFIG = [pytest.param(name, c.label, id=f"{name}-{c.label}") for name in WITH_CONFIGS
                for c in generate.configs(SPECS[name])]  # fmt: skip
# ops that generate valid cases (raise it when more do; a drop is a regression)
MIN_GENERATING = 151
# ops whose specs say why no case can be generated (generate.skip)
NOT_GENERATED = {"Buffer", "CreateSparse", "GetSparseIndices", "GetSparseValues", "If", "SparseToDense"}
# a spread of generation features for the reproducibility test: derived dims, free output dims, value
# ranges, param shapes naming a rank, repeated inputs and outputs, quantized and integer tensors
REPRO_OPS = ["Col2Im", "CollectRpnProposals", "Conv2d", "CropAndResize", "ElementWiseAdd", "MultiClassNms", "Pad",
             "PoolAvg2d", "Resize", "StridedSlice", "Stft", "Transpose"]  # fmt: skip


def _infer(op, case):
    return expected(case, with_out_shapes=False) if reference.has(op.name) else None


def _draw(op_name: str, n: int, label: str | None = None, seed: int | None = None) -> list[Case]:
    """Up to ``n`` generated cases for one configuration (the first by default), derandomized unless a
    seed is given; raises Unsatisfiable."""
    op = SPECS[op_name]
    config = next(c for c in generate.configs(op) if label in (None, c.label))
    strategy = generate.case_strategy(op, config, generate.Settings(infer=_infer))
    got: list[Case] = []

    @settings(max_examples=n, derandomize=seed is None, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def collect(case):
        got.append(case)

    if seed is not None:
        collect = hyp_seed(seed)(collect)
    collect()
    return got


def _assert_valid(op_name: str, cases: list[Case]) -> None:
    op = SPECS[op_name]
    assert cases, f"{op_name}: no case generated"
    for case in cases:
        for r in check.evaluate(op, case):
            assert r.status != check.FALSE, f"{op_name}: constraint {r.constraint_id} violated by {case.describe()}"


@pytest.mark.parametrize("op_name, label", EVERY_CONFIG)
def test_generated_cases_satisfy_every_checkable_constraint(op_name, label):
    _assert_valid(op_name, _draw(op_name, 20, label))


@pytest.mark.slow
@pytest.mark.parametrize("op_name, label", EVERY_CONFIG)
def test_200_generated_cases_satisfy_every_checkable_constraint(op_name, label, request):
    if "slow" not in (request.config.option.markexpr or ""):
        pytest.skip("200 cases per op and configuration: run with -m slow")
    _assert_valid(op_name, _draw(op_name, 200, label))


@pytest.mark.parametrize("op_name", REPRO_OPS)
def test_the_same_seed_gives_the_same_cases(op_name):
    first, second = _draw(op_name, 10, seed=20240611), _draw(op_name, 10, seed=20240611)
    assert [c.to_json() for c in first] == [c.to_json() for c in second]
    for a, b in zip(first, second, strict=True):
        arrays_a, arrays_b = a.arrays(), b.arrays()
        assert arrays_a.keys() == arrays_b.keys()
        for key in arrays_a:
            assert np.array_equal(arrays_a[key], arrays_b[key], equal_nan=arrays_a[key].dtype.kind == "f"), (
                f"{op_name}: {key} differs between two runs of {a.describe()}"
            )


def test_every_op_with_a_configuration_generates():
    failing = []
    for name in WITH_CONFIGS:
        try:
            _draw(name, 2)
        except Unsatisfiable as e:
            failing.append(f"{name}: {str(e)[:80]}")
    generating = len(WITH_CONFIGS) - len(failing)
    assert generating >= MIN_GENERATING, f"{generating} ops generate (< {MIN_GENERATING}); failing: {failing}"


def test_only_ops_whose_spec_says_why_have_no_configuration():
    without = {name for name in SPECS if name not in WITH_CONFIGS}
    assert without == NOT_GENERATED, f"ops without configurations changed: {sorted(without ^ NOT_GENERATED)}"
    for name in without:
        assert generate.skip_reason(SPECS[name]), f"{name}: no configuration and no generate.skip reason"
