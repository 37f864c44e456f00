"""``python -m conformance replay CASE_PATH --backend NAME``: re-run one saved case alone and print the comparison.
``python -m conformance onnx CASE_PATH STEM``: the ONNX model the case lowers to, with its inputs and expected
outputs (STEM.onnx, STEM.npz), runnable outside the suite by findings/cases/ort-qnn/repro.py.

A results record names the saved case of every non-PASS verdict, and the replay line beside it; this is how a
person looks at one. It goes through ``conformance.execute`` as the run did, with the options the run's line
carries (``conformance/options.py``), so the verdict it prints is the run's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conformance import options as option_table

COMMANDS = ("replay", "onnx")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conformance")
    sub = ap.add_subparsers(dest="cmd", required=True)
    rp = sub.add_parser("replay", help="re-run one saved case (the .json written beside its .npz)")
    rp.add_argument("case_path")
    option_table.add_replay_options(rp)
    op = sub.add_parser("onnx", help="write the ONNX model a saved case lowers to, its inputs and expected outputs")
    op.add_argument("case_path")
    op.add_argument("stem", help="where: STEM.onnx and STEM.npz")
    args = ap.parse_args(argv)
    if args.cmd == "onnx":
        return _onnx(args.case_path, args.stem)

    import adapters
    from adapters.qnn.pytest_plugin import set_target
    from cases.case import Case
    from conformance.execute import RunContext, execute

    # The same channel as pytest's --qnn-soc/--qnn-arch: the QNN adapters read it when built, the others ignore it.
    try:
        set_target({"--qnn-soc": args.qnn_soc, "--qnn-arch": args.qnn_arch})
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    problem = next((p for p in map(option_table.specs_problem, args.specs) if p), None)
    if problem:  # the wording the run's own check uses
        print(f"error: {problem}", file=sys.stderr)
        return 2
    option_table.use_specs(args.specs)
    try:
        case = Case.load(args.case_path)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: cannot load case {args.case_path}: {e}", file=sys.stderr)
        return 2
    options: dict = {"library": args.qnn_backend_lib, "precision": args.qnn_precision, "timeout": args.case_timeout}
    if args.qnn_op_package:
        from conformance.plugin import parse_op_package

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
        rec = execute(case, RunContext(adapter, args.backend, known=known))
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
    from adapters.onnx import Unlowerable
    from cases.case import Case
    from conformance.execute import onnx_repro

    try:
        model = onnx_repro(Case.load(case_path), stem)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: cannot load case {case_path}: {e}", file=sys.stderr)
        return 2
    except Unlowerable as e:
        print(f"error: the case has no ONNX form: {e}", file=sys.stderr)
        return 2
    print(f"wrote {model} and {model.with_suffix('.npz')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
