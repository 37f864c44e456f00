"""``python -m bench --sweep [--op REGEX]``: the generation sweep (``python -m conformance --sweep``) timed for real.

Why its own benchmark: issue 44 puts the sweep (qnn-htp at every HTP generation and every known release, and qnn-cpu,
20 typical cases per cell, each cell drawn once) at 20 minutes on 2 cores, and a sweep is eleven backends run one
after another, so its time is not the main job's times eleven: the first backend draws every cell and the others
read the case cache, and the generations differ in what they run (a cell refused at v68 executes at v73). The figure
is only a claim about the machine it was measured on when nothing else ran there, so the output says the CPU time
beside the wall time: on a machine shared with other work the wall time grows and the CPU time barely moves, and
CPU / 2 is what the same job needs of 2 free cores. With ``--op``, the sweep of those ops only (each backend's
share is then its share of their cells, not of the whole sweep).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.main_job import EXAMPLES, OUT, REPO, costs, print_costs, run_main_job

TARGET_SECONDS = 20 * 60.0  # the sweep at 20 typical cases per cell, on 2 cores (issue 44)
CORES = 2


def headline(doc: dict[str, Any], op: str | None) -> str:
    now = doc["now"]
    wall, cpu = now["wall_seconds"], now.get("cpu_seconds") or 0.0
    verdict = "within" if wall <= TARGET_SECONDS else "over"
    scope = f"ops {op!r}" if op else "every op"
    slowest = sorted(now["backends"].items(), key=lambda kv: -kv[1])[:3]
    return (f"sweep {EXAMPLES}/cell, {scope}: {wall:.0f} s wall ({verdict} the {TARGET_SECONDS:.0f} s target), "
            f"{cpu:.0f} s of CPU (at least {cpu / CORES:.0f} s on {CORES} free cores), {len(now['backends'])} "
            f"backends; slowest: {', '.join(f'{n} {s:.0f} s' for n, s in slowest)}")  # fmt: skip


def main(op: str | None = None) -> int:
    extra = ["--sweep", "-q"] + (["--op", op] if op else [])
    print("the sweep (python -m conformance --sweep) ...", flush=True)
    now = run_main_job(sys.executable, REPO, REPO / "runs" / "bench-sweep", "sweep", extra=extra)
    now["measured"] = time.strftime("%Y-%m-%d %H:%M")
    doc: dict[str, Any] = {"now": now, "target_seconds": TARGET_SECONDS, "op": op}
    results = [Path(now["runs"]) / f"{name}.jsonl" for name in now["backends"]]
    doc["costs"] = costs([p for p in results if p.is_file()])
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / "sweep.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    for name, seconds in now["backends"].items():
        print(f"  {name:24s} {seconds:6.0f} s")
    print("what the sweep's records say it spent (seconds summed over its workers):")
    print_costs(doc["costs"])
    print(f"details: {out}; log: {now['log']}")
    print(headline(doc, op))
    return 0 if now["exit"] in (0, 1) else now["exit"]
