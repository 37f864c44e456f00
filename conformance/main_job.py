"""The main job (``python -m conformance``): the conformance module once per backend, each in a pytest process of
its own, their progress live (``conformance/progress.py`` reads their events and records), then the reports of all
of them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import opdefs
from conformance.progress import BackendRun

DEFAULT_BACKENDS = ("qnn-htp", "onnxruntime", "ort-qnn", "reference")
SWEEP_TIER = "deployed"  # --sweep's tiers unless --tier says: typical and model (``_main_options``)
EXIT_OK, EXIT_NOT_ALL_RAN, EXIT_USAGE = 0, 1, 4
SUMMARY_WIDTH = 100
QUIET_SECONDS = 30.0  # without a terminal (CI, a pipe) the live lines become one status line this often


class _UsageError(Exception):
    """A bad option of the main job: one line and exit 4, before any case runs."""


def main(argv: list[str] | None = None) -> int:
    """Run the conformance cases on each backend, one live progress line per backend, the full pytest
    output in runs/<backend>.log, then the reports (matrix md/html/json/csv, chart) and a summary.

    Exit status: 0 when every requested backend ran to the end (failing cases are results, not a
    failed job), 1 when one did not (unavailable by default, or its pytest ended abnormally), 4 for a
    usage error (unknown or unavailable requested backend, --examples < 1, a bad --op), before any case runs."""
    import sys
    import textwrap

    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # a CI log or a pipe: whole lines, not rich's 80 columns
        console = Console(highlight=False, soft_wrap=True, width=SUMMARY_WIDTH * 2)
    try:
        args, plan = _main_options(argv)
    except _UsageError as exc:
        print(f"python -m conformance: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    runs.mkdir(parents=True, exist_ok=True)
    for line in _set_aside_stale(runs, out, plan.backends):
        console.print(line, markup=False)
    t_start = time.time()
    for name, why in plan.unavailable.items():
        console.print(f"{name}: not available here ({why}); skipped")
    runs_done = _run_backends(args, plan.backends, runs, console)
    results = [r.results for r in runs_done if r.results.exists() and r.results.stat().st_size]
    closing: list[str] = []
    reports_line, m = (_write_reports(results, out, console, closing) if results
                       else ("no results: no reports written", None))  # fmt: skip
    print(_closing_summary(runs_done, plan, m, time.time() - t_start))
    for line in [reports_line, *closing]:  # what the reader must not miss comes last
        print("\n".join(textwrap.wrap(line, SUMMARY_WIDTH, break_on_hyphens=False, subsequent_indent="  ")))
    everything_ran = not plan.unavailable and all(r.ran for r in runs_done)
    return EXIT_OK if everything_ran else EXIT_NOT_ALL_RAN


class _Plan:
    def __init__(self, backends: list[str], unavailable: dict[str, str], ops: list[str]) -> None:
        self.backends, self.unavailable, self.ops = backends, unavailable, ops


def _main_options(argv: list[str] | None) -> tuple[Any, _Plan]:
    import argparse
    import re

    import adapters
    from conformance import options as option_table

    ap = argparse.ArgumentParser(
        prog="python -m conformance", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="The main job: the conformance cases on every default backend available here (each cell drawn "
                    "once for all of them), one live progress line per backend, the full pytest output in "
                    "RUNS/<backend>.log, then the support matrix (md, html, json, csv), a chart and a summary.")
    ap.add_argument("--backends", default=None,
                    help=f"comma-separated; None: {','.join(DEFAULT_BACKENDS)} (those available here)")
    # passed on to each backend's conformance run, declared as it declares them (conformance/options.py)
    option_table.add_shared(ap, ("--examples", "--edge-examples", "--op", "--seed", "--specs", "--tier"),
                       defaults={"--examples": 5, "--seed": 0, "--tier": None},
                       helps={"--seed": "hypothesis seed: the same seed draws the same cases",
                              "--tier": "which tiers each backend runs: typical, edge, model, both (typical and "
                                        "edge), deployed (typical and model) or all; None: all, and deployed under "
                                        "--sweep"})  # fmt: skip
    ap.add_argument("--out", default="reports/out", help="where the matrix (md, html, json, csv) and chart go")
    ap.add_argument("--runs", default="runs", help="where results files, logs and failing cases go")
    ap.add_argument("--workers", default="2", help="pytest-xdist workers per backend")
    ap.add_argument("-q", "--quiet", action="store_true", help="no line per failing cell, only the progress")
    ap.add_argument("--qnn-sdks", default=None, metavar="RELEASES",
                    help="qnn-htp on each QNN release, one column group each: QNN versions (2.47,2.51) or wheels "
                         "(ort-qnn==2.3.0); the wheels are fetched with pip into the cache on first use")
    ap.add_argument("--sweep", action="store_true",
                    help="every HTP generation the simulator accepts (v68 to v81) on the installed QNN release, every "
                         "known release on the default target, and the QNN CPU backend: one column group each, "
                         "every cell drawn once (the releases' wheels are fetched with pip on first use)")
    ap.add_argument("--targets", default=None, metavar="TARGETS",
                    help="qnn-htp on each simulated HTP target, one column group each: default, v68, v69, v73 "
                         "(SoC 43), v75 (57), v79 (69), v81 (87), socN, archN")  # fmt: skip
    args = ap.parse_args(argv)
    problems = [option_table.count_problem(flag, getattr(args, option_table.BY_FLAG[flag].dest))
                for flag in ("--examples", "--edge-examples")]  # fmt: skip
    problems += [option_table.specs_problem(d) for d in args.specs]
    if any(problems):
        raise _UsageError(next(p for p in problems if p))
    option_table.use_specs(args.specs)  # the same channel the pytest plugin uses: opdefs searches these first
    specs = sorted(opdefs.load_all())
    ops = specs
    if args.op:
        problem = option_table.op_problem(args.op, specs)
        if problem:
            raise _UsageError(problem)
        ops = [op for op in specs if re.search(args.op, op)]
    explicit = args.backends is not None
    requested = [b.strip() for b in (args.backends or ",".join(DEFAULT_BACKENDS)).split(",") if b.strip()]
    if not requested:
        raise _UsageError("--backends names no backend")
    if args.sweep:
        if args.qnn_sdks or args.targets or args.backends:
            raise _UsageError("--sweep names its own backends: leave out --backends, --targets and --qnn-sdks")
        requested = sweep_backends()
        if args.tier is None:  # the generations' question is where deployed shapes start to work: the edge tier's
            args.tier = SWEEP_TIER  # corner cases at twelve backends were a fifth of the sweep's time (s17's records)
    else:
        requested = _with_variants(requested, args.qnn_sdks, args.targets)
    explicit = explicit or bool(args.qnn_sdks or args.targets or args.sweep)
    backends, unavailable = [], {}
    for name in requested:
        try:
            ok, why = adapters.get(name).available()
        except KeyError:
            raise _UsageError(f"unknown backend {name!r}; choose from {', '.join(adapters.names())}") from None
        except ImportError as exc:
            ok, why = False, str(exc)
        if ok:
            backends.append(name)
        elif explicit:
            raise _UsageError(f"backend {name!r} is not available here: {why}")
        else:
            unavailable[name] = why
    return args, _Plan(backends, unavailable, ops)


VARIED_BACKEND = "qnn-htp"  # the backend --qnn-sdks and --targets make columns of


def sweep_backends() -> list[str]:
    """``--sweep``: qnn-htp at each HTP generation on the installed release (the first, v68, is the simulator's default
    target and stays plain qnn-htp), qnn-htp of each other known release on the default target, and qnn-cpu. Not the
    product of the two (thirty runs): a generation's change and a release's change are each seen against the plain
    run, which is what a cell marked as differing is compared with."""
    from adapters.qnn import releases, targets

    installed = releases.installed_version()
    try:
        here = releases.by_wheel(installed).label if installed else ""
    except releases.ReleaseNotAvailable:  # a wheel the suite has not measured: every known release is another
        here = ""
    gens = [f"{VARIED_BACKEND}@{g}" for g in targets.GENERATIONS if g != "v68"]
    others = [f"{VARIED_BACKEND}@{r.label}" for r in releases.KNOWN if r.label != here]
    return [VARIED_BACKEND, *gens, *others, "qnn-cpu"]


def _with_variants(requested: list[str], sdks: str | None, targets_text: str | None) -> list[str]:
    """qnn-htp becomes one backend per release x target (``qnn-htp@2.47``, ``qnn-htp@v73``,
    ``qnn-htp@2.47+v73``): each its own results file and column group, all on the same drawn cells."""
    if not sdks and not targets_text:
        return requested
    from adapters.qnn import releases, targets

    releases_wanted: list[str] = []
    for text in (sdks or "").split(","):
        if text.strip():
            try:
                releases_wanted.append(releases.parse(text).label)
            except releases.ReleaseNotAvailable as exc:
                raise _UsageError(str(exc).replace("--qnn-sdk", "--qnn-sdks")) from None
    try:
        targets_wanted = targets.parse_targets(targets_text) if targets_text else []
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    variants = [f"{VARIED_BACKEND}@{'+'.join(x for x in (r, t) if x)}"
                for r in releases_wanted or [""] for t in targets_wanted or [""]]  # fmt: skip
    if VARIED_BACKEND not in requested:
        return requested + variants
    at = requested.index(VARIED_BACKEND)
    return requested[:at] + variants + requested[at + 1:]


def _pytest_command(args: Any, name: str, run: BackendRun, runs: Path) -> list[str]:
    """``key=value`` forms only: a path given as a separate word is taken by pytest for a test path
    (and may move its rootdir) before the conformance options are known."""
    import sys

    opts = ["-p", "no:randomly", "-o", "console_output_style=classic", f"--backend={name}",
            f"--examples={args.examples}", f"--seed={args.seed}", "--no-shrink",
            f"--results={run.results.resolve()}", f"--case-dir={(runs / 'cases').resolve()}",
            f"--case-cache={(runs / 'case-cache').resolve()}"]  # fmt: skip  (each cell drawn once for all backends)
    if args.edge_examples:
        opts.append(f"--edge-examples={args.edge_examples}")
    if args.tier:
        opts.append(f"--tier={args.tier}")
    findings = Path(__file__).resolve().parents[1] / "findings" / f"{name.partition('@')[0]}.yaml"  # qnn-htp@2.47 too
    if findings.exists():  # recorded deviations show as XFAIL with their reason, fixed ones as XPASS
        opts.append(f"--expectations={findings}")
    if args.op:
        opts.append(f"--op={args.op}")
    for d in args.specs:
        opts.append(f"--specs={Path(d).resolve()}")
    if args.workers not in ("0", "", None):
        opts += ["-n", str(args.workers)]
    code = ("import sys; from conformance import progress; "
            "raise SystemExit(progress.pytest_with_events(sys.argv[1], sys.argv[2:]))")
    return [sys.executable, "-c", code, str(run.events.resolve()), *opts]


def _run_backends(args: Any, backends: list[str], runs: Path, console: Any) -> list[BackendRun]:
    import subprocess

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from conformance.progress import PYTEST_CODES, TALLY_LEGEND, BackendRun

    repo = Path(__file__).resolve().parents[1]
    live = console.is_terminal
    progress = Progress(
        TextColumn("{task.fields[backend]:<9.9}"), TextColumn("{task.fields[op]:<16.16}", style="cyan"),
        BarColumn(bar_width=10), MofNCompleteColumn(), TextColumn("{task.fields[cases]}"),
        TextColumn("{task.fields[tally]}"), TimeElapsedColumn(), TextColumn("<"), TimeRemainingColumn(),
        console=console, refresh_per_second=4, disable=not live,
    )  # fmt: skip
    console.print(TALLY_LEGEND, markup=False)
    done: list[BackendRun] = []
    tasks = {name: progress.add_task("", total=None, start=False, backend=name, op="waiting", cases="", tally="")
             for name in backends}  # fmt: skip
    with progress:
        for name in backends:
            run = BackendRun(name, runs, args.examples, args.edge_examples)
            task = tasks[name]
            progress.start_task(task)
            t0 = time.time()
            last_plain = t0
            with open(run.log, "w", encoding="utf-8") as log:
                proc = subprocess.Popen(_pytest_command(args, name, run, runs), cwd=repo, stdout=log,
                                        stderr=subprocess.STDOUT, env=_child_env())  # fmt: skip
                while True:
                    finished = proc.poll() is not None
                    for line in run.poll():
                        if not args.quiet:
                            progress.console.print(line, overflow="ellipsis", no_wrap=True, markup=False)
                    progress.update(task, total=run.total_tests, completed=run.tests_done, op=run.current,
                                    cases=run.cases_text(), tally=run.tally_text())  # fmt: skip
                    if not live and time.time() - last_plain > QUIET_SECONDS:
                        last_plain = time.time()
                        console.print(run.status_line(last_plain - t0), markup=False)
                    if finished:
                        break
                    time.sleep(0.25)
            run.rc = proc.returncode
            run.seconds = time.time() - t0
            state = "done" if run.ran else f"pytest exit {run.rc}"
            progress.update(task, op=state, completed=run.tests_done, total=run.total_tests or run.tests_done or 1)
            progress.stop_task(task)
            if not live:
                console.print(run.status_line(run.seconds, state), markup=False)
            if not run.ran:
                why = PYTEST_CODES.get(run.rc or 0, "ended abnormally")
                progress.console.print(f"{name}: pytest {why} (exit {run.rc}): {_last_line(run.log)} "
                                       f"(full output: {run.log})", markup=False)  # fmt: skip
            done.append(run)
    return done


def _child_env() -> dict[str, str]:
    """This environment without pytest-xdist's worker variables: started from inside a test worker, the
    backend's pytest would otherwise take itself for a worker and write part files nobody merges."""
    import os

    from adapters import lifetime

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    env[lifetime.PARENT_ENV] = str(os.getpid())  # the backend's pytest ends with this job
    env.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads spin: conformance.plugin._one_blas_thread
    return env


def _last_line(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1].strip()[:160] if lines else ""


# written only when their inputs are there: an old one would stay
CONDITIONAL_REPORTS = ("agree.md", "catalogues.md", "sweep.md")


def _set_aside_stale(runs: Path, out: Path, backends: list[str]) -> list[str]:
    """An earlier main job's outputs this one will not rewrite, moved to ``runs/earlier/`` (nothing is lost): a
    results file of a backend not run now would join `reports matrix runs/*.jsonl` as if it were this run's, and an
    old agree.md would sit beside a new matrix. Returns one line per file moved."""
    earlier = runs / "earlier"
    moved = []
    stale = sorted(p for p in runs.glob("*.jsonl") if p.stem not in backends)  # old events files (.events.jsonl) too
    stale += [out / name for name in CONDITIONAL_REPORTS if (out / name).exists()]
    for p in stale:
        earlier.mkdir(parents=True, exist_ok=True)
        target = earlier / (p.name if p.parent == runs else f"{out.name}-{p.name}")
        p.replace(target)
        moved.append(f"{p} is an earlier run's: moved to {target}")
    return moved


def _write_reports(results: list[Path], out: Path, console: Any, closing: list[str] | None = None) -> tuple[str, Any]:
    """Matrix in every format, the chart and the catalogue coverage, straight from the results files; the line
    naming them, and the matrix (built once: the summary and the capability envelope read it too). ``closing``
    gets the lines the job ends with (the two routes' unexplained typical disagreements)."""
    from reports import catalogues, chart, formats, matrix, record
    from reports import grid as family_grid

    by_file = {p: list(record.read([p])) for p in results}  # read once: the matrix, agree and catalogues share them
    everything = [r for recs in by_file.values() for r in recs]
    m = matrix.build(everything)
    written = []
    for fmt, ext in (("md", "md"), ("html", "html"), ("json", "json"), ("csv", "csv")):
        (out / f"matrix.{ext}").write_text(formats.render(m, fmt), encoding="utf-8")
        written.append(f"matrix.{ext}")
    g = family_grid.grid(m)
    for ext in ("png", "svg"):
        chart.write(g, out / f"chart.{ext}")
        written.append(f"chart.{ext}")
    written += _comparisons(by_file, out, console)
    routes = [p for name in (_installed_htp(results), "ort-qnn") for p in results if p.name == f"{name}.jsonl"]
    if len(routes) == 2:  # two routes to one libQnnHtp.so, compared case by case
        from reports import agree

        explain = agree.load_explanations(agree.DEFAULT_EXPLANATIONS) if agree.DEFAULT_EXPLANATIONS.is_file() else []
        result = agree.compare(by_file[routes[0]], by_file[routes[1]], explain)
        (out / "agree.md").write_text(agree.to_markdown(result), encoding="utf-8")
        written.append("agree.md")
        console.print(agree.summary_line(result), markup=False)
        unexplained = len(result.unexplained_typical)
        if unexplained and closing is not None:
            closing.append(f"{unexplained} typical disagreement(s) between {routes[0].stem} and ort-qnn that no "
                           "finding or route mechanism explains: see agree.md")  # fmt: skip
    from reports import capabilities

    envelope = capabilities.envelope(everything, m)  # what each backend accepts, as data; and its false claims
    (out / "capabilities.json").write_text(capabilities.to_json(envelope), encoding="utf-8")
    (out / "false-claims.md").write_text(capabilities.false_claims_markdown(envelope), encoding="utf-8")
    written += ["capabilities.json", "false-claims.md"]
    try:
        report = catalogues.coverage(everything, catalogues.DEFAULT_SPECS, catalogues.DEFAULT_SEEDS)
        (out / "catalogues.md").write_text(catalogues.to_markdown(report, False), encoding="utf-8")
        written.append("catalogues.md")
    except (OSError, ValueError) as exc:  # the seed catalogues live beside the repo, not in it
        console.print(f"catalogue coverage not written: {exc}", markup=False)
    return f"reports in {out}/: {', '.join(written)}", m


def _installed_htp(results: list[Path]) -> str:
    """The qnn-htp run that reaches the same libQnnHtp.so as ort-qnn (the installed wheel's, default target):
    plain qnn-htp, or its release's column when --qnn-sdks made columns of releases."""
    names = {p.stem for p in results}
    if VARIED_BACKEND in names:
        return VARIED_BACKEND
    from adapters.qnn import releases

    try:
        label = releases.parse(releases.INSTALLED).label
    except releases.ReleaseNotAvailable:
        return VARIED_BACKEND
    for name in (f"{VARIED_BACKEND}@{label}", f"{VARIED_BACKEND}@{label}+default"):
        if name in names:
            return name
    return VARIED_BACKEND


def _comparisons(by_file: dict[Path, list[Any]], out: Path, console: Any) -> list[str]:
    """Beside the matrix: where the QNN CPU backend and the HTP disagree on the same cases
    (``agree-cpu-htp.md``), and what changed between the releases and targets the job ran (``diff-*.md``:
    each qnn-htp variant against the first one, per op and datatype family, each with a case to replay)."""
    from reports import agree, diff

    written = []
    names = {p.stem: p for p in by_file}
    from adapters.qnn import releases

    same_release = f"{VARIED_BACKEND}@{releases.newest_with('cpu').label}"  # the CPU's own release, where it ran
    htp = next((n for n in (same_release, f"{same_release}+default", VARIED_BACKEND) if n in names), None) or next(
        (n for n in names if n.startswith(VARIED_BACKEND + "@")), None)
    if "qnn-cpu" in names and htp:
        result = agree.compare(by_file[names["qnn-cpu"]], by_file[names[htp]], [])
        (out / "agree-cpu-htp.md").write_text(agree.to_markdown(result), encoding="utf-8")
        written.append("agree-cpu-htp.md")
        console.print(agree.summary_line(result), markup=False)
    variants = [n for n in names if n.startswith(VARIED_BACKEND + "@")]
    for other in variants[1:]:
        first = variants[0]
        result = diff.diff_variants(by_file[names[first]], by_file[names[other]])
        target = out / f"diff-{first.partition('@')[2]}-{other.partition('@')[2]}.md"
        target.write_text(diff.variants_to_markdown(result), encoding="utf-8")
        written.append(target.name)
        console.print(diff.variants_summary_line(result), markup=False)
    if VARIED_BACKEND in names and variants:  # a sweep: each generation and release against the plain run
        everything = [r for p in (names[VARIED_BACKEND], *(names[v] for v in variants)) for r in by_file[p]]
        (out / "sweep.md").write_text(diff.sweep_to_markdown(everything, VARIED_BACKEND), encoding="utf-8")
        written.append("sweep.md")
    return written


def _closing_summary(runs_done: list[BackendRun], plan: _Plan, m: Any, seconds: float) -> str:
    """At most SUMMARY_WIDTH columns: one row per backend, build details below the table. ``m``: the run's matrix
    (None when nothing was recorded)."""
    from reports import render_text

    rows = []
    for r in runs_done:
        state = "ran" if r.ran else f"exit {r.rc}"
        rows.append([r.name, state, f"{r.seconds:.0f} s", str(r.log)])
    for name, why in plan.unavailable.items():
        rows.append([name, "not available", "", why[:50]])
    out = ["", render_text.aligned(["backend", "run", "time", "log / reason"], rows)]
    if m is not None:
        out += ["", render_text.to_summary(m).rstrip("\n")]
    out.append(f"wall time {seconds:.0f} s; {len(plan.ops)} op(s) selected")
    return "\n".join(line[:SUMMARY_WIDTH] for block in out for line in block.split("\n"))


if __name__ == "__main__":
    raise SystemExit(main())
