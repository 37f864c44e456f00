"""One results record per case: the only thing that crosses from a run to the reports.

Records are JSON lines so a results file can be copied from another machine, concatenated, and read
with no backend installed. Unknown keys are kept (newer writers, older readers).

Why every record is one ``write`` to a file opened with ``O_APPEND`` under an exclusive lock: several
pytest-xdist workers append to the same results file while the run goes on, and a run may be killed
at any moment. A line then lands whole or not at all, the file is readable at once by the reports,
and there is no per-worker part file left to merge (or to mix into the next run). A line cut short
anyway (a full disk, a copy taken mid-write) is the last line of its file: readers report it and skip it.

The first line of a results file written by a conformance run is a run header (kind "run", never a
case record): run id, configuration (backend, build, seed, examples, tiers, options), start time,
command. ``read`` skips headers; ``read_with_headers`` hands them over, for the merging rules of
``python -m reports`` and for ``--resume``.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASS, FAIL, REJECTED, ERROR, CRASH, TIMEOUT = "PASS", "FAIL", "REJECTED", "ERROR", "CRASH", "TIMEOUT"
UNCHECKED, SKIP, XFAIL, XPASS = "UNCHECKED", "SKIP", "XFAIL", "XPASS"
# outside binary32's budget, inside binary16's, on a backend that documents float16 arithmetic for float32 graphs
# (its adapter says so, with the source): neither a pass nor a deviation, and shown as itself
FP16_ACCURATE = "FP16_ACCURATE"
VERDICTS = (PASS, FAIL, REJECTED, ERROR, CRASH, TIMEOUT, UNCHECKED, SKIP, XFAIL, XPASS, FP16_ACCURATE)
POSITIVE, NEGATIVE, SHRUNK, CELL = "positive", "negative", "shrunk", "cell"
PROBE = "probe"  # a refused cell's case again in a converter-standard form (cases.forms): never in the cell's rates
RUN = "run"  # the header line of a results file; not a Record
TYPICAL, EDGE = "typical", "edge"


@dataclass
class Record:
    op: str
    config: str  # datatype configuration label, e.g. "FLOAT_32" or "UFIXED_POINT_8"
    backend: str  # adapter name, e.g. "qnn-htp"
    verdict: str
    # "positive" (must run and match), "negative" (must be rejected), "shrunk" (the smallest failing case of a
    # cell, kept for replay and never counted in its rates), "probe" (a refused cell's case in a standard form,
    # never counted either) or "cell" (one per op x config x tier: how many cases were asked for, drawn, refused
    # by the generator; its verdict is "")
    kind: str = "positive"
    broken: str | None = None  # negative cases: the constraint id the case violates
    test_id: str = ""
    backend_info: dict[str, Any] = field(default_factory=dict)  # build id, API versions, library
    metrics: dict[str, Any] = field(default_factory=dict)  # max_abs_err, max_ulp, max_steps, mismatches, tolerance
    timings: dict[str, float] = field(default_factory=dict)  # generate, reference, backend, compare (seconds)
    message: str = ""
    case_path: str | None = None  # saved case for every non-PASS, replayable with `python -m cases replay`
    seed: int | None = None
    dtypes: dict[str, str] = field(default_factory=dict)  # tensor name -> QNN datatype
    expectation: str | None = None  # reason from the expectations file for XFAIL/XPASS
    run_id: str = ""
    case_id: str = ""  # content hash of the case (cases.case.Case.case_id): one record per id and cell
    tier: str = ""  # "typical" or "edge" (cases.generate); "" for hand-made cases
    replay: str = ""  # the command that re-runs this case alone, from the repo root
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind == CELL and self.verdict == "":
            return
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")

    def to_json(self) -> str:
        # a shallow dict: json walks the nested values itself (asdict's deep copy was most of the cost)
        d = {name: getattr(self, name) for name in _FIELDS}
        d.update(self.extra)
        return json.dumps(d, sort_keys=True, default=_default)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        known = {f for f in cls.__dataclass_fields__ if f != "extra"}
        return cls(**{k: v for k, v in d.items() if k in known}, extra={k: v for k, v in d.items() if k not in known})


_FIELDS = tuple(f for f in Record.__dataclass_fields__ if f != "extra")


def _default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


@dataclass
class RunHeader:
    """Who wrote a results file: one per run (a resumed run adds another with the same run id)."""

    run_id: str
    backend: str
    configuration: dict[str, Any]  # what must match for two runs of one backend to merge or resume
    started: str = ""
    command: list[str] = field(default_factory=list)
    resumed: bool = False
    source: str = ""  # file the header was read from (not written)

    def to_json(self) -> str:
        d = {"kind": RUN, "run_id": self.run_id, "backend": self.backend, "configuration": self.configuration,
             "started": self.started, "command": self.command, "resumed": self.resumed}  # fmt: skip
        return json.dumps(d, sort_keys=True, default=_default)

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "") -> RunHeader:
        return cls(run_id=str(d.get("run_id", "")), backend=str(d.get("backend", "")),
                   configuration=dict(d.get("configuration") or {}), started=str(d.get("started", "")),
                   command=list(d.get("command") or []), resumed=bool(d.get("resumed")), source=source)  # fmt: skip


def configuration_differences(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    """What differs between two run configurations, as ``key: A vs B`` (nested keys dotted)."""
    out: list[str] = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if isinstance(x, dict) and isinstance(y, dict):
            out += configuration_differences(x, y, f"{prefix}{key}.")
        elif x != y:
            out.append(f"{prefix}{key}: {json.dumps(x, default=_default)} vs {json.dumps(y, default=_default)}")
    return out


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def read_with_headers(paths: Iterable[str | Path], headers: list[RunHeader] | None = None,
                      warn: Callable[[str], None] = _warn) -> Iterator[Record]:  # fmt: skip
    """Records from JSONL files; run headers go to ``headers``. A line that is not a record is an error
    naming file:line, except a last line that is not even JSON: a run killed mid-write (or a copy taken
    while a run was writing) leaves it torn, which is reported through ``warn`` and skipped."""
    for p in paths:
        torn: tuple[int, str] | None = None  # a line that did not parse: fatal unless it is the last
        with open(p, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                line = line.strip()
                if not line:
                    continue
                if torn is not None:
                    raise ValueError(f"{p}:{torn[0]}: not a results record: {torn[1]}")
                try:
                    obj = json.loads(line)
                except ValueError as e:  # cut short: torn if nothing follows it
                    torn = (n, str(e))
                    continue
                try:
                    if not isinstance(obj, dict):
                        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
                    if obj.get("kind") == RUN:
                        if headers is not None:
                            headers.append(RunHeader.from_dict(obj, str(p)))
                        continue
                    rec = Record.from_dict(obj)
                except (ValueError, TypeError) as e:
                    raise ValueError(f"{p}:{n}: not a results record: {e}") from None
                yield rec
        if torn is not None:
            warn(f"{p}:{torn[0]}: torn last line skipped (a run killed mid-write?): {torn[1]}")


def read(paths: Iterable[str | Path], warn: Callable[[str], None] = _warn) -> Iterator[Record]:
    """Case records of JSONL files (run headers skipped); see ``read_with_headers``."""
    return read_with_headers(paths, None, warn)


def _write_line(fd: int, data: bytes) -> None:
    """One line, whole: the lock keeps writers of other processes out until every byte is down."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def append(path: str | Path, records: Iterable[Record | RunHeader]) -> None:
    """Append each record as one line the moment it is called, safe under concurrent writers."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for r in records:
            _write_line(fd, (r.to_json() + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def start(path: str | Path, header: RunHeader) -> None:
    """A new results file holding only ``header``: whatever an older run left there is gone."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(header.to_json() + "\n", encoding="utf-8")
    os.replace(tmp, path)
