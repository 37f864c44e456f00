"""When a worker has run out of time: the wall clock, less the time the machine kept the worker waiting for a CPU.

Why: a TIMEOUT verdict says the backend hangs, and a wall clock on a shared machine also measures the other jobs on
it. With six jobs on two cores (load average 12), TransposeConv3d cases of deployed size were recorded TIMEOUT in
three seeds' runs (budget 3.3 s) and replayed PASS alone. Measured on one of them (seed 4, UFIXED_POINT_8,
[1, 8, 8, 7, 96]) under that load: the worker's main thread, which does the backend's work, ran 0.44-0.51 s and
waited 1.5-3.4 s in the kernel's run queue; one of five runs went past 3.3 s and was killed.

The rule (``Deadline.remaining``): a request's budget counts the worker's own time, the wall clock less the time its
main thread was ready to run and not run (the kernel's run-queue delay: /proc/<pid>/schedstat, second field). So
  - on an idle machine the rule is the wall clock, as before;
  - a runaway (the hangs seen keep the simulator at 100% CPU) or a worker blocked without using the CPU runs out
    after its budget of its own time, whatever the load;
  - a case of deployed size is not killed for the other jobs on the machine;
  - ``WALL_FACTOR`` times the budget on the wall clock ends any request (a worker the machine hardly runs at all);
  - where the delay cannot be read (no /proc, no schedstat), the wall clock alone.
Why the main thread's delay and not every thread's: the HTP simulator does a case's work on the thread that called
it (the TransposeConv3d case above: 0.5 s of its 0.65 s CPU); four helper threads ran 0.01-0.06 s each, and summing
their run-queue waits (1.8 s each) would count one wait of the process several times. Where the main thread waits for
a helper thread that waits for a CPU, that wait counts as the worker's own time: the rule is never looser than the
wall clock's.
"""

from __future__ import annotations

import time

WALL_FACTOR = 8.0  # a load average of 12 on 2 cores gives a job a sixth of a core: a budget's own time in 6 budgets
POLL_SECONDS = 0.25  # how often the run-queue delay is read once the wall-clock budget has passed


def run_queue_seconds(pid: int) -> float | None:
    """How long process ``pid``'s main thread has waited, ready to run, for a CPU since it started (Linux
    /proc/<pid>/schedstat, in ns); None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class Deadline:
    """The time a request to the worker ``pid`` may take: ``seconds`` of its own time (see the module docstring).
    ``remaining()`` is how long to wait before asking again; 0 when the time is up."""

    def __init__(self, seconds: float, pid: int | None) -> None:
        self.seconds = float(seconds)
        self.pid = pid
        self.start = time.monotonic()
        self.delay_start = run_queue_seconds(pid) if pid is not None else None
        self.ended: tuple[float, float | None] = (0.0, None)  # (wall, run-queue delay) when ``remaining`` said 0

    def wall(self) -> float:
        return time.monotonic() - self.start

    def delay(self) -> float | None:
        """Seconds the worker's main thread waited for a CPU since the request began (None: not measurable)."""
        if self.delay_start is None or self.pid is None:
            return None
        now = run_queue_seconds(self.pid)
        return None if now is None else now - self.delay_start

    def remaining(self) -> float:
        wall = self.wall()
        if wall < self.seconds:
            return self.seconds - wall
        limit = self.seconds * WALL_FACTOR
        delay = self.delay()
        own = wall if delay is None else wall - delay
        if own >= self.seconds or wall >= limit:
            self.ended = (wall, delay)
            return 0.0
        return min(POLL_SECONDS, self.seconds - own, limit - wall)

    def exceeded(self) -> str:
        """How a request that ran out of time exceeded it, for a TIMEOUT's message (the same words every run: the
        seconds measured go into the outcome's details, ``spent``)."""
        wall, delay = self.ended
        if delay is None:
            return f"{self.seconds:g} s"
        if wall - delay >= self.seconds:
            return f"{self.seconds:g} s of its own time"
        return f"{self.seconds:g} s ({self.seconds * WALL_FACTOR:g} s on the wall clock)"

    def spent(self) -> dict[str, float]:
        """When the time ran out: the wall seconds, and the seconds the worker waited for a CPU where measurable."""
        wall, delay = self.ended
        return {"wall_seconds": round(wall, 3)} | ({} if delay is None else {"run_queue_seconds": round(delay, 3)})
