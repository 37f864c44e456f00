"""The suite as an installed pytest plugin with pluggable backends: an external adapter installed from a
temporary directory runs through its entry point (the README's own example), ``package.module:factory``
runs one without installing it, and pytest's own options (--lf, --sw, --junitxml, -k) behave."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

import adapters
from reports import record
from tests.conformance_runs import child_env, lines, plugin_installed, run
from tests.paths import REPO

README = REPO / "README.md"


def _readme_adapter() -> tuple[str, str]:
    """The README's external adapter (python) and its entry-point declaration (toml)."""
    text = README.read_text()
    code = re.search(r"```python\n(# my_backend\.py\n.*?)```", text, re.S)
    toml = re.search(r"```toml\n(# pyproject\.toml of your package\n.*?)```", text, re.S)
    assert code and toml, "the README's 'Your own backend' example is gone"
    return code.group(1), toml.group(1)


@pytest.fixture(scope="module")
def installed_backend(tmp_path_factory) -> Path:
    """The README's adapter, installed into a directory of its own as pip would lay it out (the module
    beside a ``.dist-info`` holding its entry points), without needing build tools or a network."""
    site = tmp_path_factory.mktemp("site")
    code, entry = _readme_adapter()
    (site / "my_backend.py").write_text(code)
    info = site / "my_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-backend\nVersion: 0.1\n")
    group = re.search(r'\[project\.entry-points\."([^"]+)"\]\n(.*)', entry, re.S)
    assert group, f"no entry-point table in the README's toml:\n{entry}"
    entries = group.group(2).replace('"', "")
    (info / "entry_points.txt").write_text(f"[{group.group(1)}]\n{entries}")
    (info / "RECORD").write_text("")
    return site


def test_the_built_in_adapters_are_registered_by_name():
    assert {"reference", "qnn-htp", "qnn", "onnxruntime", "ort-qnn"} <= set(adapters.names())


def test_an_unknown_name_says_which_names_exist():
    with pytest.raises(adapters.UnknownBackend, match="choose from .*reference"):
        adapters.get("bogus")


def test_an_adapter_reference_builds_that_factory():
    adapter = adapters.get("adapters.reference:make", {})
    assert adapter.name == "reference" and adapter.available() == (True, "")


def test_an_installed_adapter_is_found_through_its_entry_point(installed_backend):
    code = "import adapters; print(adapters.registered()['my-backend'])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          env=child_env(PYTHONPATH=str(installed_backend)))  # fmt: skip
    assert proc.stdout.strip() == "my_backend:make", proc.stderr[-2000:]


def test_the_readme_adapter_runs_the_conformance_cases(installed_backend, tmp_path):
    results = tmp_path / "r.jsonl"
    proc = run("--backend", "my-backend", "--op", "^Relu$", "--examples", "3", "--no-shrink", "--results",
               str(results), PYTHONPATH=str(installed_backend))  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    recs = [r for r in record.read([results]) if r.kind == record.POSITIVE]
    assert any(r.kind == record.NEGATIVE and r.verdict == "REJECTED" for r in record.read([results])), \
        "no negative case of Relu was rejected by the validating adapter"
    verdicts = Counter((r.config, r.verdict) for r in recs)
    assert {c for c, v in verdicts if v == "PASS"} == {"FLOAT_32", "FLOAT_16"}, verdicts
    assert all(v == "SKIP" for c, v in verdicts if c not in ("FLOAT_32", "FLOAT_16")), verdicts
    assert {r.backend for r in recs} == {"my-backend"} and recs[0].backend_info == {"my_backend": "0.1"}


def test_a_one_off_adapter_runs_without_an_entry_point(installed_backend, tmp_path):
    proc = run("--backend", "my_backend:make", "--op", "^Relu$", "--examples", "2", "--tier", "typical",
               "--no-shrink", "--case-dir", str(tmp_path / "cases"), PYTHONPATH=str(installed_backend))  # fmt: skip
    assert proc.returncode == 0 and " passed" in proc.stdout, proc.stdout[-3000:]


# ---- pytest's own options ------------------------------------------------------------------------------
WRONG = ("--backend", "tests.fake_backends:wrong_relu", "--op", "^(Relu|Sigmoid)$", "--examples", "2",
         "--tier", "typical", "--no-shrink", "--seed", "1")  # fmt: skip


def _junit(path: Path) -> dict[str, str]:
    """test name -> passed / failed / skipped, from a --junitxml file."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        kind = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
        out[case.get("name")] = {"failure": "failed", "error": "failed"}.get(kind, kind)
    return out


def test_last_failed_reruns_only_the_failing_cells(tmp_path):
    cache = f"cache_dir={tmp_path / 'cache'}"
    first = run(*WRONG, "-o", cache, "--junitxml", str(tmp_path / "1.xml"), cache=True)
    assert first.returncode == 1, first.stdout[-2000:]
    failed = {n for n, k in _junit(tmp_path / "1.xml").items() if k == "failed"}
    assert failed and all("Relu" in n for n in failed), failed
    again = run(*WRONG, "-o", cache, "--lf", "--junitxml", str(tmp_path / "2.xml"), cache=True)
    assert again.returncode == 1, again.stdout[-2000:]
    assert set(_junit(tmp_path / "2.xml")) == failed, f"--lf ran {sorted(_junit(tmp_path / '2.xml'))}"


def test_stepwise_stops_at_the_first_failing_cell_and_starts_there_next_time(tmp_path):
    cache = f"cache_dir={tmp_path / 'cache'}"
    first = run(*WRONG, "-o", cache, "--sw", "--junitxml", str(tmp_path / "1.xml"), cache=True)
    ran = _junit(tmp_path / "1.xml")
    assert first.returncode in (1, 2) and list(ran.values()).count("failed") == 1, ran  # 2: stopped early
    second = run(*WRONG, "-o", cache, "--sw", "--junitxml", str(tmp_path / "2.xml"), cache=True)
    assert second.returncode in (1, 2), second.stdout[-2000:]
    failed_first = next(n for n, k in ran.items() if k == "failed")
    assert next(iter(_junit(tmp_path / "2.xml"))) == failed_first, "--sw did not start at the failing cell"


def test_cells_nobody_could_judge_are_skipped_with_the_reason_in_junitxml(tmp_path):
    proc = run("--backend", "tests.fake_backends:rejecting", "--op", "^Relu$", "--examples", "2", "--tier", "typical",
               "--no-shrink", "-k", "test_op", "--junitxml", str(tmp_path / "j.xml"))  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:]
    root = ET.parse(tmp_path / "j.xml").getroot()
    cells = [c for c in root.iter("testcase") if c.get("name", "").startswith("test_op[")
             and c.get("name", "").endswith("-typical]")]  # fmt: skip
    assert cells, "no test_op cell ran"
    for c in cells:
        skipped = c.find("skipped")
        assert skipped is not None and "REJECTED" in skipped.get("message", ""), f"{c.get('name')} was not skipped"


# ---- from anywhere -------------------------------------------------------------------------------------
needs_install = pytest.mark.skipif(not plugin_installed(),
                                   reason="the package is installed without its entry points; pip install -e . again")


@needs_install
def test_the_plugin_runs_from_another_directory_with_absolute_paths_and_workers(tmp_path):
    results = tmp_path / "out" / "r.jsonl"
    proc = run("--backend", "reference", "--op", "^Relu$", "--examples", "2", "--no-shrink", "--results",
               str(results), "-n", "2", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert any(r.op == "Relu" for r in record.read([results])), "no Relu records from another directory"


@needs_install
def test_pyargs_names_the_conformance_module(tmp_path):
    proc = run("--pyargs", "conformance.test_conformance", "--backend", "reference", "--op", "^Relu$",
               "--examples", "1", "--tier", "typical", "--no-shrink", "-q", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0 and " passed" in lines(proc.stdout)[-1], proc.stdout[-3000:]


def test_negative_cases_of_an_op_the_backend_does_not_list_are_skipped_not_rejected(installed_backend, tmp_path):
    results = tmp_path / "r.jsonl"
    proc = run("--backend", "my-backend", "--op", "^Sigmoid$", "--examples", "1", "--no-shrink", "-k", "test_rejects",
               "-rs", "--results", str(results), PYTHONPATH=str(installed_backend))  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "does not list Sigmoid among its ops" in proc.stdout, proc.stdout[-3000:]
    assert not [r for r in record.read([results]) if r.kind == record.NEGATIVE], "a rejection was counted"
