"""``python -m opdefs import|lint|coverage|new|decisions``: derive specs from a MasterOpDef, check them, count them,
start a new one."""

from __future__ import annotations

import argparse
import re
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


NEW_SPEC = """\
# yaml-language-server: $schema=schema/opdef.schema.json
# A starting point that lints clean: a one-input, one-output op whose output has the input's type and
# shape. Replace each part with what the MasterOpDef (or your op package's documentation) says; every
# field is described in schema/opdef.schema.json and the README's "Adding an op".
name: {name}
package: {package}  # qti.aisw for MasterOpDef ops; an op package's own name for its ops
source: {{}}  # where the op's text is: {{file: MasterOpDef.txt, lines: [first, last]}}
summary: 'TODO: one sentence on what {name} computes.'
formulas: ['out[0] = f(in[0])']
inputs:
- name: in[0]
  description: input activation
  mandatory: true
  # Every type listed here is a datatype configuration of its own (python -m cases configs {name}).
  # backend_specific means "whatever the backend supports": cases then try float32, float16 and the
  # 8/16-bit fixed-point types.
  dtypes: [FLOAT_32, FLOAT_16]
  # or a layout: {{text: '[batch, height, width, channel]', dims: [batch, height, width, channel]}}
  shape: {{text: 'Any', rank: any}}
  constraints:
  # One entry per sentence of the spec: `seed` is the sentence as written, `check` the expression that
  # says it (python -m opdefs lint checks every name), or `unchecked: why` when no expression can.
  - {{id: in0_shape, kind: shape, seed: 'Shape: Rank > 0', check: 'rank(in[0]) > 0'}}
params: []
outputs:
- name: out[0]
  description: output activation
  mandatory: true
  dtypes: [FLOAT_32, FLOAT_16]
  shape: {{text: 'Same shape as in[0]', rank: any}}
  constraints:
  - {{id: out0_datatype, kind: datatype, seed: 'Datatype: Same datatype as in[0]',
     check: 'dtype(out[0]) == dtype(in[0])'}}
  - {{id: out0_shape, kind: shape, seed: 'Shape: Same shape as in[0]', check: 'shape(out[0]) == shape(in[0])'}}
"""


def _new_spec_dir() -> str:
    """A checkout's own opdefs/ (a new op belongs beside the others there); for an installed package, the directory
    the user stands in (site-packages is not the user's to write into; --specs DIR then finds it)."""
    installed = any(part in ("site-packages", "dist-packages") for part in spec.HERE.parts)
    return "." if installed else str(spec.HERE)


def cmd_new(args: argparse.Namespace) -> int:
    """Write a minimal spec that lints clean, so the first edit starts from something valid."""
    name = args.name
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", name):
        print(f"error: op name {name!r}: must start with a capital letter and hold only letters and digits "
              "(QNN op type names such as ElementWiseAdd)", file=sys.stderr)  # fmt: skip
        return 2
    path = Path(args.dir) / f"{name}.yaml"
    if path.exists() and not args.force:
        print(f"error: {path} exists; pass --force to overwrite it", file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(NEW_SPEC.format(name=name, package=args.package), encoding="utf-8")
    problems = spec.lint([path])
    for pr in problems:  # only if the template and the schema drifted apart
        print(pr, file=sys.stderr)
    extra = "" if Path(args.dir).resolve() == spec.HERE else f" --specs {args.dir}"
    print(f"wrote {path}\nnext: edit it; python -m opdefs lint {path}; python -m cases configs {name}; add the "
          f"reference with @register(\"{name}\") in a reference/ family module; "
          f"pytest --backend reference --op '^{name}$'{extra}")  # fmt: skip
    return 1 if problems else 0


def cmd_decisions(args: argparse.Namespace) -> int:
    """The readings the specs record where the MasterOpDef is unclear: what a verdict of those ops rests on."""
    import textwrap

    names = args.ops or sorted(spec.load_all(Path(args.dir)))
    for name in names:
        try:
            op = spec.load(name, Path(args.dir))
        except (KeyError, spec.SpecError) as e:
            print(f"error: {name}: {e}", file=sys.stderr)
            return 1
        if not op.decisions:
            continue
        print(f"{name} ({len(op.decisions)} decisions)")
        for d in op.decisions:
            line = f" (line {d['line']})" if d.get("line") else ""
            print(textwrap.fill(f"{d.get('about', '?')}{line}: {d.get('choice', '')}", 110,
                                initial_indent="  - ", subsequent_indent="    "))  # fmt: skip
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
    nw = sub.add_parser("new", help="write a minimal spec that lints clean, to start a new op from")
    nw.add_argument("name", help="the QNN op type name, e.g. MyOp")
    nw.add_argument("--dir", default=_new_spec_dir(),
                    help="where to write NAME.yaml (default: the built-in specs in a checkout; the current directory "
                         "for an installed package, whose specs are not the user's to edit)")
    nw.add_argument("--package", default="qti.aisw", help="the op's package (an op package's own name)")
    nw.add_argument("--force", action="store_true", help="overwrite an existing spec")
    nw.set_defaults(fn=cmd_new)
    de = sub.add_parser("decisions", help="what the specs read where the MasterOpDef is unclear, per op")
    de.add_argument("ops", nargs="*", help="op names (default: every op with decisions)")
    de.add_argument("--dir", default=str(spec.HERE))
    de.set_defaults(fn=cmd_decisions)
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
