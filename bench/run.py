"""``python -m bench``: how fast the suite runs, where the time goes, and what one full matrix would cost.

One fixed case set (seed 0; a spread of ops and datatypes, both tiers) is generated once and run on
each available default backend, one worker and then two. Every case's time is split the way a
conformance run spends it: generation, reference, backend, comparison and recording; the harness
overhead is ``(all but backend) / backend``. A generation pass over every op counts the draws the
generator throws away per case kept. The main job's cost at 20 typical cases per cell is estimated
from the measured per-case costs (``--main-job`` runs it for real instead). Targets live here, never
in timed unit tests.

Writes ``bench/out/bench.json`` and prints a table; the last line is the headline.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing as mp
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"

# A spread: element-wise (cheap), data movement, reductions, softmax, convolution, resampling.
CASE_OPS = ("ElementWiseAdd", "ElementWiseExp", "Transpose", "ReduceMean", "Softmax", "Conv2d", "Resize", "Concat")
CASE_CONFIGS = ("FLOAT_32", "FLOAT_16", "UFIXED_POINT_8")
BACKENDS = ("reference", "qnn-htp", "onnxruntime", "ort-qnn")
MEMORY_CASES = 240  # cases run twice more after a pass to measure the worker's growth (``_memory``)
# "small ops" in the sense: one cheap node, where the per-graph cost is nearly all a case costs
SMALL_OPS = ("ElementWiseAdd", "ElementWiseExp", "Transpose", "Concat")
TARGETS = {"harness_over_backend_qnn_htp": 0.25, "refusals_per_case": 0.25, "main_job_seconds": 600.0}


# Where drawing a case goes: hypothesis' engine around each example, its draws inside the case's build, and
# the suite's own work there (inferring shapes, checking constraints, making data). Filled by ``draw_cases``.
DRAW_SPLIT = {"build": 0.0, "draws": 0.0, "draw_calls": 0}


@functools.cache
def _timed_build():
    """``generate.strategy._drawn_by`` with a stopwatch on the build and on each draw inside it. The same draws in the
    same order, so the same cases: only the clock is added (two perf_counter calls a draw)."""
    from hypothesis import strategies as st

    @st.composite
    def drawn_by(draw, build):
        def timed(strategy, label=None):
            t = time.perf_counter()
            try:
                return draw(strategy)
            finally:
                DRAW_SPLIT["draws"] += time.perf_counter() - t
                DRAW_SPLIT["draw_calls"] += 1

        t0 = time.perf_counter()
        try:
            return build(timed)
        finally:
            DRAW_SPLIT["build"] += time.perf_counter() - t0

    return drawn_by


def draw_cases(op_name: str, label: str, tier: str, n: int, seed: int = 0) -> tuple[list, int, float]:
    """``n`` cases of one cell as the conformance run draws them: (cases, refused draws, seconds)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed
    from hypothesis import strategies as st
    from hypothesis.errors import Unsatisfiable

    import opdefs
    from cases import generate
    from reference.expected import infer

    op = opdefs.load(op_name)
    config = next((c for c in generate.configs(op) if c.label == label), None)
    if config is None:
        return [], 0, 0.0
    plain, generate.strategy._drawn_by = generate.strategy._drawn_by, _timed_build()
    try:
        parts = generate.cell_strategies(op, config, generate.Settings(infer=infer, tier=tier), n)
    finally:
        generate.strategy._drawn_by = plain
    tally = {"draws": 0}
    got: list = []

    @st.composite
    def counted(draw, inner):
        tally["draws"] += 1
        return draw(inner)

    t0 = time.perf_counter()
    for inner, count, salt in parts:  # a typical cell's parts, as the run draws them (``generate.cell_strategies``)

        @hyp_seed(seed + salt)
        @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(counted(inner))
        def run(case):
            got.append(case)

        try:
            run()
        except Unsatisfiable:
            pass
    return got, tally["draws"] - len(got), time.perf_counter() - t0


def case_set(n_per_cell: int) -> tuple[list, dict[str, Any]]:
    """The fixed case set and what drawing it cost per case, in steady state: one untimed case per cell
    first, so the modules a cell imports on first use (hypothesis, the reference families) and first-use
    work count as start-up, as they do once per process in a run of thousands of cases (measured: the
    first pass over this set cost 0.4 ms per case more than the next)."""
    for op in CASE_OPS:
        for label in CASE_CONFIGS:
            draw_cases(op, label, "typical", 1, seed=1)
    import tempfile

    from cases.cell_cache import Cell, CellCache

    cases, refused, seconds = [], 0, 0.0
    by_op: dict[str, list[float]] = {}  # op -> [cases, seconds to draw, seconds to read back from the cache]
    DRAW_SPLIT.update(build=0.0, draws=0.0, draw_calls=0)
    with tempfile.TemporaryDirectory(prefix="bench-cells-") as tmp:
        cache = CellCache(tmp)
        for op in CASE_OPS:
            for label in CASE_CONFIGS:
                for tier in ("typical", "edge"):
                    n = n_per_cell if tier == "typical" else max(1, n_per_cell // 4)
                    got, ref, sec = draw_cases(op, label, tier, n)
                    cases += got
                    refused += ref
                    seconds += sec
                    cache.put(op, f"{label}-{tier}", Cell(got, len(got) + ref, 0, True))
                    t0 = time.perf_counter()
                    cache.get(op, f"{label}-{tier}")
                    tally = by_op.setdefault(op, [0, 0.0, 0.0])
                    tally[0] += len(got)
                    tally[1] += sec
                    tally[2] += time.perf_counter() - t0
    per = 1000 / max(1, len(cases))
    return cases, {"cases": len(cases), "refused_draws": refused, "generate_seconds": round(seconds, 3),
                   "generate_ms_per_case": round(seconds * per, 3),
                   # hypothesis' engine (everything outside the case's build: the example's set-up, seeding and
                   # restoring the global PRNGs, its bookkeeping), its draws inside the build, the suite's own work
                   "generate_split_ms_per_case": {
                       "hypothesis_engine": round((seconds - DRAW_SPLIT["build"]) * per, 3),
                       "hypothesis_draws": round(DRAW_SPLIT["draws"] * per, 3),
                       "suite_building": round((DRAW_SPLIT["build"] - DRAW_SPLIT["draws"]) * per, 3),
                       "draws_per_case": round(DRAW_SPLIT["draw_calls"] / max(1, len(cases) + refused), 1)},
                   "generate_ms_per_case_by_op": {op: round(1000 * sec / max(1, k), 3)
                                                  for op, (k, sec, _) in by_op.items()},
                   "cache_read_ms_per_case_by_op": {op: round(1000 * sec / max(1, k), 3)
                                                    for op, (k, _, sec) in by_op.items()}}  # fmt: skip


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _cells(cases: list) -> list[list]:
    """The case set cut into its cells (op, configuration, tier), in order: what the conformance module
    hands to the backend at once."""
    cells: dict[tuple, list] = {}
    for case in cases:
        cells.setdefault((case.op, case.config, case.tier), []).append(case)
    return list(cells.values())


def run_backend(name: str, cases: list, generate_ms: dict[str, float], batch: int = 1,
                read_ms: dict[str, float] | None = None) -> dict[str, Any]:
    """Run ``cases`` through ``conformance.execute.execute_many`` on one backend in this process, a cell at a time with
    ``batch`` cases per backend call (1: one graph / session per case); split every case's time.
    ``generate_ms`` is what drawing a case of each op cost: an op's own figure, so the speed-up of a
    cheap op is not diluted by what drawing a convolution costs (session 5 charged every op the set's
    mean). ``read_ms`` is what reading a case back from the drawn-cell cache cost, per op: the main job
    passes ``--case-cache``, so only its first backend draws and the later ones read; the per-op rate is
    reported both ways (``cases_per_second_by_op`` drawing included, ``..._cached`` read back)."""
    import adapters
    from conformance import execute as run_case
    from reports.record import Record

    adapter = adapters.get(name)
    ok, why = adapter.available()
    if not ok:
        return {"available": False, "why": why}
    first_call = _warm_up(adapter, name, cases)
    # "worker_start": starting the backend's worker process (the first start, and a restart after each crash) is
    # neither the backend's call nor harness around it; kept apart so a crash does not read as harness cost
    split = {"generate": [], "reference": [], "backend": [], "compare": [], "record": [], "worker_start": []}
    restarted: set[int] = set()  # cells during which the worker was started again (a crash): not for ``_memory``
    t_all = time.perf_counter()
    verdicts: dict[str, int] = {}
    per_case: dict[str, tuple] = {}  # case_id -> (verdict, output digest, metrics): the batched pass must match
    # op -> [cases, seconds in execute and recording, seconds drawing, seconds reading the cell back]
    per_op: dict[str, list[float]] = {}
    cells = _cells(cases)
    for k, cell in enumerate(cells):
        before = _worker_state(adapter)
        started = getattr(adapter, "worker_start_seconds", 0.0)
        t0 = time.perf_counter()
        recs: list[Record] = run_case.execute_many(cell, run_case.RunContext(adapter, name, batch=batch))
        t1 = time.perf_counter()
        for rec in recs:
            rec.to_json()  # what recording costs (the line written per case)
        t2 = time.perf_counter()
        after = _worker_state(adapter)
        if before is None or after is None or before[0] != after[0]:
            restarted.add(k)
        tally = per_op.setdefault(cell[0].op, [0, 0.0, 0.0, 0.0])
        gen_s = generate_ms[cell[0].op] / 1000
        tally[0] += len(cell)
        tally[1] += t2 - t0
        tally[2] += len(cell) * gen_s
        tally[3] += len(cell) * (read_ms or {}).get(cell[0].op, 0.0) / 1000
        for rec in recs:
            split["generate"].append(gen_s)
            split["reference"].append(rec.timings.get("reference", 0.0))
            split["backend"].append(rec.timings.get("backend", 0.0))
            split["compare"].append(rec.timings.get("compare", 0.0))
            verdicts[rec.verdict] = verdicts.get(rec.verdict, 0) + 1
            per_case[rec.case_id] = (rec.verdict, ((rec.extra or {}).get("details") or {}).get("output_digest"),
                                     json.dumps(rec.metrics, sort_keys=True, default=str))  # fmt: skip
        # whatever execute spent beyond the stages it timed (loading specs, building the record) is harness too
        start_s = getattr(adapter, "worker_start_seconds", 0.0) - started
        other = (t1 - t0) - start_s - sum(rec.timings.get(k, 0.0) for rec in recs
                                          for k in ("reference", "backend", "compare"))  # fmt: skip
        split["record"] += [(max(0.0, other) + (t2 - t1)) / len(recs)] * len(recs)
        split["worker_start"] += [start_s / len(recs)] * len(recs)
    wall = time.perf_counter() - t_all
    memory = _memory(adapter, name, cells, batch, restarted)
    adapter.close()
    totals = {k: sum(v) for k, v in split.items()}
    harness = sum(v for k, v in totals.items() if k not in ("backend", "worker_start"))
    n = len(cases)
    return {
        "available": True,
        "batch": batch,
        "cases": n,
        "verdicts": verdicts,
        "per_case": per_case,
        "cases_per_second_1_worker": round(n / (wall + totals["generate"]), 2),
        "first_call_ms": round(1000 * first_call, 1),
        "seconds_per_case_ms": {k: round(1000 * statistics.mean(v), 3) for k, v in split.items() if v},
        "backend_median_ms": round(1000 * statistics.median(split["backend"]), 3) if n else 0.0,
        "harness_over_backend": round(harness / totals["backend"], 3) if totals["backend"] else None,
        # the same with each case read back from the drawn-cell cache instead of drawn (the main job's backends
        # after the first): the target is judged on the figure above, this one says what drawing costs of it
        "harness_over_backend_cached": (round((harness - totals["generate"] + sum(t[3] for t in per_op.values()))
                                              / totals["backend"], 3) if totals["backend"] and read_ms else None),
        "cases_per_second_by_op": {op: round(k / (run + gen), 2) for op, (k, run, gen, _) in per_op.items()
                                   if run + gen},
        "cases_per_second_by_op_cached": {op: round(k / (run + read), 2) for op, (k, run, _, read) in per_op.items()
                                          if read and run + read},
        "rss_kb_parent_peak": _rss_kb(),
        **memory,
    }


def _warm_up(adapter, name: str, cases: list) -> float:
    """Run the set's first case once, untimed, and return its seconds. Why: a backend's first graph costs far
    more than the next (measured: qnn-htp's first case 108 ms, then 6-13 ms; ort-qnn's first session 77 ms,
    then 67 ms); a run pays that once per worker process, like starting it, while here it landed on the
    first cell's op alone and read as that op's per-case cost (ElementWiseAdd batched 3.0 ms a case, 1.2
    without it). Kept in the JSON as ``first_call_ms``, beside the worker's start."""
    from conformance import execute as run_case

    if not cases:
        return 0.0
    t0 = time.perf_counter()
    run_case.execute_many(cases[:1], run_case.RunContext(adapter, name, batch=1))
    return time.perf_counter() - t0


def _worker_state(adapter) -> tuple[int, int] | None:
    """(pid, resident kB) of the adapter's worker process, None without one running."""
    worker = getattr(adapter, "_worker", None)
    rss = _worker_rss(adapter)
    return None if rss is None else (worker.proc.pid, rss)


def _memory(adapter, name: str, cells: list[list], batch: int, restarted: set[int]) -> dict[str, Any]:
    """The worker's resident memory: its peak over the pass, and its growth per 1000 cases when the same cells
    run again in one process - a leak, as opposed to what a first pass pages in.

    Why a second run: a first pass grows for reasons that are not leaks (an op's code paged in from the
    backend library, the allocator's high-water mark for a larger graph), and a worker restarted after a crash
    compares two processes. Session 9's figure, from case 10 to the end of one pass, read 50 MB per 1000
    qnn-htp cases where running the same cells again grows nothing: the pass had ended on a later process
    than it began on. So the cells during which no worker restarted (up to ``MEMORY_CASES`` cases) run twice
    more; the growth from the end of the first of those runs to the end of the second, in one process, is
    what a long run would keep adding."""
    from conformance import execute as run_case

    chosen: list[list] = []
    n = 0
    for k, cell in enumerate(cells):
        if k not in restarted and n < MEMORY_CASES:
            chosen.append(cell)
            n += len(cell)
    peak, samples = 0, []
    for _ in range(2):
        for cell in chosen:
            run_case.execute_many(cell, run_case.RunContext(adapter, name, batch=batch))
            state = _worker_state(adapter)
            peak = max(peak, state[1] if state else 0)
        samples.append(_worker_state(adapter))
    first, second = samples
    same = first is not None and second is not None and first[0] == second[0]
    return {"worker_rss_peak_kb": peak or None, "worker_rss_cases_run_again": n if same else 0,
            "worker_rss_growth_kb_per_1000_cases": round(1000 * (second[1] - first[1]) / n, 1) if same and n
            else None}  # fmt: skip


def _worker_rss(adapter) -> int | None:
    worker = getattr(adapter, "_worker", None)
    return worker.rss_kb() if worker is not None and hasattr(worker, "rss_kb") and worker.alive else None


_POOL_ADAPTER: dict[str, Any] = {}  # the adapter of one pool process, kept across the cells it takes


def _pool_init(name: str, batch: int, first: list) -> None:
    import adapters
    import opdefs

    opdefs.load_all()
    _quiet_backend_log()
    adapter = adapters.get(name)
    adapter.available()  # start the worker now: process start-up is not a case's cost
    _warm_up(adapter, name, first)  # nor is the backend's first graph (``_warm_up``)
    _POOL_ADAPTER.update(adapter=adapter, name=name, batch=batch)


def _pool_cell(cell: list) -> tuple[int, float, float]:
    """One cell in a pool process: (cases, start, end) on the wall clock shared by the processes."""
    from conformance import execute as run_case

    start = time.time()
    ctx = run_case.RunContext(_POOL_ADAPTER["adapter"], _POOL_ADAPTER["name"], batch=_POOL_ADAPTER["batch"])
    recs = run_case.execute_many(cell, ctx)
    for rec in recs:
        rec.to_json()
    return len(cell), start, time.time()


def two_workers(name: str, cases: list, generate_ms: dict[str, float], batch: int = 1) -> float:
    """Cases per second with two processes that each take the next cell when free, as ``-n 2`` (xdist's
    load scheduling) shares cells: from the first cell's start to the last cell's end, generation added.
    A fixed split (every other cell) gave one process every 20-case typical cell and the other every
    5-case edge cell, which capped two workers at 1.25 times one."""
    cells = _cells(cases)
    with mp.get_context("spawn").Pool(2, initializer=_pool_init, initargs=(name, batch, cases[:1])) as pool:
        done = pool.map(_pool_cell, cells, chunksize=1)
    n = sum(k for k, _, _ in done)
    wall = max(end for _, _, end in done) - min(start for _, start, _ in done)
    generate_s = sum(generate_ms[case.op] for case in cases) / 1000
    return round(n / (wall + generate_s / 2), 2)


def _quiet_backend_log() -> None:
    """The backends' own log lines (validation refusals ...) belong in records, not on the benchmark's screen."""
    import logging

    quiet = logging.getLogger("adapters.qnn.backend")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False


def refusal_scan(examples: int, seed: int = 0, op_regex: str | None = None) -> dict[str, Any]:
    """Draws thrown away per case kept, and generation time per case, per op (every configuration, both
    tiers, ``examples`` cases per cell, no backend). A refused draw is hypothesis work that yields no case:
    the generator filtered instead of constructing."""
    import re

    import opdefs
    from cases import generate

    per_op = {}
    ops = sorted(opdefs.load_all().items())
    if op_regex:
        ops = [(n, o) for n, o in ops if re.search(op_regex, n)]
    t_scan = time.perf_counter()
    for i, (name, op) in enumerate(ops):
        kept = refused = 0
        seconds = 0.0
        for config in generate.configs(op):
            for tier in generate.TIERS:
                if (op.generation.get("unsatisfiable") or {}).get(tier):
                    continue
                got, ref, sec = draw_cases(name, config.label, tier, examples, seed)
                kept += len(got)
                refused += ref
                seconds += sec
        if kept or refused:
            per_op[name] = {"kept": kept, "refused": refused, "ratio": round(refused / max(1, kept), 3),
                            "generate_ms_per_case": round(1000 * seconds / max(1, kept), 2)}  # fmt: skip
        if sys.stderr.isatty() or (i + 1) % 20 == 0 or i + 1 == len(ops):
            print(f"  generation pass: {i + 1}/{len(ops)} ops, {time.perf_counter() - t_scan:.0f} s", file=sys.stderr,
                  flush=True)  # fmt: skip
    kept = sum(v["kept"] for v in per_op.values())
    refused = sum(v["refused"] for v in per_op.values())
    ms = sum(v["generate_ms_per_case"] * v["kept"] for v in per_op.values())
    above = sorted((k for k, v in per_op.items() if v["ratio"] > TARGETS["refusals_per_case"]),
                   key=lambda k: -per_op[k]["ratio"])  # fmt: skip
    return {"kept": kept, "refused": refused, "ratio": round(refused / max(1, kept), 3), "ops_above_target": above,
            "examples_per_cell": examples, "seed": seed, "generate_ms_per_case": round(ms / max(1, kept), 2),
            "per_op": per_op}  # fmt: skip


def _print_refusals(ref: dict[str, Any]) -> None:
    """Every op above the target with its figures, then the overall ratio."""
    from tabulate import tabulate

    rows = [[k, ref["per_op"][k]["refused"], ref["per_op"][k]["kept"], ref["per_op"][k]["ratio"],
             ref["per_op"][k]["generate_ms_per_case"]] for k in ref["ops_above_target"]]  # fmt: skip
    if rows:
        print(tabulate(rows, headers=["op above target", "refused", "kept", "refused/kept", "gen ms/case"]))
    print(f"generation: {ref['refused']} draws refused for {ref['kept']} kept ({ref['ratio']} per case, target "
          f"{TARGETS['refusals_per_case']} per op); {len(ref['ops_above_target'])} op(s) above; "
          f"{ref['generate_ms_per_case']} ms per case")  # fmt: skip


def against(rev: str, backends: list[str], results: dict[str, Any]) -> dict[str, Any]:
    """Run revision ``rev``'s own ``python -m bench`` (its code, its fixed case set, no generation pass) on
    ``backends`` on this machine now, and set this tree's cases per second beside it: the issue's "N times
    today's" is a claim about two runs of one machine, which figures carried over from another day are not
    (session 8 carried a 5.5x that measured 3.4-4.0x side by side). ``rev``'s tree is exported to a
    temporary folder and imported from there ahead of this checkout."""
    import io
    import os
    import tarfile
    import tempfile

    try:
        sha = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"--against {rev}: not a revision of this checkout ({e})", file=sys.stderr)
        return {"rev": rev, "error": "not a revision of this checkout"}
    with tempfile.TemporaryDirectory(prefix="bench-against-") as tmp:
        archive = subprocess.run(["git", "archive", "--format=tar", sha], cwd=REPO, check=True,
                                 capture_output=True).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        out = Path(tmp) / "against.json"
        env = {**os.environ, "PYTHONPATH": tmp + os.pathsep + os.environ.get("PYTHONPATH", "")}
        done = subprocess.run([sys.executable, "-m", "bench", "--backends", ",".join(backends), "--skip-refusals",
                               "-o", str(out)], cwd=tmp, env=env, capture_output=True, text=True)  # fmt: skip
        if done.returncode != 0 or not out.is_file():
            why = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            print(f"--against {rev}: its benchmark failed: {why}", file=sys.stderr)
            return {"rev": rev, "commit": sha, "error": why}
        old = json.loads(out.read_text()).get("backends", {})
    per: dict[str, Any] = {}
    for name in backends:
        o, r = old.get(name) or {}, results.get(name) or {}
        base = o.get("cases_per_second_2_workers") if o.get("available") else None
        if not base:
            continue
        # like for like: one per call against one per call, and each side's best (batched where it batched)
        then_best = max(base, (o.get("batched") or {}).get("cases_per_second_2_workers") or 0.0)
        now = r.get("cases_per_second_2_workers")
        best = max(now or 0.0, (r.get("batched") or {}).get("cases_per_second_2_workers") or 0.0)
        per[name] = {"then_cases_per_second_2_workers": base, "then_best": then_best, "now_one_per_call": now,
                     "now_best": best, "speedup_one_per_call": round(now / base, 2) if now else None,
                     "speedup": round(best / then_best, 2)}  # fmt: skip
    return {"rev": rev, "commit": sha, "backends": per}


def main_job_estimate(results: dict[str, Any], per_cell: int) -> dict[str, Any]:
    """Seconds for ``python -m conformance --examples per_cell`` from the measured per-case costs (two workers)."""
    import opdefs
    from cases import generate

    cells = sum(len(generate.configs(op)) for op in opdefs.load_all().values())
    cases = cells * (per_cell + max(1, -(-per_cell // 4)))
    seconds = 0.0
    for _name, r in results.items():
        best = (r.get("batched") or r) if r.get("available") else {}
        if best.get("cases_per_second_2_workers"):
            seconds += cases / best["cases_per_second_2_workers"]
    return {"cells": cells, "cases_per_backend": cases, "estimated_seconds": round(seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases-per-cell", type=int, default=20,
                    help="typical cases per cell of the fixed set (the main job draws 20)")
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--batch", type=int, default=32, help="cases per backend call in the batched pass")
    ap.add_argument("--refusal-examples", type=int, default=20,
                    help="cases per cell in the all-op generation pass (as the main job draws: hypothesis mutates "
                         "earlier draws only from a few cases on, and refuses more then; about a minute)")
    ap.add_argument("--skip-refusals", action="store_true", help="skip the all-op generation pass")
    ap.add_argument("--generation-only", action="store_true",
                    help="only the all-op generation pass (refused draws and ms per case per op; no backend); "
                         "writes bench/out/generation.json unless -o is given")  # fmt: skip
    ap.add_argument("--op", default=None, help="regex: limit the generation pass to these ops")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed of the generation pass")
    ap.add_argument("--main-job", action="store_true",
                    help="only the default main job (`python -m conformance --examples 20`), run for real and timed "
                         "per backend (bench/main_job.py); with --against REV, REV's main job right after it")
    ap.add_argument("--against", default=None, metavar="REV",
                    help="also run git revision REV here and now (its own code): its benchmark on the same backends, "
                         "each backend's speed-up over it; with --main-job, its main job and the time per backend")
    ap.add_argument("--record-baseline", action="store_true",
                    help="with --main-job --against REV: keep REV's times as bench/baseline.json, the figures a plain "
                         "--main-job prints its ratios to")
    ap.add_argument("--sweep", action="store_true",
                    help="only the generation sweep (`python -m conformance --sweep`, 20 typical cases per cell), run "
                         "for real and timed per backend, wall and CPU (bench/sweep_job.py); --op limits it")
    ap.add_argument("-o", "--output", default=None, help="JSON file (default bench/out/bench.json)")
    args = ap.parse_args(argv)
    if args.sweep:
        from bench import sweep_job

        return sweep_job.main(args.op)
    if args.main_job:
        from bench import main_job

        return main_job.main(args.against, args.record_baseline)
    if args.generation_only:
        doc = {"refusals": refusal_scan(args.refusal_examples, args.seed, args.op), "targets": TARGETS}
        out = Path(args.output or OUT / "generation.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        _print_refusals(doc["refusals"])
        print(f"details: {out}")
        return 0

    _quiet_backend_log()
    t0 = time.perf_counter()
    import opdefs

    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    opdefs.load_all()
    specs_s = time.perf_counter() - t0
    print(f"start-up: import {load_s:.2f} s, spec loading {specs_s:.2f} s", flush=True)
    cases, gen = case_set(args.cases_per_cell)
    print(f"case set: {gen['cases']} cases, {gen['refused_draws']} refused draws, "
          f"{gen['generate_ms_per_case']:.2f} ms per case to generate", flush=True)  # fmt: skip
    split = gen["generate_split_ms_per_case"]
    print(f"  of which hypothesis' engine {split['hypothesis_engine']:.2f} ms, its {split['draws_per_case']} draws "
          f"{split['hypothesis_draws']:.2f} ms, the suite's own building {split['suite_building']:.2f} ms",
          flush=True)  # fmt: skip
    results: dict[str, Any] = {}
    for name in args.backends.split(","):
        print(f"{name}: one case per backend call, 1 worker ...", flush=True)
        r = run_backend(name, cases, gen["generate_ms_per_case_by_op"], read_ms=gen["cache_read_ms_per_case_by_op"])
        if r.get("available"):
            print(f"{name}: 2 workers ...", flush=True)
            r["cases_per_second_2_workers"] = two_workers(name, cases, gen["generate_ms_per_case_by_op"])
            print(f"{name}: batched ({args.batch} per call), 1 worker ...", flush=True)
            b = run_backend(name, cases, gen["generate_ms_per_case_by_op"], args.batch,
                            read_ms=gen["cache_read_ms_per_case_by_op"])
            b["cases_per_second_2_workers"] = two_workers(name, cases, gen["generate_ms_per_case_by_op"], args.batch)
            b["backend_speedup"] = round(r["seconds_per_case_ms"]["backend"] / max(1e-9, b["seconds_per_case_ms"]
                                                                                    ["backend"]), 2)  # fmt: skip
            b["speedup"] = round(b["cases_per_second_1_worker"] / max(1e-9, r["cases_per_second_1_worker"]), 2)
            # drawing included is what `pytest --backend X` alone sees, and what the targets are judged on;
            # "_cached" is what a backend after the main job's first sees (its cells read from the cache)
            for suffix in ("", "_cached"):
                one, many = r[f"cases_per_second_by_op{suffix}"], b[f"cases_per_second_by_op{suffix}"]
                by_op = {op: round(v / one[op], 2) for op, v in many.items() if one.get(op)}
                small = [by_op[op] for op in SMALL_OPS if op in by_op]
                b[f"speedup_by_op{suffix}"] = by_op
                b[f"speedup_small_ops{suffix}"] = round(statistics.mean(small), 2) if small else None
            differ = sorted(k for k in r["per_case"] if r["per_case"][k] != b["per_case"].get(k))
            b["cases_differing_from_one_per_call"] = len(differ)
            b["differing_case_ids"] = differ[:20]
            del r["per_case"], b["per_case"]
            for x in (r, b):
                x["harness_over_backend_split"] = _harness_split(x, gen["generate_split_ms_per_case"])
            r["batched"] = b
        r.pop("per_case", None)
        results[name] = r
    doc: dict[str, Any] = {"startup": {"spec_loading_seconds": round(specs_s, 3)}, "case_set": gen, "backends": results,
                           "targets": TARGETS}  # fmt: skip
    if not args.skip_refusals:
        print("generation pass over every op ...", flush=True)
        doc["refusals"] = refusal_scan(args.refusal_examples, args.seed, args.op)
    doc["main_job"] = main_job_estimate(results, 20)
    if args.against:
        print(f"{args.against}'s own benchmark on the same backends, same machine ...", flush=True)
        doc["against"] = against(args.against, [n for n, r in results.items() if r.get("available")], results)
    out = Path(args.output or OUT / "bench.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    _print_table(doc)
    print(f"details: {out}")
    print(_headline(doc))
    return 0


def _harness_split(r: dict[str, Any], gen_split: dict[str, float]) -> dict[str, float] | None:
    """``harness_over_backend`` in three parts: hypothesis' own time (its engine and its draws, as a share of
    each case's drawing), the suite's own drawing (shapes, checks, data, the reference's output shapes), and
    everything after (reference, comparison, recording). Why: the first is a floor while every case is one
    hypothesis example, so it says how much of the ratio the suite's code can still win back."""
    ms, back = r["seconds_per_case_ms"], r["seconds_per_case_ms"].get("backend", 0.0)
    drawn = gen_split["hypothesis_engine"] + gen_split["hypothesis_draws"] + gen_split["suite_building"]
    if not back or not drawn:
        return None
    hyp = ms["generate"] * (gen_split["hypothesis_engine"] + gen_split["hypothesis_draws"]) / drawn
    return {"hypothesis": round(hyp / back, 3), "suite_drawing": round((ms["generate"] - hyp) / back, 3),
            "reference_compare_record": round((ms["reference"] + ms["compare"] + ms["record"]) / back, 3)}


def _print_table(doc: dict[str, Any]) -> None:
    from tabulate import tabulate

    rows = []
    for name, r in doc["backends"].items():
        if not r.get("available"):
            rows.append([name, "unavailable", "", "", "", "", "", r.get("why", "")[:40]])
            continue
        for label, x in (("1/call", r), (f"{(r.get('batched') or {}).get('batch', '')}/call", r.get("batched"))):
            if not x:
                continue
            ms = x["seconds_per_case_ms"]
            rows.append([name, label, x["cases_per_second_1_worker"], x.get("cases_per_second_2_workers", ""),
                         f"{ms['backend']:.2f}",
                         f"{ms['generate'] + ms['reference'] + ms['compare'] + ms['record']:.2f}",
                         f"{ms.get('worker_start', 0.0):.2f}",
                         x["harness_over_backend"], x.get("worker_rss_growth_kb_per_1000_cases") or "",
                         x.get("speedup", ""), x.get("cases_differing_from_one_per_call", "")])  # fmt: skip
    print(tabulate(rows, headers=["backend", "batch", "cases/s 1w", "cases/s 2w", "backend ms", "harness ms",
                                  "start ms", "harness/backend", "RSS kB/1000", "speed-up",
                                  "verdicts differ"]))  # fmt: skip
    for name, r in doc["backends"].items():
        split = r.get("harness_over_backend_split")
        if split:
            print(f"{name} harness/backend {r['harness_over_backend']} one per call = hypothesis {split['hypothesis']}"
                  f" + the suite's drawing {split['suite_drawing']} + reference, comparison and recording "
                  f"{split['reference_compare_record']}")  # fmt: skip
    warm = [f"{name} {r['first_call_ms']:.0f} ms" for name, r in doc["backends"].items() if r.get("first_call_ms")]
    if warm:
        print("first case on a fresh worker (untimed warm-up, as its start): " + ", ".join(warm))
    for name, r in doc["backends"].items():
        by_op = (r.get("batched") or {}).get("speedup_by_op")
        if by_op:
            print(f"{name} batched/one-per-call cases per second by op: "
                  + ", ".join(f"{op} x{v}" + ("*" if op in SMALL_OPS else "") for op, v in by_op.items())
                  + f"  (* small ops: x{r['batched']['speedup_small_ops']} on average; cells read from the "
                  + "drawn-cell cache, as the main job's later backends: "
                  + f"x{r['batched'].get('speedup_small_ops_cached')})")  # fmt: skip
    for name, x in ((doc.get("against") or {}).get("backends") or {}).items():
        rev = f"{doc['against']['rev']} ({doc['against']['commit'][:10]})"
        print(f"{name} against {rev}, its own benchmark run just now:"
              f" one per call {x['then_cases_per_second_2_workers']} cases/s then, {x['now_one_per_call']} now"
              f" (x{x['speedup_one_per_call']}); best {x['then_best']} then, {x['now_best']} now (x{x['speedup']}),"
              " 2 workers each")
    if doc.get("refusals"):
        _print_refusals(doc["refusals"])


def _headline(doc: dict[str, Any]) -> str:
    b = doc["backends"]

    def cps(name: str) -> str:
        r = b.get(name) or {}
        return f"{r.get('cases_per_second_2_workers', r.get('cases_per_second_1_worker', '?'))}" if r.get("available") \
            else "n/a"  # fmt: skip

    def batched(name: str) -> str:
        x = (b.get(name) or {}).get("batched") or {}
        return (f" ({x.get('cases_per_second_2_workers')} batched, x{x.get('speedup_small_ops')} on small ops "
                f"drawing included, x{x.get('speedup_small_ops_cached')} with cells cached, "
                f"backend x{x.get('backend_speedup')})" if x else "")  # fmt: skip

    htp = b.get("qnn-htp") or {}
    mj = doc["main_job"]
    t = mj.get("measured_seconds", mj["estimated_seconds"])
    kind = "" if "measured_seconds" in mj else " (estimated)"
    return (f"qnn-htp: {cps('qnn-htp')} cases/s{batched('qnn-htp')}, harness/backend = "
            f"{htp.get('harness_over_backend', 'n/a')} ({htp.get('harness_over_backend_cached', 'n/a')} with cells "
            f"cached); ort-qnn: {cps('ort-qnn')} cases/s{batched('ort-qnn')}; "
            f"main job 20/cell: {t:.0f} s{kind}" + _against_headline(doc))  # fmt: skip


def _against_headline(doc: dict[str, Any]) -> str:
    a = doc.get("against") or {}
    parts = [f"{name} x{x['speedup']}" for name, x in (a.get("backends") or {}).items()]
    return f"; against {a['rev']}: {', '.join(parts)}" if parts else ""


