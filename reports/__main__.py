"""``python -m reports``: support matrices, run diffs, catalogue coverage, refusals by class and a terminal summary.

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
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["upstream"]:  # every option is conformance's (argparse would take --help, --out for its own)
        from reports import upstream

        return upstream.delegate(given[1:])
    args = _parser().parse_args(given)
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


class EmptyResults(ValueError):
    """A results file with no run header and no record: nothing a report could say anything about."""


def _read_checked(paths: Sequence[Path], headers: list[record.RunHeader]) -> list[record.Record]:
    """Every file's records; a file that holds neither a header nor a record is refused, naming the file (an empty
    matrix with exit 0 would read as "nothing failed")."""
    out: list[record.Record] = []
    for p in paths:
        before = len(headers)
        got = list(record.read_with_headers([p], headers, conflicts=_conflicts))
        if not got and len(headers) == before:
            raise EmptyResults(f"{p}: no results records (empty, or not written by a conformance run)")
        out += got
    return out


def _records(paths: Sequence[Path], merge_configurations: bool = False) -> list[record.Record]:
    headers: list[record.RunHeader] = []
    records = _read_checked(paths, headers)
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
    _add_filters(m)
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
    d.add_argument("--cases", action="store_true",
                   help="pair the two runs' cases by id and summarise regressions and fixes per op and datatype "
                        "family, each with a case to replay on both (the default when the two runs' backends differ, "
                        "e.g. qnn-htp@2.47 and qnn-htp@2.51, or qnn-htp@default and qnn-htp@v73)")
    d.set_defaults(run=_diff)

    c = sub.add_parser("catalogues", help="coverage of the QNN, Hexagon NN, NNAPI 1.0 and NHWC op catalogues")
    c.add_argument("results", nargs="*", type=Path)
    c.add_argument("--specs", type=Path, default=catalogues.DEFAULT_SPECS, help="directory of op spec YAML files")
    c.add_argument("--seeds", type=Path, default=catalogues.DEFAULT_SEEDS,
                   help="directory of seed catalogue files (default: ../shared/seeds beside the checkout; where it is "
                        "not, the op lists shipped with the package)")
    c.add_argument("--derive", action="store_true",
                   help=f"rewrite the shipped op lists ({catalogues.SHIPPED.name}) from --seeds, then exit")
    c.add_argument("--format", choices=("md", "json"), default="md")
    c.add_argument("--detail", action="store_true", help="also list every op of every catalogue")
    c.add_argument("-o", "--output", type=Path)
    c.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    c.set_defaults(run=_catalogues)

    k = sub.add_parser("capabilities", help="the accepted envelope per backend and op as JSON (validation, finalize, "
                                            "execute), and the combinations validation accepts and then fail")
    k.add_argument("results", nargs="+", type=Path)
    k.add_argument("-o", "--output", type=Path, help="write the JSON here instead of stdout")
    k.add_argument("--false-claims", type=Path, help="also write the accepted-then-refused combinations (markdown)")
    k.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    k.set_defaults(run=_capabilities)

    rf = sub.add_parser("refusals", help="the typical tier's refusals: each distinct reason with its cases, cells and "
                                         "class (op absent, datatype set, parameter value or rank limit, "
                                         "architecture gate, suite form)")
    rf.add_argument("results", nargs="+", type=Path)
    rf.add_argument("--format", choices=("md", "json"), default="md")
    rf.add_argument("-o", "--output", type=Path)
    rf.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    _add_filters(rf)
    rf.set_defaults(run=_refusals)

    s = sub.add_parser("summary", help="per-backend totals for the terminal")
    s.add_argument("results", nargs="+", type=Path)
    s.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    _add_filters(s)
    cf = sub.add_parser("configs", help="every op and exact datatype configuration (the grid merges u8 and s8)")
    cf.add_argument("results", nargs="+", type=Path)
    cf.add_argument("-o", "--output", type=Path)
    cf.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    _add_filters(cf)
    cf.set_defaults(run=_configs)
    fl = sub.add_parser("failing", help="the cells failing on one backend, each with its reason and replay")
    fl.add_argument("results", nargs="+", type=Path)
    fl.add_argument("-o", "--output", type=Path)
    fl.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    _add_filters(fl, backend_required=True)
    fl.set_defaults(run=_failing)
    sw = sub.add_parser("sweep", help="a sweep's runs (python -m conformance --sweep): each generation and release "
                                      "of qnn-htp against the plain run, case by case")
    sw.add_argument("results", nargs="+", type=Path)
    sw.add_argument("-o", "--output", type=Path)
    sw.add_argument("--base", default="qnn-htp", help="the backend the variants are compared with")
    sw.set_defaults(run=_sweep)
    mem = sub.add_parser("memory", help="cases whose verdict or outputs depend on what the worker ran before, and "
                                        "cases that vary between two runs in a fresh worker")
    mem.add_argument("results", nargs="+", type=Path)
    mem.add_argument("-o", "--output", type=Path)
    mem.add_argument("--merge-configurations", action="store_true", help=MERGE_HELP)
    _add_filters(mem)
    mem.set_defaults(run=_memory)
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
    f.add_argument("--upstream", type=Path, default=None, metavar="DIR",
                   help="instead: write an upstream bug report per finding into DIR/<id>/ (python -m conformance "
                        "upstream --all: runs the backends)")
    f.add_argument("--only", default=None, help="with --upstream: only finding ids matching this regular expression")
    f.set_defaults(run=_findings)
    # listed for --help only: ``main`` hands "upstream" and everything after it to python -m conformance upstream
    u = sub.add_parser("upstream", add_help=False,
                       help="one finding (or saved case) as an upstream bug report: report.md, the QNN Saver capture, "
                            "a DLC, the ONNX model with the EP's options (python -m conformance upstream)")
    u.add_argument("args", nargs=argparse.REMAINDER, help="as python -m conformance upstream takes them")
    a = sub.add_parser("agree", help="the same cases on two runs (e.g. qnn-htp vs ort-qnn): where they differ")
    a.add_argument("run_a", type=Path)
    a.add_argument("run_b", type=Path)
    a.add_argument("--explain", type=Path, default=None,
                   help="explanations YAML (default: findings/routes.yaml when it exists)")
    a.add_argument("--format", choices=("md", "json"), default="md")
    a.add_argument("-o", "--output", type=Path)
    a.set_defaults(run=_agree)


def _add_filters(p: argparse.ArgumentParser, backend_required: bool = False) -> None:
    p.add_argument("--backend", required=backend_required, default=None,
                   help="only this backend" + ("" if backend_required else " (a regular expression)"))
    p.add_argument("--op", default=None, help="only ops whose name matches this regular expression")
    p.add_argument("--family", default=None, help="only ops of this family (elementwise, convolution, ...)")


def _filtered(args: argparse.Namespace) -> list[record.Record]:
    """The records of the results files, kept where they match --backend, --op and --family."""
    import re

    records = _records(args.results, args.merge_configurations)
    try:
        backend = re.compile(args.backend) if getattr(args, "backend", None) else None
        op = re.compile(args.op) if getattr(args, "op", None) else None
    except re.error as e:
        raise ValueError(f"--backend/--op: not a regular expression: {e}") from None
    family = getattr(args, "family", None)
    return [r for r in records
            if (backend is None or backend.fullmatch(r.backend)) and (op is None or op.search(r.op))
            and (family is None or r.extra.get("family") == family)]  # fmt: skip


def _configs(args: argparse.Namespace) -> int:
    from reports import lists

    _write(lists.by_config(matrix.build(_filtered(args))), args.output)
    return 0


def _failing(args: argparse.Namespace) -> int:
    from reports import lists

    m = matrix.build(_filtered(args))
    if args.backend not in m.backends():
        return _fail(f"--backend {args.backend}: no records of it in {', '.join(map(str, args.results))} "
                     f"(backends there: {', '.join(m.backends()) or 'none'})")  # fmt: skip
    _write(lists.failing(m, args.backend), args.output)
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from reports import record as record_io

    _write(diff.sweep_to_markdown(record_io.read(args.results), args.base), args.output)
    return 0


def _memory(args: argparse.Namespace) -> int:
    from reports import memory

    _write(memory.report(_filtered(args), args.backend), args.output)
    return 0


def _matrix(args: argparse.Namespace) -> int:
    records = _filtered(args)
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
    old_headers: list[record.RunHeader] = []
    new_headers: list[record.RunHeader] = []
    old, new = _read_checked([args.old], old_headers), _read_checked([args.new], new_headers)
    if args.cases or diff.backends_differ(old, new):  # two releases or targets: the same cases, paired
        by_case = diff.diff_variants(old, new)
        _write(diff.variants_to_markdown(by_case) if args.format == "md" else diff.variants_to_json(by_case),
               args.output)
        if args.output is not None:
            print(diff.variants_summary_line(by_case))
        return EXIT_REGRESSION if args.fail_on_regression and by_case.regressions else 0
    result = diff.diff(old, new)
    text = diff.to_markdown(result) if args.format == "md" else diff.to_json(result)
    differs = _inputs_differ(old_headers, new_headers)
    if differs and args.format == "md":
        text = ("> **The two runs were not made the same way** (" + "; ".join(differs[:6])
                + "): a change below may come from the inputs, not the backend.\n\n" + text)  # fmt: skip
    for line in differs:
        print(f"note: the runs differ: {line}", file=sys.stderr)
    _write(text, args.output)
    return EXIT_REGRESSION if args.fail_on_regression and result.has_regressions else 0


def _inputs_differ(old: list[record.RunHeader], new: list[record.RunHeader]) -> list[str]:
    """How the runs of each backend in both files were made differently: seed, counts, options (expectations,
    specs, target), build."""
    firsts = {h.backend: h for h in reversed(old)}
    out = []
    for h in new:
        before = firsts.get(h.backend)
        if before is not None:
            out += [f"{h.backend} {d}" for d in record.configuration_differences(before.configuration,
                                                                               h.configuration)]  # fmt: skip
    return list(dict.fromkeys(out))


def _catalogues(args: argparse.Namespace) -> int:
    if args.derive:
        import json

        data = catalogues.derive(args.seeds)
        catalogues.SHIPPED.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"{catalogues.SHIPPED}: " + ", ".join(f"{v['title']} {len(v['ops'])} ops"
                                                 for v in data["catalogues"].values()))  # fmt: skip
        return 0
    report = catalogues.coverage(_records(args.results, args.merge_configurations), args.specs, args.seeds)
    text = catalogues.to_markdown(report, args.detail) if args.format == "md" else catalogues.to_json(report)
    _write(text, args.output)
    return 0


def _capabilities(args: argparse.Namespace) -> int:
    from reports import capabilities

    doc = capabilities.envelope(_records(args.results, args.merge_configurations))
    _write(capabilities.to_json(doc), args.output)
    if args.false_claims is not None:
        _write(capabilities.false_claims_markdown(doc), args.false_claims)
    return 0


def _refusals(args: argparse.Namespace) -> int:
    from reports import refusals

    rows = refusals.by_reason(_filtered(args))
    _write(refusals.to_markdown(rows) if args.format == "md" else refusals.to_json(rows), args.output)
    return 0


def _summary(args: argparse.Namespace) -> int:
    _write(render_text.to_summary(matrix.build(_filtered(args))), None)
    return 0


def _findings(args: argparse.Namespace) -> int:
    from reports import findings

    if args.upstream is not None:
        from reports import upstream

        passed = [x for f in args.file for x in ("--file", str(f))] + (["--only", args.only] if args.only else [])
        return upstream.delegate(["--all", "--out", str(args.upstream), *passed])

    known = findings.load(args.file)
    issues = findings.problems(known)
    if findings.masteropdef_lines() is None:  # a clone away from ../shared: every other check still runs
        print(f"note: quotes not checked: no MasterOpDef at {findings.masteropdef_path()} "
              f"(${findings.MASTEROPDEF_ENV} names another)", file=sys.stderr)
    run = findings.check_run(known, _read(args.results)) if args.results else None
    render = findings.to_markdown if args.format == "md" else findings.to_json
    _write(render(known, run, issues), args.output)
    return EXIT_BAD_INPUT if issues else 0


def _agree(args: argparse.Namespace) -> int:
    from reports import agree

    run_a, run_b = _read([args.run_a]), _read([args.run_b])
    path = args.explain or agree.DEFAULT_EXPLANATIONS
    # findings/routes.yaml explains the qnn-htp / ort-qnn routes; two other runs (qnn-cpu vs qnn-htp) get none
    routes = any(r.backend == "ort-qnn" for r in run_a[:50] + run_b[:50])
    explain = agree.load_explanations(path) if args.explain or (routes and path.is_file()) else []
    result = agree.compare(run_a, run_b, explain)
    _write(agree.to_markdown(result) if args.format == "md" else agree.to_json(result), args.output)
    if args.output is not None:
        print(agree.summary_line(result))
        print("typical disagreements per mechanism:")
        print("\n".join(agree.mechanism_lines(result)))
    unexplained = len(result.unexplained_typical)
    if unexplained:  # a converter cannot tell which route to believe there: the run is not done
        print(f"{unexplained} typical disagreement(s) no finding or route mechanism explains", file=sys.stderr)
    return 1 if unexplained else 0


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
