"""``python -m opdefs import|lint|coverage``: derive specs from a MasterOpDef, check them, count them."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from opdefs import importer, spec

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SEED = REPO.parent / "shared" / "seeds" / "004_b46271055e0d5186.txt"
DEFAULT_CROSSWALK = REPO.parent / "shared" / "seed-crosswalk.md"


def cmd_import(args: argparse.Namespace) -> int:
    src = Path(args.source)
    if not src.exists():
        print(f"error: {src}: no such file", file=sys.stderr)
        return 2
    crosswalk = Path(args.crosswalk) if args.crosswalk else None
    seeds = Path(args.seeds) if args.seeds else (crosswalk.parent / "seeds" if crosswalk else None)
    rep = importer.run_import(src, Path(args.out), crosswalk, seeds, dry_run=args.dry_run)
    print(f"{rep['ops']} ops in {src}; {len(rep['written'])} spec file(s) written")
    for key in ("added", "removed"):
        if rep[key]:
            print(f"ops {key} in the source: {', '.join(rep[key])}")
    for op, fields in sorted(rep["changed"].items()):
        print(f"changed in the source: {op}: {', '.join(fields)}")
    for op, fields in sorted(rep["conflicts"].items()):
        print(f"conflict (curation kept, review by hand): {op}: {', '.join(fields)}")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths] or spec.spec_files(Path(args.dir))
    expanded: list[Path] = []
    for p in paths:
        expanded += spec.spec_files(p) if p.is_dir() else [p]
    problems = spec.lint(expanded)
    for pr in problems:
        print(pr)
    bad = len({p.file for p in problems})
    print(f"{len(expanded)} spec(s) checked, {bad} with problems, {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems or not expanded else 0


def cmd_coverage(args: argparse.Namespace) -> int:
    try:
        ops = spec.load_all(Path(args.dir))
    except spec.SpecError as e:
        print(e, file=sys.stderr)
        print("coverage needs specs that lint clean", file=sys.stderr)
        return 1
    n_in = sum(len(o.inputs) for o in ops.values())
    n_out = sum(len(o.outputs) for o in ops.values())
    n_par = sum(len(o.params) for o in ops.values())
    total, checked = Counter(), Counter()
    for o in ops.values():
        for c in o.constraints:
            total[c.kind] += 1
            checked[c.kind] += c.checkable
    t, k = sum(total.values()), sum(checked.values())
    print(f"ops: {len(ops)}  inputs: {n_in}  params: {n_par}  outputs: {n_out}")
    print(f"constraints: {t}  checkable: {k} ({100.0 * k / max(t, 1):.1f}%)  text only: {t - k}")
    for kind in sorted(total):
        share = 100.0 * checked[kind] / total[kind]
        print(f"  {kind:<11} {checked[kind]:>4} / {total[kind]:<4} checkable ({share:.0f}%)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opdefs", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    imp = sub.add_parser("import", help="derive opdefs/*.yaml from a MasterOpDef text (keeps curation)")
    imp.add_argument("source", nargs="?", default=str(DEFAULT_SEED))
    imp.add_argument("--out", default=str(spec.HERE))
    imp.add_argument("--crosswalk", default=str(DEFAULT_CROSSWALK) if DEFAULT_CROSSWALK.exists() else None)
    imp.add_argument("--seeds", default=None, help="folder of the seed catalogues the crosswalk cites")
    imp.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    imp.set_defaults(fn=cmd_import)
    li = sub.add_parser("lint", help="schema + constraint-language check; file:line: field: message")
    li.add_argument("paths", nargs="*")
    li.add_argument("--dir", default=str(spec.HERE))
    li.set_defaults(fn=cmd_lint)
    co = sub.add_parser("coverage", help="counts of ops, tensors, params, checkable constraints")
    co.add_argument("--dir", default=str(spec.HERE))
    co.set_defaults(fn=cmd_coverage)
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
