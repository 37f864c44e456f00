"""``python -m bench [mutants|drawn] ...``: the benchmarks. Without a subcommand, the speed benchmark
(``bench.run``; the worker processes import it by name, so it is not this file); ``mutants`` measures the
suite's power to find planted bugs (``bench.mutants``); ``drawn`` lists the parameter values the typical tier
never draws (``bench.drawn_values``)."""

import sys

_SUBCOMMANDS = {"mutants": "bench.mutants.run", "drawn": "bench.drawn_values"}

if len(sys.argv) > 1 and sys.argv[1] in _SUBCOMMANDS:
    import importlib

    raise SystemExit(importlib.import_module(_SUBCOMMANDS[sys.argv[1]]).main(sys.argv[2:]))

from bench.run import main  # noqa: E402 - the speed benchmark only when no subcommand was given

raise SystemExit(main())
