"""``python -m cases replay CASE_PATH --backend NAME``: re-run one saved case alone and print the comparison.

A results record names the saved case of every non-PASS verdict; this is how a person looks at one.
The composition (reference + backend + comparator) is ``suite.execute``, imported lazily so the
cases room itself stays free of the rooms to its right.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cases")
    sub = ap.add_subparsers(dest="cmd", required=True)
    rp = sub.add_parser("replay", help="re-run one saved case (the .json written beside its .npz)")
    rp.add_argument("case_path")
    rp.add_argument("--backend", default="reference")
    rp.add_argument("--qnn-backend-lib", default=None)
    rp.add_argument("--qnn-precision", default=None)
    args = ap.parse_args(argv)

    import adapters
    import suite
    from cases.case import Case

    try:
        case = Case.load(args.case_path)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: cannot load case {args.case_path}: {e}", file=sys.stderr)
        return 2
    options = {"library": args.qnn_backend_lib, "precision": args.qnn_precision}
    adapter = adapters.get(args.backend, {k: v for k, v in options.items() if v})
    ok, why = adapter.available()
    if not ok:
        print(f"error: backend {args.backend} unavailable: {why}", file=sys.stderr)
        return 2
    try:
        rec = suite.execute(case, adapter, args.backend)
    finally:
        adapter.close()
    print(case.describe())
    if case.broken:
        print(f"negative case: breaks {case.broken}")
    print(f"verdict: {rec.verdict}")
    if rec.message:
        print(f"message: {rec.message}")
    if rec.metrics:
        print("metrics: " + json.dumps(rec.metrics, sort_keys=True))
    return 0 if rec.verdict in ("PASS", "UNCHECKED") or (case.broken and rec.verdict == "REJECTED") else 1


if __name__ == "__main__":
    sys.exit(main())
