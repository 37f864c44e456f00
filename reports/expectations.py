"""Known failures per backend: an expectations YAML turns expected bad verdicts into XFAIL.

A backend that is known to miscompute something should not hide the rest of the matrix behind a
wall of red, but a known failure must stay visible and must be re-checked: a case that matches an
entry and still fails becomes XFAIL (with the entry's reason), one that now succeeds becomes XPASS,
and entries that matched nothing are reported so stale ones get deleted.

File format (a list of entries, or a mapping with an ``expectations:`` list)::

    - op: ElementWiseAdd           # required: glob ("Pool*"), or regex with a "re:" prefix; or a list of them
      config: "UFIXED_POINT_*"     # optional pattern, default: any config
      backend: qnn-htp             # optional pattern, default: any backend
      kind: positive               # optional: positive (default) or negative cases
      verdicts: [FAIL, ERROR]      # optional: the verdicts that are expected (default below)
      reason: "HTP rounds half away from zero (ticket 123)"   # required

Patterns match the whole name, case-sensitively. The first matching entry (file order) wins. For
negative cases the good outcome is REJECTED, so for them a clean rejection is the XPASS. The file is
read with PyYAML's safe loader: nothing in it is executed.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from reports.record import CRASH, ERROR, FAIL, PASS, REJECTED, UNCHECKED, VERDICTS, XFAIL, XPASS, Record

POSITIVE, NEGATIVE = "positive", "negative"
DEFAULT_VERDICTS: dict[str, tuple[str, ...]] = {
    POSITIVE: (FAIL, ERROR, CRASH),
    NEGATIVE: (PASS, FAIL, UNCHECKED, ERROR, CRASH),  # anything but a clean rejection that ran to an end
}
GOOD_OUTCOME = {POSITIVE: PASS, NEGATIVE: REJECTED}
FIELDS = ("op", "config", "backend", "kind", "verdicts", "reason")
RAW_VERDICT_KEY = "verdict_before_expectation"  # kept in Record.extra so a later file can be re-applied


class ExpectationsError(ValueError):
    """A malformed expectations file; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class Pattern:
    text: str
    regex: re.Pattern[str]

    def matches(self, name: str) -> bool:
        return self.regex.fullmatch(name) is not None


@dataclass
class Entry:
    """One known failure. ``matches`` counts the cases it matched during this process's lifetime."""

    op: tuple[Pattern, ...]
    config: tuple[Pattern, ...] | None
    backend: tuple[Pattern, ...] | None
    kind: str
    verdicts: tuple[str, ...]
    reason: str
    where: str  # "file:line" of the entry, for warnings about it
    matches: int = field(default=0, compare=False)

    def covers(self, op: str, config: str, backend: str, kind: str) -> bool:
        return (
            kind == self.kind
            and _any(self.op, op)
            and (self.config is None or _any(self.config, config))
            and (self.backend is None or _any(self.backend, backend))
        )

    def describe(self) -> str:
        parts = ["op=" + ",".join(p.text for p in self.op)]
        if self.config is not None:
            parts.append("config=" + ",".join(p.text for p in self.config))
        if self.backend is not None:
            parts.append("backend=" + ",".join(p.text for p in self.backend))
        if self.kind != POSITIVE:
            parts.append(f"kind={self.kind}")
        return f"{self.where}: {' '.join(parts)} ({self.reason})"


def _any(patterns: tuple[Pattern, ...], name: str) -> bool:
    return any(p.matches(name) for p in patterns)


class Expectations:
    """The entries of one (or no) expectations file, and which of them have matched a case so far."""

    def __init__(self, entries: Iterable[Entry] = (), source: str = "<none>") -> None:
        self.entries = list(entries)
        self.source = source

    @classmethod
    def load(cls, path: str | Path) -> Expectations:
        """Read and validate a file; raises ExpectationsError naming file:line for anything malformed."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise ExpectationsError(f"{path}: cannot read expectations file: {e.strerror or e}") from None
        return cls.from_text(text, str(path))

    @classmethod
    def load_all(cls, paths: Iterable[str | Path]) -> Expectations:
        """Several files as one list of entries (file order, then entry order: the first match wins)."""
        parts = [cls.load(p) for p in paths]
        return cls([e for part in parts for e in part.entries], ", ".join(part.source for part in parts) or "<none>")

    @classmethod
    def from_text(cls, text: str, source: str = "<string>") -> Expectations:
        return cls(_parse(text, source), source)

    def match(self, op: str, config: str, backend: str, kind: str = POSITIVE) -> Entry | None:
        """The first entry covering this case, or None. Marks the entry as used."""
        for entry in self.entries:
            if entry.covers(op, config, backend, kind):
                entry.matches += 1
                return entry
        return None

    @staticmethod
    def apply(verdict: str, entry: Entry | None) -> tuple[str, str | None]:
        return apply(verdict, entry)

    def unused(self) -> list[Entry]:
        """Entries that matched no case (the caller warns: they are stale or mistyped)."""
        return [e for e in self.entries if e.matches == 0]

    def apply_record(self, r: Record) -> Record:
        """A copy of the record with the expectation applied (verdict, ``expectation`` reason).

        The verdict before any expectation is kept in ``extra`` so re-applying a newer expectations
        file to an old results file judges the backend's own verdict, not a previous XFAIL.
        """
        if r.kind == "cell":  # a cell's bookkeeping record has no verdict to expect
            return r
        raw = r.extra.get(RAW_VERDICT_KEY, r.verdict)
        if raw not in VERDICTS:
            raw = r.verdict
        entry = self.match(r.op, r.config, r.backend, NEGATIVE if r.kind == NEGATIVE else POSITIVE)
        verdict, reason = apply(raw, entry)
        extra = dict(r.extra)
        if verdict != raw:
            extra[RAW_VERDICT_KEY] = raw
        else:
            extra.pop(RAW_VERDICT_KEY, None)
        return replace(r, verdict=verdict, expectation=reason, extra=extra)

    def apply_records(self, records: Iterable[Record]) -> Iterator[Record]:
        for r in records:
            yield self.apply_record(r)


def apply(verdict: str, entry: Entry | None) -> tuple[str, str | None]:
    """(new verdict, reason): an expected bad verdict becomes XFAIL, the good outcome becomes XPASS.

    Any other verdict (e.g. REJECTED or SKIP for a positive case) is returned unchanged with no
    reason: the entry predicted a failure of a case that did not get as far as being judged.
    """
    if entry is None:
        return verdict, None
    if verdict in entry.verdicts:
        return XFAIL, entry.reason
    if verdict == GOOD_OUTCOME[entry.kind]:
        return XPASS, entry.reason
    return verdict, None


# ---- parsing -------------------------------------------------------------------------------------


def _parse(text: str, source: str) -> list[Entry]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = f"{mark.line + 1}:" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        raise ExpectationsError(f"{source}:{line} not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    if data is None:
        return []
    if isinstance(data, dict) and isinstance(node, yaml.MappingNode):
        extra = set(data) - {"expectations"}
        if extra:
            raise ExpectationsError(
                f"{source}:{node.start_mark.line + 1}: a mapping at the top level may only hold 'expectations', "
                f"found {sorted(map(str, extra))}"
            )
        node = next(v for k, v in node.value if k.value == "expectations")
        data = data["expectations"]
        if data is None:
            return []
    if not isinstance(data, list) or not isinstance(node, yaml.SequenceNode):
        raise ExpectationsError(f"{source}:{node.start_mark.line + 1}: expected a list of entries")
    return [_entry(item, item_node, source) for item, item_node in zip(data, node.value, strict=True)]


def _entry(item: Any, node: yaml.Node, source: str) -> Entry:
    where = f"{source}:{node.start_mark.line + 1}"
    if not isinstance(item, dict) or not isinstance(node, yaml.MappingNode):
        raise ExpectationsError(f"{where}: an entry must be a mapping with at least 'op' and 'reason'")
    lines = {str(k.value): f"{source}:{k.start_mark.line + 1}" for k, _ in node.value}
    for key in item:
        if key not in FIELDS:
            at = lines.get(str(key), where)
            raise ExpectationsError(f"{at}: unknown field {key!r} (fields: {', '.join(FIELDS)})")
    for key in ("op", "reason"):
        if key not in item:
            raise ExpectationsError(f"{where}: entry has no {key!r} (required)")
    reason = item["reason"]
    if not isinstance(reason, str) or not reason.strip():
        raise ExpectationsError(f"{lines['reason']}: 'reason' must be a non-empty string")
    kind = item.get("kind", POSITIVE)
    if kind not in (POSITIVE, NEGATIVE):
        raise ExpectationsError(f"{lines['kind']}: 'kind' must be positive or negative, not {kind!r}")
    verdicts = _verdicts(item["verdicts"], lines["verdicts"]) if "verdicts" in item else DEFAULT_VERDICTS[kind]
    if GOOD_OUTCOME[kind] in verdicts:
        raise ExpectationsError(
            f"{lines['verdicts']}: {GOOD_OUTCOME[kind]} is the good outcome of {kind} cases, not an expected failure"
        )
    return Entry(
        op=_patterns(item["op"], "op", lines["op"]),
        config=_patterns(item["config"], "config", lines["config"]) if item.get("config") is not None else None,
        backend=_patterns(item["backend"], "backend", lines["backend"]) if item.get("backend") is not None else None,
        kind=kind,
        verdicts=verdicts,
        reason=reason.strip(),
        where=where,
    )


def _verdicts(value: Any, where: str) -> tuple[str, ...]:
    values = [value] if isinstance(value, str) else value
    allowed = [v for v in VERDICTS if v not in (XFAIL, XPASS)]
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise ExpectationsError(f"{where}: 'verdicts' must be a non-empty list of verdicts ({', '.join(allowed)})")
    for v in values:
        if v not in allowed:
            raise ExpectationsError(f"{where}: {v!r} is not an expectable verdict (one of {', '.join(allowed)})")
    return tuple(values)


def _patterns(value: Any, key: str, where: str) -> tuple[Pattern, ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
        raise ExpectationsError(f"{where}: {key!r} must be a pattern or a non-empty list of patterns (strings)")
    return tuple(compile_pattern(v, where) for v in values)


def compile_pattern(text: str, where: str = "<pattern>") -> Pattern:
    """A glob ("ElementWise*", "UFIXED_POINT_?"), or a regular expression written "re:<regex>"."""
    if text.startswith("re:"):
        try:
            return Pattern(text, re.compile(text[3:]))
        except re.error as e:
            raise ExpectationsError(f"{where}: bad regular expression {text[3:]!r}: {e}") from None
    return Pattern(text, re.compile(fnmatch.translate(text)))
