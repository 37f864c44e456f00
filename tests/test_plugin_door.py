"""Bad input stops at the door: one line naming the problem (and the valid choices), exit code 4 (usage),
before any case runs, so nothing is written to --results."""

from __future__ import annotations

import _ctypes
from pathlib import Path

import pytest

import adapters
import opdefs
from tests.conformance_runs import lines, run

USAGE = 4


def refused(tmp_path: Path, *args: str) -> str:
    """Run with ``args``; the run must end at the door. Returns its one line."""
    results = tmp_path / "r.jsonl"
    proc = run(*args, "--results", str(results))
    said = lines(proc.stdout + proc.stderr)
    assert proc.returncode == USAGE, f"exit {proc.returncode}, not {USAGE}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    assert len(said) == 1, f"one line expected, got {len(said)}:\n" + "\n".join(said[:20])
    assert not results.exists(), "a refused run wrote a results file: something ran"
    return said[0]


def test_an_unknown_backend_is_one_line_listing_the_known_ones(tmp_path):
    line = refused(tmp_path, "--backend", "bogus")
    assert "'bogus'" in line and all(name in line for name in adapters.names()), line


def test_an_adapter_reference_that_does_not_import_is_one_line(tmp_path):
    line = refused(tmp_path, "--backend", "no_such_package.adapter:make")
    assert "no_such_package" in line, line


def test_a_missing_backend_library_is_one_line_naming_it(tmp_path):
    missing = tmp_path / "libQnnNothing.so"
    line = refused(tmp_path, "--backend", "qnn", "--qnn-backend-lib", str(missing))
    assert str(missing) in line and "not available" in line, line


def test_a_library_that_is_no_qnn_backend_is_one_line(tmp_path):
    not_qnn = Path(_ctypes.__file__)  # a shared library that surely exists and is not a QNN backend
    line = refused(tmp_path, "--backend", "qnn", "--qnn-backend-lib", str(not_qnn))
    assert "QnnInterface_getProviders" in line, line


@pytest.mark.parametrize("option", ["--examples", "--edge-examples"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_case_count_below_one_is_refused(tmp_path, option, value):
    line = refused(tmp_path, "--backend", "reference", option, value)
    assert f"{option} {value}" in line and "at least 1" in line, line


def test_an_op_regex_that_matches_nothing_is_refused_with_the_op_count(tmp_path):
    line = refused(tmp_path, "--backend", "reference", "--op", "^NoSuchOp$")
    assert "'^NoSuchOp$'" in line and f"none of the {len(opdefs.spec.spec_files())} ops" in line, line


def test_an_op_regex_close_to_a_name_suggests_it(tmp_path):
    line = refused(tmp_path, "--backend", "reference", "--op", "^Sofmax$")
    assert "did you mean Softmax" in line, line


def test_an_op_that_is_no_regular_expression_is_refused(tmp_path):
    line = refused(tmp_path, "--backend", "reference", "--op", "Soft(max")
    assert "not a valid regular expression" in line, line


def test_an_unknown_precision_is_refused_with_the_choices(tmp_path):
    line = refused(tmp_path, "--backend", "reference", "--qnn-precision", "fp8")
    assert "'fp8'" in line and all(p in line for p in ("auto", "float32", "float16")), line


def test_a_missing_op_package_is_refused_naming_the_file(tmp_path):
    missing = tmp_path / "libMyOpPackage.so"
    line = refused(tmp_path, "--backend", "qnn-htp", "--qnn-op-package", f"{missing}:MyOpPackageInterfaceProvider")
    assert str(missing) in line, line


def test_an_op_package_without_an_interface_is_refused(tmp_path):
    line = refused(tmp_path, "--backend", "qnn-htp", "--qnn-op-package", str(Path(_ctypes.__file__)))
    assert "PATH:INTERFACE" in line, line


@pytest.mark.qnn
def test_an_op_package_the_backend_cannot_load_is_refused_with_the_backends_reason(tmp_path):
    from adapters.qnn import bindings

    try:
        bindings.default_library()
    except bindings.LibraryNotFound as e:
        pytest.skip(f"QNN HTP simulator not available: {e}")
    library = Path(_ctypes.__file__)  # a real shared library with no op package interface in it
    line = refused(tmp_path, "--backend", "qnn-htp", "--qnn-op-package", f"{library}:NoSuchInterfaceProvider:CPU")
    assert f"op package {library} (interface NoSuchInterfaceProvider) refused" in line, line
    assert "backendRegisterOpPackage" in line, line


def test_resume_without_a_results_file_is_refused():
    proc = run("--backend", "reference", "--resume")
    assert proc.returncode == USAGE and "--resume needs --results" in proc.stderr, proc.stderr
