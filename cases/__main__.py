"""``python -m cases configs OP``: an op's datatype configurations and why each exists.

Replaying a saved case runs a backend, which is the run's business, not the cases room's: it is
``python -m conformance replay`` (and ``onnx``). A replay line recorded before the move still names this module;
it gets a one-line pointer, not a stack trace.
"""

from __future__ import annotations

import argparse
import sys

MOVED = ("replay", "onnx")


def main(argv: list[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in and args_in[0] in MOVED:
        print(f"error: `python -m cases {args_in[0]}` is now `python -m conformance {args_in[0]}` (same arguments)",
              file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser(prog="python -m cases")
    sub = ap.add_subparsers(dest="cmd", required=True)
    cp = sub.add_parser("configs", help="list an op's datatype configurations and why each exists")
    cp.add_argument("op")
    args = ap.parse_args(args_in)
    return _configs(args.op)


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
