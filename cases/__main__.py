"""``python -m cases replay CASE_PATH --backend NAME``: re-run one saved case alone and print the comparison.
``python -m cases configs OP``: an op's datatype configurations and why each exists.
``python -m cases onnx CASE_PATH STEM``: the ONNX model the case lowers to, with its inputs and expected
outputs (STEM.onnx, STEM.npz), runnable outside the suite by findings/cases/ort-qnn/repro.py.

A results record names the saved case of every non-PASS verdict; this is how a person looks at one.
The composition (reference + backend + comparator) is ``suite.execute``, imported lazily so the
cases room itself stays free of the rooms to its right.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cases import options as option_table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cases")
    sub = ap.add_subparsers(dest="cmd", required=True)
    rp = sub.add_parser("replay", help="re-run one saved case (the .json written beside its .npz)")
    rp.add_argument("case_path")
    option_table.add_replay_options(rp)
    cp = sub.add_parser("configs", help="list an op's datatype configurations and why each exists")
    cp.add_argument("op")
    op = sub.add_parser("onnx", help="write the ONNX model a saved case lowers to, its inputs and expected outputs")
    op.add_argument("case_path")
    op.add_argument("stem", help="where: STEM.onnx and STEM.npz")
    args = ap.parse_args(argv)
    if args.cmd == "configs":
        return _configs(args.op)
    if args.cmd == "onnx":
        return _onnx(args.case_path, args.stem)

    import adapters
    import suite
    from adapters.qnn.adapter import ENV_ARCH, ENV_SOC
    from cases.case import Case

    # The same channel as pytest's --qnn-soc/--qnn-arch: the QNN adapters read it when built, the others ignore it.
    for value, env in ((args.qnn_soc, ENV_SOC), (args.qnn_arch, ENV_ARCH)):
        if value is not None:
            try:
                os.environ[env] = str(int(value, 0))
            except ValueError:
                print(f"error: not an integer: {value!r} (an HTP SoC model or arch number)", file=sys.stderr)
                return 2

    if args.specs:
        from cases.plugin import SPECS_ENV

        missing = [d for d in args.specs if not Path(d).is_dir()]
        if missing:
            print(f"error: --specs {missing[0]}: no such directory", file=sys.stderr)
            return 2
        os.environ[SPECS_ENV] = os.pathsep.join(str(Path(d).resolve()) for d in args.specs)
    try:
        case = Case.load(args.case_path)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: cannot load case {args.case_path}: {e}", file=sys.stderr)
        return 2
    options: dict = {"library": args.qnn_backend_lib, "precision": args.qnn_precision, "timeout": args.case_timeout}
    if args.qnn_op_package:
        from cases.plugin import parse_op_package

        try:
            options["op_packages"] = [parse_op_package(p) for p in args.qnn_op_package]
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    try:
        adapter = adapters.get(args.backend, {k: v for k, v in options.items() if v})
    except (KeyError, ValueError, TypeError, ImportError) as e:
        print(f"error: backend {args.backend}: {e}", file=sys.stderr)
        return 2
    ok, why = adapter.available()
    if not ok:
        print(f"error: backend {args.backend} unavailable: {why}", file=sys.stderr)
        return 2
    known = None
    if args.expectations:
        from reports.expectations import Expectations, ExpectationsError

        try:
            known = Expectations.load_all(args.expectations)
        except ExpectationsError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    try:
        rec = suite.execute(case, adapter, args.backend, case_dir=None, known=known)
    finally:
        adapter.close()
    if known is not None:
        rec.case_path = str(Path(args.case_path).with_suffix(".json"))
        rec = known.apply_record(rec)
    print(case.describe())
    if case.broken:
        print(f"negative case: breaks {case.broken}")
    print(f"verdict: {rec.verdict}" + (f" ({rec.expectation})" if rec.expectation else ""))
    near = rec.extra.get("near_findings")
    if near:
        print(f"near finding(s) {', '.join(near)}: about this cell, but the case does not show their symptom")
    if rec.message:
        print(f"message: {rec.message}")
    if rec.metrics:
        print("metrics: " + json.dumps(rec.metrics, sort_keys=True))
    return 0 if rec.verdict in ("PASS", "UNCHECKED", "XFAIL") or (case.broken and rec.verdict == "REJECTED") else 1


def _onnx(case_path: str, stem: str) -> int:
    import suite
    from adapters.onnx import Unlowerable
    from cases.case import Case

    try:
        model = suite.onnx_repro(Case.load(case_path), stem)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: cannot load case {case_path}: {e}", file=sys.stderr)
        return 2
    except Unlowerable as e:
        print(f"error: the case has no ONNX form: {e}", file=sys.stderr)
        return 2
    print(f"wrote {model} and {model.with_suffix('.npz')}")
    return 0


def _configs(op_name: str) -> int:
    import opdefs
    from cases import generate

    try:
        op = opdefs.load(op_name)
    except KeyError:
        names = sorted(opdefs.load_all())
        close = [n for n in names if n.lower() == op_name.lower()]
        print(f"error: no op {op_name!r}" + (f"; did you mean {close[0]}?" if close else ""), file=sys.stderr)
        return 2
    configs = generate.configs(op)
    if not configs:
        print(f"{op.name}: no configurations: {generate.skip_reason(op) or 'no datatype configuration'}")
        return 0
    width = max(len(c.label) for c in configs)
    print(f"{op.name}: {len(configs)} configuration(s), each run on the typical and the edge tier")
    for c in configs:
        tensors = ", ".join(f"{n}={t}{f'/bw{c.bits_of(n)}' if c.bits_of(n) else ''}{'/axis' if n in c.per_axis else ''}"
                            for n, t in c.dtypes)  # fmt: skip
        print(f"  {c.label:<{width}}  {c.why}")
        print(f"  {'':<{width}}  {tensors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
