"""Simulated HTP targets and backend variants: ``--qnn-soc`` takes effect (in the records and in what the
backend does), ``qnn-htp@v73`` names a target, ``qnn-htp@2.47`` a release."""

from __future__ import annotations

import json

import pytest

import adapters
from adapters.qnn import targets
from tests import conformance_runs
from tests.simulator import NEEDS_SIMULATOR


@pytest.mark.parametrize("variant, options", [
    ("2.47", {"sdk": "2.47"}),
    ("v73", {"soc": targets.GENERATIONS["v73"]}),
    ("soc43", {"soc": 43}),
    ("arch75", {"arch": 75}),
    ("2.48.40+v79", {"sdk": "2.48.40", "soc": targets.GENERATIONS["v79"]}),
    ("ort-qnn-2.3.0", {"sdk": "ort-qnn==2.3.0"}),
    ("default", {"target": "default"}),
])  # fmt: skip
def test_a_variant_names_adapter_options(variant, options):
    assert targets.parse_variant(variant) == options


@pytest.mark.parametrize("variant", ["v99", "fast", "2.47+2.51"])
def test_a_variant_that_names_nothing_known_is_refused(variant):
    with pytest.raises(ValueError):
        targets.parse_variant(variant)


def test_a_generations_soc_is_labelled_by_its_generation_and_others_by_number():
    assert targets.target_label(None, None) == targets.DEFAULT
    assert all(targets.target_label(soc, None) == gen for gen, soc in targets.GENERATIONS.items())
    assert targets.target_label(52, None) == "soc52" and targets.target_label(None, 73) == "arch73"


def test_targets_option_refuses_an_unknown_generation_in_one_line():
    with pytest.raises(ValueError, match="unknown target 'v99'"):
        targets.parse_targets("default,v99")


def test_a_backend_name_with_a_variant_builds_the_base_backend_with_it():
    with pytest.raises(ValueError, match="variant 'bogus'"):
        adapters.get("qnn-htp@bogus")


def test_the_cpu_backend_has_no_target():
    with pytest.raises(ValueError, match="no simulated target"):
        adapters.get("qnn-cpu@v73")


# ---- the option takes effect ---------------------------------------------------------------------
def _gelu_f32(tmp_path, *options: str) -> list[dict]:
    """FLOAT_32 Gelu, typical tier: on the default target the simulator has no kernel for it at finalize
    (findings/qnn-htp.yaml gelu-f32-default-soc-finalize); on SM8550 (SoC 43) it has."""
    results = tmp_path / f"gelu{'-'.join(options)}.jsonl"
    proc = conformance_runs.run("--backend", "qnn-htp", "--op", "^Gelu$", "-k", "FLOAT_32-typical", "--examples", "2",
                                "--seed", "3", "--no-shrink", "--batch", "1", f"--results={results}", "-q",
                                *options)  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    records = [json.loads(x) for x in results.read_text().splitlines()]
    return [r for r in records if r.get("kind") == "positive"]


def _on_simulator(test):
    for mark in NEEDS_SIMULATOR:
        test = mark(test)
    return test


@pytest.mark.slow
@_on_simulator
def test_qnn_soc_43_is_recorded_and_runs_what_the_default_target_cannot(tmp_path):
    default = _gelu_f32(tmp_path)
    soc43 = _gelu_f32(tmp_path, "--qnn-soc", "43")
    assert default and soc43, "both runs recorded cases"
    assert {r["backend_info"]["soc"] for r in default} == {"default"}
    assert {r["backend_info"]["soc"] for r in soc43} == {43}, "every record names the SoC the run asked for"
    stages = lambda recs: {(r.get("details") or {}).get("stage") for r in recs}  # noqa: E731
    assert stages(default) == {"finalize"}, f"default target: expected no kernel at finalize, got {stages(default)}"
    assert stages(soc43) == {"ok"}, f"SoC 43: expected the cases to run, got {stages(soc43)}"


@_on_simulator
def test_a_soc_the_simulator_does_not_know_stops_the_run_at_the_door():
    proc = conformance_runs.run("--backend", "qnn-htp", "--qnn-soc", "79", "--op", "^Relu$")
    err = [x for x in proc.stderr.splitlines() if x.strip() and not x.startswith("<")]
    assert proc.returncode == 4, (proc.returncode, proc.stderr[-1000:])
    assert any("soc=79" in line for line in err), err
