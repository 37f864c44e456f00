"""``python -m bench seeds``: do the typical verdicts hold at other seeds, or only at the one they were tuned on?

A findings file written while looking at seed 0 can leave seed 3's failures unexplained: the typical tier draws
other shapes, parameters and values there. This runs the typical tier of a backend at several seeds, with its
findings applied as a user runs them, and says

- every typical failure no finding explains (FAIL, ERROR, CRASH, TIMEOUT after the findings), with its seed and
  the replay command of its first case: each is a suite bug to fix or a deviation to file;
- every cell whose colour depends on the seed (red at one seed, green or known at another).

Writes ``bench/out/seeds/`` (one results file and log per seed, ``seeds.json``, ``seeds.md``). Exit 1 when a
typical failure is unexplained, so it can stand in a CI of its own; the last line is the headline::

    seeds 0-4: 0 unexplained typical failures in 0 cells; 3 cells change colour with the seed
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from reports.record import BAD, FP16_ACCURATE, PASS, POSITIVE, TYPICAL, XFAIL, XPASS, read

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out" / "seeds"
PYTEST_RAN = (0, 1)  # every test passed / some failed: the run went to its end either way
# a cell's colour at one seed, worst first: what a matrix reader sees
COLOURS = ("red", "known", "green", "not judged")


@dataclass
class SeedCell:
    """One op x configuration's typical cases at one seed, after the findings."""

    verdicts: dict[str, int] = field(default_factory=dict)
    unexplained: list[dict] = field(default_factory=list)  # the red cases: verdict, message, replay

    @property
    def colour(self) -> str:
        if any(self.verdicts.get(v) for v in BAD):
            return "red"
        if self.verdicts.get(XFAIL) or self.verdicts.get(FP16_ACCURATE):
            return "known"
        if self.verdicts.get(PASS) or self.verdicts.get(XPASS):
            return "green"
        return "not judged"


def parse_seeds(text: str) -> list[int]:
    """``0-4``, ``0,3,7`` or a mix: the seeds in the order given, each once."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        try:
            span = range(int(low), int(high) + 1) if high else [int(low)]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: seeds are numbers or ranges such as 0-4 or 0,3,7") from None
        seeds += [s for s in span if s not in seeds]
    if not seeds:
        raise argparse.ArgumentTypeError(f"{text!r}: no seed")
    return seeds


TIERS = (TYPICAL, "edge", "model")
_COUNT_FLAG = {TYPICAL: "--examples", "edge": "--edge-examples", "model": "--model-examples"}


def run_backend(args: argparse.Namespace) -> str:
    """``--backend`` with ``--target`` and ``--release`` as its variant (``qnn-htp@2.47+v73``)."""
    parts = [p for p in (args.release, args.target) if p]
    return f"{args.backend}@{'+'.join(parts)}" if parts and "@" not in args.backend else args.backend


def pytest_command(args: argparse.Namespace, seed: int, results: Path, findings: Path | None) -> list[str]:
    """One tier (typical unless ``--tier``) of every op (or ``--op``'s), positive cells only: negative cases say
    nothing of numbers."""
    cmd = [sys.executable, "-m", "pytest", "--backend", run_backend(args), "--tier", args.tier,
           _COUNT_FLAG[args.tier], str(args.examples), "--seed", str(seed), "--no-shrink",
           "--results", str(results), "--case-dir", str(results.parent / f"cases-{seed}"),
           "-k", "test_op", "-q", "-p", "no:cacheprovider"]  # fmt: skip
    if args.op:
        cmd += ["--op", args.op]
    if findings is not None:
        cmd += ["--expectations", str(findings)]
    if args.jobs > 1:
        cmd += ["-n", str(args.jobs)]
    return cmd


def read_seed(path: Path, tier: str = TYPICAL) -> dict[tuple[str, str], SeedCell]:
    """The positive case records of one tier of one seed's run, by cell."""
    cells: dict[tuple[str, str], SeedCell] = defaultdict(SeedCell)
    for r in read([path], warn=lambda m: None):
        if r.kind != POSITIVE or (r.tier or TYPICAL) != tier:
            continue
        cell = cells[(r.op, r.config)]
        cell.verdicts[r.verdict] = cell.verdicts.get(r.verdict, 0) + 1
        if r.verdict in BAD:
            cell.unexplained.append({"verdict": r.verdict, "message": (r.message or "")[:300],
                                     "near": (r.extra or {}).get("near_findings"), "replay": r.replay or r.case_path})
    return dict(cells)


def summarise(by_seed: dict[int, dict[tuple[str, str], SeedCell]]) -> dict:
    """Unexplained failures per seed and the cells whose colour is not the same at every seed that ran them."""
    unexplained = []
    colours: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    for seed, cells in by_seed.items():
        for (op, config), cell in sorted(cells.items()):
            colours[(op, config)][seed] = cell.colour
            if cell.unexplained:
                first = cell.unexplained[0]
                unexplained.append({"seed": seed, "op": op, "config": config, "cases": len(cell.unexplained),
                                    "of": sum(cell.verdicts.values()), **first})  # fmt: skip
    changing = [{"op": op, "config": config, "colours": {str(s): c for s, c in sorted(by.items())}}
                for (op, config), by in sorted(colours.items())
                if len({c for c in by.values() if c != "not judged"}) > 1]  # fmt: skip
    red_cells = {(u["op"], u["config"]) for u in unexplained}
    return {"unexplained": unexplained, "red_cells": len(red_cells), "changing": changing}


def headline(seeds: list[int], summary: dict, tier: str = TYPICAL) -> str:
    consecutive = len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1))
    label = f"{seeds[0]}-{seeds[-1]}" if consecutive else ",".join(map(str, seeds))
    n = sum(u["cases"] for u in summary["unexplained"])
    return (f"seeds {label}: {n} unexplained {tier} failures in {summary['red_cells']} cells; "
            f"{len(summary['changing'])} cells change colour with the seed")  # fmt: skip


def to_markdown(args: argparse.Namespace, seeds: list[int], summary: dict, line: str) -> str:
    out = [f"# {args.tier.capitalize()} verdicts across seeds: {run_backend(args)}", "",
           f"{args.examples} {args.tier} cases per cell at seeds {', '.join(map(str, seeds))}; findings: "
           f"{args.findings_used or 'none'}.", "", f"**{line}**", "",
           f"## Unexplained {args.tier} failures", ""]  # fmt: skip
    if not summary["unexplained"]:
        out.append(f"None: every {args.tier} failure at these seeds is covered by a finding.")
    for u in summary["unexplained"]:
        near = f"; near {', '.join(u['near'])}" if u.get("near") else ""
        out.append(f"- seed {u['seed']} **{u['op']}** {u['config']}: {u['verdict']} {u['cases']}/{u['of']}{near}: "
                   f"`{u['message'][:160]}`  \n  replay: `{u['replay']}`")  # fmt: skip
    out += ["", "## Cells whose colour depends on the seed", ""]
    if not summary["changing"]:
        out.append("None.")
    for c in summary["changing"]:
        out.append(f"- {c['op']} {c['config']}: " + ", ".join(f"seed {s} {v}" for s, v in c["colours"].items()))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench seeds", description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="qnn-htp", help="the backend to run (default qnn-htp)")
    parser.add_argument("--seeds", type=parse_seeds, default=parse_seeds("0-4"),
                        help="seeds to run, e.g. 0-4 or 0,3,7 (default 0-4)")
    parser.add_argument("--examples", type=int, default=None,
                        help="cases per cell in the tier (default 20 typical, 5 edge, 3 model)")
    parser.add_argument("--tier", choices=TIERS, default=TYPICAL,
                        help="the tier judged: typical (default), edge (the corners the spec allows) or model (layers "
                             "of public models)")
    parser.add_argument("--target", default=None, metavar="GEN",
                        help="the simulated HTP generation (v68, v69, v73, v75, v79, v81): qnn-htp@GEN")
    parser.add_argument("--release", default=None, metavar="VERSION",
                        help="the QNN release (e.g. 2.47; fetched from the package index): qnn-htp@VERSION")
    parser.add_argument("--op", default=None, metavar="REGEX", help="only the ops whose name matches")
    parser.add_argument("--findings", default=None, metavar="FILE",
                        help="findings file applied (default findings/<backend>.yaml where it exists)")
    parser.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers per run (default 2)")
    parser.add_argument("--out", default=None,
                        help=f"where the runs and seeds.json go (default {OUT}, or seeds-<tier>-<variant> beside it)")
    parser.add_argument("--reuse", action="store_true",
                        help="summarise a seed's results file already in --out instead of running it again: its "
                             "verdicts as recorded, with the findings of that run (a finding added or withdrawn "
                             "since needs the run again)")
    args = parser.parse_args(argv)
    if args.examples is None:
        args.examples = {TYPICAL: 20, "edge": 5, "model": 3}[args.tier]
    if args.examples < 1:
        parser.error("--examples must be at least 1")
    import adapters

    try:
        ok, why = adapters.get(run_backend(args), {}).available()
    except Exception as e:  # noqa: BLE001 - an unknown backend is a usage error, said in one line
        ok, why = False, f"{type(e).__name__}: {e}"
    if not ok and not args.reuse:
        print(f"python -m bench seeds: error: --backend {run_backend(args)} is not available here: {why}",
              file=sys.stderr)  # fmt: skip
        return 4
    findings = Path(args.findings) if args.findings else REPO / "findings" / f"{args.backend.partition('@')[0]}.yaml"
    if not findings.exists():
        if args.findings:
            print(f"python -m bench seeds: error: --findings {args.findings}: no such file", file=sys.stderr)
            return 4
        findings = None
    args.findings_used = str(findings) if findings else None
    variant = run_backend(args).partition("@")[2]
    default_out = OUT if args.tier == TYPICAL and not variant else OUT.with_name(
        "-".join(["seeds", args.tier, *([variant] if variant else [])]))  # fmt: skip
    out = Path(args.out) if args.out else default_out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    by_seed: dict[int, dict[tuple[str, str], SeedCell]] = {}
    for k, seed in enumerate(args.seeds, 1):
        results, log = out / f"seed-{seed}.jsonl", out / f"seed-{seed}.log"
        if not (args.reuse and results.exists()):
            results.unlink(missing_ok=True)
            print(f"[{k}/{len(args.seeds)}] seed {seed}: {run_backend(args)} {args.tier} tier, {args.examples} "
                  f"cases per cell ...", flush=True)  # fmt: skip
            with open(log, "w") as fh:
                rc = subprocess.run(pytest_command(args, seed, results, findings), cwd=REPO, stdout=fh,
                                    stderr=subprocess.STDOUT, check=False).returncode  # fmt: skip
            if rc not in PYTEST_RAN:
                print(f"python -m bench seeds: error: seed {seed}'s run ended with pytest status {rc}; see {log}",
                      file=sys.stderr)  # fmt: skip
                return 1
        by_seed[seed] = read_seed(results, args.tier)
        red = sum(len(c.unexplained) for c in by_seed[seed].values())
        print(f"[{k}/{len(args.seeds)}] seed {seed}: {len(by_seed[seed])} cells, {red} unexplained {args.tier} "
              f"failures ({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    summary = summarise(by_seed)
    line = headline(args.seeds, summary, args.tier)
    report = {"backend": run_backend(args), "tier": args.tier, "seeds": args.seeds, "examples": args.examples,
              "findings": args.findings_used,
              "seconds": round(time.perf_counter() - t0, 1), "headline": line, **summary}  # fmt: skip
    (out / "seeds.json").write_text(json.dumps(report, indent=1))
    (out / "seeds.md").write_text(to_markdown(args, args.seeds, summary, line))
    for u in summary["unexplained"]:
        print(f"unexplained: seed {u['seed']} {u['op']} {u['config']}: {u['verdict']} {u['cases']}/{u['of']}: "
              f"{u['message'][:120]}")  # fmt: skip
    print(f"details: {out / 'seeds.md'}")
    print(line)
    return 1 if summary["unexplained"] else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
