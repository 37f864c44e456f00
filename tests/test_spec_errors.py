"""A malformed spec errors its own op only: the conformance run reports it as that op's failure, naming
file:line: field, and every other selected op still runs."""

from __future__ import annotations

import shutil

import opdefs
from tests.conformance_runs import run
from tests.paths import DATA

BROKEN = DATA / "broken_specs" / "MissingInput.yaml"  # line 18: axis_value names in[3], which does not exist


def test_load_each_keeps_the_good_specs_and_reports_the_bad_one(tmp_path, monkeypatch):
    shutil.copy(BROKEN, tmp_path)
    monkeypatch.setenv(opdefs.spec.SPECS_ENV, str(tmp_path))
    good, bad = opdefs.load_each()
    assert list(bad) == ["MissingInput"], list(bad)
    assert len(good) == len(opdefs.spec.spec_files()), "a malformed spec cost other specs"
    where = f"{tmp_path / 'MissingInput.yaml'}:18: params[axis].constraints[axis_value].check"
    assert where in str(bad["MissingInput"]), str(bad["MissingInput"])


def test_a_malformed_spec_fails_its_own_op_and_the_others_run(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(BROKEN, specs)
    results = tmp_path / "r.jsonl"
    proc = run("--backend", "reference", "--specs", str(specs), "--op", "^(MissingInput|Relu)$", "--examples", "2",
               "--no-shrink", "--results", str(results), "-rA")  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "test_op[MissingInput-spec-error]" in failed[0], "\n".join(failed)
    assert f"{specs / 'MissingInput.yaml'}:18: params[axis].constraints[axis_value].check" in out, out[-3000:]
    passed = [line for line in out.splitlines() if line.startswith("PASSED") and "[Relu-" in line]
    assert passed, f"Relu did not run beside the malformed spec:\n{out[-3000:]}"
    assert "Relu" in results.read_text() and "MissingInput" not in results.read_text().split("\n", 1)[1]


def test_a_key_written_twice_is_refused_with_its_line_not_silently_dropped(tmp_path, monkeypatch):
    text = (opdefs.spec.HERE / "Relu.yaml").read_text(encoding="utf-8").rstrip("\n")
    lines = text.count("\n") + 1
    (tmp_path / "Relu.yaml").write_text(text + "\nsummary: a second summary\n", encoding="utf-8")
    monkeypatch.setenv(opdefs.spec.SPECS_ENV, str(tmp_path))
    _, bad = opdefs.load_each()
    assert list(bad) == ["Relu"], list(bad)
    assert f"{tmp_path / 'Relu.yaml'}:{lines + 1}: summary: key written twice" in str(bad["Relu"]), str(bad["Relu"])
