"""``python -m bench --main-job [--against REV]``: the default main job timed for real, per backend, and REV's main
job run right after it on the same machine, each backend's time beside its time then.

Why a benchmark of its own: the fixed case set of ``python -m bench`` says where a case's time goes, but the main
job's time also holds what no fixed set has (every op's cells, refusals, crashes and their restarts, probes, reports),
and a regression there showed only as "the job is slower". Figures carried over from another day are not a claim
about this machine, so ``--against`` runs the older revision here and now: its tree exported from git into the cache,
its own environment installed from its own ``pyproject.toml`` (kept per commit), its own main job command (trees
before ``conformance/`` ran ``python -m suite``). ``baseline.json`` beside this file keeps one such side-by-side
run, so a plain ``--main-job`` prints each backend's ratio to it: a regression shows in the next person's run,
measured or not against the old tree.

What the job's records say about the costs this turn added (fresh workers, second runs, the model tier) is
summed per backend from the results files (``costs``): each a line of the output, so headroom is measured, not
guessed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"
BASELINE = Path(__file__).resolve().parent / "baseline.json"
EXAMPLES = 20
TARGET_SECONDS = 300.0  # the default main job at 20 typical cases per cell, on 2 cores (COMPASS)
_BACKEND_ROW = re.compile(r"^(\S+)\s+(ran|exit \d+)\s+(\d+) s\b")
_WALL = re.compile(r"wall time (\d+) s")


def cache_root() -> Path:
    base = os.environ.get("QNN_CONFORMANCE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "qnn-opdef-conformance")
    return Path(base) / "bench-against"


def main_job_command(tree: Path) -> list[str]:
    """The main job as ``tree`` runs it: ``python -m conformance`` today, ``python -m suite`` before the rooms moved."""
    module = "conformance" if (tree / "conformance" / "main_job.py").is_file() else "suite"
    return ["-m", module, "--examples", str(EXAMPLES)]


def run_main_job(python: str, tree: Path, runs: Path, label: str, env: dict[str, str] | None = None,
                 extra: list[str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Run ``tree``'s main job with ``python`` (and ``extra`` options) into ``runs`` (its full output in
    ``runs/main-job.log``) and return the wall time, the CPU time of every process it waited for, and each backend's
    time as the job's own summary gives them. A line every 30 s says it is alive."""
    import resource

    if runs.exists():
        shutil.rmtree(runs)
    runs.mkdir(parents=True)
    log = runs / "main-job.log"
    cmd = [python, *main_job_command(tree), *(extra or []), "--runs", str(runs), "--out", str(runs / "out")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    next_note = t0 + 30
    with open(log, "w", encoding="utf-8") as f:
        proc = subprocess.Popen(cmd, cwd=tree, stdout=f, stderr=subprocess.STDOUT, env=env)
        while proc.poll() is None:
            time.sleep(0.5)
            if time.perf_counter() >= next_note:
                next_note += 30
                print(f"  {label}: main job running, {time.perf_counter() - t0:.0f} s", flush=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = log.read_text(encoding="utf-8", errors="replace")
    backends: dict[str, float] = {}
    for line in text.splitlines():
        m = _BACKEND_ROW.match(line.strip())
        if m:
            backends[m.group(1)] = float(m.group(3))
    reported = _WALL.search(text)
    return {"label": label, "command": " ".join(cmd), "cwd": str(tree), "exit": proc.returncode,
            "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "reported_wall_seconds": float(reported.group(1)) if reported else None,
            "backends": backends, "log": str(log), "runs": str(runs)}  # fmt: skip


def _sha(rev: str) -> str:
    return subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout.strip()  # fmt: skip


def revision_environment(rev: str) -> tuple[str, Path, str]:
    """REV's tree and a Python that runs it: the tree exported with ``git archive``, its own venv with the tree
    installed from its ``pyproject.toml`` (``[all]``), both kept under the cache per commit and made once. Why not
    this checkout's venv with REV's tree first on the path: the installed package's entry points (the pytest plugin
    by its module name) would load today's modules beside REV's. Returns (python, tree, commit)."""
    import io

    sha = _sha(rev)
    root = cache_root() / sha
    tree, venv, done = root / "tree", root / "venv", root / "installed"
    python = str(venv / "bin" / "python")
    if done.is_file() and Path(python).exists():
        return python, tree, sha
    if root.exists():
        shutil.rmtree(root)
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", sha], cwd=REPO, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    print(f"  {rev}: installing its environment into {venv} (once per commit) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    with tempfile.TemporaryDirectory(prefix="bench-against-build-") as build:
        # installed from a copy: a build must not leave build/ and *.egg-info in the tree the job runs from
        shutil.copytree(tree, Path(build) / "src")
        pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, f"{Path(build) / 'src'}[all]"], check=True)
    done.write_text(sha + "\n")
    return python, tree, sha


ADDED = ("worker_start", "fresh_total", "fresh_start", "confirm", "sample", "second_run")


def costs(results: list[Path]) -> dict[str, dict[str, Any]]:
    """Per backend, from its records: cases and seconds per tier (generation, reference, backend, comparison), and
    the seconds spent on fresh workers (``conformance.fresh``): worker processes started for a request (each op's
    first, after a crash: ``timings.worker_start``), and the whole of each case's runs in a fresh worker
    (``timings.fresh_total``: its start, ``fresh_start``, and its runs: ``confirm`` or ``sample``, then
    ``second_run``, each also summed on its own)."""
    out: dict[str, dict[str, Any]] = {}
    for path in results:
        per: dict[str, Any] = {"tiers": {}, "added": {}}
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            timings = r.get("timings")
            if not isinstance(timings, dict) or r.get("kind") not in ("positive", "probe", "negative"):
                continue
            tier = per["tiers"].setdefault(r.get("tier") or r.get("kind"), {"cases": 0})
            tier["cases"] += 1
            for key, value in timings.items():
                if isinstance(value, int | float):
                    bucket = per["added"] if key in ADDED else tier
                    bucket[key] = bucket.get(key, 0.0) + float(value)
        for tier in per["tiers"].values():
            for key, value in tier.items():
                if isinstance(value, float):
                    tier[key] = round(value, 1)
        per["added"] = {k: round(v, 1) for k, v in per["added"].items()}
        out[path.stem] = per
    return out


def baseline() -> dict[str, Any] | None:
    try:
        doc = json.loads(BASELINE.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return doc if isinstance(doc.get("backends"), dict) else None


def ratios(now: dict[str, float], then: dict[str, float]) -> dict[str, float]:
    return {name: round(now[name] / then[name], 2) for name in now if then.get(name)}


def table(now: dict[str, Any], then: dict[str, Any] | None, then_label: str) -> str:
    from tabulate import tabulate

    rows = []
    names = list(now["backends"]) + [n for n in (then or {}).get("backends", {}) if n not in now["backends"]]
    for name in names:
        a = now["backends"].get(name)
        b = (then or {}).get("backends", {}).get(name)
        rows.append([name, "" if a is None else f"{a:.0f} s", "" if b is None else f"{b:.0f} s",
                     f"x{a / b:.2f}" if a and b else ""])  # fmt: skip
    a, b = now.get("wall_seconds"), (then or {}).get("wall_seconds")
    rows.append(["wall", f"{a:.0f} s" if a else "", f"{b:.0f} s" if b else "", f"x{a / b:.2f}" if a and b else ""])
    return tabulate(rows, headers=["backend", "this tree", then_label, "ratio"])


def headline(now: dict[str, Any], then: dict[str, Any] | None, then_label: str) -> str:
    wall = now["wall_seconds"]
    verdict = "within" if wall <= TARGET_SECONDS else "over"
    parts = [f"{name} {s:.0f} s" + (f" x{s / then['backends'][name]:.2f}" if then and then["backends"].get(name)
                                    else "") for name, s in now["backends"].items()]  # fmt: skip
    against = f" against {then_label}" if then else ""
    return (f"main job {EXAMPLES}/cell: {wall:.0f} s wall ({verdict} the {TARGET_SECONDS:.0f} s target); "
            f"per backend{against}: {', '.join(parts)}")


def print_costs(doc: dict[str, dict[str, Any]]) -> None:
    for name, per in doc.items():
        tiers = "; ".join(f"{tier} {t['cases']} cases, gen {t.get('generate', 0):.0f} s, ref "
                          f"{t.get('reference', 0):.0f} s, backend {t.get('backend', 0):.0f} s"
                          for tier, t in sorted(per["tiers"].items()))  # fmt: skip
        added = ", ".join(f"{k} {v:.1f} s" for k, v in per["added"].items()) or "none recorded"
        print(f"  {name}: {tiers}; added costs: {added}")


def main(against_rev: str | None, record_baseline: bool) -> int:
    """The main job here, then (with ``against_rev``) REV's main job here: both tables and the headline."""
    print("this tree's main job ...", flush=True)
    now = run_main_job(sys.executable, REPO, REPO / "runs" / "bench-main", "this tree")
    doc: dict[str, Any] = {"now": now, "target_seconds": TARGET_SECONDS}
    results = [Path(now["runs"]) / f"{name}.jsonl" for name in now["backends"]]
    doc["costs"] = costs([p for p in results if p.is_file()])
    then, then_label = None, ""
    if against_rev:
        try:
            python, tree, sha = revision_environment(against_rev)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"--against {against_rev}: its environment could not be made: {e}", file=sys.stderr)
            return 1
        print(f"{against_rev}'s main job, same machine, right after ...", flush=True)
        then = run_main_job(python, tree, cache_root() / sha / "runs", against_rev)
        then.update(rev=against_rev, commit=sha, measured=time.strftime("%Y-%m-%d"))
        then_label = f"{against_rev} (now)"
        doc["against"] = then
        if record_baseline:
            BASELINE.write_text(json.dumps({k: then[k] for k in ("rev", "commit", "measured", "wall_seconds",
                                                                 "backends")}, indent=1) + "\n")  # fmt: skip
            print(f"baseline recorded: {BASELINE}")
    else:
        then = baseline()
        then_label = f"{then['rev']} (recorded {then.get('measured', '?')})" if then else ""
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / "main-job.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(table(now, then, then_label or "baseline"))
    print("what the job's records say it spent (seconds summed over its workers):")
    print_costs(doc["costs"])
    print(f"details: {out}; logs: {now['log']}" + (f", {then['log']}" if against_rev and then else ""))
    print(headline(now, then, then_label))
    return 0 if now["exit"] in (0, 1) else now["exit"]
