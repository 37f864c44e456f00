"""`python -m opdefs decisions`: the readings a verdict rests on, printed from the specs."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

import opdefs  # noqa: E402
from opdefs.__main__ import main  # noqa: E402


def test_every_decision_of_an_op_is_printed_with_its_line(capsys) -> None:
    assert main(["decisions", "Buffer"]) == 0
    out = capsys.readouterr().out
    decisions = opdefs.load("Buffer").decisions
    assert f"Buffer ({len(decisions)} decisions)" in out
    for d in decisions:
        assert str(d["about"]) in out, f"decision {d['about']!r} missing from:\n{out}"


def test_an_unknown_op_is_one_line_and_exit_1(capsys) -> None:
    assert main(["decisions", "NoSuchOp"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "NoSuchOp" in err[0], err
