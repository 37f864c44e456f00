"""One results record per case: the only thing that crosses from a run to the reports.

Records are JSON lines so a results file can be copied from another machine, concatenated, and read
with no backend installed. Unknown keys are kept (newer writers, older readers).

Why every record is one ``write`` to a file opened with ``O_APPEND`` under an exclusive lock: several
pytest-xdist workers append to the same results file while the run goes on, and a run may be killed
at any moment. A line then lands whole or not at all, the file is readable at once by the reports,
and there is no per-worker part file left to merge (or to mix into the next run). A write the disk
cannot take is undone (the file is cut back to where the line began) and the error raised, so a full
disk leaves no half record either. A line that is not a record anyway (a copy taken mid-write, a file
edited by hand, an older writer's torn line) is reported with its file and line and skipped: one bad
line never costs the rest of the file.

Why a run lock (``RunLock``): a results file has one writer, the run that started it. Its controller
holds an ``flock`` on ``<results>.lock`` for the whole run and writes a lease (run id, pid, a random
token) into it; the run's xdist workers append with that lease, and an append whose lease is no longer
the one held (the controller died, or another run took the file over) is refused instead of landing
in someone else's run. A case recorded twice with different verdicts in one run is a conflict the
readers name (``conflicts``), never two cases.

The first line of a results file written by a conformance run is a run header (kind "run", never a
case record): run id, configuration (backend, build, seed, examples, tiers, options), start time,
command. ``read`` skips headers; ``read_with_headers`` hands them over, for the merging rules of
``python -m reports`` and for ``--resume``.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from cases.case import EDGE, MODEL, TIERS, TYPICAL  # noqa: F401  (the tiers, re-exported for the readers of records)


class Verdict(StrEnum):
    """Every verdict a record can carry. A str enum: a member is its own name wherever a string is (JSON, a
    comparison with a record read back from a file, a set lookup), so records stay what they were."""

    PASS = "PASS"
    FAIL = "FAIL"
    REJECTED = "REJECTED"
    ERROR = "ERROR"
    CRASH = "CRASH"
    TIMEOUT = "TIMEOUT"
    UNCHECKED = "UNCHECKED"
    SKIP = "SKIP"
    XFAIL = "XFAIL"
    XPASS = "XPASS"
    # outside binary32's budget, inside binary16's, on a backend that documents float16 arithmetic for float32
    # graphs (its adapter says so, with the source): neither a pass nor a deviation, and shown as itself
    FP16_ACCURATE = "FP16_ACCURATE"


PASS, FAIL, REJECTED, ERROR, CRASH, TIMEOUT = (Verdict.PASS, Verdict.FAIL, Verdict.REJECTED, Verdict.ERROR,
                                               Verdict.CRASH, Verdict.TIMEOUT)  # fmt: skip
UNCHECKED, SKIP, XFAIL, XPASS = Verdict.UNCHECKED, Verdict.SKIP, Verdict.XFAIL, Verdict.XPASS
FP16_ACCURATE = Verdict.FP16_ACCURATE
VERDICTS = tuple(Verdict)
POSITIVE, NEGATIVE, SHRUNK, CELL = "positive", "negative", "shrunk", "cell"
PROBE = "probe"  # a refused cell's case again in a converter-standard form (cases.forms): never in the cell's rates
RUN = "run"  # the header line of a results file; not a Record


def replay_command(case_path: str | None, backend: str, options: str = "") -> str:
    """The line that runs a saved case again alone (``conformance/replay.py``), written once for the records the
    run writes and the reports that rebuild it from an older record's case path."""
    if not case_path:
        return ""
    return f"python -m conformance replay {case_path} --backend {backend}{' ' + options if options else ''}"


# The verdict sets every room reads the same way, defined here only:
BAD = frozenset({FAIL, ERROR, CRASH, TIMEOUT})  # a positive case that ran wrong or never finished
GOOD_NEGATIVE = frozenset({REJECTED, XFAIL})  # a negative case refused as it must be, or a known failure to
NEGATIVE_PASSES = GOOD_NEGATIVE | {SKIP}  # a negative test that passes: the adapter cannot express the op either
RAW_VERDICT_KEY = "verdict_before_expectation"  # Record.extra: the backend's own verdict before an expectation


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
    case_path: str | None = None  # saved case for every non-PASS, replayable with `python -m conformance replay`
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


_STR_FIELDS = ("op", "config", "backend", "verdict", "kind", "test_id", "message", "run_id", "case_id", "tier",
               "replay")  # fmt: skip
_OPTIONAL_STR_FIELDS = ("broken", "case_path", "expectation")
_DICT_FIELDS = ("backend_info", "metrics", "timings", "dtypes")
_CELL_COUNTS = ("requested", "cases", "duplicates", "refusals")
BAD_LINES_SHOWN = 10  # per file: a file that is mostly not records says so once, not once per line


def record_problem(obj: Any) -> str | None:
    """Why a parsed line cannot be a record (or run header), or None. Why check types here: every report
    reads fields as what they are declared to be, and one ``metrics: "oops"`` written by another tool
    would otherwise end a report in a traceback instead of costing its own line."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    if obj.get("kind") == RUN:
        for key, kind in (("configuration", dict), ("command", list)):
            if obj.get(key) is not None and not isinstance(obj[key], kind):
                return f"run header field {key!r} is a {type(obj[key]).__name__}, not a {kind.__name__}"
        return None
    for key in _STR_FIELDS:
        if key in obj and not isinstance(obj[key], str):
            return f"field {key!r} is a {type(obj[key]).__name__}, not text"
    for key in _OPTIONAL_STR_FIELDS:
        if obj.get(key) is not None and not isinstance(obj[key], str):
            return f"field {key!r} is a {type(obj[key]).__name__}, not text"
    for key in _DICT_FIELDS:
        if key in obj and not isinstance(obj[key], dict):
            return f"field {key!r} is a {type(obj[key]).__name__}, not an object"
    seed = obj.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        return f"field 'seed' is a {type(seed).__name__}, not a whole number"
    for key in ("op", "backend", "verdict"):
        if key not in obj:
            return f"no {key!r} field"
    if obj.get("kind") == CELL:
        for key in _CELL_COUNTS:
            value = obj.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool):
                return f"cell field {key!r} is a {type(value).__name__}, not a whole number"
    return None


def _case_key(rec: Record) -> tuple[str, ...] | None:
    """What makes a case one case within a run (None: a record that is no case, or was not written by a run)."""
    if rec.kind not in (POSITIVE, NEGATIVE) or not rec.case_id or not rec.run_id:
        return None
    return (rec.run_id, rec.backend, rec.kind, rec.op, rec.config, rec.tier, rec.broken or "", rec.case_id)


def read_with_headers(paths: Iterable[str | Path], headers: list[RunHeader] | None = None,
                      warn: Callable[[str], None] = _warn,
                      conflicts: list[str] | None = None) -> Iterator[Record]:  # fmt: skip
    """Records from JSONL files; run headers go to ``headers``. A line that is not a record (torn by a
    kill, a full disk, or written by something else) is reported through ``warn`` with its file:line
    and skipped; a file with bad lines and not one record or header is an error (ValueError): it is
    no results file at all.

    A case a run recorded twice (a file given twice, two writers of one run) counts once: with the same
    verdict with one ``warn`` line for all of them, with different verdicts as a conflict naming both
    lines, appended to ``conflicts`` (through ``warn`` when no list is given); the first record stands."""
    seen: dict[tuple[str, ...], tuple[str, str]] = {}  # case key -> (verdict, file:line)
    twice: list[str] = []  # file:line of each record that repeats an earlier one
    for p in paths:
        torn: tuple[int, str] | None = None  # a line that did not parse: reported once we know if it was the last
        bad: list[str] = []  # "file:line: why" of the first lines skipped
        skipped = good = 0
        with open(p, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                line = line.strip()
                if not line:
                    continue
                if torn is not None:
                    skipped += 1
                    bad.append(f"{p}:{torn[0]}: torn line skipped (a kill or a full disk mid-write?): {torn[1]}")
                    del bad[BAD_LINES_SHOWN:]
                    torn = None
                try:
                    obj = json.loads(line)
                except (ValueError, RecursionError) as e:  # cut short, glued to the next, or nested past reason
                    torn = (n, str(e) if not isinstance(e, RecursionError) else "nested too deeply")
                    continue
                problem = record_problem(obj)
                if problem is None:
                    try:
                        if obj.get("kind") == RUN:
                            if headers is not None:
                                headers.append(RunHeader.from_dict(obj, str(p)))
                            good += 1
                            continue
                        rec = Record.from_dict(obj)
                    except (ValueError, TypeError) as e:
                        problem = str(e)
                if problem is not None:
                    skipped += 1
                    bad.append(f"{p}:{n}: not a results record, skipped: {problem}")
                    del bad[BAD_LINES_SHOWN:]
                    continue
                good += 1
                key = _case_key(rec)
                if key is not None:
                    where = f"{p}:{n}"
                    first = seen.setdefault(key, (rec.verdict, where))
                    if first[1] != where:
                        if first[0] != rec.verdict:
                            message = (f"{where}: conflict: case {rec.case_id} of {rec.op} {rec.config} {rec.tier} "
                                       f"(run {rec.run_id or '?'}) recorded as {first[0]} at {first[1]} and as "
                                       f"{rec.verdict} here; the first counts")  # fmt: skip
                            (conflicts.append if conflicts is not None else warn)(message)
                        else:
                            twice.append(f"{where} (as {first[1]})")
                        continue
                yield rec
        if torn is not None:
            skipped += 1
            bad.append(f"{p}:{torn[0]}: torn last line skipped (a run killed mid-write?): {torn[1]}")
        if skipped and not good:
            raise ValueError(f"{p}: not a results file: none of its {skipped} lines is a results record ({bad[0]})")
        for message in bad[:BAD_LINES_SHOWN]:
            warn(message)
        if skipped > BAD_LINES_SHOWN:
            warn(f"{p}: {skipped - BAD_LINES_SHOWN} more lines that are not results records skipped")
    if twice:
        warn(f"{len(twice)} case record(s) repeat one of the same run with the same verdict and count once "
             f"(first: {twice[0]})")  # fmt: skip


def read(paths: Iterable[str | Path], warn: Callable[[str], None] = _warn,
         conflicts: list[str] | None = None) -> Iterator[Record]:  # fmt: skip
    """Case records of JSONL files (run headers skipped); see ``read_with_headers``."""
    return read_with_headers(paths, None, warn, conflicts)


FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # the file cannot grow: the run stops, it does not go on


class NotOurRun(RuntimeError):
    """An append whose run no longer holds its results file: the controller is gone or another run took it."""


def lock_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".lock")


def _lease_holds(path: Path, lease: str) -> str | None:
    """Why ``lease`` is no longer the one held on results file ``path`` (None: it is). Asked under the
    results file's append lock, which the lock's holder also takes to publish a new lease."""
    try:
        fd = os.open(lock_path(path), os.O_RDONLY)
    except OSError as e:
        return f"its lock file is gone ({e.strerror})"
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # a run holds it: whose?
            held = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
            return None if held == lease else f"another run holds it now ({held.split(' ')[0] or '?'})"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return "no run holds it (the run's controller is gone)"
    finally:
        os.close(fd)


def _write_line(fd: int, data: bytes, path: Path | None = None, lease: str | None = None) -> None:
    """One line, whole or not at all: the lock keeps writers of other processes out until every byte is
    down, and a write the disk refuses part-way is cut back off before the error goes up."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        if lease is not None and path is not None:
            why = _lease_holds(path, lease)
            if why is not None:
                raise NotOurRun(f"{path}: this run may no longer write to it: {why}")
        end = os.lseek(fd, 0, os.SEEK_END)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view):]
        except OSError:
            try:
                os.ftruncate(fd, end)
            except OSError:  # pragma: no cover - readers skip the torn line then
                pass
            raise
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def append(path: str | Path, records: Iterable[Record | RunHeader], lease: str | None = None) -> None:
    """Append each record as one line the moment it is called, safe under concurrent writers. With
    ``lease`` (a run's xdist workers), only while that run still holds the file (``NotOurRun``)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for r in records:
            _write_line(fd, (r.to_json() + "\n").encode("utf-8"), Path(path), lease)
    finally:
        os.close(fd)


def start(path: str | Path, header: RunHeader) -> None:
    """A new results file holding only ``header``: whatever an older run left there is gone. Nothing is
    left behind when it cannot be written (a full disk, a directory in the way)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".new")
    try:
        tmp.write_text(header.to_json() + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


class ResultsBusy(RuntimeError):
    """Another run holds the results file."""


class RunLock:
    """The one-writer lock of a results file, held by a run's controller from the door to its exit.

    Why ``flock`` on a sidecar file rather than on the results file: the results file is replaced whole
    when a run starts (``start``), and its own ``flock`` is the per-line lock every appender takes. The
    lock is the open file itself: it goes when the controller's process goes, however it ends, and no
    child inherits it (Python opens files close-on-exec)."""

    def __init__(self, results: str | Path) -> None:
        self.results = Path(results)
        self.path = lock_path(results)
        self.fd = -1
        self.lease = ""

    def acquire(self, run_id: str, wait: float = 2.0) -> str:
        """Take the lock (waiting up to ``wait`` s: an appender of a dead run may be testing it) and publish
        a new lease; ``ResultsBusy`` names the run that holds it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                held = os.pread(fd, 4096, 0).decode("utf-8", "replace").split()
                os.close(fd)
                who = f"run {held[0]} (pid {held[1]})" if len(held) >= 2 else "another run"
                raise ResultsBusy(f"{self.results} is being written by {who}; wait for it to end, or use "
                                  "another --results") from None  # fmt: skip
        self.fd = fd
        self.lease = f"{run_id} {os.getpid()} {uuid.uuid4().hex}"
        self._publish()
        return self.lease

    def relabel(self, run_id: str) -> None:
        """The run id the lease names, once the run knows it (``--resume`` continues an older run's id)."""
        token = self.lease.split(" ")[-1]
        self.lease = f"{run_id} {os.getpid()} {token}"
        self._publish()

    def _publish(self) -> None:
        """Write the lease under the results file's own lock, so an append of the previous holder's workers
        either lands before the new lease or sees it and is refused."""
        data = self.lease.encode()
        try:
            rfd = os.open(self.results, os.O_RDONLY)
        except OSError:
            rfd = -1
        try:
            if rfd >= 0:
                fcntl.flock(rfd, fcntl.LOCK_EX)
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, data, 0)
        finally:
            if rfd >= 0:
                fcntl.flock(rfd, fcntl.LOCK_UN)
                os.close(rfd)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
