"""``python -m bench replay RESULTS [--sample N]``: does each record of a run say what its case does alone?

A record's replay line is the suite's promise: paste it and see what the run saw. Bug reports, findings and the
matrix's links rest on it. This replays a stratified sample of a run's records that did not pass (each verdict kind
in turn, spread over ops; every one when there are fewer than N) alone, each in a worker that has run nothing, as
``python -m conformance replay`` does, and reports the share with the same verdict (before and after the findings),
the same stage and the same output digest. A record marked nondeterministic (``details.nondeterministic``: its two
fresh runs disagreed) is held to its verdict and stage only. Every mismatch is one line with its replay command; the
details go to ``bench/out/replay-<backend>.json``.

The options a replay takes are those the records' replay lines carry (the backend library, precision, target, op
packages, specs, case timeout); the findings are ``findings/<backend>.yaml`` as the main job applies them
(``--expectations`` to name others, ``--no-expectations`` for none). Exit 0 when every sampled record's verdict and
stage match, and the digest of every one not marked nondeterministic; 1 otherwise; 2 when nothing can be replayed.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from reports.record import NEGATIVE, POSITIVE, RAW_VERDICT_KEY, REJECTED, Record

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
DEFAULT_SAMPLE = 80


def _good(r: Record) -> bool:
    return r.verdict == (REJECTED if r.kind == NEGATIVE else "PASS")


def candidates(records: list[Record]) -> list[Record]:
    """Records a replay can check: positive and negative cases that did not pass, with their saved case on disk."""
    return [r for r in records if r.kind in (POSITIVE, NEGATIVE) and not _good(r) and r.case_path
            and Path(r.case_path).is_file()]  # fmt: skip


def stratified(records: list[Record], n: int) -> list[Record]:
    """Up to ``n`` records, taking each verdict kind in turn and, within one, each op in turn (first records first):
    every kind the run has is present once ``n`` is at least the number of kinds."""
    by_verdict: dict[str, dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by_verdict[r.verdict][r.op].append(r)
    queues = {v: _round_robin(ops) for v, ops in sorted(by_verdict.items())}
    out: list[Record] = []
    while len(out) < n and any(queues.values()):
        for v in list(queues):
            if queues[v] and len(out) < n:
                out.append(queues[v].pop(0))
    return out


def _round_robin(by_op: dict[str, list[Record]]) -> list[Record]:
    lists = [list(rs) for _, rs in sorted(by_op.items())]
    out = []
    while any(lists):
        for rs in lists:
            if rs:
                out.append(rs.pop(0))
    return out


def replay_options(rec: Record) -> argparse.Namespace:
    """The options the record's replay line carries, parsed as ``python -m conformance replay`` parses them."""
    from conformance import options as option_table

    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("case_path")
    option_table.add_replay_options(ap)
    words = shlex.split(rec.replay or "")
    tail = words[3:] if words[:3] == ["python", "-m", "conformance"] else []
    args = ap.parse_args(tail[1:] if tail[:1] == ["replay"] else [rec.case_path or "", "--backend", rec.backend])
    return args


def _stage(r: Record) -> str | None:
    from reports.matrix import record_stage

    return record_stage(r)


def _digest(r: Record) -> str:
    return str((r.extra.get("details") or {}).get("output_digest") or "")


def compare(rec: Record, again: Record) -> dict[str, Any]:
    """What the replay gave beside what the record says."""
    raw_rec = rec.extra.get(RAW_VERDICT_KEY, rec.verdict)
    raw_again = again.extra.get(RAW_VERDICT_KEY, again.verdict)
    nondeterministic = bool((rec.extra.get("details") or {}).get("nondeterministic"))
    d_rec, d_again = _digest(rec), _digest(again)
    return {
        "op": rec.op, "config": rec.config, "tier": rec.tier, "case_id": rec.case_id, "replay": rec.replay,
        "verdict": rec.verdict, "replayed_verdict": again.verdict, "raw": raw_rec, "replayed_raw": raw_again,
        "stage": _stage(rec), "replayed_stage": _stage(again), "digest": d_rec, "replayed_digest": d_again,
        "nondeterministic": nondeterministic,
        "same_verdict": rec.verdict == again.verdict and raw_rec == raw_again,
        "same_stage": _stage(rec) == _stage(again),
        "same_digest": None if not (d_rec or d_again) else d_rec == d_again,
        "message": rec.message[:300], "replayed_message": again.message[:300],
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench replay", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a run's results file (JSONL)")
    ap.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, help=f"records to replay (default {DEFAULT_SAMPLE})")
    ap.add_argument("--expectations", action="append", default=None, help="findings to apply (default: the backend's)")
    ap.add_argument("--no-expectations", action="store_true", help="apply no findings")
    ap.add_argument("--out", default=str(OUT), help="where replay-<backend>.json goes")
    args = ap.parse_args(argv)
    if args.sample < 1:
        print(f"error: --sample {args.sample}: must be at least 1", file=sys.stderr)
        return 2
    from reports import record as record_io

    try:
        records = list(record_io.read([Path(args.results)]))
    except (OSError, ValueError) as e:
        print(f"error: cannot read {args.results}: {e}", file=sys.stderr)
        return 2
    pool = candidates(records)
    backends = sorted({r.backend for r in pool})
    if not pool or len(backends) != 1:
        why = "no record that did not pass has its case on disk" if not pool else f"several backends: {backends}"
        print(f"error: nothing to replay in {args.results}: {why}", file=sys.stderr)
        return 2
    chosen = stratified(pool, args.sample)
    rows = _replay_all(chosen, args)
    if rows is None:
        return 2
    return _report(rows, pool, args, backends[0])


def _replay_all(chosen: list[Record], args: argparse.Namespace) -> list[dict[str, Any]] | None:
    from cases.case import Case
    from conformance.replay import ReplayError, _load_case, judged_alone, setup

    first = replay_options(chosen[0])
    if args.no_expectations:
        first.expectations = None
    else:
        default = ROOT / "findings" / f"{chosen[0].backend.partition('@')[0]}.yaml"
        first.expectations = args.expectations or ([str(default)] if default.is_file() else None)
    try:
        _load_case(first)  # the target and specs the line names, set for this process
        adapter, known = setup(first)
    except ReplayError as e:
        print(f"error: {e}", file=sys.stderr)
        return None
    rows = []
    t0 = time.monotonic()
    try:
        for k, rec in enumerate(chosen, 1):
            case = Case.load(rec.case_path)
            again = judged_alone(case, adapter, rec.backend, known, rec.case_path or "")
            rows.append(compare(rec, again))
            if time.monotonic() - t0 > 5 or k == len(chosen):
                print(f"  replayed {k}/{len(chosen)}", file=sys.stderr)
                t0 = time.monotonic()
    finally:
        adapter.close()
    return rows


def _report(rows: list[dict[str, Any]], pool: list[Record], args: argparse.Namespace, backend: str) -> int:
    n = len(rows)
    kinds = Counter(r["verdict"] for r in rows)
    same_verdict = sum(r["same_verdict"] for r in rows)
    same_stage = sum(r["same_stage"] for r in rows)
    with_digest = [r for r in rows if r["same_digest"] is not None]
    held = [r for r in with_digest if not r["nondeterministic"]]
    same_digest = sum(bool(r["same_digest"]) for r in held)
    print(f"{backend}: replayed {n} of {len(pool)} records that did not pass "
          f"({', '.join(f'{v} {c}' for v, c in sorted(kinds.items()))}), each alone in a fresh worker")  # fmt: skip
    print(f"  same verdict {same_verdict}/{n}, same stage {same_stage}/{n}, same digest {same_digest}/{len(held)}"
          f" (+{len(with_digest) - len(held)} marked nondeterministic, held to verdict and stage)")  # fmt: skip
    bad = [r for r in rows if not r["same_verdict"] or not r["same_stage"]
           or (r["same_digest"] is False and not r["nondeterministic"])]  # fmt: skip
    for r in bad:
        what = []
        if not r["same_verdict"]:
            what.append(f"verdict {r['verdict']} ({r['raw']}) -> {r['replayed_verdict']} ({r['replayed_raw']})")
        if not r["same_stage"]:
            what.append(f"stage {r['stage']} -> {r['replayed_stage']}")
        if r["same_digest"] is False and not r["nondeterministic"]:
            what.append(f"digest {r['digest']} -> {r['replayed_digest']}")
        print(f"  MISMATCH {r['op']} {r['config']} {r['tier']}: {'; '.join(what)}: {r['replay']}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"replay-{re.sub(r'[^A-Za-z0-9@.+-]', '_', backend)}.json"
    summary = {"results": str(args.results), "backend": backend, "replayed": n, "candidates": len(pool),
               "verdicts": dict(kinds), "same_verdict": same_verdict, "same_stage": same_stage,
               "with_digest": len(with_digest), "held_to_digest": len(held), "same_digest": same_digest,
               "rows": rows}  # fmt: skip
    path.write_text(json.dumps(summary, indent=1, sort_keys=True), encoding="utf-8")
    print(f"details: {path}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
