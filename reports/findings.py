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
from reports.record import BAD, CELL, CRASH, ERROR, FAIL, POSITIVE, PROBE, SHRUNK, XFAIL, XPASS, Record, replay_command

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO / "findings"
REQUIRED = ("id", "contradicts", "build", "case")  # what makes an entry a finding rather than a known failure
# what singles out a finding's cases beyond op, configuration, tier and target: without one, a finding takes every
# failure of its cell, whatever bug it is
DISCRIMINATING = ("params", "when", "model", "band", "log_says", "message")
# The MasterOpDef a finding quotes: the seed document beside the checkout, or $QNN_MASTEROPDEF
MASTEROPDEF_ENV = "QNN_MASTEROPDEF"
_SEED = REPO.parent / "shared" / "seeds" / "004_b46271055e0d5186.txt"


ROUTES_FILE = "routes.yaml"  # explanations of route disagreements (reports/agree.py), not findings


def default_files(directory: Path = DEFAULT_DIR) -> list[Path]:
    """The per-backend findings files of ``directory`` (``<backend>.yaml``)."""
    return sorted(p for p in directory.glob("*.yaml") if p.name != ROUTES_FILE) if directory.is_dir() else []


def load(paths: Iterable[str | Path] | None = None) -> Expectations:
    files = list(paths) if paths else default_files()
    return Expectations.load_all(files)


def masteropdef_path() -> Path:
    """Where the MasterOpDef is read from: $QNN_MASTEROPDEF, else the seed beside the repository."""
    import os

    return Path(os.environ.get(MASTEROPDEF_ENV) or _SEED)


def masteropdef_lines() -> list[str] | None:
    """The MasterOpDef's lines (1-based at index 1), or None where the document is not here."""
    path = masteropdef_path()
    try:
        return ["", *path.read_text(encoding="utf-8").splitlines()]
    except OSError:
        return None


def normalised(text: str) -> str:
    """Text as a quote is compared: markdown's escapes and emphasis dropped, line breaks and runs of spaces one
    space (a quote spans lines as the document wraps them)."""
    import re

    text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|>~])", r"\1", text)
    text = text.replace("**", "").replace("`", "")
    text = re.sub(r"^\s*(?:>\s*)+", " ", text, flags=re.M)  # block quotes
    text = re.sub(r"^\s*[-*]\s+", " ", text, flags=re.M)  # list bullets
    return " ".join(text.split())


def quote_problem(e: Entry, lines: list[str]) -> str | None:
    """Why a finding's quote is not what the MasterOpDef says at its lines (None when it is)."""
    q = e.spec
    if q is None:
        return None
    if q.last >= len(lines):
        return f"spec: lines {q.first}-{q.last} are past the MasterOpDef's {len(lines) - 1} lines"
    window = normalised("\n".join(lines[q.first : q.last + 1]))
    if normalised(q.quote) not in window:
        return f"spec: the quote is not at lines {q.first}-{q.last} (they read: {window[:120]!r})"
    return None


def problems(known: Expectations, root: Path = REPO, spec_lines: list[str] | None = None) -> list[str]:
    """One line per finding that lacks its evidence (a field, or a case file that is not there), has no class or
    no quote of the MasterOpDef (or one that is not at its lines), selects its failures by op, configuration and
    tier alone, or names a model the reference cannot compute."""
    from reference.models import problems as model_problems

    out = []
    seen: set[str] = set()
    lines = spec_lines if spec_lines is not None else masteropdef_lines()
    for e in known.entries:
        missing = [k for k in REQUIRED if not e.info.get(k)]
        if e.klass is None:
            missing.append("class")
        if e.spec is None:
            missing.append("spec (the MasterOpDef sentence it relies on)")
        if missing:
            out.append(f"{e.where}: finding has no {', '.join(missing)}")
        if lines is not None and (why := quote_problem(e, lines)):
            out.append(f"{e.where}: {why}")
        if set(e.verdicts) & {FAIL, ERROR, CRASH} and not any(_given(e, k) for k in DISCRIMINATING):
            out.append(f"{e.where}: selects its failures by op, configuration and tier alone: name what defines the "
                       f"bug ({', '.join(DISCRIMINATING)})")  # fmt: skip
        if e.verdicts == (FAIL,) and e.model is None and e.band is None:
            out.append(f"{e.where}: a finding of wrong numbers needs a model (what the backend returns instead) or, "
                       "for an accuracy finding, a band")  # fmt: skip
        if e.klass == "accuracy" and e.band is None:
            out.append(f"{e.where}: an accuracy finding states its band (how far off its cases are)")
        if e.model is not None:
            out += [f"{e.where}: {why}" for op in (p.text for p in e.op) for why in model_problems(e.model, op)]
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
        if r.kind in (CELL, SHRUNK, PROBE):  # probes are a refused cell's cases in other forms: not the run's
            continue
        applied = known.apply_record(r)
        label = _entry_label(known, applied)
        if applied.verdict == XFAIL:
            out.xfail[label] += 1
        elif applied.verdict == XPASS:
            out.xpass[label] += 1
        elif applied.verdict in BAD and r.kind == POSITIVE:
            out.new[(r.backend, r.op, r.config, r.tier or "typical", applied.verdict)] += 1
    return out


def _given(e: Entry, name: str) -> bool:
    return getattr(e, name) is not None


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
            "soc": _joined(e.soc) or ",".join(e.targets or ()) or "any",
            "replay_options": _replay_options(e.targets),
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
            "class": e.klass or "unclassified",
            "selects": "; ".join(_selectors(e)),
            "spec": f"line {e.spec.first}" + (f"-{e.spec.last}" if e.spec.last != e.spec.first else "")
                    + f': "{e.spec.quote}"' if e.spec else "",
        })
    return out


def _selectors(e: Entry) -> list[str]:
    """What singles out the finding's cases, as one reads it in the table."""
    from reference.models import key

    out = [f"when {' and '.join(e.when_text)}"] if e.when_text else []
    if e.log_says:
        out.append("log " + ", ".join(p.text for p in e.log_says))
    if e.model is not None:
        out.append(f"model {key(e.model)}")
    if e.band is not None:
        out.append("band " + ", ".join(f"{k} {v:g}" for k, v in e.band.items()))
    if e.message:
        out.append("message " + ", ".join(p.text for p in e.message))
    return out


def _replay_options(targets: tuple[str, ...] | None) -> str:
    """A finding measured only on later generations replays at the first of them: at the simulator's default target
    (v68) its case shows another behaviour, or none."""
    from adapters.qnn.targets import GENERATIONS
    from reports.expectations import DEFAULT_GENERATION

    if not targets or DEFAULT_GENERATION in targets:
        return ""
    return f"--qnn-soc {GENERATIONS[targets[0]]}"


def _joined(patterns) -> str:
    return ",".join(p.text for p in patterns) if patterns else ""


CLASS_TITLES = {
    "deviation": "Deviations: the spec says one thing, the backend does another",
    "self-contradiction": "Self-contradictions: validation accepts, finalize or execute then fails",
    "accuracy": "Accuracy: outside the budget (its source stated), inside the finding's band",
    "crash": "Crashes: the backend's process dies",
    "unclassified": "Unclassified",
}


def to_markdown(known: Expectations, run: RunCheck | None = None, issues: list[str] | None = None) -> str:
    table = rows(known)
    counts = Counter(row["class"] for row in table)
    out = ["# Findings", "", f"{len(table)} finding(s) from {known.source}: "
           + ", ".join(f"{counts[c]} {c}" for c in CLASS_TITLES if counts[c]) + ".", ""]  # fmt: skip
    head = ["id", "op", "config", "tier", "soc", "verdicts", "stage", "params", "selects", "what the backend does",
            "spec", "contradicts", "replay"]  # fmt: skip
    if run is not None:
        head[1:1] = ["run: XFAIL", "run: XPASS"]
    for klass, title in CLASS_TITLES.items():
        group = [row for row in table if row["class"] == klass]
        if not group:
            continue
        out += [f"## {title} ({len(group)})", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in group:
            backend = row["backend"] if row["backend"] != "any" else "qnn-htp"
            replay = f"`{replay_command(row['case'], backend, row['replay_options'])}`" if row["case"] else ""
            cells = [row["id"], row["op"], row["config"], row["tier"], row["soc"], row["verdicts"], row["stage"],
                     row["params"], row["selects"], row["reason"], row["spec"], row["contradicts"], replay]  # fmt: skip
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

