"""findings/routes.yaml: every explanation of a qnn-htp / ort-qnn disagreement names its op and mechanism and is
shown by its own case, replayed on both routes.

Why replay: an entry is a claim about what each route hands libQnnHtp.so. If the case it cites no longer gives
the verdict pair it claims (a backend release, a lowering change), the entry explains nothing any more and
must go; if the EP no longer composes the QNN ops it names, the mechanism has changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import adapters
from cases.case import Case
from conformance.execute import RunContext, execute
from reports import agree, findings
from reports.agree import OPEN_CELLS, OUTPUTS, Explanation
from tests.simulator import MISSING

REPO = Path(__file__).resolve().parents[1]
ENTRIES = agree.load_explanations(agree.DEFAULT_EXPLANATIONS)
IDS = [f"{e.mechanism}:{Path(e.case).stem}" for e in ENTRIES]


def test_no_entry_is_a_wildcard_and_each_names_a_mechanism() -> None:
    assert ENTRIES, "findings/routes.yaml holds no explanation"
    assert all(e.op and e.mechanism for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_an_entrys_case_is_in_the_repo(entry: Explanation) -> None:
    case = REPO / entry.case
    assert case.is_file() and case.with_suffix(".npz").is_file(), f"{entry.where}: {entry.case} (and .npz) missing"


def test_every_finding_an_entry_names_is_recorded() -> None:
    known = {e.id for e in findings.load().entries}
    missing = sorted({f"{e.where}: {e.finding}" for e in ENTRIES if e.finding and e.finding not in known})
    assert not missing, f"entries name findings no findings file holds: {missing}"


@pytest.fixture(scope="module")
def routes():
    if MISSING:
        pytest.skip(f"QNN HTP simulator not available: {MISSING}")
    ort = adapters.get("ort-qnn")
    ok, why = ort.available()
    if not ok:
        pytest.skip(f"ort-qnn not available: {why}")
    htp = adapters.get("qnn-htp")
    yield htp, ort
    htp.close()
    ort.close()


def _run(path: Path, adapter, backend: str, judged: bool):
    """The case's record on one route; ``judged``: with its route's findings file applied, as a run applies it (an
    XFAIL names the finding whose model matched)."""
    case = Case.load(path)
    if not judged:
        return execute(case, RunContext(adapter, backend))
    from reports.expectations import Expectations

    known = Expectations.load_all([REPO / "findings" / f"{backend}.yaml"])
    record = execute(case, RunContext(adapter, backend, known=known))
    record.case_path = str(path)  # a finding's params are read from the saved case
    return known.apply_record(record)


def _matches(patterns, value: str) -> bool:
    return patterns is None or any(p.matches(value) for p in patterns)


@pytest.mark.qnn
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_an_entrys_case_shows_its_verdicts_and_graph_on_both_routes(entry: Explanation, routes) -> None:
    htp, ort = routes
    case = Case.load(REPO / entry.case)
    judged = entry.a_finding is not None or entry.b_finding is not None  # by the routes' findings, as a run is
    a, b = _run(REPO / entry.case, htp, "qnn-htp", judged), _run(REPO / entry.case, ort, "ort-qnn", judged)
    if entry.mechanism == OPEN_CELLS:
        sides = agree.Side.of(a), agree.Side.of(b)
        assert a.verdict == b.verdict == "XFAIL" and _matches(entry.a_finding, sides[0].finding) \
            and _matches(entry.b_finding, sides[1].finding), \
            f"{entry.where}: expected both routes XFAIL by its findings, got {a.verdict} [{sides[0].finding}] / " \
            f"{b.verdict} [{sides[1].finding}]"
    elif entry.a is not None and any(p.text == OUTPUTS for p in entry.a):
        digests = [(r.extra.get("details") or {}).get("output_digest") for r in (a, b)]
        assert a.verdict == b.verdict and digests[0] != digests[1], \
            f"{entry.where}: expected the same verdict and other bits, got {a.verdict}/{b.verdict}, digests {digests}"
    else:
        va, vb = agree.raw_verdict(a), agree.raw_verdict(b)
        assert _matches(entry.a, va) and _matches(entry.b, vb), \
            f"{entry.where}: the case gives {va}/{vb}: {a.message[:150]} | {b.message[:150]}"
        pair = agree.Disagreement(case.op, case.config, case.tier or "typical", "positive", "", "verdict",
                                  agree.Side.of(a), agree.Side.of(b))  # fmt: skip
        assert entry.explains(pair, a.message, b.message), f"{entry.where}: its own case is not what it selects"
    if entry.graph:
        composed = (b.extra.get("details") or {}).get("qnn_ops")
        assert composed == list(entry.graph), f"{entry.where}: the EP composes {composed}, the entry says {entry.graph}"

