"""Negative cases break exactly the constraint they are labelled with, and every kind gets some."""

from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings

import opdefs
from cases import check, generate, negative
from reference.expected import infer

OPS = ["Softmax", "Transpose", "Conv2d", "ElementWiseAdd", "Concat", "Argmax", "Gather", "ReduceMean", "Split",
       "SpaceToDepth", "DepthToSpace", "MatMul", "StridedSlice", "Tile", "Pad", "TopK", "L2Norm"]  # fmt: skip


def _negatives(op_name: str, tries: int = 8):
    op = opdefs.load(op_name)
    configs = generate.configs(op)
    found = {}
    targets = [c for c in op.constraints if negative.negatable(c)]

    @settings(max_examples=tries, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(generate.case_strategy(op, configs[0], generate.Settings(infer=infer)))
    def collect(case):
        for c in targets:
            if c.id not in found:
                bad = negative.break_one(op, case, c)
                if bad is not None:
                    found[c.id] = (c, bad)

    collect()
    return op, found


@pytest.mark.parametrize("op_name", OPS)
def test_each_negative_case_violates_its_label_and_nothing_else(op_name):
    op, found = _negatives(op_name)
    for cid, (_, bad) in found.items():
        results = check.evaluate(op, bad)
        false = [r.constraint_id for r in results if r.status == check.FALSE]
        assert false == [cid], f"{op_name}: case labelled {cid} breaks {false}: {bad.describe()}"
        assert bad.broken == cid


# Argmax's only shape constraint, rank(in[0]) > 0, cannot break alone: a rank-0 input also breaks the
# axis range 0 <= axis <= n - 1 (n = 0). See the test below.
COUPLED = {"Argmax"}


@pytest.mark.parametrize("op_name", [o for o in OPS if o not in COUPLED])
def test_every_constraint_kind_of_the_op_gets_a_negative_case(op_name):
    op, found = _negatives(op_name)
    kinds = defaultdict(list)
    for c in op.constraints:
        if negative.negatable(c):
            kinds[c.kind].append(c.id)
    covered = {c.kind for c, _ in found.values()}
    missing = {k: ids for k, ids in kinds.items() if k not in covered}
    assert not missing, f"{op_name}: no negative case for kinds {missing}"


def test_a_constraint_coupled_to_another_gets_no_negative_case():
    op, found = _negatives("Argmax")
    assert "in0_shape" not in found, "rank(in[0]) > 0 was broken alone, yet axis < n must break with it"
    assert "axis_value" in found
