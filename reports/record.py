"""One results record per case: the only thing that crosses from a run to the reports.

Records are JSON lines so a results file can be copied from another machine, concatenated, and read
with no backend installed. Unknown keys are kept (newer writers, older readers).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PASS, FAIL, REJECTED, ERROR, CRASH, TIMEOUT = "PASS", "FAIL", "REJECTED", "ERROR", "CRASH", "TIMEOUT"
UNCHECKED, SKIP, XFAIL, XPASS = "UNCHECKED", "SKIP", "XFAIL", "XPASS"
VERDICTS = (PASS, FAIL, REJECTED, ERROR, CRASH, TIMEOUT, UNCHECKED, SKIP, XFAIL, XPASS)
POSITIVE, NEGATIVE, SHRUNK, CELL = "positive", "negative", "shrunk", "cell"
TYPICAL, EDGE = "typical", "edge"


@dataclass
class Record:
    op: str
    config: str  # datatype configuration label, e.g. "FLOAT_32" or "UFIXED_POINT_8"
    backend: str  # adapter name, e.g. "qnn-htp"
    verdict: str
    # "positive" (must run and match), "negative" (must be rejected), "shrunk" (the smallest failing case of a
    # cell, kept for replay and never counted in its rates) or "cell" (one per op x config x tier: how many
    # cases were asked for, drawn, refused by the generator; its verdict is "")
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
        d = asdict(self)
        extra = d.pop("extra")
        d.update(extra)
        return json.dumps(d, sort_keys=True, default=_default)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        known = {f for f in cls.__dataclass_fields__ if f != "extra"}
        return cls(**{k: v for k, v in d.items() if k in known}, extra={k: v for k, v in d.items() if k not in known})


def _default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


def read(paths: Iterable[str | Path]) -> Iterator[Record]:
    """Records from JSONL files; a line that does not parse is reported with file:line, not skipped silently."""
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                    if not isinstance(obj, dict):
                        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
                    yield Record.from_dict(obj)
                except (ValueError, TypeError) as e:
                    raise ValueError(f"{p}:{n}: not a results record: {e}") from None


def append(path: str | Path, records: Iterable[Record]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        for r in records:
            fh.write(r.to_json() + "\n")
