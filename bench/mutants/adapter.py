"""A backend with one bug planted: any adapter, wrapped through the public adapter interface only.

The wrapper changes what the base backend sees (the case, before ``run``) or what it says (the outcome,
after), and only for the cases its mutant's condition selects; every other case goes to the base as it
is. A changed case carries ``details["mutant"]`` in its outcome, so a run's records say which cases the bug
touched. ``info()`` names the backend it ``wraps``: a findings file for that backend applies to the run
(``reports.expectations``), as it would to the real backend with that bug.
"""

from __future__ import annotations

from typing import Any

import adapters
from adapters.base import Outcome, run_all, run_each
from bench.mutants.kinds import Mutant
from cases.case import Case


class MutantAdapter:
    def __init__(self, base: str, mutant: Mutant, options: dict[str, Any] | None = None) -> None:
        self.base_name = base
        self.mutant = mutant
        self.base = adapters.get(base, options)
        self.name = f"{base}~{mutant.name}"

    # the protocol: everything but the run is the base's own
    def available(self) -> tuple[bool, str]:
        return self.base.available()

    def info(self) -> dict[str, Any]:
        return {**self.base.info(), "wraps": self.base_name, "mutant": self.mutant.name}

    def capabilities(self) -> dict[str, Any]:
        return self.base.capabilities()

    def close(self) -> None:
        self.base.close()

    @property
    def batch_size(self) -> int | None:
        return getattr(self.base, "batch_size", None)

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        if hasattr(self.base, "batch_size"):
            self.base.batch_size = value

    def run(self, case: Case) -> Outcome:
        return self._runs([case], lambda cases: [self.base.run(c) for c in cases])[0]

    def run_many(self, cases: list[Case]) -> list[Outcome]:
        return self._runs(cases, lambda batch: run_all(self.base, batch))

    def run_each(self, cases: list[Case]) -> list[Outcome]:
        return self._runs(cases, lambda batch: run_each(self.base, batch))

    def _runs(self, cases: list[Case], run: Any) -> list[Outcome]:
        """The cases the bug touches go to the base as the bug changes them, the rest as they are, all in one
        call (the base batches them as it would); then the bug changes what the base said about its own."""
        touched = [not c.negative and self.mutant.applies(c) for c in cases]
        sent = [self.mutant.before(c) if t else c for c, t in zip(cases, touched, strict=True)]
        outcomes = list(run(sent))
        for k, (case, t) in enumerate(zip(cases, touched, strict=True)):
            if t:
                out = self.mutant.after(case, outcomes[k])
                out.details = {**(out.details or {}), "mutant": self.mutant.name}
                outcomes[k] = out
        return outcomes


def make(base: str, name: str, options: dict[str, Any] | None = None) -> MutantAdapter:
    from bench.mutants.catalogue import get

    return MutantAdapter(base, get(name), options)
