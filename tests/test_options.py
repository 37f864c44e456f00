"""The options table (conformance/options.py): a recorded replay line only carries options
``python -m conformance replay`` takes, and the main job checks what it passes on as the conformance run would."""

from __future__ import annotations

import argparse
import os
import shlex

import pytest

from conformance import options


def _replay_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("case_path")
    options.add_replay_options(ap)
    return ap


def test_every_option_a_replay_line_carries_is_one_replay_takes(monkeypatch, tmp_path):
    from conformance.plugin import SPECS_ENV

    monkeypatch.setenv("QNN_HTP_SOC", "43")
    monkeypatch.setenv("QNN_HTP_ARCH", "73")
    monkeypatch.setenv(SPECS_ENV, str(tmp_path))
    run = {"qnn_backend_lib": "/x/libQnnHtp.so", "qnn_precision": "float16",
           "adapter_options": {"timeout": 7.0, "op_packages": [{"path": "/p.so", "interface": "f", "target": ""}]}}
    line = options.replay_line(run, dict(os.environ))
    words = shlex.split(line)
    flags = {w for w in words if w.startswith("--")}
    assert flags == {"--qnn-backend-lib", "--qnn-precision", "--qnn-op-package", "--qnn-soc", "--qnn-arch",
                     "--specs", "--case-timeout"}, line  # fmt: skip
    assert flags <= {o.flag for o in options.OPTIONS if o.replay}
    args = _replay_parser().parse_args(["case.json", "--backend", "qnn-htp", *words])
    assert (args.qnn_precision, args.case_timeout, args.specs, args.qnn_soc) == ("float16", 7.0, [str(tmp_path)], "43")


def test_replay_keeps_its_own_defaults():
    args = _replay_parser().parse_args(["case.json"])
    assert (args.backend, args.qnn_precision, args.specs, args.expectations) == ("reference", None, [], [])


@pytest.mark.parametrize("flag, value, problem", [
    ("--examples", 0, "--examples 0: must be a whole number of at least 1"),
    ("--batch", -2, "--batch -2: must be a whole number of at least 1"),
    ("--examples", 3, None),
])  # fmt: skip
def test_count_checks_have_one_wording(flag, value, problem):
    assert options.count_problem(flag, value) == problem


def test_op_and_specs_checks(tmp_path):
    assert "not a valid regular expression" in options.op_problem("Soft(max", ["Softmax"])
    assert options.op_problem("^Soft", ["Softmax"]) is None
    assert "did you mean Softmax" in options.op_problem("^Softmx$", ["Softmax"])
    assert options.specs_problem(str(tmp_path / "nope")).endswith("no such directory")
    assert options.specs_problem(str(tmp_path)).endswith("holds no op spec (*.yaml)")
