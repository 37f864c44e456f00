"""Which parameter values the typical tier never draws: a bug in one of them would be invisible.

A planted bug in one member of an enum (ResizeBilinear with ``align_corners`` true computed as false) shows
only if some typical case draws that member. This draws every typical cell of every op the way the
conformance run does (same seed, same count: the same cases) and lists, per op, the boolean and enum
parameter values no cell drew. Values a cell's datatypes rule out (a fixed-point ScatterNd keeps out of
reductions) are drawn by the op's other cells, so the per-op union is what a bug hides in.

It also says what sizes the typical tier draws (``shape_stats``): per op and over the ops drawn, the share of
cases of rank 3 or more that are batch 1 (in[0]'s leading dim) and the median and 90th percentile of a case's
largest input, in elements: what "typical is what deployed models run" is measured by.

``python -m bench drawn [--examples N] [--seed S] [--op REGEX]`` prints one line per op with a value never
drawn and writes ``bench/out/drawn.json``; the last line is the headline.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "out"


def enumerated_params(op: Any) -> dict[str, list[Any]]:
    """The op's scalar parameters whose every value can be listed: booleans and enums (member values)."""
    out: dict[str, list[Any]] = {}
    for name, p in op.params.items():
        shape = p.get("shape") or {}
        if not (shape.get("scalar") or not (shape.get("dims") or shape.get("rank"))):
            continue
        if p.get("values"):
            out[name] = sorted(p["values"].values())
        elif p.get("dtype") == "BOOL_8":
            out[name] = [False, True]
    return out


def member_names(op: Any, name: str) -> dict[Any, str]:
    """Value -> the spec's name for it (``{0: 'ROUND_PREFER_FLOOR', ...}``; booleans name themselves)."""
    values = op.params[name].get("values") or {}
    return {v: k for k, v in values.items()} or {False: "false", True: "true"}


def drawn_values(op: Any, examples: int, seed: int, draw: Any = None) -> dict[str, Any]:
    """Per cell and per op: how often each enumerated value was drawn in ``examples`` typical cases a cell."""
    from cases import generate

    draw = draw or _draw_cell
    params = enumerated_params(op)
    cells: dict[str, dict[str, dict[str, int]]] = {}
    union: dict[str, Counter[Any]] = {name: Counter() for name in params}
    short: dict[str, list[str]] = {}  # cell -> the values its configuration allows that none of its cases drew
    every: list[Any] = []
    for config in generate.configs(op):
        cases = draw(op, config, examples, seed)
        every += cases
        counts = {name: Counter(_value(c, name, op) for c in cases) for name in params}
        cells[config.label] = {name: {repr(v): n for v, n in sorted(cnt.items(), key=repr)}
                               for name, cnt in counts.items()}  # fmt: skip
        for name, cnt in counts.items():
            union[name].update(cnt)
        allowed = {(name, v) for slot in generate.typical_slots(op, config) for name, v in list(slot.items())[:1]}
        missed = [f"{name} {member_names(op, name).get(v, repr(v))}" for name, v in sorted(allowed, key=repr)
                  if counts[name][v] == 0]  # fmt: skip
        if missed and cases:
            short[config.label] = missed
    pairs_drawn = {((a, x), (b, y)) for c in every for (a, x), (b, y) in generate.slots.interacting_pairs(op)
                   if _value(c, a, op) == x and _value(c, b, op) == y}  # fmt: skip
    pairs_missed = [f"{a} {member_names(op, a).get(x, repr(x))} with {b} {member_names(op, b).get(y, repr(y))}"
                    for (a, x), (b, y) in generate.slots.interacting_pairs(op)
                    if ((a, x), (b, y)) not in pairs_drawn]  # fmt: skip
    never: dict[str, list[str]] = {}
    curated: dict[str, list[str]] = {}
    edge_only = generate.slots.typical_excluded(op)  # the typical tier's conditions rule them out: curated too
    for name, values in params.items():
        names = member_names(op, name)
        allowed = op.params[name].get("generate")  # a curated list: the spec's decisions say why the rest are not
        for v in values:
            if union[name][v]:
                continue
            if v in edge_only.get(name, ()):
                curated.setdefault(name, []).append(names.get(v, repr(v)) + " (typical_when: edge only)")
                continue
            (curated if allowed is not None and v not in allowed else never).setdefault(name, []).append(
                names.get(v, repr(v)))
    return {"cells": cells, "never": never, "curated_out": curated, "cells_short": short,
            "pairs": len(pairs_drawn) + len(pairs_missed), "pairs_never": pairs_missed,
            "shapes": shape_stats(every), "largest_inputs": sorted(largest_input(c) for c in every)}


def largest_input(case: Any) -> int:
    """Elements of the case's largest input."""
    import math

    return max((math.prod(t.shape) for t in case.inputs if t is not None), default=0)


def shape_stats(cases: list[Any]) -> dict[str, Any]:
    """Batch 1 among the cases whose in[0] has rank 3 or more, and the spread of each case's largest input."""
    import statistics

    ranked = [c for c in cases if c.inputs and c.inputs[0] is not None and len(c.inputs[0].shape) >= 3]
    sizes = sorted(largest_input(c) for c in cases)
    return {"cases": len(cases), "rank3_cases": len(ranked),
            "rank3_batch1": sum(c.inputs[0].shape[0] == 1 for c in ranked),
            "largest_input_median": statistics.median(sizes) if sizes else None,
            "largest_input_p90": _percentile(sizes, 0.9), "largest_input_max": sizes[-1] if sizes else None,
            "largest_input_at_least_2048": sum(x >= 2048 for x in sizes)}  # fmt: skip


def _percentile(sorted_values: list[int], q: float) -> float | None:
    """The q-th quantile by linear interpolation (numpy's default)."""
    if not sorted_values:
        return None
    import numpy as np

    return float(np.percentile(sorted_values, 100 * q))


def _value(case: Any, name: str, op: Any) -> Any:
    """The case's value of ``name``; left out, the spec's default (what the backend then uses)."""
    p = case.params.get(name)
    value = p.value if p is not None else op.params[name].get("default")
    return bool(value) if op.params[name].get("dtype") == "BOOL_8" and value is not None else value


def _draw_cell(op: Any, config: Any, examples: int, seed: int) -> list[Any]:
    """The typical cases of one cell, drawn as ``conformance/test_conformance.py`` draws them."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed
    from hypothesis.errors import Unsatisfiable

    from cases import generate
    from reference.expected import infer

    got: dict[str, Any] = {}
    parts = generate.cell_strategies(op, config, generate.Settings(infer=infer, tier=generate.TYPICAL), examples)
    for strategy, count, salt in parts:

        @hyp_seed(seed + salt)
        @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(strategy)
        def run(case: Any) -> None:
            got.setdefault(case.case_id(), case)

        try:
            run()
        except Unsatisfiable:
            pass
    return list(got.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench drawn", description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=20, help="typical cases per cell (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--op", default=None, help="regex: only ops whose name matches")
    parser.add_argument("--out", default=str(OUT / "drawn.json"), help="JSON of every cell's counts")
    args = parser.parse_args(argv)

    import opdefs

    specs, _errors = opdefs.load_each()
    ops = [op for name, op in sorted(specs.items()) if args.op is None or re.search(args.op, name)]
    report: dict[str, Any] = {"examples": args.examples, "seed": args.seed, "ops": {}}
    t0 = time.perf_counter()
    live = sys.stderr.isatty()
    for k, op in enumerate(ops, 1):
        if live:
            print(f"\r[{k}/{len(ops)}] {op.name:<30}", end="", file=sys.stderr, flush=True)
        report["ops"][op.name] = drawn_values(op, args.examples, args.seed)
    if live:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    missing = {name: r["never"] for name, r in report["ops"].items() if r["never"]}
    for name, never in missing.items():
        print(f"{name}: never drawn: " + "; ".join(f"{p} {', '.join(map(str, v))}" for p, v in never.items()))
    curated = {name: r["curated_out"] for name, r in report["ops"].items() if r["curated_out"]}
    for name, out in curated.items():
        print(f"{name}: left out by the spec's curated values (its decisions say why): "
              + "; ".join(f"{p} {', '.join(map(str, v))}" for p, v in out.items()))  # fmt: skip
    short = {(name, cell): v for name, r in report["ops"].items() for cell, v in r["cells_short"].items()}
    for (name, cell), values in short.items():
        print(f"{name} {cell}: a value its datatypes allow never drawn in the cell: {', '.join(values)}")
    report["cell_values_never_drawn"] = sum(len(v) for v in short.values())
    for name, r in report["ops"].items():
        if r["pairs_never"]:
            print(f"{name}: pairs never drawn together: {'; '.join(r['pairs_never'])}")
    report["pairs"] = sum(r["pairs"] for r in report["ops"].values())
    report["pairs_never_drawn"] = sum(len(r["pairs_never"]) for r in report["ops"].values())
    n_values = sum(len(v) for never in missing.values() for v in never.values())
    n_curated = sum(len(v) for out in curated.values() for v in out.values())
    report["never_drawn"], report["curated_out"] = n_values, n_curated
    largest = sorted(x for r in report["ops"].values() for x in r.pop("largest_inputs"))
    rank3 = sum(r["shapes"]["rank3_cases"] for r in report["ops"].values())
    batch1 = sum(r["shapes"]["rank3_batch1"] for r in report["ops"].values())
    report["shapes"] = {"cases": len(largest), "rank3_cases": rank3, "rank3_batch1": batch1,
                        "largest_input_median": _percentile(largest, 0.5),
                        "largest_input_p90": _percentile(largest, 0.9),
                        "largest_input_max": largest[-1] if largest else None}  # fmt: skip
    print(f"sizes: {batch1} of {rank3} typical cases of rank 3 or more are batch 1 "
          f"({100 * batch1 / max(1, rank3):.0f}%); a case's largest input: median "
          f"{report['shapes']['largest_input_median']}, 90th percentile {report['shapes']['largest_input_p90']}, "
          f"max {report['shapes']['largest_input_max']} elements")  # fmt: skip
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1, sort_keys=True))
    print(f"pairs: {report['pairs_never_drawn']} of {report['pairs']} pairs of two switches' values never drawn "
          f"together")
    print(f"drawn: {n_values} parameter value(s) of {len(missing)} op(s) never drawn "
          f"({report['cell_values_never_drawn']} missing from a cell that allows them), "
          f"{n_curated} left out by curation, "
          f"in {len(ops)} ops with enumerated parameters at {args.examples} typical cases per cell, seed {args.seed} "
          f"({time.perf_counter() - t0:.0f} s; {args.out})")  # fmt: skip
    return 0
