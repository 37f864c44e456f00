"""Two routes, one case: where two runs of the same cases disagree, case by case.

Why: qnn-htp (the QNN C API, one op config per case) and ort-qnn (the case lowered to ONNX, handed
to the QNN execution provider) end in the same ``libQnnHtp.so``. A case that passes on one and not
the other is either an adapter or lowering defect, or a difference in what each route hands the
backend; a case failing the same way on both is the backend's. Cases are paired by ``case_id`` (the
content hash of what a backend receives) and kind, so the two runs must come from the same seed and
options; cases only one run has are counted, not compared.

A pair disagrees when its verdicts differ (judged on the backend's own verdict, before any
expectations file turned it into XFAIL), or when both ran and their outputs differ bit for bit
(``details["output_digest"]``, written by the QNN adapters). A pair where one route did not run the case
(SKIP: no ONNX form, or no QNN form) is not a disagreement between backends: it is counted apart as "not
compared", with the route's own reason.

Disagreements are explained by a YAML file of entries (``findings/routes.yaml``), each naming the op (a
pattern that would match any name is refused: a wildcard explains nothing) and the mechanism that makes the
two routes differ, and each checked by a case that shows it (``tests/test_routes.py`` replays it on both
routes)::

    - op: ElementWiseFloorDiv          # pattern(s), as in expectations files; never one that matches any op
      config: "?FIXED_POINT_*"         # optional
      tier: typical                    # optional
      a: PASS                          # optional pattern on run A's verdict (or "outputs" for bit differences)
      b: ERROR                         # optional pattern on run B's verdict
      b_message: "re:MEM_ALLOC"        # optional pattern searched in B's (or a_message: A's) message
      b_finding: ep-...                # optional pattern on the finding B's record was judged XFAIL by (a_finding:
                                       # A's): where only a finding's params tell the mechanism's cases apart
      mechanism: ep-fp32-graph-default-soc-finalize   # required: what differs, counted per mechanism
      finding: ort-qnn-...             # optional: the finding (findings/<backend>.yaml) behind it
      graph: [Dequantize, ElementWiseDivide, ElementWiseFloor, Quantize]   # optional: the QNN ops ort-qnn
                                       # composes for ``case`` (checked with it)
      case: findings/routes/<name>.json   # required: a saved case that shows it
      why: "ONNX has no FloorDiv: ..."  # required

The first matching entry explains a disagreement; the report lists explained and unexplained ones and
counts the explained ones per mechanism.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reports.expectations import ExpectationsError, Pattern, compile_pattern, record_stage
from reports.matrix import config_sort_key, op_sort_key
from reports.record import CELL, RAW_VERDICT_KEY, SHRUNK, SKIP, TYPICAL, Record

DEFAULT_EXPLANATIONS = Path(__file__).resolve().parents[1] / "findings" / "routes.yaml"
OUTPUTS = "outputs"  # the "verdict" an explanation names for a same-verdict, different-bits pair
# The mechanism of an ``outputs`` pair that a finding on each side covers with a model leaving cells open (NaN: the bug
# leaves them unwritten, so they hold what the process's buffer held): the bits there may differ from run to run, so
# the entry's case shows the two findings, not necessarily other bits (tests/test_routes.py)
OPEN_CELLS = "cells-a-finding-leaves-open"
MESSAGE_CHARS = 160


@dataclass
class Side:
    verdict: str
    stage: str
    message: str
    digest: str
    replay: str
    case_path: str = ""
    finding: str = ""  # the finding (expectations entry id) that judged the record XFAIL, if any

    @classmethod
    def of(cls, r: Record) -> Side:
        details = r.extra.get("details") if isinstance(r.extra.get("details"), dict) else {}
        return cls(
            verdict=raw_verdict(r),
            stage=record_stage(r) or "",
            message=" ".join(r.message.split())[:MESSAGE_CHARS],
            digest=str(details.get("output_digest") or ""),
            replay=r.replay or "",
            case_path=r.case_path or "",
            finding=finding_of(r),
        )


def finding_of(r: Record) -> str:
    """The id of the finding an XFAIL record names (its expectation reads "[id] reason"), else ""."""
    reason = r.expectation or ""
    return reason[1 : reason.index("]")] if reason.startswith("[") and "]" in reason else ""


@dataclass
class Disagreement:
    op: str
    config: str
    tier: str
    kind: str
    case_id: str
    what: str  # "verdict" or "outputs"
    a: Side
    b: Side
    why: str = ""  # the explanation entry's text, "" if none matched
    mechanism: str = ""  # the explanation entry's mechanism
    finding: str = ""  # the finding the explanation names, if any


@dataclass
class Agreement:
    label_a: str
    label_b: str
    paired: int = 0
    same: int = 0
    only_a: int = 0
    only_b: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    pairs: Counter[str] = field(default_factory=Counter)  # "PASS/PASS", "ERROR/REJECTED" ... over every pair
    # pairs one route did not run (SKIP), per (tier, route label, that route's reason): never a disagreement
    not_compared: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    @property
    def unexplained(self) -> list[Disagreement]:
        return [d for d in self.disagreements if not d.why]

    @property
    def unexplained_typical(self) -> list[Disagreement]:
        """What a run must not leave: a typical case the two runs disagree on that nothing explains."""
        return [d for d in self.unexplained if d.tier == TYPICAL]

    def mechanisms(self, tier: str | None = TYPICAL) -> Counter[str]:
        """Explained disagreements per mechanism (of ``tier``; None: every tier)."""
        return Counter(d.mechanism for d in self.disagreements if d.why and (tier is None or d.tier == tier))


def raw_verdict(r: Record) -> str:
    """The backend's own verdict: an expectations file may have turned it into XFAIL/XPASS."""
    return str(r.extra.get(RAW_VERDICT_KEY) or r.verdict)


def _index(records: Iterable[Record]) -> dict[tuple[str, str], Record]:
    out: dict[tuple[str, str], Record] = {}
    for r in records:
        if r.kind in (CELL, SHRUNK) or not r.case_id:
            continue
        out.setdefault((r.case_id, r.kind), r)  # a case counted once per run, as in a cell
    return out


def run_label(records: list[Record]) -> str:
    """backend name, plus the SoC when a record names one other than the default ("qnn-htp soc=43")."""
    if not records:
        return "(empty)"
    r = records[0]
    soc = r.backend_info.get("soc")
    return r.backend + (f" soc={soc}" if soc not in (None, "", "default") else "")


def compare(a: Iterable[Record], b: Iterable[Record], explain: list[Explanation] | None = None) -> Agreement:
    """Pair the two runs' cases by id and list every pair whose verdict or outputs differ."""
    recs_a, recs_b = list(a), list(b)
    ia, ib = _index(recs_a), _index(recs_b)
    result = Agreement(run_label(recs_a), run_label(recs_b))
    result.only_a = len(ia.keys() - ib.keys())
    result.only_b = len(ib.keys() - ia.keys())
    for key in ia.keys() & ib.keys():
        ra, rb = ia[key], ib[key]
        sa, sb = Side.of(ra), Side.of(rb)
        result.paired += 1
        result.pairs[f"{sa.verdict}/{sb.verdict}"] += 1
        if SKIP in (sa.verdict, sb.verdict) and sa.verdict != sb.verdict:
            label, skipped = (result.label_a, ra) if sa.verdict == SKIP else (result.label_b, rb)
            result.not_compared[(ra.tier or TYPICAL, label, _reason_of(skipped))] += 1
            continue
        if sa.verdict != sb.verdict:
            what = "verdict"
        elif sa.digest and sb.digest and sa.digest != sb.digest:
            what = OUTPUTS
        else:
            result.same += 1
            continue
        d = Disagreement(ra.op, ra.config, ra.tier or "typical", ra.kind, ra.case_id, what, sa, sb)
        entry = _explain(d, explain or [], ra.message, rb.message)
        if entry is not None:
            d.why, d.mechanism, d.finding = entry.why, entry.mechanism, entry.finding
        result.disagreements.append(d)
    result.disagreements.sort(key=lambda d: (d.tier != "typical", op_sort_key(d.op), config_sort_key(d.config),
                                             d.what, d.case_id))  # fmt: skip
    return result


def _reason_of(r: Record) -> str:
    """Why a route did not run a case, in a few words that group alike cases: the message up to the first
    detail that varies from case to case (a shape, a value list)."""
    text = " ".join(r.message.split()) or "no reason given"
    for mark in (" = [", ": [", " ("):
        if mark in text:
            text = text[: text.index(mark)]
    return text[:MESSAGE_CHARS]


# ---- explanations --------------------------------------------------------------------------------
EXPLANATION_FIELDS = ("op", "config", "tier", "a", "b", "a_message", "b_message", "a_finding", "b_finding", "mechanism",
                      "finding", "graph", "case", "why")  # fmt: skip
REQUIRED_FIELDS = ("op", "mechanism", "case", "why")
# names no op is called: an op pattern that matches one of them matches any name, so it names no op
_NOT_AN_OP = ("", "not an op name", "zz-NoSuchOp-0")


@dataclass
class Explanation:
    op: tuple[Pattern, ...]
    config: tuple[Pattern, ...] | None
    tier: tuple[Pattern, ...] | None
    a: tuple[Pattern, ...] | None
    b: tuple[Pattern, ...] | None
    why: str
    where: str
    mechanism: str = ""
    case: str = ""
    finding: str = ""
    graph: tuple[str, ...] = ()
    a_message: tuple[Pattern, ...] | None = None
    b_message: tuple[Pattern, ...] | None = None
    a_finding: tuple[Pattern, ...] | None = None
    b_finding: tuple[Pattern, ...] | None = None
    used: int = 0

    def explains(self, d: Disagreement, a_text: str | None = None, b_text: str | None = None) -> bool:
        """Whether the entry explains ``d``; ``a_text``/``b_text``: each side's whole message (the
        disagreement keeps a shortened one), for the message patterns."""
        va = OUTPUTS if d.what == OUTPUTS else d.a.verdict
        vb = OUTPUTS if d.what == OUTPUTS else d.b.verdict
        a_text = d.a.message if a_text is None else a_text
        b_text = d.b.message if b_text is None else b_text
        return (
            any(p.matches(d.op) for p in self.op)
            and (self.config is None or any(p.matches(d.config) for p in self.config))
            and (self.tier is None or any(p.matches(d.tier) for p in self.tier))
            and (self.a is None or any(p.matches(va) for p in self.a))
            and (self.b is None or any(p.matches(vb) for p in self.b))
            and (self.a_message is None or any(p.search(a_text) for p in self.a_message))
            and (self.b_message is None or any(p.search(b_text) for p in self.b_message))
            and (self.a_finding is None or any(p.matches(d.a.finding) for p in self.a_finding))
            and (self.b_finding is None or any(p.matches(d.b.finding) for p in self.b_finding))
        )


def _explain(d: Disagreement, entries: list[Explanation], a_text: str | None = None,
             b_text: str | None = None) -> Explanation | None:  # fmt: skip
    for e in entries:
        if e.explains(d, a_text, b_text):
            e.used += 1
            return e
    return None


def load_explanations(path: str | Path) -> list[Explanation]:
    """Read an explanations file; anything malformed is an ExpectationsError naming file:line."""
    text = Path(path).read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # libyaml where built: the same nodes and marks
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ExpectationsError(f"{path}:{mark.line + 1 if mark else ''}: not valid YAML") from None
    finally:
        loader.dispose()
    if data is None:
        return []
    if not isinstance(data, list) or not isinstance(node, yaml.SequenceNode):
        raise ExpectationsError(f"{path}:1: expected a list of explanations")
    out = []
    for item, item_node in zip(data, node.value, strict=True):
        where = f"{path}:{item_node.start_mark.line + 1}"
        if not isinstance(item, dict):
            raise ExpectationsError(f"{where}: an explanation must be a mapping with {', '.join(REQUIRED_FIELDS)}")
        unknown = set(item) - set(EXPLANATION_FIELDS)
        if unknown:
            raise ExpectationsError(f"{where}: unknown {sorted(map(str, unknown))}: {', '.join(EXPLANATION_FIELDS)}")
        for key in REQUIRED_FIELDS:
            if key == "op" and not item.get("op"):
                raise ExpectationsError(f"{where}: an explanation needs 'op' (the op or ops it is about)")
            if key != "op" and (not isinstance(item.get(key), str) or not item[key].strip()):
                raise ExpectationsError(f"{where}: an explanation needs a non-empty {key!r}")

        def pats(key: str, where: str = where, item: dict = item) -> tuple[Pattern, ...] | None:
            value = item.get(key)
            if value is None:
                return None
            values = [value] if isinstance(value, str) else value
            if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
                raise ExpectationsError(f"{where}: {key!r} must be a pattern or a list of patterns")
            return tuple(compile_pattern(v, where) for v in values)

        ops = pats("op") or ()
        wild = [p.text for p in ops if any(p.matches(name) for name in _NOT_AN_OP)]
        if wild:
            raise ExpectationsError(f"{where}: op pattern {wild[0]!r} matches any name: an explanation names its op(s)")
        graph = item.get("graph") or []
        if not isinstance(graph, list) or not all(isinstance(g, str) and g for g in graph):
            raise ExpectationsError(f"{where}: 'graph' must be a list of QNN op types")
        finding = item.get("finding") or ""
        if not isinstance(finding, str):
            raise ExpectationsError(f"{where}: 'finding' must be a finding's id")
        out.append(Explanation(ops, pats("config"), pats("tier"), pats("a"), pats("b"),
                               " ".join(item["why"].split()), where, mechanism=item["mechanism"].strip(),
                               case=item["case"].strip(), finding=finding.strip(), graph=tuple(graph),
                               a_message=pats("a_message"), b_message=pats("b_message"),
                               a_finding=pats("a_finding"), b_finding=pats("b_finding")))  # fmt: skip
    return out


# ---- rendering -----------------------------------------------------------------------------------
def summary_line(r: Agreement) -> str:
    typical = [d for d in r.disagreements if d.tier == TYPICAL]
    unexplained = r.unexplained_typical
    skipped = sum(r.not_compared.values())
    return (f"{r.label_a} vs {r.label_b}: {r.paired} case(s) paired, {r.same} agree, {len(r.disagreements)} "
            f"disagree ({len(typical)} typical, {len(unexplained)} of them unexplained), {skipped} not compared "
            f"(one route did not run the case); only in A {r.only_a}, only in B {r.only_b}")  # fmt: skip


def mechanism_lines(r: Agreement) -> list[str]:
    """One line per mechanism with its typical disagreements, most first, and the unexplained count last."""
    counts = r.mechanisms()
    lines = [f"{n:6d}  {m}" for m, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    unexplained = sum(1 for d in r.unexplained if d.tier == TYPICAL)
    return lines + [f"{unexplained:6d}  (unexplained)"]


def to_markdown(r: Agreement, limit: int = 400) -> str:
    out = [f"# Two routes, one case: {r.label_a} vs {r.label_b}", "", summary_line(r) + ".", ""]
    if r.pairs:
        rows = sorted(r.pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        out += ["| A/B verdicts | cases |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows], ""]
    if r.disagreements:
        out += ["## Typical disagreements per mechanism", "",
                "What makes the two routes differ, from the explanations file; a case no entry explains is listed "
                "as unexplained below.", "", "| mechanism | typical cases |", "|---|---|",
                *[f"| {line.split(None, 1)[1]} | {line.split()[0]} |" for line in mechanism_lines(r)], ""]  # fmt: skip
    if r.not_compared:
        out += ["## Not compared", "", "Pairs one route did not run (SKIP), with that route's reason: nothing reached "
                "its backend, so there is nothing to compare.", "", "| tier | route | reason | cases |",
                "|---|---|---|---|"]  # fmt: skip
        for (tier, label, why), n in sorted(r.not_compared.items(), key=lambda kv: (kv[0][0] != TYPICAL, -kv[1])):
            out.append(f"| {tier} | {label} | {why.replace('|', chr(92) + '|')} | {n} |")
        out.append("")
    if not r.disagreements:
        return "\n".join(out + ["No disagreements.", ""])
    groups: dict[tuple[str, str, str, str, str, str], list[Disagreement]] = {}
    for d in r.disagreements:
        va = OUTPUTS if d.what == OUTPUTS else d.a.verdict
        vb = OUTPUTS if d.what == OUTPUTS else d.b.verdict
        mechanism = d.mechanism + (f" (finding {d.finding})" if d.finding else "")
        groups.setdefault((d.tier, d.op, d.config, va, vb, mechanism, d.why), []).append(d)
    out += ["## Disagreements", "",
            "One row per op, config, tier and verdict pair (outputs: same verdict, different bits). "
            "`why` comes from the explanations file; empty means not yet explained.", "",
            "| tier | op | config | A | B | cases | A says | B says | mechanism | why | replay (first case) |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for n, ((tier, op, config, va, vb, mechanism, why), ds) in enumerate(groups.items()):
        if n >= limit:
            out.append(f"| … | {len(groups) - limit} more group(s) in the JSON form | | | | | | | | | |")
            break
        d = ds[0]
        a_says = f"{d.a.stage}: {d.a.message}" if d.a.stage else d.a.message
        b_says = f"{d.b.stage}: {d.b.message}" if d.b.stage else d.b.message
        replay = d.a.replay or d.b.replay
        cells = [tier, op, config, va, vb, str(len(ds)), a_says, b_says, mechanism, why,
                 f"`{replay}`" if replay else ""]  # fmt: skip
        out.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(out) + "\n"


def to_json(r: Agreement) -> str:
    d: dict[str, Any] = asdict(r)
    d["pairs"] = dict(r.pairs)
    d["not_compared"] = [{"tier": t, "route": label, "reason": why, "cases": n}
                         for (t, label, why), n in sorted(r.not_compared.items())]  # fmt: skip
    d["mechanisms"] = dict(r.mechanisms())
    return json.dumps(d, indent=1, sort_keys=True)
