"""Findings: the backend deviations the suite can defend, as a table for a bug report.

A finding is an expectations entry (``reports.expectations``) that carries its evidence: an ``id``,
the MasterOpDef line it ``contradicts``, the backend ``build`` it was seen on, the backend's ``log``
and a minimal replayable ``case`` committed in the repo. The files live in ``findings/<backend>.yaml``;
a conformance run given them (``--expectations findings/qnn-htp.yaml``) marks each recorded finding
XFAIL with its reason, a fixed one XPASS, and leaves anything new standing out as it is.

``python -m reports findings`` prints the table; given results files it also says, per finding, how
many cases of the run it covered (XFAIL) or that now pass (XPASS), and lists the failing cells no
finding covers (what is new).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from reports.expectations import Entry, Expectations, case_params
from reports.matrix import config_sort_key, op_sort_key
from reports.record import CELL, CRASH, ERROR, FAIL, SHRUNK, TIMEOUT, XFAIL, XPASS, Record

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO / "findings"
REQUIRED = ("id", "contradicts", "build", "case")  # what makes an entry a finding rather than a known failure
BAD = (FAIL, ERROR, CRASH, TIMEOUT)


ROUTES_FILE = "routes.yaml"  # explanations of route disagreements (reports/agree.py), not findings


def default_files(directory: Path = DEFAULT_DIR) -> list[Path]:
    """The per-backend findings files of ``directory`` (``<backend>.yaml``)."""
    return sorted(p for p in directory.glob("*.yaml") if p.name != ROUTES_FILE) if directory.is_dir() else []


def load(paths: Iterable[str | Path] | None = None) -> Expectations:
    files = list(paths) if paths else default_files()
    return Expectations.load_all(files)


def problems(known: Expectations, root: Path = REPO) -> list[str]:
    """One line per finding that lacks its evidence (a field, or a case file that is not there)."""
    out = []
    seen: set[str] = set()
    for e in known.entries:
        missing = [k for k in REQUIRED if not e.info.get(k)]
        if missing:
            out.append(f"{e.where}: finding has no {', '.join(missing)}")
        if e.id and e.id in seen:
            out.append(f"{e.where}: id {e.id!r} used twice")
        seen.add(e.id)
        case = e.info.get("case")
        if case and not (root / case).with_suffix(".json").is_file():
            out.append(f"{e.where}: case {case} is not in the repo")
        elif case and not (root / case).with_suffix(".npz").is_file():
            out.append(f"{e.where}: case {case} has no .npz beside it")
        elif case and e.params is not None:  # the narrowing must hold for the finding's own evidence
            if not e.params_hold(case_params(root / case, _joined(e.op))):
                out.append(f"{e.where}: params {e.params} do not hold for its own case {case}")
    return out


@dataclass
class RunCheck:
    """What one run says about the findings: per id, cases covered (XFAIL) and fixed (XPASS); new failures."""

    xfail: Counter[str] = field(default_factory=Counter)
    xpass: Counter[str] = field(default_factory=Counter)
    new: Counter[tuple[str, str, str, str, str]] = field(default_factory=Counter)  # backend, op, config, tier, verdict


def check_run(known: Expectations, records: Iterable[Record]) -> RunCheck:
    """Apply the findings to a run's records (typical and edge): which findings it still shows."""
    out = RunCheck()
    for r in records:
        if r.kind in (CELL, SHRUNK):
            continue
        applied = known.apply_record(r)
        label = _entry_label(known, applied)
        if applied.verdict == XFAIL:
            out.xfail[label] += 1
        elif applied.verdict == XPASS:
            out.xpass[label] += 1
        elif applied.verdict in BAD and r.kind == "positive":
            out.new[(r.backend, r.op, r.config, r.tier or "typical", applied.verdict)] += 1
    return out


def _entry_label(known: Expectations, r: Record) -> str:
    reason = r.expectation or ""
    if reason.startswith("[") and "]" in reason:
        return reason[1:reason.index("]")]
    return reason[:60]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def rows(known: Expectations) -> list[dict[str, str]]:
    out = []
    for e in known.entries:
        out.append({
            "id": e.id,
            "backend": _joined(e.backend) or "any",
            "op": _joined(e.op),
            "config": _joined(e.config) or "any",
            "tier": _joined(e.tier) or "any",
            "soc": _joined(e.soc) or "any",
            "verdicts": "/".join(e.verdicts),
            "stage": _joined(e.stage) or "",
            "params": ", ".join(f"{k}={'/'.join(map(str, v))}" for k, v in (e.params or {}).items()),
            "scope": e.scope,
            "reason": e.reason,
            "contradicts": e.info.get("contradicts", ""),
            "build": e.info.get("build", ""),
            "log": e.info.get("log", ""),
            "case": e.info.get("case", ""),
            "where": e.where,
        })
    return out


def _joined(patterns) -> str:
    return ",".join(p.text for p in patterns) if patterns else ""


def to_markdown(known: Expectations, run: RunCheck | None = None, issues: list[str] | None = None) -> str:
    table = rows(known)
    out = ["# Findings", "", f"{len(table)} finding(s) from {known.source}.", ""]
    head = ["id", "op", "config", "tier", "soc", "verdicts", "stage", "params", "what the backend does",
            "contradicts", "replay"]  # fmt: skip
    if run is not None:
        head[1:1] = ["run: XFAIL", "run: XPASS"]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table:
        backend = row["backend"] if row["backend"] != "any" else "qnn-htp"
        replay = f"`python -m cases replay {row['case']} --backend {backend}`" if row["case"] else ""
        cells = [row["id"], row["op"], row["config"], row["tier"], row["soc"], row["verdicts"], row["stage"],
                 row["params"], row["reason"], row["contradicts"], replay]  # fmt: skip
        if run is not None:
            cells[1:1] = [str(run.xfail.get(row["id"], 0)), str(run.xpass.get(row["id"], 0))]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    out.append("")
    builds = sorted({row["build"] for row in table if row["build"]})
    if builds:
        out += ["Backend build(s): " + "; ".join(f"`{b}`" for b in builds), ""]
    logs = [(row["id"], row["log"]) for row in table if row["log"]]
    if logs:
        out += ["## Backend log excerpts", ""]
        for fid, text in logs:
            out += [f"- **{fid}**: `{_cell(text)}`"]
        out.append("")
    if run is not None:
        fixed = [fid for fid in run.xpass if fid]
        if fixed:
            out += ["## Fixed in this run (XPASS)", "", *[f"- {fid}: {run.xpass[fid]} case(s)" for fid in fixed], ""]
        if run.new:
            out += ["## Not covered by any finding (new)", "", "| backend | op | config | tier | verdict | cases |",
                    "|---|---|---|---|---|---|"]  # fmt: skip
            for (backend, op, config, tier, verdict), n in sorted(
                    run.new.items(), key=lambda kv: (kv[0][3] != "typical", op_sort_key(kv[0][1]),
                                                     config_sort_key(kv[0][2]))):  # fmt: skip
                out.append(f"| {backend} | {op} | {config} | {tier} | {verdict} | {n} |")
            out.append("")
    if issues:
        out += ["## Problems with the findings files", "", *[f"- {p}" for p in issues], ""]
    return "\n".join(out)


def to_json(known: Expectations, run: RunCheck | None = None, issues: list[str] | None = None) -> str:
    d: dict = {"findings": rows(known), "problems": issues or []}
    if run is not None:
        d["run"] = {"xfail": dict(run.xfail), "xpass": dict(run.xpass),
                    "new": [{"backend": k[0], "op": k[1], "config": k[2], "tier": k[3], "verdict": k[4], "cases": n}
                            for k, n in sorted(run.new.items())]}  # fmt: skip
    return json.dumps(d, indent=1, sort_keys=True)


def entry_for(known: Expectations, finding_id: str) -> Entry | None:
    return next((e for e in known.entries if e.id == finding_id), None)
