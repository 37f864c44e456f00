"""The composition root of a conformance run: one case through reference, backend and comparison.

Every other room stays in its lane (DESIGN.md); this module and ``conftest.py`` are where they meet.
``execute`` turns one Case into one results Record; the pytest module, ``python -m cases replay``
and the main job all go through it, so a verdict means the same thing wherever it was produced.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

import opdefs
import reference
from adapters.base import CRASH, ERROR, OK, REJECTED, SKIP, TIMEOUT, Adapter
from cases import check
from cases.case import Case
from opdefs import expr
from reference.compare import judge
from reference.expected import expected
from reports.families import family_of
from reports.record import Record

_NOT_RUN = {REJECTED: "REJECTED", ERROR: "ERROR", CRASH: "CRASH", TIMEOUT: "TIMEOUT", SKIP: "SKIP"}


def case_stem(case: Case, backend: str) -> str:
    kind = f"neg-{case.broken}" if case.broken else case.config.replace("+", "_").replace("/", "-")
    return f"{case.op}/{backend}-{kind}-{case.tier or 'case'}-{case.case_id()}"


def accumulation_length(op: opdefs.OpDef, case: Case) -> float | None:
    """K of the op's ``tolerance.accumulation`` expression on this case (None if the op has none or it
    cannot be evaluated: the budget then stays the class default, never a guess)."""
    source = (op.raw.get("tolerance") or {}).get("accumulation")
    if not source:
        return None
    env = {**op.param_defaults(), **check.environment(op, case)}
    try:
        k = float(expr.parse(str(source)).evaluate(env))
    except (expr.ExprError, expr.EvalError, TypeError, ValueError, KeyError):
        return None
    return k if k > 0 else None


def family(op: opdefs.OpDef) -> str:
    """The op's family for the reports' row groups: the spec's ``family:`` when it has one, else the name table's."""
    return str(op.raw.get("family") or family_of(op.name))


def replay_command(case_path: str | None, backend_name: str, options: str = "") -> str:
    if not case_path:
        return ""
    return f"python -m cases replay {case_path} --backend {backend_name}{' ' + options if options else ''}"


def execute(case: Case, adapter: Adapter, backend_name: str, case_dir: Path | None = None,
            run_id: str = "", generate_seconds: float = 0.0, test_id: str = "",
            replay_options: str = "") -> Record:  # fmt: skip
    op = opdefs.load(case.op)
    timings: dict[str, float] = {"generate": round(generate_seconds, 6)}
    exp: list[np.ndarray] | None = None
    ref_error = ""
    if not case.negative and reference.has(case.op):
        t0 = time.perf_counter()
        try:
            exp = expected(case)
        except Exception as e:  # a reference that cannot compute this case is reported, not fatal
            ref_error = f"reference failed: {type(e).__name__}: {e}"
        timings["reference"] = round(time.perf_counter() - t0, 6)
    t0 = time.perf_counter()
    outcome = adapter.run(case)
    timings["backend"] = round(outcome.seconds or (time.perf_counter() - t0), 6)
    metrics: dict[str, Any] = {}
    message = outcome.message
    if case.negative:
        # the good outcome for a case that breaks the spec is a clean refusal
        verdict = _NOT_RUN.get(outcome.status, "FAIL")
        if verdict == "FAIL":
            message = f"accepted a case that breaks {case.broken}: {message}".strip()
    elif outcome.status != OK:
        verdict = _NOT_RUN[outcome.status]
    elif exp is None:
        verdict = "UNCHECKED"
        message = ref_error or f"no reference for {case.op} yet: ran, not compared"
    else:
        t0 = time.perf_counter()
        j = judge(case, exp, outcome.outputs, op.raw.get("tolerance"), accumulation_length(op, case))
        timings["compare"] = round(time.perf_counter() - t0, 6)
        verdict = "PASS" if j.passed else "FAIL"
        metrics = j.metrics
        message = j.message
        if j.passed and j.checked == 0 and metrics.get("unconstrained"):
            verdict = "UNCHECKED"
            message = "not checkable element by element: the spec leaves every value to the backend (random or noise)"
        elif j.passed and j.checked == 0 and metrics.get("not_checkable"):
            verdict = "UNCHECKED"
            message = ("not checkable: every expected value is NaN or infinite, and the MasterOpDef does not say what "
                       f"a {', '.join(sorted({t.dtype for t in case.outputs}))} output holds then")  # fmt: skip
    info = adapter.info() if hasattr(adapter, "info") else {}
    rec = Record(
        op=case.op, config=case.config, backend=backend_name, verdict=verdict,
        kind="negative" if case.negative else "positive", broken=case.broken, test_id=test_id,
        backend_info=info, metrics=metrics, timings=timings, message=message[:2000], seed=case.seed,
        dtypes={t.name: t.dtype for t in [*case.inputs, *case.outputs] if t is not None},
        run_id=run_id, extra={"decisions": case.decisions, "details": outcome.details} if outcome.details else {},
        case_id=case.case_id(), tier=case.tier,
    )  # fmt: skip
    rec.extra["family"] = family(op)
    good = verdict == "PASS" or (case.negative and verdict == "REJECTED")
    if not good and case_dir is not None:
        rec.case_path = str(case.save(Path(case_dir) / case_stem(case, backend_name)))
        rec.replay = replay_command(rec.case_path, backend_name, replay_options)
    return rec


# ---------------------------------------------------------------------------------------------
# The main job: python -m suite
# ---------------------------------------------------------------------------------------------
DEFAULT_BACKENDS = ("reference", "qnn-htp", "onnxruntime", "ort-qnn")


def main(argv: list[str] | None = None) -> int:
    """Run the conformance cases on every available default backend and write the reports."""
    import argparse
    import subprocess
    import sys

    import adapters

    ap = argparse.ArgumentParser(prog="python -m suite", description=main.__doc__)
    ap.add_argument("--backends", default=",".join(DEFAULT_BACKENDS))
    ap.add_argument("--examples", type=int, default=5)
    ap.add_argument("--op", default=None, help="regex of ops to run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="reports/out", help="where the matrix (md, html, json) is written")
    ap.add_argument("--runs", default="runs", help="where results files and failing cases go")
    ap.add_argument("--workers", default="2", help="pytest-xdist workers per backend")
    args = ap.parse_args(argv)
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    runs.mkdir(parents=True, exist_ok=True)
    results = []
    t_start = time.time()
    for name in args.backends.split(","):
        try:
            ok, why = adapters.get(name).available()
        except (KeyError, ImportError) as e:
            ok, why = False, str(e)
        if not ok:
            print(f"== {name}: not available here ({why}); skipped")
            continue
        path = runs / f"{name}.jsonl"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--backend", name,
               "--examples", str(args.examples), "--seed", str(args.seed), "--no-shrink",
               "--results", str(path), "--case-dir", str(runs / "cases"), "-n", args.workers]  # fmt: skip
        if args.op:
            cmd += ["--op", args.op]
        print(f"== {name}: {' '.join(cmd[1:])}", flush=True)
        t0 = time.time()
        subprocess.run(cmd, cwd=Path(__file__).resolve().parent)  # failures are results, not a stop
        print(f"== {name}: {time.time() - t0:.0f} s", flush=True)
        results.append(path)
    if not results:
        print("no backend available: nothing to report", file=sys.stderr)
        return 1
    for fmt, ext in (("md", "md"), ("html", "html"), ("json", "json"), ("csv", "csv")):
        subprocess.run([sys.executable, "-m", "reports", "matrix", *map(str, results), "--format", fmt,
                        "-o", str(out / f"matrix.{ext}")], check=True)  # fmt: skip
    subprocess.run([sys.executable, "-m", "reports", "catalogues", *map(str, results), "-o",
                    str(out / "catalogues.md")], check=False)  # fmt: skip
    subprocess.run([sys.executable, "-m", "reports", "summary", *map(str, results)], check=True)
    print(f"reports written to {out}/ (matrix.md, matrix.html, matrix.json, matrix.csv); "
          f"results in {runs}/; wall time {time.time() - t_start:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
