"""A worker-backed backend whose verdicts depend on what its process ran before, and whose outputs vary between runs,
on cue and without QNN: the double the tests of fresh workers (``conformance.fresh``) and ``python -m bench replay``
plug in with ``--backend tests.stateful_backend:make``.

Its worker computes every case with the reference, then, by op:
- ``$STATEFUL_OP`` (default Relu): once its process has run another case, adds 1 to out[0]'s first element, as a
  kernel that reads what an earlier case left in memory would: wrong in a used worker, right in a fresh one (and
  the same again when the same case runs twice there);
- ``$NOISY_OP`` (default Sigmoid): adds a new random amount to out[0]'s first element on every run;
- ``$REFUSED_OP`` (default Tanh): refuses every case with one reason;
- ``$FINALIZE_OP`` (default Elu): accepts every case, then fails it at finalize with one message but for the
  node id it names (the case's seed), as the HTP names the node it could not prepare.
Each run's reply says how many cases the process had run before (``details.served_before``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from adapters.base import ERROR, OK, REJECTED, Outcome
from adapters.worker import Worker, WorkerAdapter, serve
from cases.case import Case


class StatefulAdapter(WorkerAdapter):
    name = "stateful"

    def __init__(self, confirm_each: bool = True) -> None:
        super().__init__()
        self.confirm_each = confirm_each
        self._worker = Worker({}, timeout=60)
        self._worker.child_module = __name__
        self._worker.use_zygote = False

    def capabilities(self) -> dict[str, Any]:
        return {}

    def run(self, case: Case) -> Outcome:
        return self._worker.run(case)


def make(options: dict[str, Any]) -> StatefulAdapter:
    return StatefulAdapter(confirm_each=os.environ.get("STATEFUL_CONFIRM_EACH", "1") == "1")


def _noisy(value: Any, rng: Any, state: dict[str, Any]) -> Any:
    """``value`` moved by an amount no tolerance takes and no two runs of a process share: a quarter to three
    quarters of an integer type's range (wrapping), 1 to 999 on a float. Why: a fixed-point output moved by up to
    999 steps with wrap-around was within the budget one run in fifteen (16-bit: 65 steps), and a replay of a
    FAIL then passed."""
    import numpy as np

    dtype = np.asarray(value).dtype
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        span = int(info.max) - int(info.min) + 1
        k = int(rng.integers(span // 4, 3 * span // 4))
    else:
        k = int(rng.integers(1, 1000))
    if k == state.get("noise"):
        k += 1
    state["noise"] = k
    if np.issubdtype(dtype, np.integer):
        return dtype.type((int(value) - int(info.min) + k) % span + int(info.min))
    return value + dtype.type(k)


def _child(req_fd: int, rep_fd: int) -> int:
    from adapters.worker import child_setup

    child_setup()
    import numpy as np

    from adapters.reference import make as reference

    inner = reference({})
    state: dict[str, Any] = {"served": 0, "seen": set()}
    rng = np.random.default_rng()

    def run(case: Case) -> dict[str, Any]:
        before = state["served"]
        state["served"] += 1
        others = bool(state["seen"] - {case.case_id()})
        state["seen"].add(case.case_id())
        if case.op == os.environ.get("REFUSED_OP", "Tanh"):
            return _plain(Outcome(REJECTED, message="op refused by the stateful double", details={"stage": "validate"}))
        if case.op == os.environ.get("FINALIZE_OP", "Elu"):
            return _plain(Outcome(ERROR, message=f"graphFinalize: could not prepare op with id {case.seed:#x}",
                                  details={"stage": "finalize", "served_before": before}))  # fmt: skip
        outcome = inner.run(case)
        if outcome.status == OK and outcome.outputs:
            first = np.array(outcome.outputs[0], copy=True)
            flat = first.reshape(-1)
            if case.op == os.environ.get("STATEFUL_OP", "Relu") and others and flat.size:
                flat[0] = flat[0] + 1
            if case.op == os.environ.get("NOISY_OP", "Sigmoid") and flat.size:
                flat[0] = _noisy(flat[0], rng, state)
            outcome.outputs[0] = first
        outcome.details["served_before"] = before
        return _plain(outcome)

    return serve(req_fd, rep_fd, {"hello": lambda cfg: {"adapter": "stateful"}, "run": run})


def _plain(outcome: Outcome) -> dict[str, Any]:
    return {"status": outcome.status, "outputs": outcome.outputs, "message": outcome.message,
            "seconds": outcome.seconds, "details": outcome.details}  # fmt: skip


if __name__ == "__main__":
    sys.exit(_child(int(sys.argv[1]), int(sys.argv[2])))
