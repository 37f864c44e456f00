"""One case becomes one results record: the reference, the backend and the comparison meet here.

Every other room stays in its lane (DESIGN.md); this module is where they meet. The pytest conformance module,
``python -m conformance replay`` and the benchmarks all go through ``execute``, so a verdict means the same thing
wherever it was produced. What a record says about the run it came from (backend, run id, test id, where failing
cases are saved, the findings applied) is one ``RunContext``, made once per cell and handed down.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import opdefs
import reference
from adapters.base import (
    CRASH,
    ERROR,
    OK,
    REJECTED,
    SKIP,
    TIMEOUT,
    Adapter,
    Outcome,
    output_digest,
    run_all,
    run_each,
)
from cases import check
from cases.case import Case
from conformance import fresh
from opdefs import expr
from reference.compare import judge
from reference.expected import expected, reading
from reports.record import FP16_ACCURATE, Record, replay_command

_NOT_RUN = {REJECTED: "REJECTED", ERROR: "ERROR", CRASH: "CRASH", TIMEOUT: "TIMEOUT", SKIP: "SKIP"}


@dataclass(frozen=True)
class RunContext:
    """The run a case belongs to, as its record tells it: the same for every case of a cell.

    ``known``: the findings the run applies (``reports.expectations.Expectations``); a failing case's outputs are
    checked against the models of those about its cell, so its record says which finding's bug it shows
    (``metrics.models``). ``case_dir``: where a case that did not pass is saved, with the replay line beside it
    (None: nothing saved). ``batch``: cases per backend call in ``execute_many`` (None: the adapter's own)."""

    adapter: Adapter
    backend: str
    case_dir: Path | None = None
    run_id: str = ""
    test_id: str = ""
    replay_options: str = ""
    known: Any = None
    batch: int | None = None
    fresh: bool = True  # confirm and sample cases in a fresh worker (``conformance.fresh``); probes do not


def case_stem(case: Case) -> str:
    """Where a saved case lives under the run's case directory: its op, configuration, tier and ``case_id``. No
    backend in it: the id is a hash of the case's content, so every backend of a main job that fails the same case
    shares one file (a save cost a millisecond per non-PASS case on each backend). No dot in the stem: ``Case.save``
    takes what follows the last one for a suffix."""
    kind = f"neg-{case.broken}" if case.broken else case.config.replace("+", "_").replace("/", "-").replace(".", "_")
    return f"{case.op}/{kind}-{case.tier or 'case'}-{case.case_id()}"


def _saved(case: Case, stem: Path) -> Path:
    """``case`` saved at ``stem`` (its JSON path), unless a run saved the same content there already."""
    path = stem.with_suffix(".json")
    if path.is_file() and path.with_suffix(".npz").is_file():
        return path
    return case.save(stem)


def accumulation_length(op: opdefs.OpDef, case: Case) -> float | None:
    """K of the op's ``tolerance.accumulation`` expression on this case (None if the op has none or it
    cannot be evaluated: the budget then stays the class default, never a guess)."""
    source = op.tolerance.get("accumulation")
    if not source:
        return None
    env = {**op.param_defaults(), **check.environment(op, case)}
    for name, formula in op.derived.items():  # the spec's derived dims (Stft's n_fft), as the case was drawn with them
        if name not in env:
            try:
                env[name] = expr.parse(str(formula)).evaluate(env)
            except (expr.ExprError, expr.EvalError, TypeError, ValueError, KeyError):
                continue
    try:
        k = float(expr.parse(str(source)).evaluate(env))
    except (expr.ExprError, expr.EvalError, TypeError, ValueError, KeyError):
        return None
    return k if k > 0 else None


def _declared_float16(adapter: Adapter, case: Case) -> str:
    """Where the adapter declares that its backend computes this case's float32 outputs in float16 arithmetic
    (``capabilities()["arithmetic"]``, with the documentation that says so): that source, else "". A case with a
    FLOAT_32 output beside others (DetectionOutput's boxes beside fixed-point scores) counts: the budget relaxed is the
    FLOAT_32 outputs' only (``reference.tolerance.budget_for``), the others are judged as before."""
    if not any(t.dtype == "FLOAT_32" for t in case.outputs):
        return ""
    try:
        declared = ((adapter.capabilities() or {}).get("arithmetic") or {}).get("FLOAT_32") or {}
    except Exception:  # noqa: BLE001 - an adapter that cannot say declares nothing
        return ""
    if declared.get("computes_in") != "float16":
        return ""
    if declared.get("ops") is not None and case.op not in declared["ops"]:
        return ""  # declared for some ops only (the HTP at v68: adapters/qnn/targets.py)
    return f"the backend computes FLOAT_32 in float16 ({declared.get('source', 'its documentation')})"


def _models(case: Case, outputs: list[np.ndarray], ctx: RunContext, op: opdefs.OpDef, info: dict[str, Any],
            accumulation: float | None, precision: str | None) -> dict[str, Any]:
    """The failing case's outputs against the model of each finding about its cell (``reference.models``), at the
    precision the case was judged at (a graph run at float16 precision) or the arithmetic the backend declares: a
    model of where FLOAT_32 values land is held to binary16's budget on a backend that computes FLOAT_32 in float16,
    as the verdict itself is (FP16_ACCURATE)."""
    from reference import models

    names = (ctx.backend, str(info["wraps"])) if info.get("wraps") else (ctx.backend,)
    soc = str(info.get("soc") or "default")

    def rerun() -> list[np.ndarray] | None:
        again = ctx.adapter.run(case)
        return again.outputs if again.status == OK else None

    from reports.expectations import record_release

    release = record_release(Record(op=case.op, config=case.config, backend=ctx.backend, verdict="FAIL",
                                    backend_info=info))  # fmt: skip
    out = {}
    for model in ctx.known.models_for(case.op, case.config, names, tier=case.tier or "typical", soc=soc,
                                      release=release):  # fmt: skip
        out[models.key(model)] = models.check(case, outputs, model, op.tolerance, accumulation, precision=precision,
                                              rerun=rerun)  # fmt: skip
    return out


def execute_many(cases: list[Case], ctx: RunContext, generate_seconds: list[float] | None = None) -> list[Record]:
    """``execute`` for many cases, run through the adapter's ``run_many`` where it has one (several
    cases per backend call); ``ctx.batch`` overrides its batch size (1: every case alone)."""
    adapter = ctx.adapter
    if ctx.batch is not None and hasattr(adapter, "batch_size"):
        adapter.batch_size = ctx.batch
    if cases:
        _begin_op(adapter, cases[0].op)
    started = _start_seconds(adapter)
    outcomes = run_each(adapter, cases) if ctx.batch == 1 else run_all(adapter, cases)
    started = _start_seconds(adapter) - started
    seconds = generate_seconds or [0.0] * len(cases)
    rechecked = ctx.fresh and hasattr(adapter, "run_fresh")  # what each case does alone, in a fresh process
    records = [execute(c, ctx, outcome=o, generate_seconds=g, judged_again=rechecked)
               for c, o, g in zip(cases, outcomes, seconds, strict=True)]  # fmt: skip
    if records and started > 0:  # worker processes started for these cases (an op's first, after a crash)
        records[0].timings["worker_start"] = round(started, 6)
    if rechecked:  # a worker's: a failure is judged again from a fresh worker's outputs
        return fresh.recheck(cases, outcomes, records, ctx, execute, seconds)
    for k, (case, outcome, rec) in enumerate(zip(cases, outcomes, records, strict=True)):
        if rec.verdict in ("FAIL", FP16_ACCURATE) and "index" in (outcome.details.get("batch") or {}):
            records[k] = _confirmed_alone(case, ctx, seconds[k], rec)
    return records


def _start_seconds(adapter: Adapter) -> float:
    return float(getattr(adapter, "worker_start_seconds", 0.0) or 0.0)


def _begin_op(adapter: Adapter, op: str) -> None:
    """A worker-backed adapter starts each op in a process that has run nothing (``WorkerAdapter.begin_op``)."""
    begin = getattr(adapter, "begin_op", None)
    if begin is not None:
        begin(op)


def _confirmed_alone(case: Case, ctx: RunContext, generate_seconds: float, batched: Record) -> Record:
    """A FAIL from a batch, run again alone: the verdict that stands is the one its replay (always alone)
    gives. Why: a kernel that reads past its own buffers sees its neighbours' data in a shared graph or
    session; on the HTP simulator a TransposeConv1d case failed in one 19-case session and passed in the
    same session of another run and alone. Where the two differ, the record keeps the batched verdict
    beside the alone one (``details.batch.batched_verdict``): a deviation that depends on neighbours."""
    rec = execute(case, ctx, outcome=ctx.adapter.run(case), generate_seconds=generate_seconds)
    size = ((batched.extra.get("details") or {}).get("batch") or {}).get("size")
    note: dict[str, Any] = {"size": size, "alone": "a FAIL in its batch, run again alone"}
    if rec.verdict != batched.verdict:
        note.update(batched_verdict=batched.verdict, batched_message=batched.message[:500])
    rec.extra.setdefault("details", {})["batch"] = note
    return rec


def execute(case: Case, ctx: RunContext, outcome: Outcome | None = None, generate_seconds: float = 0.0,
            judged_again: bool = False) -> Record:  # fmt: skip
    """Run ``case`` (unless its ``outcome`` is given: ``execute_many`` ran it already) and judge it
    against the reference: one Record. ``judged_again``: a failure will be judged again from a fresh worker's
    outputs (``conformance.fresh.judged_again``), so this record only says that it failed: no findings' models, no
    reading, no saved case (``details.judged_again``)."""
    adapter, backend_name = ctx.adapter, ctx.backend
    op = opdefs.load(case.op)
    timings: dict[str, float] = {"generate": round(generate_seconds, 6)}
    exp: list[np.ndarray] | None = None
    ref_error = ""
    if not case.negative and reference.has(case.op):
        t0 = time.perf_counter()
        try:
            exp = expected(case)
        except Exception as e:  # a reference that cannot compute this case is reported, not fatal
            ref_error = f"reference failed: {type(e).__name__}: {e}"
        timings["reference"] = round(time.perf_counter() - t0, 6)
    t0 = time.perf_counter()
    if outcome is None:
        _begin_op(adapter, case.op)
        started = _start_seconds(adapter)
        outcome = adapter.run(case)
        if _start_seconds(adapter) > started:
            timings["worker_start"] = round(_start_seconds(adapter) - started, 6)
    timings["backend"] = round(outcome.seconds or (time.perf_counter() - t0), 6)
    info = adapter.info() if hasattr(adapter, "info") else {}
    metrics: dict[str, Any] = {}
    message = outcome.message
    if case.negative:
        # the good outcome for a case that breaks the spec is a clean refusal
        verdict = _NOT_RUN.get(outcome.status, "FAIL")
        if verdict == "FAIL":
            message = f"accepted a case that breaks {case.broken}: {message}".strip()
    elif outcome.status != OK:
        verdict = _NOT_RUN[outcome.status]
    elif exp is None:
        verdict = "UNCHECKED"
        message = ref_error or f"no reference for {case.op} yet: ran, not compared"
    else:
        t0 = time.perf_counter()
        accumulation = accumulation_length(op, case)
        graph_precision = (outcome.details or {}).get("precision")
        j = judge(case, exp, outcome.outputs, op.tolerance, accumulation, precision=graph_precision)
        timings["compare"] = round(time.perf_counter() - t0, 6)
        verdict = "PASS" if j.passed else "FAIL"
        metrics = j.metrics
        message = j.message
        later = False  # judged again from a fresh worker's outputs: only that it failed is said here
        if not j.passed:
            relaxed = _declared_float16(adapter, case)
            if relaxed and judge(case, exp, outcome.outputs, op.tolerance, accumulation, precision="float16").passed:
                verdict = FP16_ACCURATE
                metrics["float16_budget"] = "inside"
                message = f"outside binary32's budget, inside binary16's: {relaxed} ({message})"
            later = judged_again and fresh.judged_again(adapter, "positive", verdict)
            if ctx.known is not None and not later:
                precision = "float16" if graph_precision == "float16" or relaxed else graph_precision
                metrics["models"] = _models(case, outcome.outputs, ctx, op, info, accumulation, precision)
        if not later:
            try:  # where the spec leaves a reading open: which one the backend follows (reports: "Readings")
                metrics.update(reading(case, outcome.outputs))
            except Exception as e:  # noqa: BLE001 - a diagnosis is a note beside the verdict, never the verdict
                metrics["reading_error"] = f"{type(e).__name__}: {e}"
        if j.passed and j.checked == 0 and metrics.get("unconstrained") and not metrics.get("n"):
            verdict = "UNCHECKED"
            message = "not checkable element by element: the spec leaves every value to the backend (random or noise)"
        elif j.passed and j.checked == 0 and metrics.get("not_checkable"):
            verdict = "UNCHECKED"
            message = ("not checkable: every expected value is NaN or infinite, and the MasterOpDef does not say what "
                       f"a {', '.join(sorted({t.dtype for t in case.outputs}))} output holds then")  # fmt: skip
    if outcome.status == OK and outcome.outputs:
        _digest_defined(case, outcome, exp, op)
    rec = Record(
        op=case.op, config=case.config, backend=backend_name, verdict=verdict,
        kind="negative" if case.negative else "positive", broken=case.broken, test_id=ctx.test_id,
        backend_info=info, metrics=metrics, timings=timings, message=message[:2000], seed=case.seed,
        dtypes={t.name: t.dtype for t in [*case.inputs, *case.outputs] if t is not None},
        run_id=ctx.run_id, extra={"decisions": case.decisions, "details": outcome.details} if outcome.details else {},
        case_id=case.case_id(), tier=case.tier,
    )  # fmt: skip
    rec.extra["family"] = op.family
    rec.extra["signature"] = case.signature()  # ranks and integer parameters: python -m reports capabilities
    good = verdict == "PASS" or (case.negative and verdict == "REJECTED")
    if judged_again and fresh.judged_again(adapter, rec.kind, verdict):
        rec.extra.setdefault("details", {})["judged_again"] = True  # ``fresh.recheck`` replaces this record
    elif not good and ctx.case_dir is not None:
        rec.case_path = str(_saved(case, Path(ctx.case_dir) / case_stem(case)))
        rec.replay = replay_command(rec.case_path, backend_name, ctx.replay_options)
    return rec


def _digest_defined(case: Case, outcome: Outcome, exp: list[np.ndarray] | None, op: opdefs.OpDef) -> None:
    """``details.output_digest`` over the elements the spec defines (``reference.compare.defined_masks``): rows past
    a valid count are whatever the backend's heap held (DetectionOutput gave three digests in three runs of one
    case), so a digest over them would make a replay disagree with its record for nothing the spec says. The
    adapter's digest over everything stays as ``output_digest_all`` where the two differ."""
    from reference.compare import defined_masks, defined_values

    try:
        masks = defined_masks(case, outcome.outputs, None if case.steps else exp, op.tolerance)
    except Exception:  # noqa: BLE001 - a digest is a note beside the verdict, never the verdict
        masks = [None] * len(outcome.outputs)
    digest = output_digest(defined_values(outcome.outputs, masks))
    details = outcome.details
    if details.get("output_digest") and details["output_digest"] != digest:
        details["output_digest_all"] = details["output_digest"]
        details["digest_excludes"] = int(sum(m.size - np.count_nonzero(m) for m in masks if m is not None))
    details["output_digest"] = digest


def onnx_repro(case: Case, stem: Path) -> Path:
    """Write ``<stem>.onnx`` (the model ``case`` lowers to) and ``<stem>.npz`` (its feeds, the reference's
    outputs stored as the declared types, and per element the difference the case's budget accepts): a
    finding on the ort-qnn route as a file the EP's maintainers can run with onnxruntime alone
    (findings/cases/ort-qnn/repro.py). Returns the model's path."""
    from adapters.onnx import lower
    from reference.compare import allowed_difference, encode_outputs
    from reference.tolerance import budget_for

    op = opdefs.load(case.op)
    lowered = lower(case)
    real = expected(case)
    arrays: dict[str, np.ndarray] = {f"feed:{name}": value for name, value in lowered.feeds.items()}
    for spec, decl, want, stored in zip(lowered.outputs, case.outputs, real, encode_outputs(case, real), strict=True):
        budget = budget_for(decl.dtype, op.tolerance, accumulation_length(op, case))
        arrays[f"expected:{spec.name}"] = np.asarray(stored).reshape(decl.shape)
        arrays[f"budget:{spec.name}"] = allowed_difference(np.asarray(want).reshape(decl.shape), decl, budget)
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    model = stem.with_suffix(".onnx")
    model.write_bytes(lowered.model)
    np.savez_compressed(stem.with_suffix(".npz"), **arrays)
    return model
