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
from typing import Any

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

    try:
        case = _load_case(args)
        adapter, known = setup(args)
    except ReplayError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        rec = judged_alone(case, adapter, args.backend, known, args.case_path)
    finally:
        adapter.close()
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


class ReplayError(Exception):
    """A replay that cannot start: one line for the person who asked for it."""


def _load_case(args: argparse.Namespace) -> Any:
    from adapters.qnn.pytest_plugin import set_target
    from cases.case import Case

    # The same channel as pytest's --qnn-soc/--qnn-arch: the QNN adapters read it when built, the others ignore it.
    try:
        set_target({"--qnn-soc": args.qnn_soc, "--qnn-arch": args.qnn_arch})
    except ValueError as e:
        raise ReplayError(str(e)) from None
    problem = next((p for p in map(option_table.specs_problem, args.specs) if p), None)
    if problem:  # the wording the run's own check uses
        raise ReplayError(problem)
    option_table.use_specs(args.specs)
    try:
        return Case.load(args.case_path)
    except (OSError, ValueError, KeyError) as e:
        raise ReplayError(f"cannot load case {args.case_path}: {e}") from None


def setup(args: argparse.Namespace) -> tuple[Any, Any]:
    """The adapter and the findings a replay line's options name (``option_table.add_replay_options``), the adapter
    available: what ``python -m conformance replay`` and ``python -m bench replay`` run a saved case with."""
    import adapters

    options: dict = {"library": args.qnn_backend_lib, "precision": args.qnn_precision, "timeout": args.case_timeout}
    if args.qnn_op_package:
        from conformance.plugin import parse_op_package

        try:
            options["op_packages"] = [parse_op_package(p) for p in args.qnn_op_package]
        except ValueError as e:
            raise ReplayError(str(e)) from None
    try:
        adapter = adapters.get(args.backend, {k: v for k, v in options.items() if v})
    except (KeyError, ValueError, TypeError, ImportError) as e:
        raise ReplayError(f"backend {args.backend}: {e}") from None
    ok, why = adapter.available()
    if not ok:
        raise ReplayError(f"backend {args.backend} unavailable: {why}")
    known = None
    if args.expectations:
        from reports.expectations import Expectations, ExpectationsError

        try:
            known = Expectations.load_all(args.expectations)
        except ExpectationsError as e:
            adapter.close()
            raise ReplayError(str(e)) from None
    return adapter, known


def judged_alone(case: Any, adapter: Any, backend: str, known: Any, case_path: str) -> Any:
    """``case`` run alone, in a worker that has run nothing where the adapter keeps one, judged as the run judged it
    (the findings applied): its Record."""
    from conformance.execute import RunContext, execute

    begin = getattr(adapter, "begin_op", None)
    if begin is not None:
        begin(case.op)
    fresh = getattr(adapter, "run_fresh", None)
    outcome = fresh(case, 1)[0] if fresh is not None else adapter.run(case)
    rec = execute(case, RunContext(adapter, backend, known=known), outcome=outcome)
    if known is not None:
        rec.case_path = str(Path(case_path).with_suffix(".json"))
        rec = known.apply_record(rec)
    return rec


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
