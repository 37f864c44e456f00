"""The benchmarks' one door: ``python -m bench [NAME] [options]`` and ``qnn-conformance bench [NAME] [options]``.

Speed and memory targets live in these benchmarks, never in timed unit tests: ``speed`` (the default: where a
conformance run's time goes, ``bench.run``), ``mutants`` (the suite's power to find planted bugs,
``bench.mutants.run``), ``drawn`` (parameter values the typical tier never draws, ``bench.drawn_values``),
``seeds`` (whether the typical verdicts hold at other seeds, ``bench.seeds``), ``replay`` (whether a run's records
say what their cases do alone, ``bench.replay``) and ``qnn-worker`` (per-case time and
worker memory on the HTP simulator, ``bench.qnn_worker``).
"""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {"speed": "bench.run", "mutants": "bench.mutants.run", "drawn": "bench.drawn_values",
              "seeds": "bench.seeds", "replay": "bench.replay", "qnn-worker": "bench.qnn_worker"}  # fmt: skip
EXIT_USAGE = 4


def main(argv: list[str] | None = None, prog: str = "python -m bench") -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    name = "speed"
    if args and not args[0].startswith("-"):
        name, args = args[0], args[1:]
    if name not in BENCHMARKS:
        print(f"{prog}: unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
        return EXIT_USAGE
    module = importlib.import_module(BENCHMARKS[name])
    saved = sys.argv
    sys.argv = [f"{prog} {name}", *args]  # the speed benchmark reads sys.argv itself
    try:
        return int((module.main() if name == "qnn-worker" else module.main(args)) or 0)  # qnn-worker reads sys.argv
    finally:
        sys.argv = saved
