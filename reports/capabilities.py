"""The capability envelope as data: per backend and op, what it accepts, from validation, finalize and execute.

Why: converters and execution providers keep hand-written per-op support tables (ONNX Runtime's QNN EP writes
per-op datatype checks from Qualcomm's documentation, microsoft/onnxruntime PR #25257; ExecuTorch keeps an HTP
op support list, pytorch/executorch PR #10253), and a table that says "supported" for what the backend then
refuses at finalize is a false support claim (microsoft/onnxruntime issue #26739). The conformance run already
asked the backend about every op, datatype set, rank and enum member it drew: this module writes the answers
as one JSON document a converter could load instead, and lists beside it the combinations that validation
accepts and finalize or execute then refuses.

Evidence levels, weakest first: ``validated`` (backendValidateOpConfig accepted it: cheap, and what most
tables claim), ``finalized`` (the graph was built), ``executed`` (it ran), ``passed`` (its numbers matched
the reference). A combination is only as good as the highest level its cases reached. The datatype sets the
backend itself lists when it refuses one (the HTP's validation log) are kept as ``backend_declares``. Datatypes the
MasterOpDef does not list for an op, which the probe tries once per op (``cases.forms.beyond_spec``), are combinations
marked ``beyond_spec``; those the backend accepted are listed under the op's ``beyond_the_spec``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reports import matrix, refusals
from reports.matrix import EXECUTE_STAGE, FINALIZE_STAGE, OK_STAGE, VALIDATE_STAGE, record_stage
from reports.record import CELL, NEGATIVE, PASS, PROBE, RAW_VERDICT_KEY, REJECTED, SHRUNK, Record

FORMAT = "qnn-conformance-capabilities"
LEVELS = ("validated", "finalized", "executed", "passed")


@dataclass
class _Combination:
    """The cases of one op in one datatype combination (a configuration, or a standard form the probe tried)."""

    label: str
    datatypes: dict[str, str]
    form: str = ""
    beyond_spec: bool = False  # datatypes the MasterOpDef does not list for the op (the probe's once-per-op question)
    sent: int = 0
    levels: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)  # reason -> cases
    failed: Counter[str] = field(default_factory=Counter)  # "finalize: reason" -> cases accepted then failed
    tiers: Counter[str] = field(default_factory=Counter)
    ranks: dict[str, dict[str, set[int]]] = field(default_factory=dict)  # tensor -> accepted/refused -> ranks
    params: dict[str, dict[str, set[Any]]] = field(default_factory=dict)  # param -> accepted/refused -> values
    example: str = ""
    # "v73 2.51" (HTP generation, QNN release) -> the evidence levels reached there: where a combination starts to run
    by_target: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, r: Record) -> None:
        stage = record_stage(r)
        if stage not in (VALIDATE_STAGE, FINALIZE_STAGE, EXECUTE_STAGE, OK_STAGE):
            return  # not sent (SKIP), or an adapter that does not say how far a case got
        self.sent += 1
        self.tiers[r.tier or "typical"] += 1
        accepted = stage != VALIDATE_STAGE
        target = self.by_target.setdefault(_target(r), Counter())
        target["sent"] += 1
        if accepted:
            target["validated"] += 1
        if stage == OK_STAGE:
            target["executed"] += 1
            target["passed"] += int(r.extra.get(RAW_VERDICT_KEY, r.verdict) == PASS)
        if accepted:
            self.levels["validated"] += 1
            if stage in (EXECUTE_STAGE, OK_STAGE):
                self.levels["finalized"] += 1
            if stage == OK_STAGE:
                self.levels["executed"] += 1
            if r.extra.get(RAW_VERDICT_KEY, r.verdict) == PASS:
                self.levels["passed"] += 1
            if stage in (FINALIZE_STAGE, EXECUTE_STAGE):
                self.failed[f"{stage}: {_failure_reason(r)}"] += 1
                self.example = self.example or r.replay or r.case_path or ""
        elif r.verdict == REJECTED or r.extra.get(RAW_VERDICT_KEY) == REJECTED:
            self.refused[refusals.reason(r)] += 1
        key = "accepted" if accepted else "refused"
        signature = r.extra.get("signature") or {}
        for tensor, rank in (signature.get("ranks") or {}).items():
            self.ranks.setdefault(tensor, {"accepted": set(), "refused": set()})[key].add(int(rank))
        for name, value in (signature.get("params") or {}).items():
            self.params.setdefault(name, {"accepted": set(), "refused": set()})[key].add(value)

    def status(self) -> str:
        if not self.levels["validated"]:
            return "refused"
        if not self.levels["executed"]:
            return "accepted at validation, then fails"
        if self.levels["validated"] < self.sent:
            return "partly accepted"
        if self.failed:
            return "runs; some accepted cases then fail to build or run"
        return "runs" if self.levels["passed"] == self.levels["executed"] else "runs, results differ from the reference"

    def to_json(self, names: dict[str, dict[int, str]]) -> dict[str, Any]:
        out: dict[str, Any] = {"datatypes": self.datatypes, "status": self.status(), "cases": self.sent}
        out.update({level: self.levels[level] for level in LEVELS})
        out["tiers"] = dict(self.tiers)
        if self.form:
            out["form"] = self.form
        if self.beyond_spec:
            out["beyond_spec"] = True
        if self.refused:
            out["refused_because"] = dict(self.refused.most_common())
        if self.failed:
            out["accepted_then_failed"] = dict(self.failed.most_common())
        if self.ranks:
            out["ranks"] = {t: {k: sorted(v) for k, v in sides.items() if v} for t, sides in sorted(self.ranks.items())}
        if self.params:
            out["params"] = {p: {k: sorted((_member(names, p, x) for x in v), key=str) for k, v in sides.items() if v}
                             for p, sides in sorted(self.params.items())}  # fmt: skip
        if len(self.by_target) > 1 or any(t != _UNKNOWN_TARGET for t in self.by_target):
            ordered = sorted(self.by_target.items(), key=lambda kv: _target_key(kv[0]))
            out["by_target"] = {t: dict(c) for t, c in ordered}
            runs = [t for t, c in self.by_target.items() if c["executed"]]
            if runs:  # "from which generation does it run?": the earliest generation measured to run it
                out["runs_from"] = min(runs, key=_target_key)
        return out


_UNKNOWN_TARGET = "?"


def _target(r: Record) -> str:
    """"v73 2.51": the record's HTP generation and QNN release (``reports.expectations``), "?" for a backend that is
    neither (ONNX Runtime's CPU, the reference)."""
    from reports.expectations import generation_of, record_release, record_soc

    release = record_release(r)
    if release is None:
        return _UNKNOWN_TARGET
    return f"{generation_of(record_soc(r))} {release}"


def _target_key(target: str) -> tuple[int, str]:
    gen = target.split()[0]
    return (int(gen[1:]) if gen[:1] == "v" and gen[1:].isdigit() else 999, target)


def _failure_reason(r: Record) -> str:
    """A finalize or execute failure in a few words: the backend's first log line, normalised, else the message."""
    from adapters import refusal

    details = r.extra.get("details") or {}
    lines = refusal.normalise(details.get("log") or []) if isinstance(details, dict) else []
    text = lines[0] if lines else " ".join((r.message or "").split())
    return text.split("\n", 1)[0][:160]


def _member(names: dict[str, dict[int, str]], param: str, value: Any) -> Any:
    """An enum parameter's member by its name (from the op's spec), other values as they are."""
    return names.get(param, {}).get(value, value) if isinstance(value, int) and not isinstance(value, bool) else value


def _enum_names(op: str) -> dict[str, dict[int, str]]:
    """param -> {value: member name} from the op's spec, where this checkout has it (results may come from
    elsewhere: no spec, raw numbers)."""
    try:
        import opdefs

        spec = opdefs.load(op)
    except (KeyError, ValueError, OSError, ImportError):
        return {}
    except Exception:  # noqa: BLE001 - a spec that does not load: raw numbers
        return {}
    return {name: {v: k for k, v in (p.get("values") or {}).items()} for name, p in spec.params.items()
            if p.get("values")}  # fmt: skip


def envelope(records: Iterable[Record], m: matrix.Matrix | None = None) -> dict[str, Any]:
    """The capability document: per backend, per op, every datatype combination with the evidence its cases
    reached, the ranks and integer parameters accepted and refused, the backend's own supported sets, the
    encoding requirements its refusals state, and the false support claims (validated, then failed). ``m``: the
    records' matrix where the caller built it already (the main job: building it is a third of its reports)."""
    records = list(records)
    m = matrix.build(records) if m is None else m
    forms_of: dict[tuple[str, str], dict[str, str]] = {}
    for c in m.cells.values():
        form = c.standard_form()
        if form:
            forms_of.setdefault((c.backend, c.op), {})[c.config] = form
    combos: dict[tuple[str, str], dict[str, _Combination]] = {}
    declared: dict[tuple[str, str], list[dict[str, str]]] = {}
    builds: dict[str, list[str]] = {}
    for r in records:
        if r.kind in (CELL, SHRUNK, NEGATIVE):
            continue
        key = (r.backend, r.op)
        probe = (r.extra.get("probe") or {}) if r.kind == PROBE else {}
        form = str(probe.get("form", ""))
        beyond = bool(probe.get("beyond_spec"))
        # a datatype beyond the spec's lists is its own combination, named by its datatypes
        label = form if beyond else form.split(":", 1)[0] + f" ({r.config})" if form else r.config
        combo = combos.setdefault(key, {}).setdefault(label, _Combination(label, dict(r.dtypes), form, beyond))
        combo.add(r)
        if r.verdict == REJECTED:
            for s in refusals.supported_sets(r):
                if s not in declared.setdefault(key, []):
                    declared[key].append(s)
        build = matrix.build_label(r.backend_info)
        if build and build not in builds.setdefault(r.backend, []):
            builds[r.backend].append(build)
    doc: dict[str, Any] = {
        "format": FORMAT, "version": 1,
        "evidence": {"validated": "backendValidateOpConfig (or the backend's equivalent) accepted the case",
                     "finalized": "the graph holding it was built", "executed": "it ran",
                     "passed": "its outputs matched the reference within the tolerance"},
        "backends": {},
    }  # fmt: skip
    for backend in m.backends():
        ops: dict[str, Any] = {}
        claims: list[dict[str, Any]] = []
        for (b, op), by_label in sorted(combos.items()):
            if b != backend:
                continue
            names = _enum_names(op)
            entry: dict[str, Any] = {"combinations": {label: c.to_json(names) for label, c in by_label.items()}}
            accepted = [c for c in by_label.values() if c.levels["executed"]]
            entry["accepted_datatype_sets"] = _unique([c.datatypes for c in accepted])
            if declared.get((b, op)):
                entry["backend_declares"] = declared[(b, op)]
            entry["encoding_requirements"] = sorted({why for c in by_label.values() for why in c.refused
                                                     if _about_encoding(why)})  # fmt: skip
            forms = forms_of.get((b, op))
            if forms:
                entry["supported_only_as"] = forms
            beyond = [c for c in by_label.values() if c.beyond_spec and c.levels["validated"]]
            if beyond:  # accepted in datatypes the spec does not list: what a table read from the spec would miss
                entry["beyond_the_spec"] = [{"datatypes": c.datatypes, "status": c.status()} for c in beyond]
            ops[op] = entry
            for label, c in by_label.items():
                if c.failed:
                    claims.append({"op": op, "combination": label, "datatypes": c.datatypes,
                                   "validated": c.levels["validated"], "executed": c.levels["executed"],
                                   "failures": dict(c.failed), "replay": c.example})  # fmt: skip
        doc["backends"][backend] = {"builds": builds.get(backend, []), "ops": ops, "false_support_claims": claims}
    return doc


def _about_encoding(reason: str) -> bool:
    return any(word in reason for word in ("offset", "scale", "encoding", "bit-width"))


def _unique(items: list[dict[str, str]]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def to_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=False, default=str) + "\n"


def false_claims_markdown(doc: dict[str, Any]) -> str:
    """The combinations validation accepts and finalize or execute then refuses, one table per backend."""
    out = ["# Accepted at validation, then refused", "",
           "Each row is a datatype combination the backend's validation accepted and its finalize or execute then "
           "failed: a table built from validation alone would claim it supported.", ""]  # fmt: skip
    for backend, body in doc["backends"].items():
        claims = body["false_support_claims"]
        out += [f"## {backend}: {len(claims)} combination(s)", ""]
        if claims:
            out += ["| op | combination | validated | executed | failed at | replay |", "|---|---|---|---|---|---|"]
            for c in claims:
                failures = "; ".join(f"{k} ({n})" for k, n in c["failures"].items()).replace("|", "\\|")
                out.append(f"| {c['op']} | `{c['combination']}` | {c['validated']} | {c['executed']} | {failures} | "
                           f"`{c['replay']}` |")
            out.append("")
    return "\n".join(out) + "\n"
