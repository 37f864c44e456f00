"""``python -m bench --against REV``: another revision's own benchmark, run beside this one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from bench import run as bench  # noqa: E402


def test_against_a_revision_the_checkout_lacks_says_so_and_measures_nothing(capsys):
    got = bench.against("no-such-revision-here", ["reference"], {})
    assert got == {"rev": "no-such-revision-here", "error": "not a revision of this checkout"}, got
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no-such-revision-here" in err, err


def test_the_headline_ends_with_the_speed_up_over_the_revision():
    doc = {"backends": {"ort-qnn": {"available": True, "cases_per_second_2_workers": 200.0,
                                    "batched": {"cases_per_second_2_workers": 380.0}}},
           "main_job": {"estimated_seconds": 66.0},
           "against": {"rev": "cbee60e", "commit": "cbee60e474" + "0" * 30,
                       "backends": {"ort-qnn": {"speedup": 14.2}}}}  # fmt: skip
    line = bench._headline(doc)
    assert line.endswith("; against cbee60e: ort-qnn x14.2"), line
