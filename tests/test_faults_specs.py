"""Specs are untrusted input, and what one does to the loader or the generator costs its own op: an alias
bomb, a constant past every bound, a FIFO named like a spec, an integer of 100k digits, an expression of
100k terms, dims whose element count overflows int64, a drawing that never ends, a spec cache that is
not one. Each is put in a ``--specs`` directory beside a good op, which must still run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opdefs import expr, spec
from tests.conformance_runs import child_env, run
from tests.fault_runs import PATIENCE
from tests.paths import REPO

RELU = (REPO / "opdefs" / "Relu.yaml").read_text()
LAUGHS = "name: Laughs\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + k)}: &{chr(98 + k)} [*{chr(97 + k)}, *{chr(97 + k)}, *{chr(97 + k)}, *{chr(97 + k)}, *{chr(97 + k)}, "
    f"*{chr(97 + k)}, *{chr(97 + k)}, *{chr(97 + k)}, *{chr(97 + k)}, *{chr(97 + k)}]\n"
    for k in range(9)
)  # 10**10 leaves from 1 KB of YAML


def _variant(name: str, **replace: str) -> str:
    text = RELU.replace("name: Relu", f"name: {name}")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("hostile-specs")
    (d / "Laughs.yaml").write_text(LAUGHS)
    (d / "PowerTower.yaml").write_text(_variant("PowerTower", **{"check: rank(in[0]) > 0":
                                                                 "check: 'rank(in[0]) > 9**9**9'"}))  # fmt: skip
    os.mkfifo(d / "Fifo.yaml")
    (d / "HugeInt.yaml").write_text(_variant("HugeInt") + f"version: {'7' * 100_000}\n")
    (d / "LongExpr.yaml").write_text(_variant("LongExpr", **{"check: rank(in[0]) > 0":
                                                             "check: '" + "+".join(["1"] * 100_000) + " > 0'"}))
    big = "shape: {text: 'four dims of 65536', rank: 4, dims: [65536, 65536, 65536, 65536]}\n"
    (d / "BigDims.yaml").write_text(_variant("BigDims", **{"shape:\n    text: Any\n    rank: any\n": big}))
    return d


HOSTILE = ("Laughs", "PowerTower", "Fifo", "HugeInt", "LongExpr")


@pytest.fixture(scope="module")
def hostile_run(hostile) -> str:
    """One run over the hostile specs, BigDims' float cell and a good op; its verbose output."""
    proc = run("--backend", "reference", "--specs", str(hostile), "--op", f"^({'|'.join(HOSTILE)}|BigDims|Relu)$",
               "--examples", "2", "--tier", "typical", "--no-shrink", "-rA", "-k",
               "spec-error or FLOAT_32-typical or rejects", timeout=PATIENCE)  # fmt: skip
    assert proc.returncode in (0, 1), f"exit {proc.returncode}: the run itself failed\n{proc.stdout[-3000:]}"
    return proc.stdout


def _spec_error(output: str, op: str) -> str:
    """The message of ``test_op[<op>-spec-error]``, which must have failed."""
    failed = re.search(rf"FAILED \S*test_op\[{op}-spec-error\]", output)
    m = re.search(rf"{op}: the spec does not load: (.*)", output)
    assert failed and m, f"{op} is not its own spec error:\n" + "\n".join(ln for ln in output.splitlines() if op in ln)
    return m.group(1)


def test_a_yaml_alias_bomb_is_its_own_ops_spec_error(hostile_run):
    assert "Laughs.yaml:2: (yaml): YAML aliases (*name) are not allowed" in _spec_error(hostile_run, "Laughs")


def test_a_constant_past_the_integer_bound_is_a_spec_error(hostile_run):
    assert "9 ** 9 ** 9 cannot be evaluated" in _spec_error(hostile_run, "PowerTower")


def test_a_fifo_named_like_a_spec_is_refused_without_being_read(hostile_run):
    assert "not a regular file" in _spec_error(hostile_run, "Fifo")


def test_an_integer_of_100k_digits_is_its_own_ops_spec_error(hostile, hostile_run):
    line = len((hostile / "HugeInt.yaml").read_text().splitlines())
    assert f"HugeInt.yaml:{line}: (yaml): a value of 100000 characters" in _spec_error(hostile_run, "HugeInt")


def test_an_expression_of_100k_terms_is_its_own_ops_spec_error(hostile, hostile_run):
    line = next(n for n, text in enumerate((hostile / "LongExpr.yaml").read_text().splitlines(), 1) if "1+1+1" in text)
    assert f"LongExpr.yaml:{line}: (yaml): a value of" in _spec_error(hostile_run, "LongExpr")


def test_dims_whose_element_count_overflows_int64_are_never_drawn(hostile_run):
    line = next((ln for ln in hostile_run.splitlines() if "BigDims-FLOAT_32-typical" in ln or "typical BigDims" in ln),
                "")  # fmt: skip
    assert "could not build a valid typical BigDims case" in line, hostile_run[-3000:]


def test_the_good_op_beside_them_still_runs(hostile_run):
    assert re.search(r"PASSED \S*test_op\[Relu-FLOAT_32-typical\]", hostile_run), hostile_run[-3000:]


def test_lint_reports_every_hostile_spec_and_ends(hostile):
    files = [str(hostile / f"{name}.yaml") for name in (*HOSTILE, "BigDims")]
    proc = subprocess.run([sys.executable, "-m", "opdefs", "lint", *files], cwd=REPO, capture_output=True, text=True,
                          timeout=PATIENCE, env=child_env())  # fmt: skip
    flagged = {name for name in HOSTILE if f"{name}.yaml:" in proc.stdout + proc.stderr}
    assert proc.returncode != 0 and flagged == set(HOSTILE), f"flagged {sorted(flagged)}\n{proc.stdout[-2000:]}"


def test_a_power_past_the_integer_bound_is_an_evaluation_error_at_once():
    code = ("from opdefs import expr\ntry:\n    expr.parse('x ** y').evaluate({'x': 9, 'y': 9**9})\n"
            "except expr.EvalError as e:\n    print(e)")  # in a child: unbounded, this is minutes of arithmetic
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("9 ** 9**9 was still being computed after 60 s")
    assert "integer too large" in proc.stdout, proc.stdout + proc.stderr
    assert time.monotonic() - t0 < 30, "the refusal took as long as the arithmetic"


def test_deep_nesting_is_an_expression_error_not_a_recursion_error():
    with pytest.raises(expr.ExprError):
        expr.parse("-" * 3000 + "1 > 0")


def test_a_drawing_past_its_time_budget_costs_its_cell_not_the_run():
    proc = run("--backend", "reference", "--op", "^Relu$", "--examples", "2", "--tier", "typical", "--no-shrink",
               "-rA", "-k", "FLOAT_32 or FLOAT_16", timeout=PATIENCE,
               QNN_CONFORMANCE_GENERATION_SECONDS="0.0001")  # fmt: skip
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout[-2000:]}"
    failed = re.findall(r"FAILED \S*test_op\[Relu-(\w+)-typical\]", proc.stdout)
    # the failure sections' own lines (the short summary repeats the message only when the console is wide, as in CI)
    said = len(re.findall(r"^typical: drawing took more than its budget of 0\.0001 s", proc.stdout, re.M))
    assert sorted(failed) == ["FLOAT_16", "FLOAT_32"] and said == 2, proc.stdout[-3000:]


SPEC_CACHES = {
    "a list": lambda code: [],
    "text": lambda code: "text",
    "specs a list": lambda code: {"code": code, "specs": []},
    "an entry of text": lambda code: {"code": code, "specs": {"digest": "oops"}},
    "an entry without lines": lambda code: {"code": code, "specs": {"digest": {"data": {}}}},
}


@pytest.mark.parametrize("shape", sorted(SPEC_CACHES))
def test_a_spec_cache_of_the_wrong_shape_is_a_miss(tmp_path, monkeypatch, shape):
    (tmp_path / "specs.json").write_text(json.dumps(SPEC_CACHES[shape](spec._code_key())))
    monkeypatch.setenv(spec.CACHE_ENV, str(tmp_path))
    assert spec._SpecCache().get("digest") is None, f"a spec cache holding {shape} was taken for one"
