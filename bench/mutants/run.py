"""``python -m bench mutants``: how many planted bugs the suite finds, and where the rest go.

Each mutant (``bench.mutants.catalogue``) runs as a conformance run of its own, ``pytest --backend
bench.mutants:<base>.<mutant>`` on its ops, beside one run of the unmutated base on the same ops; the drawn-cell
cache makes both draw the very same cases. The records of both are then judged with and without the base's
findings file (``findings/<base>.yaml``), and each mutant is

- KILLED where a case its bug touched turns red (FAIL, ERROR, CRASH, TIMEOUT) and was not red on the base:
  in the typical tier (the headline), or in either tier;
- SWALLOWED where it is killed without the findings and not with them: every failure it caused is XFAIL
  under some finding, which is named. A mutant that ``reproduces`` that finding's own bug is expected to be;
- MISSED otherwise: never drawn (no case met its condition), not run by the base (every case it touched was
  one the base refuses or fails anyway), or within the budget (the cases ran and still passed).

Writes ``bench/out/mutants/`` (the runs' results and logs, ``mutants.json``); the last line is the headline::

    mutants: killed K / N (typical), K2 / N (typical+edge); swallowed S; missed M (never drawn D, within budget B, ...)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reports.record import BAD

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "out" / "mutants"
RAN = ("PASS", "FAIL", "XFAIL", "XPASS", "UNCHECKED")  # a base verdict a bug's change could show against
KILLED, SWALLOWED, MISSED, RUN_FAILED = "KILLED", "SWALLOWED", "MISSED", "RUN FAILED"
PYTEST_RAN = (0, 1)  # every test passed / some failed: the run went to its end either way
NEVER_DRAWN, NOT_RUN, WITHIN_BUDGET = "never drawn", "not run by the base", "within budget"
REFUSED = "refused as planted"  # the base ran the cases, and refuses the form the bug gave them: no number to judge
UNJUDGED = ("REJECTED", "SKIP")
TARGET_KILL_RATE = 0.95  # of the mutants outside the budget that the base runs (issue 26)


@dataclass
class Verdicts:
    """One side's records of one mutant's ops, by case: (op, config, tier, case_id) -> record."""

    records: dict[tuple[str, str, str, str], Any] = field(default_factory=dict)


@dataclass
class Judged:
    name: str
    kind: str
    ops: list[str]
    what: str
    status: str
    why: str = ""
    touched: dict[str, int] = field(default_factory=dict)  # tier -> cases the bug changed
    killed_typical: bool = False
    killed_any: bool = False
    killed_without_findings: bool = False
    red_cells: list[str] = field(default_factory=list)  # "op config tier: verdicts" of the cells it turned red
    swallowed_by: dict[str, int] = field(default_factory=dict)  # finding id -> cases
    reproduces: str = ""
    example: str = ""  # a replay command of one case that shows it
    ground: str = ""  # the precision family's: planted on cells an accuracy finding covers, or on clean ones


def _ops_regex(ops: list[str]) -> str:
    return "^(" + "|".join(re.escape(o) for o in sorted(ops)) + ")$"


def pytest_command(backend: str, ops: list[str], args: argparse.Namespace, results: Path, cache: Path,
                   findings: Path | None, workers: int = 0) -> list[str]:  # fmt: skip
    """The conformance run of one side: only the ops' positive cells (negative cases say nothing of a bug in the
    numbers), the same seed and counts and the same drawn-cell cache, so every side runs the same cases. With the
    findings applied as a user runs them: each record keeps the backend's own verdict beside the applied one, and
    a failing case's outputs are checked against the models of the findings about its cell."""
    cmd = [sys.executable, "-m", "pytest", "--backend", backend, "--op", _ops_regex(ops),
           "--examples", str(args.examples), "--edge-examples", str(args.edge_examples), "--seed", str(args.seed),
           "--no-shrink", "--case-cache", str(cache), "--results", str(results),
           "--case-dir", str(results.parent / "cases"), "-k", "test_op", "-q", "-p", "no:cacheprovider"]  # fmt: skip
    if findings is not None:
        cmd += ["--expectations", str(findings)]
    if workers > 1:
        cmd += ["-n", str(workers)]
    return cmd


def run_side(cmd: list[str], log: Path) -> int:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as fh:
        return subprocess.run(cmd, cwd=REPO, stdout=fh, stderr=subprocess.STDOUT, check=False).returncode


def read_side(path: Path) -> tuple[Verdicts, Verdicts]:
    """A run's positive case records as the run judged them (the findings applied) and as the backend gave them
    (the verdict before any finding, which the record keeps)."""
    from dataclasses import replace

    from reports.record import POSITIVE, RAW_VERDICT_KEY, read

    applied, raw = Verdicts(), Verdicts()
    if not path.exists():
        return applied, raw
    for r in read([path], warn=lambda m: None):
        if r.kind != POSITIVE:
            continue
        key = (r.op, r.config, r.tier or "typical", r.case_id)
        applied.records[key] = r
        raw.records[key] = replace(r, verdict=r.extra.get(RAW_VERDICT_KEY, r.verdict), expectation=None)
    return applied, raw


def _mutated(r: Any) -> bool:
    details = r.extra.get("details") if isinstance(r.extra, dict) else None
    return isinstance(details, dict) and bool(details.get("mutant"))


def judge(mutant: Any, base: Verdicts, base_raw: Verdicts, side: Verdicts, side_raw: Verdicts) -> Judged:
    """What the bug did to the suite's verdicts: compare each case it touched with the same case on the base."""
    j = Judged(mutant.name, mutant.kind, list(mutant.ops), mutant.what, MISSED, reproduces=mutant.reproduces,
               ground=getattr(mutant, "ground", ""))  # fmt: skip
    touched = [key for key, r in side_raw.records.items() if _mutated(r)]
    j.touched = dict(Counter(key[2] for key in touched))
    if not touched:
        j.why = NEVER_DRAWN
        return j
    swallowed: Counter[str] = Counter()
    red_cells: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    ran = False
    refused = 0  # cases the base judged that, planted, the base refused
    for key in touched:
        b, b_raw = base.records.get(key), base_raw.records.get(key)
        m, m_raw = side.records.get(key), side_raw.records.get(key)
        if b is None or m is None or b_raw is None or m_raw is None:
            continue  # the base did not record that case (a run cut short): it says nothing
        ran = ran or b_raw.verdict in RAN
        refused += b_raw.verdict in RAN and m_raw.verdict in UNJUDGED
        if m_raw.verdict in BAD and b_raw.verdict not in BAD:
            j.killed_without_findings = True
        if m.verdict in BAD and b.verdict not in BAD:
            j.killed_any = True
            j.killed_typical = j.killed_typical or key[2] == "typical"
            red_cells[key[:3]][m.verdict] += 1
            j.example = j.example or m.replay
        elif m_raw.verdict in BAD and b_raw.verdict not in BAD and m.verdict == "XFAIL":
            swallowed[_finding_id(m.expectation)] += 1
    j.red_cells = [f"{op} {cfg} {tier}: " + ", ".join(f"{v} {n}" for v, n in sorted(c.items()))
                   for (op, cfg, tier), c in sorted(red_cells.items())]  # fmt: skip
    j.swallowed_by = dict(swallowed)
    if j.killed_any:
        j.status = KILLED
    elif j.killed_without_findings:
        j.status = SWALLOWED
    elif not ran:
        j.why = NOT_RUN
    else:
        j.why = REFUSED if refused and refused == sum(1 for k in touched if base_raw.records.get(k) is not None
                                                        and base_raw.records[k].verdict in RAN) else WITHIN_BUDGET
    return j


def _finding_id(reason: str | None) -> str:
    m = re.match(r"\[([^\]]+)\]", reason or "")
    return m.group(1) if m else (reason or "?")[:60]


def headline(judged: list[Judged]) -> str:
    n = len(judged)
    killed = sum(j.killed_typical for j in judged)
    killed_any = sum(j.status == KILLED for j in judged)
    swallowed = [j for j in judged if j.status == SWALLOWED]
    expected = sum(1 for j in swallowed if j.reproduces and set(j.swallowed_by) == {j.reproduces})
    missed = Counter(j.why for j in judged if j.status == MISSED)
    outside = n - missed[WITHIN_BUDGET] - missed[NEVER_DRAWN] - missed[NOT_RUN] - missed[REFUSED]
    rate = f"{killed / outside:.0%}" if outside else "n/a"
    exp = f" ({expected} by the finding they reproduce)" if expected else ""
    failed = sum(j.status == RUN_FAILED for j in judged)
    if failed:
        exp += f"; runs failed {failed}"
    grounds = "; ".join(f"precision on {g}: killed {sum(j.killed_typical for j in js)} / {len(js)}"
                        for g, js in _by_ground(judged).items())  # fmt: skip
    return (f"mutants: killed {killed} / {n} (typical), {killed_any} / {n} (typical+edge); "
            f"swallowed {len(swallowed)}{exp}; missed {sum(missed.values())} (never drawn {missed[NEVER_DRAWN]}, "
            f"within budget {missed[WITHIN_BUDGET]}, not run by the base {missed[NOT_RUN]}, "
            f"refused as planted {missed[REFUSED]}); typical kill rate {rate} of the {outside} the base runs outside "
            f"the budget (target {TARGET_KILL_RATE:.0%})" + (f"; {grounds}" if grounds else ""))  # fmt: skip


def _by_ground(judged: list[Judged]) -> dict[str, list[Judged]]:
    """The precision family's mutants by where they were planted (issue 40): a band that hides a bug of its own size
    shows as a mutant killed on clean cells and swallowed on finding cells."""
    out: dict[str, list[Judged]] = {}
    for j in judged:
        if j.ground:
            out.setdefault(j.ground, []).append(j)
    return dict(sorted(out.items()))


def describe(j: Judged) -> str:
    if j.status == KILLED:
        where = "typical" if j.killed_typical else "edge only"
        return f"KILLED    {j.name} ({where}): {'; '.join(j.red_cells[:3])}{' ...' if len(j.red_cells) > 3 else ''}"
    if j.status == RUN_FAILED:
        return f"RUN FAILED {j.name}: {j.why}"
    if j.status == SWALLOWED:
        own = " (its own finding)" if j.reproduces and set(j.swallowed_by) == {j.reproduces} else ""
        return f"SWALLOWED {j.name}: XFAIL under {', '.join(f'{k} ({n})' for k, n in j.swallowed_by.items())}{own}"
    return f"MISSED    {j.name}: {j.why} (touched {sum(j.touched.values())} case(s))"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="qnn-htp", help="the backend the bugs are planted in (default qnn-htp)")
    parser.add_argument("--only", default=None, metavar="REGEX", help="only the mutants whose name matches")
    parser.add_argument("--examples", type=int, default=20, help="typical cases per cell (default 20)")
    parser.add_argument("--edge-examples", type=int, default=None, help="edge cases per cell (default a quarter)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--findings", default=None, metavar="FILE",
                        help="findings file for the base (default findings/<base>.yaml where it exists)")
    parser.add_argument("--jobs", type=int, default=2, help="conformance runs at once (default 2)")
    parser.add_argument("--out", default=str(OUT), help=f"where the runs and mutants.json go (default {OUT})")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    args.edge_examples = args.edge_examples or max(1, -(-args.examples // 4))

    from bench.mutants import catalogue, factory

    mutants = [m for m in catalogue.MUTANTS if args.only is None or re.search(args.only, m.name)]
    if args.list:
        for m in mutants:
            print(f"{m.name:<40} {', '.join(m.ops):<24} {m.kind}: {m.what}")
        return 0
    if not mutants:
        print(f"python -m bench mutants: error: --only {args.only!r} matches no mutant", file=sys.stderr)
        return 4
    import adapters
    from reports.expectations import Expectations

    try:
        ok, why = adapters.get(args.base, {}).available()
    except Exception as e:  # noqa: BLE001 - an unknown base is a usage error, said in one line
        ok, why = False, f"{type(e).__name__}: {e}"
    if not ok:
        print(f"python -m bench mutants: error: --base {args.base} is not available here: {why}", file=sys.stderr)
        return 4
    findings: Path | None = Path(args.findings) if args.findings else REPO / "findings" / f"{args.base}.yaml"
    if findings is not None and not findings.exists():
        if args.findings:
            print(f"python -m bench mutants: error: --findings {args.findings}: no such file", file=sys.stderr)
            return 4
        findings = None
    if findings is not None:
        try:
            Expectations.load(findings)
        except ValueError as e:
            print(f"python -m bench mutants: error: {e}", file=sys.stderr)
            return 4
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = out / "cells"
    ops = sorted({o for m in mutants for o in m.ops})
    t0 = time.perf_counter()
    print(f"base {args.base}: {len(ops)} ops, seed {args.seed}, {args.examples} typical + {args.edge_examples} edge "
          f"cases per cell ...", flush=True)  # fmt: skip
    base_path = out / "base.jsonl"
    rc = run_side(pytest_command(args.base, ops, args, base_path, cache, findings, workers=args.jobs), out / "base.log")
    if rc not in PYTEST_RAN:
        print(f"python -m bench mutants: error: the base run ended with pytest status {rc}; see {out / 'base.log'}",
              file=sys.stderr)  # fmt: skip
        return 1
    print(f"base done ({time.perf_counter() - t0:.0f} s); {len(mutants)} mutants, {args.jobs} at a time", flush=True)

    def one(m: Any) -> tuple[Path, int]:
        path = out / "runs" / f"{m.name}.jsonl"
        cmd = pytest_command(factory(args.base, m.name), list(m.ops), args, path, cache, findings)
        return path, run_side(cmd, path.with_suffix(".log"))

    base, base_raw = read_side(base_path)
    judged: list[Judged] = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for k, (m, (path, rc)) in enumerate(zip(mutants, pool.map(one, mutants), strict=True), 1):
            side, raw = read_side(path)
            j = judge(m, base, base_raw, side, raw)
            if rc not in PYTEST_RAN:
                j.status, j.why = RUN_FAILED, f"its run ended with pytest status {rc} ({path.with_suffix('.log')})"
            judged.append(j)
            print(f"[{k}/{len(mutants)}] {describe(j)}", flush=True)
    line = headline(judged)
    report = {"base": args.base, "seed": args.seed, "examples": args.examples, "edge_examples": args.edge_examples,
              "findings": str(findings) if findings else None, "seconds": round(time.perf_counter() - t0, 1),
              "headline": line, "mutants": [asdict(j) for j in judged]}  # fmt: skip
    (out / "mutants.json").write_text(json.dumps(report, indent=1))
    print(f"details: {out / 'mutants.json'} ({report['seconds']:.0f} s)")
    print(line)
    return 0


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
