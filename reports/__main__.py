"""``python -m reports``: support matrices, run diffs, catalogue coverage and a terminal summary.

Only results files (and, for catalogues, spec YAML and seed text) are read, so every command works
on a results file copied from another machine with no backend installed. A malformed input ends
the command with one line naming the file (and line) and exit status 2; a line of a results file that
is not a record (torn by a kill or a full disk, or of the wrong shape) is reported with its line and
skipped, and the report is written from the good lines. A case one run recorded twice with different
verdicts (two writers on one file) is a conflict: each is named, the report counts the first, and the
command exits 2.

Merging: several results files (or one file appended to by several runs) become one matrix, except
when two runs of the same backend were made with different configurations (build, seed, examples,
tiers, options: the run headers say): their rates would mix two things. That is refused with one
line saying which files and what differs, unless ``--merge-configurations`` asks for it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from reports import catalogues, diff, expectations, formats, matrix, record, render_text

EXIT_BAD_INPUT = 2
EXIT_REGRESSION = 1
MERGE_HELP = "merge runs of the same backend even when their configurations (build, seed, options...) differ"


CONFLICTS_SHOWN = 20
_conflicts: list[str] = []  # what this command's reads found: one run's case with two verdicts


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _conflicts.clear()
    try:
        status = args.run(args)
    except expectations.ExpectationsError as e:
        return _fail(str(e))
    except OSError as e:
        return _fail(f"{e.filename}: {e.strerror}" if e.filename else str(e))
    except ValueError as e:  # record.read: "file: not a results file: ..."
        return _fail(str(e))
    if _conflicts:
        for message in _conflicts[:CONFLICTS_SHOWN]:
            print(f"python -m reports: error: {message}", file=sys.stderr)
        if len(_conflicts) > CONFLICTS_SHOWN:
            print(f"python -m reports: error: {len(_conflicts) - CONFLICTS_SHOWN} more conflicts", file=sys.stderr)
        return EXIT_BAD_INPUT
    return status


def _read(paths: Sequence[Path]) -> list[record.Record]:
    return list(record.read(paths, conflicts=_conflicts))


class MixedRuns(ValueError):
    """Runs of one backend with different configurations were about to be merged."""


def _records(paths: Sequence[Path], merge_configurations: bool = False) -> list[record.Record]:
    headers: list[record.RunHeader] = []
    records = list(record.read_with_headers(paths, headers, conflicts=_conflicts))
    if not merge_configurations:
        first: dict[str, record.RunHeader] = {}
        for h in headers:
            seen = first.setdefault(h.backend, h)
            diffs = record.configuration_differences(seen.configuration, h.configuration)
            if diffs:
                where = seen.source if seen.source == h.source else f"{seen.source} and {h.source}"
                raise MixedRuns(f"{where}: {h.backend} runs {seen.run_id} and {h.run_id} have different "
                                f"configurations ({'; '.join(diffs[:3])}{'; ...' if len(diffs) > 3 else ''}); "
                                "pass --merge-configurations to merge them anyway")  # fmt: skip
    return records


def _fail(message: str) -> int:
    print(f"python -m reports: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m reports",
        description="Support matrices, run diffs, catalogue coverage and a terminal summary from results files.",
    )
    sub = p.add_subparsers(dest="command", required=True)

    m = sub.add_parser("matrix", help="support matrix of one or more results files")
    m.add_argument("results", nargs="+", type=Path, help="results .jsonl files (concatenated)")
    m.add_argument("--format", choices=tuple(formats.FORMATS), default="md")
    m.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    m.add_argument("--expectations", type=Path, action="append", default=[],
                   help="known-failures YAML applied to the records before aggregating (repeatable)")
    m.add_argument("--title", default=formats.DEFAULT_TITLE)
    m.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    m.set_defaults(run=_matrix)

    d = sub.add_parser("diff", help="regressions and fixes between two results files")
    d.add_argument("old", type=Path)
    d.add_argument("new", type=Path)
    d.add_argument("--format", choices=("md", "json"), default="md")
    d.add_argument("-o", "--output", type=Path)
    d.add_argument("--fail-on-regression", action="store_true", help=f"exit {EXIT_REGRESSION} if anything regressed")
    d.add_argument("--records", action="store_true",
                   help="compare case by case, every field but the run-specific ones (times, ids, paths, build): "
                        f"one line per difference, exit {EXIT_REGRESSION} if any (did a code change alter a result?)")
    d.set_defaults(run=_diff)

    c = sub.add_parser("catalogues", help="coverage of the QNN, Hexagon NN, NNAPI 1.0 and NHWC op catalogues")
    c.add_argument("results", nargs="*", type=Path)
    c.add_argument("--specs", type=Path, default=catalogues.DEFAULT_SPECS, help="directory of op spec YAML files")
    c.add_argument("--seeds", type=Path, default=catalogues.DEFAULT_SEEDS, help="directory of seed catalogue files")
    c.add_argument("--format", choices=("md", "json"), default="md")
    c.add_argument("--detail", action="store_true", help="also list every op of every catalogue")
    c.add_argument("-o", "--output", type=Path)
    c.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    c.set_defaults(run=_catalogues)

    s = sub.add_parser("summary", help="per-backend totals for the terminal")
    s.add_argument("results", nargs="+", type=Path)
    s.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    s.set_defaults(run=_summary)
    _add_findings_commands(sub)
    return p


def _add_findings_commands(sub: argparse._SubParsersAction) -> None:
    """``findings`` and ``agree`` (reports/findings.py, reports/agree.py)."""
    f = sub.add_parser("findings", help="the recorded backend findings as a table; with results, what a run shows")
    f.add_argument("results", nargs="*", type=Path, help="results files to check the findings against")
    f.add_argument("--file", type=Path, action="append", default=[], help="findings YAML (default: findings/*.yaml)")
    f.add_argument("--format", choices=("md", "json"), default="md")
    f.add_argument("-o", "--output", type=Path)
    f.set_defaults(run=_findings)
    a = sub.add_parser("agree", help="the same cases on two runs (e.g. qnn-htp vs ort-qnn): where they differ")
    a.add_argument("run_a", type=Path)
    a.add_argument("run_b", type=Path)
    a.add_argument("--explain", type=Path, default=None,
                   help="explanations YAML (default: findings/routes.yaml when it exists)")
    a.add_argument("--format", choices=("md", "json"), default="md")
    a.add_argument("-o", "--output", type=Path)
    a.set_defaults(run=_agree)


def _matrix(args: argparse.Namespace) -> int:
    records = _records(args.results, args.merge_configurations)
    if not args.expectations:
        m = matrix.build(records)
    else:
        known = expectations.Expectations.load_all(args.expectations)
        m = matrix.build(known.apply_records(records))
        for entry in known.unused():
            print(f"warning: expectation matched no case: {entry.describe()}", file=sys.stderr)
    _write(formats.render(m, args.format, args.title), args.output)
    return 0


def _diff(args: argparse.Namespace) -> int:
    if args.records:
        lines = diff.record_differences(_read([args.old]), _read([args.new]))
        _write("".join(f"{line}\n" for line in lines) or "no record differs (run-specific fields left out)\n",
               args.output)
        return EXIT_REGRESSION if lines else 0
    result = diff.diff(_read([args.old]), _read([args.new]))
    _write(diff.to_markdown(result) if args.format == "md" else diff.to_json(result), args.output)
    return EXIT_REGRESSION if args.fail_on_regression and result.has_regressions else 0


def _catalogues(args: argparse.Namespace) -> int:
    report = catalogues.coverage(_records(args.results, args.merge_configurations), args.specs, args.seeds)
    text = catalogues.to_markdown(report, args.detail) if args.format == "md" else catalogues.to_json(report)
    _write(text, args.output)
    return 0


def _summary(args: argparse.Namespace) -> int:
    _write(render_text.to_summary(matrix.build(_records(args.results, args.merge_configurations))), None)
    return 0


def _findings(args: argparse.Namespace) -> int:
    from reports import findings

    known = findings.load(args.file)
    issues = findings.problems(known)
    run = findings.check_run(known, _read(args.results)) if args.results else None
    render = findings.to_markdown if args.format == "md" else findings.to_json
    _write(render(known, run, issues), args.output)
    return EXIT_BAD_INPUT if issues else 0


def _agree(args: argparse.Namespace) -> int:
    from reports import agree

    path = args.explain or agree.DEFAULT_EXPLANATIONS
    explain = agree.load_explanations(path) if args.explain or path.is_file() else []
    result = agree.compare(_read([args.run_a]), _read([args.run_b]), explain)
    _write(agree.to_markdown(result) if args.format == "md" else agree.to_json(result), args.output)
    if args.output is not None:
        print(agree.summary_line(result))
    return 0


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
