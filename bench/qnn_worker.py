"""Benchmark: per-case time and worker memory on the HTP simulator (targets live here, not in unit tests).

    python -m bench qnn-worker [--cases 300]

Targets (facts sheet, 2-core machine): median case under 50 ms; worker RSS flat (under 4 MB growth
over 300 cases after a 50-case warm-up); one worker start for the whole run. Exit 1 if missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.qnn import QnnAdapter  # noqa: E402
from cases.case import Case, Tensor  # noqa: E402


def add_case() -> Case:
    a = np.arange(128, dtype=np.float32).reshape(1, 4, 4, 8)
    return Case("ElementWiseAdd", [Tensor("a", "FLOAT_32", a.shape, a), Tensor("b", "FLOAT_32", a.shape, a)], {},
                [Tensor("o", "FLOAT_32", a.shape)])  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=300)
    n = ap.parse_args().cases
    ad = QnnAdapter()
    ok, why = ad.available()
    if not ok:
        print(f"skipped: {why}")
        return 0
    try:
        case = add_case()
        for _ in range(50):
            ad.run(case)
        before = ad.worker_rss_kb()
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            out = ad.run(case)
            assert out.status == "ok", out.message
            times.append(time.perf_counter() - t0)
        grown = ad.worker_rss_kb() - before
        med = statistics.median(times)
        print(f"median per case {med * 1000:.2f} ms; worker RSS growth {grown} kB over {n} cases; "
              f"worker starts {ad.worker_starts}")  # fmt: skip
        return 0 if (grown < 4096 and med < 0.05 and ad.worker_starts == 1) else 1
    finally:
        ad.close()


if __name__ == "__main__":
    sys.exit(main())
