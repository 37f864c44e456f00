"""Every option is checked at the door: one line, exit 4, nothing written, before any case runs; and what the
expectations file did (or failed to do) during the run is said in its summary."""

from __future__ import annotations

import pytest

from tests.conformance_runs import lines, run
from tests.fault_runs import PATIENCE
from tests.test_plugin_door import USAGE, refused


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_case_timeout_that_is_not_a_positive_number_of_seconds_is_refused(tmp_path, value):
    line = refused(tmp_path, "--backend", "reference", "--case-timeout", value)
    assert "--case-timeout" in line and "above 0" in line, line


def test_a_missing_expectations_file_is_refused_naming_it(tmp_path):
    missing = tmp_path / "known.yaml"
    line = refused(tmp_path, "--backend", "reference", "--expectations", str(missing))
    assert str(missing) in line, line


def test_a_malformed_expectations_file_is_refused_with_its_line(tmp_path):
    bad = tmp_path / "known.yaml"
    bad.write_text("- op: Relu\n  reason: fine\n- op: [Softmax\n")
    line = refused(tmp_path, "--backend", "reference", "--expectations", str(bad))
    assert f"{bad}:" in line and "YAML" in line, line


def test_a_missing_specs_directory_is_refused(tmp_path):
    missing = tmp_path / "no-such-specs"
    line = refused(tmp_path, "--backend", "reference", "--specs", str(missing))
    assert str(missing) in line and "no such directory" in line, line


@pytest.mark.parametrize("where", ["under a file", "a directory"])
def test_a_results_file_that_cannot_be_written_is_refused_and_leaves_nothing(tmp_path, where):
    blocker = tmp_path / "blocker"
    if where == "under a file":
        blocker.write_text("a file where the results directory would be")
        results = blocker / "r.jsonl"
    else:
        blocker.mkdir()
        results = blocker
    proc = run("--backend", "reference", "--op", "^Relu$", "--results", str(results), timeout=PATIENCE)
    said = lines(proc.stdout + proc.stderr)
    assert proc.returncode == USAGE and len(said) == 1, f"exit {proc.returncode}:\n" + "\n".join(said[-20:])
    assert "--results" in said[0], said[0]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["blocker"], "a refused run left files behind"


def test_the_summary_names_unused_expectations_and_ones_that_take_in_many_ops(tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text("- op: 're:.*'\n  verdicts: [REJECTED]\n  reason: everything, by mistake\n"
                     "- op: Relu\n  config: NO_SUCH_CONFIG\n  reason: stale\n")  # fmt: skip
    proc = run("--backend", "tests.fake_backends:rejecting", "--op", "^(Relu|Softmax)$", "--examples", "2", "--tier",
               "typical", "--no-shrink", "--expectations", str(known), "--results", str(tmp_path / "r.jsonl"),
               timeout=PATIENCE)  # fmt: skip
    said = proc.stdout
    assert f"expectation {known}:1 (op re:.*) matched cases of 2 ops (Relu, Softmax)" in said, said[-3000:]
    assert f"expectation {known}:4 matched no case" in said, said[-3000:]
