"""What kind of "no" a refusal is: the backend lacks the op, the datatype set, a parameter value or rank, the
architecture, or the case was sent in a form of the suite's own making.

Why: a REJ cell reads as "unsupported", but only the first four classes are the backend's; a refusal of the
suite's form (a tensor parameter sent as a scalar, a rank reading the spec leaves open, a value converters never
emit) says nothing about the backend and hides whether it runs the op. Sorting the typical tier's refusals into
these classes shows what is left for the suite to fix (issue 38 found Moments' axes, ImageProjectionTransform's
in[1] and Convert's dynamic_output_data that way).

The class is decided by rules over the normalised reason text (``adapters.refusal.explain`` writes it), and where
the text cannot tell ("no accepted combination of datatypes and parameters", a refusal the backend gives no reason
for) or tells the wrong thing (a rank refused because the suite read the spec's shape one way), by an explicit table
kept as data, ``refusal_classes.yaml`` beside this module: each entry names the reason (and the ops) it covers, its
class and its evidence. The table is read first, so an entry can overrule a rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

OP_ABSENT = "op absent"
DATATYPE_SET = "datatype set"
VALUE_LIMIT = "parameter value or rank limit"
ARCH_GATE = "architecture gate"
SUITE_FORM = "suite form"
UNCLASSIFIED = "unclassified"  # no rule and no table entry: a reason seen for the first time
CLASSES = (OP_ABSENT, DATATYPE_SET, VALUE_LIMIT, ARCH_GATE, SUITE_FORM, UNCLASSIFIED)
TABLE = Path(__file__).with_name("refusal_classes.yaml")

# (class, pattern over the reason, why the pattern decides): first match wins.
RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (OP_ABSENT, re.compile(r"^op not registered$"), "the backend has no validator for the op"),
    (ARCH_GATE, re.compile(r"^needs HTP arch >= \d+"), "the validator asks for a later HTP architecture"),
    (DATATYPE_SET, re.compile(r"^datatype set not supported"), "the backend lists the datatype sets it takes"),
    (DATATYPE_SET, re.compile(r"^(?:in|out)\[\d+\] datatype \w+ refused$"), "one tensor's datatype is refused"),
    (SUITE_FORM, re.compile(r"^param \w+ must be a (?:tensor|scalar)$"),
     "whether a parameter goes out as a tensor or a scalar is the sender's choice, and the spec's shape decides it"),
    (SUITE_FORM, re.compile(r"\boffset must be -?\d+"),
     "an encoding the backend fixes (a bounded output's grid) is one converters emit, so the sender chose another"),
    (VALUE_LIMIT, re.compile(r"\bmust be (?:[<>]=? )?-?\d+"), "the validator wants another parameter value or size"),
    (VALUE_LIMIT, re.compile(r"rank \d+ refused|incorrect Rank \d+"), "the validator refuses a tensor's rank"),
    (VALUE_LIMIT, re.compile(r"^min_value must be < max_value$"), "the validator refuses equal bounds"),
    (VALUE_LIMIT, re.compile(r"\bmode \d+ not supported$"), "the validator refuses an enum member"),
)


@dataclass(frozen=True)
class Entry:
    """One row of the table: the reasons (exact text, or ``re:`` and a regular expression searched in it) and the
    ops (a regular expression, all when absent) it decides, the class, the evidence, and the suite fix if any."""

    reason: str
    klass: str
    evidence: str
    ops: str = ""
    fixed: str = ""

    def covers(self, reason: str, op: str) -> bool:
        hit = re.search(self.reason[3:], reason) if self.reason.startswith("re:") else reason == self.reason
        return bool(hit) and (not self.ops or re.search(self.ops, op) is not None)


@dataclass(frozen=True)
class Decision:
    """A reason's class and what decided it: ``rule`` (the pattern's why) or ``table`` (the entry's evidence)."""

    klass: str
    by: str
    basis: str
    fixed: str = ""


def load_table(path: Path = TABLE) -> list[Entry]:
    """The table's entries; a malformed one is a ValueError naming the file and the entry."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(data, list):
        raise ValueError(f"{path}: a list of entries expected")
    entries = []
    for k, item in enumerate(data):
        where = f"{path}: entry {k + 1}"
        if not isinstance(item, dict) or not {"reason", "class", "evidence"} <= item.keys():
            raise ValueError(f"{where}: needs reason, class and evidence")
        if item["class"] not in CLASSES[:-1]:
            raise ValueError(f"{where}: class {item['class']!r} is not one of {', '.join(CLASSES[:-1])}")
        if not str(item["evidence"]).strip():
            raise ValueError(f"{where}: empty evidence")
        for key in ("ops",) + (("reason",) if str(item["reason"]).startswith("re:") else ()):
            pattern = str(item.get(key) or "")
            try:
                re.compile(pattern[3:] if key == "reason" else pattern)
            except re.error as e:
                raise ValueError(f"{where}: {key} is not a regular expression: {e}") from None
        entries.append(Entry(str(item["reason"]), str(item["class"]), " ".join(str(item["evidence"]).split()),
                             str(item.get("ops") or ""), " ".join(str(item.get("fixed") or "").split())))  # fmt: skip
    return entries


@cache
def _default_table() -> tuple[Entry, ...]:
    return tuple(load_table())


def classify(reason: str, op: str, table: list[Entry] | tuple[Entry, ...] | None = None) -> Decision:
    """The class of a refusal of ``op`` for ``reason``: the first table entry covering it, else the first rule."""
    for e in _default_table() if table is None else table:
        if e.covers(reason, op):
            return Decision(e.klass, "table", e.evidence, e.fixed)
    for klass, pattern, why in RULES:
        if pattern.search(reason):
            return Decision(klass, "rule", why)
    return Decision(UNCLASSIFIED, "none", "no rule matches and no table entry covers it")


def decision_json(d: Decision) -> dict[str, Any]:
    out = {"class": d.klass, "by": d.by, "basis": d.basis}
    if d.fixed:
        out["fixed"] = d.fixed
    return out
