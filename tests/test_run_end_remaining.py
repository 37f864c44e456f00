"""The line a run that ends early prints (conformance/run_end.py ``RunEnd.remaining``): how many planned cases are
still to run, counted over every tier the run selected, the default (all tiers) included."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance.run_end import RunEnd

PLANNED = ["conformance/test_conformance.py::test_op[Relu-FLOAT_32-typical]",
           "conformance/test_conformance.py::test_op[Relu-FLOAT_32-edge]",
           "conformance/test_conformance.py::test_op[Relu-FLOAT_32-model]"]  # fmt: skip


def _remaining(tier: str) -> str:
    options = {"--tier": tier, "--model-examples": None}
    config = SimpleNamespace(getoption=lambda name: options[name])
    end = RunEnd(config, SimpleNamespace(run_id="r1", results="r.jsonl"), (20, 5), None)
    end.planned = list(PLANNED)
    return end.remaining([], pytest.ExitCode.INTERRUPTED)


@pytest.mark.parametrize("tier, planned", [("all", 26), ("both", 25), ("deployed", 21), ("typical", 20), ("model", 1)])
def test_an_interrupted_run_counts_the_cases_of_every_tier_it_selected(tier, planned):
    line = _remaining(tier)
    assert f"{planned} of {planned} planned cases still to run" in line, f"--tier {tier}: {line}"
