"""``qnn-conformance``: one command for the people who run the suite, installed with the package.

Why one front door: after ``pip install qnn-opdef-conformance`` there is no checkout to ``cd`` into, and
``python -m conformance``, ``python -m reports``, ``python -m cases`` and ``pytest --pyargs`` are four
spellings to remember. Each subcommand hands its arguments to the module that already does the job,
so ``python -m conformance`` and the others keep working unchanged:

    qnn-conformance run [--backends reference,qnn-htp] [--op REGEX] ...   the main job (python -m conformance)
    qnn-conformance test --backend NAME [pytest options]                  one backend through pytest
    qnn-conformance report matrix|diff|catalogues|summary ...             python -m reports
    qnn-conformance replay CASE.json --backend NAME                       python -m conformance replay
    qnn-conformance upstream FINDING-ID|CASE.json --out DIR               python -m conformance upstream
    qnn-conformance configs OP                                            python -m cases configs
    qnn-conformance opdefs lint|new|coverage|import ...                   python -m opdefs
    qnn-conformance bench [speed|mutants|drawn|qnn-worker] [options]      python -m bench (default speed)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

USAGE = __doc__.split("\n\n", 2)[2].rstrip() if __doc__ else ""
EXIT_USAGE = 4  # pytest's usage-error status, used for every front-door refusal


def _run(args: list[str]) -> int:
    from conformance import main_job

    return main_job.main(args)


def _test(args: list[str]) -> int:
    import pytest

    return int(pytest.main(args))


def _report(args: list[str]) -> int:
    from reports.__main__ import main

    return main(args)


def _replay(args: list[str]) -> int:
    from conformance.replay import main

    return main(["replay", *args])


def _upstream(args: list[str]) -> int:
    from conformance.upstream import main

    return main(args)


def _configs(args: list[str]) -> int:
    from cases.__main__ import main

    return main(["configs", *args])


def _opdefs(args: list[str]) -> int:
    from opdefs.__main__ import main

    return main(args)


def _bench(args: list[str]) -> int:
    from bench.cli import main

    return main(args, prog="qnn-conformance bench")


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "run": _run,
    "test": _test,
    "report": _report,
    "replay": _replay,
    "upstream": _upstream,
    "configs": _configs,
    "opdefs": _opdefs,
    "bench": _bench,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(f"usage: qnn-conformance COMMAND [ARGS]\n\n{USAGE}")
        return 0 if args else EXIT_USAGE
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"qnn-conformance: unknown command {command!r}; choose from {', '.join(COMMANDS)}", file=sys.stderr)
        return EXIT_USAGE
    return COMMANDS[command](rest)


if __name__ == "__main__":
    sys.exit(main())
