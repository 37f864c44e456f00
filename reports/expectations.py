"""Known failures per backend: an expectations YAML turns expected bad verdicts into XFAIL.

A backend that is known to miscompute something should not hide the rest of the matrix behind a
wall of red, but a known failure must stay visible and must be re-checked: a case that matches an
entry and still fails becomes XFAIL (with the entry's reason), one that now succeeds becomes XPASS,
and entries that matched nothing are reported so stale ones get deleted.

File format (a list of entries, or a mapping with an ``expectations:`` list)::

    - op: ElementWiseAdd           # required: glob ("Pool*"), or regex with a "re:" prefix; or a list of them
      config: "UFIXED_POINT_*"     # optional pattern, default: any config
      backend: qnn-htp             # optional pattern, default: any backend (qnn-htp also covers the
                                   # variants qnn-htp@2.47, qnn-htp@v73: a release or target of it)
      kind: positive               # optional: positive (default) or negative cases
      verdicts: [FAIL, ERROR]      # optional: the verdicts that are expected (default below)
      reason: "HTP rounds half away from zero (ticket 123)"   # required

Patterns match the whole name, case-sensitively. The first matching entry (file order) wins. For
negative cases the good outcome is REJECTED, so for them a clean rejection is the XPASS. The file is
read with PyYAML's safe loader: nothing in it is executed.

A **finding** (``findings/<backend>.yaml``) is an entry with its evidence, and may narrow what it covers::

    - id: concat-default-axis      # a short name for reports and bug trackers
      op: Concat
      tier: edge                   # optional: typical, edge or model (records without a tier count as typical;
                                   # a typical entry covers the model tier too: a layer is a typical case at its size)
      soc: default                 # optional pattern on the record's backend_info soc ("default" if none)
      targets: [v69, v73]          # optional: the HTP generations it was measured to hold on (v68 is the
                                   # simulator's default target); a run on another generation does not apply it
      releases: ['2.51']           # optional: the QNN releases it was measured to hold on, likewise
      stage: finalize              # optional pattern on where the case stopped (validate/finalize/execute/ok)
      message: "re:.*dim 0.*"      # optional pattern on the record's message
      params: {nearest_mode: 2}    # optional: the case's parameter values (a value or a list of them; a parameter
                                   # the case leaves out counts at its spec default), read from the saved case
      model: {without: [in[2]]}    # optional: wrong numbers, the outputs match this model (reference/models.py)
      band: {steps: 2}             # optional: an accuracy finding, the error is at most this; with a model: the
                                   # outputs are within it of the model's (a bug and an accuracy deviation at once)
      scope: cases                 # "cell" (default): every case of the cell is expected to fail, a PASS
                                   # is XPASS; "cases": only cases showing the symptom are covered (a PASS
                                   # stays PASS; the finding's own case, replayed, says whether it is fixed)
      reason: "..."
      contradicts: "MasterOpDef line the behaviour contradicts"
      build: "backend build id the finding was seen on"
      log: "the backend's own words"
      case: findings/cases/Concat/....json    # the minimal case: python -m conformance replay <it> --backend ...

A finding that is another backend's bug seen through a second route (the ONNX Runtime QNN EP composing the same
QNN op on the same libQnnHtp.so) names that finding instead of copying it, so the two cannot drift apart::

    - {id: ep-sqrt, same_as: "qnn-htp:squareroot-16bit-inaccurate", stage: ok, reason: ..., case: ...}

It takes that finding's selectors and evidence (``reports.same_as.FIELDS``), never its backend, targets, stage, message
or case: the route's own symptom (a FAIL that ran, an ONNX Runtime message) and repro are the entry's own.

``stage``, ``message`` and ``params`` select failures by their symptom, so an entry with any of them is
always of scope "cases". ``params`` is for findings that only some parameter values show (Resize's
HALF_PIXEL + FLOOR): without it, the first finding of an op and tier would take every failure of it.
A record whose saved case cannot be read does not show a ``params`` symptom: it stays a failure.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from reports.record import (
    CRASH,
    ERROR,
    FAIL,
    NEGATIVE,
    PASS,
    POSITIVE,
    RAW_VERDICT_KEY,
    REJECTED,
    UNCHECKED,
    VERDICTS,
    XFAIL,
    XPASS,
    Record,
)

# libyaml's parser where PyYAML was built with it: the same nodes and line marks, 15x faster (qnn-htp.yaml took 1.2 s
# in pure Python, and every pytest process of a run reads it two or three times)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_REPO = Path(__file__).resolve().parents[1]  # a saved case's path in a record is from the repo root
DEFAULT_VERDICTS: dict[str, tuple[str, ...]] = {
    POSITIVE: (FAIL, ERROR, CRASH),
    NEGATIVE: (PASS, FAIL, UNCHECKED, ERROR, CRASH),  # anything but a clean rejection that ran to an end
}
GOOD_OUTCOME = {POSITIVE: PASS, NEGATIVE: REJECTED}
MATCH_FIELDS = ("op", "config", "backend", "kind", "verdicts", "tier", "soc", "targets", "releases", "stage", "message",
                "params", "scope",
                "when", "log_says", "model", "band")  # fmt: skip
SYMPTOM_FIELDS = ("stage", "message", "params", "when", "log_says", "model", "band")  # any of them: scope "cases"
BANDS = ("steps", "abs", "rel")  # an accuracy finding's band: how far off its cases are at most
INFO_FIELDS = ("id", "reason", "contradicts", "build", "log", "case", "notes", "same_as")
EVIDENCE_FIELDS = ("class", "spec")  # a finding's class and the MasterOpDef sentence it quotes (checked by lint)
FIELDS = MATCH_FIELDS + INFO_FIELDS + EVIDENCE_FIELDS
# What a finding claims, so the reports can group them and a reader knows what kind of evidence to expect:
# ``deviation`` the spec says X and the backend does Y; ``self-contradiction`` validation accepts, then finalize
# or execute fails (on the target named); ``accuracy`` outside a budget whose source is stated; ``crash`` the
# process dies.
CLASSES = ("deviation", "self-contradiction", "accuracy", "crash")
CELL_SCOPE, CASES_SCOPE = "cell", "cases"
DEFAULT_SOC = "default"
DEFAULT_GENERATION = "v68"  # the simulator's own target, SM8350 (adapters/qnn/targets.py)
NEAR_KEY = "near_findings"  # findings about a failing case's cell whose symptom it does not show


class ExpectationsError(ValueError):
    """A malformed expectations file; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class Pattern:
    text: str
    regex: re.Pattern[str]

    def matches(self, name: str) -> bool:
        return self.regex.fullmatch(name) is not None

    def search(self, text: str) -> bool:
        """For messages: a regex ("re:") is searched anywhere in the text, a glob matches the whole text."""
        if self.text.startswith("re:"):
            return self.regex.search(text) is not None
        return self.matches(text)


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
    tier: tuple[Pattern, ...] | None = None
    soc: tuple[Pattern, ...] | None = None
    stage: tuple[Pattern, ...] | None = None
    message: tuple[Pattern, ...] | None = None
    scope: str = CELL_SCOPE
    params: dict[str, tuple[Any, ...]] | None = None  # parameter -> the values that show the symptom
    info: dict[str, str] = field(default_factory=dict)  # a finding's evidence: id, contradicts, build, log, case
    klass: str | None = None  # a finding's class (CLASSES)
    spec: SpecQuote | None = None  # the MasterOpDef sentence the finding relies on
    when: tuple[Any, ...] | None = None  # constraint-language conditions the case meets (rank, axes, shapes ...)
    when_text: tuple[str, ...] = ()
    log_says: tuple[Pattern, ...] | None = None  # patterns one of the backend's log lines shows
    model: dict[str, Any] | None = None  # what the backend returns instead (reference.models), for wrong numbers
    band: dict[str, float] | None = None  # how far off the cases are at most (an accuracy finding)
    targets: tuple[str, ...] | None = None  # HTP generations it was measured to hold on (v68 ...)
    releases: tuple[Pattern, ...] | None = None  # QNN releases it was measured to hold on (2.51 ...)

    def covers(self, op: str, config: str, backend: str | tuple[str, ...], kind: str, tier: str | None = None,
               soc: str | None = None, release: str | None = None) -> bool:  # fmt: skip
        """Whether the entry is about this cell (and tier / SoC / generation / release, where it names them; None:
        not known). ``backend``: the record's backend, or its names (a wrapping adapter's own and the one it
        wraps)."""
        return (
            kind == self.kind
            and _any(self.op, op)
            and (self.config is None or _any(self.config, config))
            and (self.backend is None or any(_any(self.backend, b) for b in _names(backend)))
            and (self.tier is None or tier is None or _any(self.tier, tier or "typical")
                 or (tier == "model" and _any(self.tier, "typical")))  # a model layer is a typical case at its size
            and (self.soc is None or soc is None or _any(self.soc, soc)
                 or (generation_of(soc) == DEFAULT_GENERATION and _any(self.soc, DEFAULT_SOC)))  # v68 named: SoC 30
            and (self.targets is None or soc is None or generation_of(soc) in self.targets)
            and (self.releases is None or release is None or _any(self.releases, release))
        )

    def shows(self, verdict: str, stage: str | None, message: str | None,
              params: Callable[[], dict[str, Any] | None] | None = None, *,
              case_env: Callable[[], dict[str, Any] | None] | None = None, log: tuple[str, ...] = (),
              metrics: dict[str, Any] | None = None) -> bool:  # fmt: skip
        """Scope "cases": whether a case shows this entry's symptom: one of its verdicts, and the stage, message,
        log lines, parameter values and case conditions (``when``) it names; for wrong numbers, outputs that match
        its ``model`` (the record's ``metrics.models``, worked out when the case ran) and an error inside its
        ``band``. Scope "cell" covers every case of the cell. ``params`` and ``case_env`` read the saved case when
        asked, so only an entry that names parameters or conditions asks."""
        if self.scope == CELL_SCOPE:
            return True
        if not (
            verdict in self.verdicts
            and (self.stage is None or (stage is not None and _any(self.stage, stage)))
            and (self.message is None or (message is not None and any(p.search(message) for p in self.message)))
            and (self.log_says is None or any(p.search(line) for p in self.log_says for line in log))
        ):
            return False
        if self.params is not None and not self.params_hold(params() if params is not None else None):
            return False
        if self.when is not None and not self.when_holds(case_env() if case_env is not None else None):
            return False
        if self.model is not None:  # with a band too: two bugs at once, the model's outputs within the band
            return model_matches(self.model, metrics, self.band)
        return self.band is None or within_band(self.band, metrics)

    def when_holds(self, env: dict[str, Any] | None) -> bool:
        """Whether a case (its constraint environment; None: unknown) meets every ``when`` condition."""
        if env is None:
            return False
        from opdefs import expr

        try:
            return all(expr.holds(c, env) for c in self.when or ())
        except (expr.EvalError, TypeError, ValueError, KeyError, IndexError):
            return False

    def params_hold(self, values: dict[str, Any] | None) -> bool:
        """Whether a case's parameter values (None: unknown) are among those the entry names."""
        return values is not None and all(name in values and _same_value(values[name], allowed)
                                          for name, allowed in (self.params or {}).items())  # fmt: skip

    @property
    def id(self) -> str:
        return self.info.get("id", "")

    def describe(self) -> str:
        parts = ["op=" + ",".join(p.text for p in self.op)]
        if self.config is not None:
            parts.append("config=" + ",".join(p.text for p in self.config))
        if self.backend is not None:
            parts.append("backend=" + ",".join(p.text for p in self.backend))
        if self.kind != POSITIVE:
            parts.append(f"kind={self.kind}")
        for name in ("tier", "soc", "stage", "message"):
            patterns = getattr(self, name)
            if patterns is not None:
                parts.append(f"{name}=" + ",".join(p.text for p in patterns))
        label = f"[{self.id}] " if self.id else ""
        return f"{self.where}: {label}{' '.join(parts)} ({self.reason})"


@dataclass(frozen=True)
class SpecQuote:
    """``spec: {lines: [first, last], quote: "..."}``: the MasterOpDef sentence a finding relies on, quoted so a
    reader need not trust a line number (``reports.findings.problems`` checks the quote is there)."""

    first: int
    last: int
    quote: str


def model_matches(model: dict[str, Any], metrics: dict[str, Any] | None, band: dict[str, float] | None = None) -> bool:
    """Whether the case's outputs matched ``model`` when it ran (``metrics.models``; not worked out: no); with a
    ``band``, whether they are within it of the model's outputs (the case's own budget, or the band, whichever is
    wider): a finding with both is a bug whose results also carry an accuracy deviation (fixed-point MatMul dropping
    its bias in a 16x8 configuration whose products carry the 16x8 imprecision: matmul-16x8-bias-ignored)."""
    from reference.models import key

    got = ((metrics or {}).get("models") or {}).get(key(model))
    if not isinstance(got, dict):
        return False
    return got.get("matches") is True or (band is not None and "error" not in got and within_band(band, got))


def within_band(band: dict[str, float], metrics: dict[str, Any] | None) -> bool:
    """Whether the case's error is inside an accuracy finding's band (an error not measured is outside); ``metrics``
    is a record's, or a model's result in them (its error against the model's outputs)."""
    m = metrics or {}
    measured = {"steps": m.get("max_steps"), "abs": m.get("max_abs_err"), "rel": m.get("max_rel_err")}
    return all(isinstance(measured[k], int | float) and measured[k] <= v for k, v in band.items())


def _names(backend: str | tuple[str, ...]) -> tuple[str, ...]:
    """A record's backend names, each also as its base name: qnn-htp@2.47 is qnn-htp of a release."""
    names = (backend,) if isinstance(backend, str) else backend
    return tuple(dict.fromkeys([*names, *(n.partition("@")[0] for n in names)]))


def record_backends(r: Record) -> tuple[str, ...]:
    """The names a record's backend answers to: its own, and the backend its adapter says it ``wraps`` (a planted
    bug on qnn-htp is judged with qnn-htp's findings, as the real backend with that bug would be)."""
    wraps = r.backend_info.get("wraps") if isinstance(r.backend_info, dict) else None
    return (r.backend, str(wraps)) if wraps else (r.backend,)


def _any(patterns: tuple[Pattern, ...], name: str) -> bool:
    return any(p.matches(name) for p in patterns)


class Expectations:
    """The entries of one (or no) expectations file, and which of them have matched a case so far."""

    def __init__(self, entries: Iterable[Entry] = (), source: str = "<none>") -> None:
        self.entries = list(entries)
        self.source = source
        self._by_op: dict[str, list[Entry]] = {}
        self._indexed: tuple[int, int] = (0, 0)

    def about(self, op: str) -> list[Entry]:
        """The entries whose op patterns take ``op``, in file order. Why: every record of a run is matched, and
        testing each of 200+ findings' cell (op first) took 0.8 ms a record, 24 s of a main job's qnn-htp run."""
        now = (id(self.entries), len(self.entries))
        if now != self._indexed:
            self._by_op, self._indexed = {}, now
        got = self._by_op.get(op)
        if got is None:
            got = self._by_op[op] = [e for e in self.entries if _any(e.op, op)]
        return got

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

    def match(self, op: str, config: str, backend: str | tuple[str, ...], kind: str = POSITIVE, *,
              tier: str | None = None, soc: str | None = None, release: str | None = None,
              verdict: str | None = None, stage: str | None = None,
              message: str | None = None, params: Callable[[], dict[str, Any] | None] | None = None,
              case_env: Callable[[], dict[str, Any] | None] | None = None, log: tuple[str, ...] = (),
              metrics: dict[str, Any] | None = None) -> Entry | None:  # fmt: skip
        """The first entry covering this case, or None. Marks the entry as used.

        With ``verdict`` given, entries of scope "cases" cover the case only if it shows their symptom;
        without it (a question about the cell) they cover it like any other entry."""
        for entry in self.about(op):
            if not entry.covers(op, config, backend, kind, tier, soc, release):
                continue
            if verdict is not None and not entry.shows(verdict, stage, message, params, case_env=case_env, log=log,
                                                       metrics=metrics):  # fmt: skip
                continue
            entry.matches += 1
            return entry
        return None

    def near(self, op: str, config: str, backend: str | tuple[str, ...], kind: str, verdict: str, *,
             tier: str | None = None, soc: str | None = None, release: str | None = None) -> list[Entry]:
        """Findings about this cell that expect this verdict but whose symptom the case does not show: a failure
        beside a known one, which stays a failure ("near finding X")."""
        return [e for e in self.about(op)
                if e.covers(op, config, backend, kind, tier, soc, release) and verdict in e.verdicts]  # fmt: skip

    def models_for(self, op: str, config: str, backend: str | tuple[str, ...], kind: str = POSITIVE, *,
                   tier: str | None = None, soc: str | None = None,
                   release: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """The models of the findings about this cell: what a failing case's outputs are checked against when it
        runs, so that the records say which finding's bug they show."""
        out: list[dict[str, Any]] = []
        for e in self.about(op):
            if e.model is not None and e.model not in out and e.covers(op, config, backend, kind, tier, soc, release):
                out.append(e.model)
        return out

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
        kind = NEGATIVE if r.kind == NEGATIVE else POSITIVE
        backends, tier, soc, release = record_backends(r), r.tier or "typical", record_soc(r), record_release(r)
        entry = self.match(r.op, r.config, backends, kind, tier=tier, soc=soc, release=release, verdict=raw,
                           stage=record_stage(r),
                           message=r.message, params=functools.cache(lambda: record_params(r)),
                           case_env=functools.cache(lambda: record_env(r)), log=record_log(r),
                           metrics=r.metrics)  # fmt: skip
        verdict, reason = apply(raw, entry)
        if entry is not None and entry.id and verdict in (XFAIL, XPASS):
            reason = f"[{entry.id}] {reason}"
        extra = dict(r.extra)
        extra.pop(NEAR_KEY, None)
        if entry is None and raw in DEFAULT_VERDICTS[kind]:
            near = [e.id or e.where
                    for e in self.near(r.op, r.config, backends, kind, raw, tier=tier, soc=soc, release=release)]
            if near:
                extra[NEAR_KEY] = near
        if verdict != raw:
            extra[RAW_VERDICT_KEY] = raw
        else:
            extra.pop(RAW_VERDICT_KEY, None)
        return replace(r, verdict=verdict, expectation=reason, extra=extra)

    def apply_records(self, records: Iterable[Record]) -> Iterator[Record]:
        for r in records:
            yield self.apply_record(r)


# Results files written before the adapters said validate/finalize/execute named the QNN call instead.
_STAGE_OF_CALL = {"backendValidateOpConfig": "validate", "contextCreate": "finalize", "graphCreate": "finalize",
                  "tensorCreateGraphTensor": "finalize", "graphAddNode": "finalize", "graphFinalize": "finalize",
                  "graphExecute": "execute"}  # fmt: skip


def record_stage(r: Record) -> str | None:
    """Where the case stopped (validate / finalize / execute / ok), as the adapter put it in its details."""
    details = r.extra.get("details")
    stage = details.get("stage") if isinstance(details, dict) else None
    return None if stage is None else _STAGE_OF_CALL.get(str(stage), str(stage))


def record_params(r: Record) -> dict[str, Any] | None:
    """The parameter values of the record's case (every non-PASS has a saved one; its path is from the
    repo root or the working directory), as ``case_params`` gives them."""
    if not r.case_path:
        return None
    path = Path(r.case_path)
    if not path.is_absolute() and not path.is_file():
        path = _REPO / path
    return case_params(path, r.op)


def case_params(path: Path, op: str) -> dict[str, Any] | None:
    """A saved case's parameter values as plain Python (vectors as lists), with the spec's default for
    each parameter the case leaves out; None when the case cannot be read. ``Case.load`` reads it: the
    saved form has one reader."""
    from cases.case import Case

    try:
        given = {name: p.value.tolist() if hasattr(p.value, "tolist") else p.value
                 for name, p in Case.load(path).params.items()}  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        import opdefs

        spec = opdefs.load(op)
    except (KeyError, ValueError):
        return given
    defaults = {name: p["default"] for name, p in spec.params.items() if "default" in p}
    return {**defaults, **given}


def _same_value(value: Any, allowed: tuple[Any, ...]) -> bool:
    return any(value == a and isinstance(value, bool) == isinstance(a, bool) for a in allowed)  # True is not 1


def record_log(r: Record) -> tuple[str, ...]:
    """The backend's own log lines for the case (the adapter's ``details.log``), and a crash's log tail."""
    details = r.extra.get("details")
    if not isinstance(details, dict):
        return ()
    lines = details.get("log") or []
    lines = [lines] if isinstance(lines, str) else [str(x) for x in lines if isinstance(x, str | int | float)]
    tail = details.get("log_tail")
    return (*lines, *(str(tail).splitlines() if tail else ()))


def record_env(r: Record) -> dict[str, Any] | None:
    """The record's case as the constraint language sees it (ranks, shapes, parameters with the spec's defaults),
    for a finding's ``when``; None when the saved case cannot be read."""
    if not r.case_path:
        return None
    path = Path(r.case_path)
    if not path.is_absolute() and not path.is_file():
        path = _REPO / path
    return case_env(path, r.op)


def case_env(path: Path, op: str) -> dict[str, Any] | None:
    from cases import check
    from cases.case import Case

    try:
        case = Case.load(path)
        import opdefs

        spec = opdefs.load(op)
        return {**spec.param_defaults(), **check.environment(spec, case)}
    except Exception:  # noqa: BLE001 - an unreadable case shows no symptom: it stays what it was
        return None


def generation_of(soc: str) -> str:
    """The HTP generation of a record's SoC label: "default" is the simulator's own target (SM8350, v68), a SoC
    number is looked up in the generations the QNN adapter names (``adapters.qnn.targets.GENERATIONS``), any other
    label stands for itself ("soc99")."""
    from adapters.qnn.targets import GENERATIONS

    if soc == DEFAULT_SOC:
        return DEFAULT_GENERATION
    by_soc = {str(number): name for name, number in GENERATIONS.items()}
    return by_soc.get(str(soc), f"soc{soc}")


def record_release(r: Record) -> str | None:
    """The QNN release the record ran on, as major.minor ("2.51"): from backend_info's qnn_sdk, else its build id
    ("v2.51.0.260929181845"); None when neither says (a backend that is not QNN)."""
    info = r.backend_info or {}
    for text in (info.get("qnn_sdk"), info.get("build_id"), info.get("qnn_build_id")):
        m = re.match(r"v?(\d+)\.(\d+)", str(text or ""))
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    return None


def record_soc(r: Record) -> str:
    """The simulated SoC the record ran on: backend_info's soc, "default" when the backend chose."""
    soc = r.backend_info.get("soc")
    return DEFAULT_SOC if soc in (None, "") else str(soc)


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
    loader = _LOADER(text)
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
    defaults: dict[str, Any] = {}
    default_lines: dict[str, str] = {}
    if isinstance(data, dict) and isinstance(node, yaml.MappingNode):
        extra = set(data) - {"expectations", "defaults"}
        if extra:
            raise ExpectationsError(
                f"{source}:{node.start_mark.line + 1}: a mapping at the top level may only hold 'defaults' and "
                f"'expectations', found {sorted(map(str, extra))}"
            )
        values = {str(k.value): v for k, v in node.value}
        if "defaults" in values:
            defaults, default_lines = _defaults(data["defaults"], values["defaults"], source)
        if "expectations" not in values:
            return []
        node = values["expectations"]
        data = data["expectations"]
        if data is None:
            return []
    if not isinstance(data, list) or not isinstance(node, yaml.SequenceNode):
        raise ExpectationsError(f"{source}:{node.start_mark.line + 1}: expected a list of entries")
    return [_entry(item, item_node, source, defaults, default_lines)
            for item, item_node in zip(data, node.value, strict=True)]  # fmt: skip


def _defaults(data: Any, node: yaml.Node, source: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``defaults:``: fields every entry of the file takes unless it sets its own (a findings file names its
    backend and build once, not on every entry)."""
    if data is None:
        return {}, {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise ExpectationsError(f"{source}:{node.start_mark.line + 1}: 'defaults' must be a mapping of entry fields")
    lines = {str(k.value): f"{source}:{k.start_mark.line + 1}" for k, _ in node.value}
    for key in data:
        if key not in FIELDS or key in ("id", "case", "op"):
            raise ExpectationsError(f"{lines.get(str(key), source)}: {key!r} cannot be a default "
                                    "(an entry's own id, op and case are its own)")  # fmt: skip
    return dict(data), lines


def _entry(item: Any, node: yaml.Node, source: str, defaults: dict[str, Any] | None = None,
           default_lines: dict[str, str] | None = None) -> Entry:  # fmt: skip
    where = f"{source}:{node.start_mark.line + 1}"
    if not isinstance(item, dict) or not isinstance(node, yaml.MappingNode):
        raise ExpectationsError(f"{where}: an entry must be a mapping with at least 'op' and 'reason'")
    lines = {**(default_lines or {}), **{str(k.value): f"{source}:{k.start_mark.line + 1}" for k, _ in node.value}}
    taken = {}
    if item.get("same_as") is not None:
        from reports.same_as import taken_from

        taken = taken_from(item["same_as"], source, lines["same_as"])
    lines = {**{k: lines["same_as"] for k in taken}, **lines}
    item = {**(defaults or {}), **taken, **item}
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
    def optional(key: str) -> tuple[Pattern, ...] | None:
        return _patterns(item[key], key, lines[key]) if item.get(key) is not None else None

    for key in INFO_FIELDS:
        if key in item and not isinstance(item[key], str | int | float):
            raise ExpectationsError(f"{lines[key]}: {key!r} must be text")
    stage, message, log_says = optional("stage"), optional("message"), optional("log_says")
    params = _params(item["params"], lines["params"]) if item.get("params") is not None else None
    when_text, when = _when(item["when"], lines["when"]) if item.get("when") is not None else ((), None)
    model = _model(item["model"], lines["model"]) if item.get("model") is not None else None
    band = _band(item["band"], lines["band"]) if item.get("band") is not None else None
    symptoms = any(item.get(k) is not None for k in SYMPTOM_FIELDS)
    scope = item.get("scope", CASES_SCOPE if symptoms else CELL_SCOPE)
    if scope not in (CELL_SCOPE, CASES_SCOPE):
        raise ExpectationsError(f"{lines['scope']}: 'scope' must be {CELL_SCOPE} or {CASES_SCOPE}, not {scope!r}")
    if scope == CELL_SCOPE and symptoms:
        raise ExpectationsError(f"{lines['scope']}: an entry with {', '.join(repr(k) for k in SYMPTOM_FIELDS)} covers "
                                "only the cases that show them: its scope is 'cases'")  # fmt: skip
    return Entry(
        op=_patterns(item["op"], "op", lines["op"]),
        config=optional("config"),
        backend=optional("backend"),
        kind=kind,
        verdicts=verdicts,
        reason=reason.strip(),
        where=where,
        tier=optional("tier"),
        soc=optional("soc"),
        targets=_targets(item.get("targets"), lines.get("targets", where)),
        releases=optional("releases"),
        stage=stage,
        message=message,
        scope=scope,
        params=params,
        info={k: str(item[k]).strip() for k in INFO_FIELDS if k in item and k != "reason"},
        klass=_klass(item.get("class"), lines.get("class", where)),
        spec=_spec_quote(item["spec"], lines["spec"]) if item.get("spec") is not None else None,
        when=when,
        when_text=when_text,
        log_says=log_says,
        model=model,
        band=band,
    )


def _targets(value: Any, where: str) -> tuple[str, ...] | None:
    """``targets: [v68, v73]``: HTP generation names (``adapters.qnn.targets.GENERATIONS``)."""
    if value is None:
        return None
    from adapters.qnn.targets import GENERATIONS

    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or any(str(n) not in GENERATIONS for n in names):
        raise ExpectationsError(f"{where}: 'targets' lists HTP generations ({', '.join(GENERATIONS)}), not {value!r}")
    return tuple(str(n) for n in names)


def _when(value: Any, where: str) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """``when``: a condition in the specs' constraint language (or a list of them, all to hold), read by its
    parser: nothing in it is executed."""
    from opdefs import expr

    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t.strip() for t in texts):
        raise ExpectationsError(f"{where}: 'when' must be a condition (text) or a list of them")
    try:
        return tuple(texts), tuple(expr.parse(t) for t in texts)
    except expr.ExprError as e:
        raise ExpectationsError(f"{where}: when: {e}") from None


def _model(value: Any, where: str) -> dict[str, Any]:
    from reference.models import problems

    bad = problems(value)
    if bad:
        raise ExpectationsError(f"{where}: {bad[0]}")
    return dict(value)


def _band(value: Any, where: str) -> dict[str, float]:
    if (not isinstance(value, dict) or not value or set(value) - set(BANDS)
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in value.values())):
        raise ExpectationsError(f"{where}: 'band' must map {', '.join(BANDS)} to positive numbers (the worst error "
                                "the finding's cases show)")  # fmt: skip
    return {k: float(v) for k, v in value.items()}


def _klass(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if value not in CLASSES:
        raise ExpectationsError(f"{where}: 'class' must be one of {', '.join(CLASSES)}, not {value!r}")
    return str(value)


def _spec_quote(value: Any, where: str) -> SpecQuote:
    """``{lines: [first, last] or N, quote: "..."}``."""
    if not isinstance(value, dict) or set(value) - {"lines", "quote"} or not {"lines", "quote"} <= set(value):
        raise ExpectationsError(f"{where}: 'spec' must be a mapping with 'lines' ([first, last]) and 'quote'")
    lines, quote = value["lines"], value["quote"]
    if isinstance(lines, int) and not isinstance(lines, bool):
        lines = [lines, lines]
    if (not isinstance(lines, list) or len(lines) != 2 or not all(isinstance(n, int) and n > 0 for n in lines)
            or lines[0] > lines[1]):  # fmt: skip
        raise ExpectationsError(f"{where}: spec: 'lines' must be a line number or [first, last] with first <= last")
    if not isinstance(quote, str) or not quote.strip():
        raise ExpectationsError(f"{where}: spec: 'quote' must be the MasterOpDef's own words (non-empty text)")
    return SpecQuote(lines[0], lines[1], " ".join(quote.split()))


def _params(value: Any, where: str) -> dict[str, tuple[Any, ...]]:
    """``{name: value or [values]}``: each value a scalar, or a list of scalars for a vector parameter
    (``output_padding: [[0, 1], [1, 0]]`` is two alternatives); compared with the case's values."""
    def scalar(v: Any) -> bool:
        return isinstance(v, str | int | float | bool) or (isinstance(v, list) and bool(v) and all(
            isinstance(x, str | int | float | bool) for x in v))

    if not isinstance(value, dict) or not value:
        raise ExpectationsError(f"{where}: 'params' must be a mapping of parameter names to a value or a list of them")
    out: dict[str, tuple[Any, ...]] = {}
    for name, v in value.items():
        values = v if isinstance(v, list) else [v]
        if not isinstance(name, str) or not values or not all(scalar(x) for x in values):
            raise ExpectationsError(f"{where}: params: {name!r} must map to a number, a boolean or text, "
                                    "a list of them, or a list of such lists for a vector parameter")
        out[name] = tuple(values)
    return out


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
