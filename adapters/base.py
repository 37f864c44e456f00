"""The adapter protocol: how any backend runs one Case and reports what happened.

An adapter never judges numbers; it says whether the backend accepted and ran the case and what it
produced. Judging against the reference happens in ``cases.compare``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cases.case import Case

# Outcome statuses. They map onto verdicts: ok -> PASS/FAIL/UNCHECKED (after comparison),
# rejected -> REJECTED, error -> ERROR, crash -> CRASH, timeout -> TIMEOUT, skip -> SKIP.
OK, REJECTED, ERROR, CRASH, TIMEOUT, SKIP = "ok", "rejected", "error", "crash", "timeout", "skip"
STATUSES = (OK, REJECTED, ERROR, CRASH, TIMEOUT, SKIP)


@dataclass
class Outcome:
    """What one case did on a backend.

    A case with ``steps`` (a stateful op executed several times, ``Case.executions``) gives the outputs of
    every execution one after another in ``outputs``: execution 0's declared outputs, then execution 1's...,
    ``len(case.outputs) * case.executions`` arrays in all (the layout ``reference.expected.expected`` uses),
    with ``details["executions"]`` saying how many ran. A backend that cannot carry state between
    executions returns SKIP, never the outputs of one execution."""

    status: str
    outputs: list[np.ndarray] = field(default_factory=list)  # stored values in each output's dtype
    message: str = ""
    seconds: float = 0.0  # wall time spent in the backend for this case
    details: dict[str, Any] = field(default_factory=dict)  # e.g. error code, signal, stage

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown outcome status {self.status!r}")


class Adapter(Protocol):
    name: str

    def available(self) -> tuple[bool, str]:
        """(True, "") when usable here; otherwise (False, why) so the run can skip with a reason."""

    def info(self) -> dict[str, Any]:
        """Identity of the backend for results records: library path, build id, API versions..."""

    def capabilities(self) -> dict[str, Any]:
        """What the backend says it supports (e.g. {"ops": [...]}); {} where it cannot say."""

    def run(self, case: Case) -> Outcome: ...

    def close(self) -> None: ...
