"""``python -m conformance upstream FINDING-ID|CASE.json --out DIR``: a finding as a bug report its backend's owners can
act on without this suite. ``--all`` (``python -m reports findings --upstream DIR``): one folder per finding.

Why here: a report that travels must say what the backend does *now*, so the case is run again, on the finding's
backend, and judged as the run judges it (``conformance.execute``); it is recorded by the Saver and the IR backend of
the same release (``adapters.qnn.capture``) and lowered to ONNX (``execute.onnx_repro``). Running backends is the run's
job, and the run is this room: ``reports`` renders (``reports.upstream``) and hands its ``upstream`` command here.

A folder holds ``report.md`` (what a person reads first), ``evidence.json`` (the same facts as data), ``case/`` (the
suite's case files, for its replay line), ``saver/`` (saver_output.c, params.bin), ``model.dlc`` with
``qnn_inputs/*.raw`` and ``input_list.txt`` for qnn-net-run, and where the case lowers to ONNX ``model.onnx``,
``model.npz``, ``inputs/*.npy``, ``expected/*.npy``, ``ep_options.json`` and ``repro.py`` (onnxruntime and
onnxruntime-qnn only). For a finding on the EP route the standalone script is run once and its verdict kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

import opdefs
from cases.case import Case
from reports import findings as findings_table
from reports import upstream as render
from reports.expectations import Entry, Expectations

REPO = Path(__file__).resolve().parents[1]
STANDALONE = REPO / "findings" / "cases" / "ort-qnn" / "repro.py"
DEFAULT_BACKEND = "qnn-htp"
SHOWN = 8  # differing elements listed in a report
EP_ROUTE = "ort-qnn"
STANDALONE_SECONDS = 120.0
# The EP's own recording options (``_ep_capture``), as repro.py reads them: "<onnxruntime_qnn>/" is the installed wheel
DLC_DUMP = "dlc_dump"
EP_SAVER = {"qnn_saver_path": "<onnxruntime_qnn>/libQnnSaver.so"}
EP_DLC = {"dump_qnn_ir_dlc": "1", "dump_qnn_ir_dlc_dir": DLC_DUMP,
          "qnn_ir_backend_path": "<onnxruntime_qnn>/libQnnIr.so"}


class CannotExport(Exception):
    """One line saying why a finding or case has no report (the others go on)."""


# ---- what to export ------------------------------------------------------------------------------
def resolve(target: str, known: Expectations, backend: str | None = None) -> tuple[Entry | None, Path, str]:
    """The finding (None for a bare case file), its case's path and the backend it is about."""
    by_id = {e.id: e for e in known.entries if e.id}
    if target in by_id:
        entry = by_id[target]
        case = entry.info.get("case")
        if not case:
            raise CannotExport(f"{target}: the finding names no case")
        named = [p.text for p in entry.backend or ()]
        chosen = backend or next((b for b in named if re.fullmatch(r"[\w.@+-]+", b)), DEFAULT_BACKEND)
        return entry, (REPO / case).with_suffix(".json"), chosen
    path = Path(target)
    if path.suffix in (".json", ".npz") or path.exists():
        return None, path.with_suffix(".json"), backend or DEFAULT_BACKEND
    raise CannotExport(f"{target}: neither a finding id of {known.source} nor a case file")


def _soc(entry: Entry | None) -> int | None:
    """The SoC the finding was seen on, where it names one number (its cases ran there); else the default target."""
    text = ",".join(p.text for p in (entry.soc or ())) if entry is not None else ""
    return int(text) if text.isdigit() else None


# ---- the pieces ------------------------------------------------------------------------------------
def _environment(info: dict[str, Any], precision: str | None) -> dict[str, Any]:
    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    env = {"onnxruntime_qnn": version("onnxruntime-qnn"), "onnxruntime": version("onnxruntime"),
           "host": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
           "graph_precision": precision}  # fmt: skip
    for key in ("qnn_sdk", "build_id", "library", "backend_path", "provider", "core_api", "backend_api", "soc",
                "arch", "target", "precision", "wheel", "adapter"):  # fmt: skip
        if info.get(key) not in (None, ""):
            env[key] = info[key]
    return env


def _tensor(t: Any) -> dict[str, Any] | None:
    if t is None:
        return None
    enc = None
    if t.encoding is not None:
        e = t.encoding
        enc = {"scales": [float(s) for s in e.scales][:8], "offsets": [int(o) for o in e.offsets][:8],
               "axis": e.axis if e.per_axis else None, "bitwidth": e.bitwidth, "count": len(e.scales)}  # fmt: skip
    return {"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "static": bool(t.static), "encoding": enc}


def _param_value(value: Any) -> str:
    arr = np.asarray(value)
    if arr.ndim == 0:
        return str(arr.item())
    text = np.array2string(arr, threshold=64, separator=", ")
    return " ".join(text.split())


def op_facts(case: Case) -> dict[str, Any]:
    try:
        spec = opdefs.load(case.op)
        package, family = spec.package or "qti.aisw", spec.family
        raw = spec.raw if isinstance(spec.raw, dict) else {}
    except (KeyError, opdefs.SpecError):
        package, family, raw = "qti.aisw", "", {}
    section = (raw.get("source") or {}).get("lines")
    return {"name": case.op, "package": package, "family": family, "config": case.config, "tier": case.tier,
            "section": list(section) if section else None, "summary": raw.get("summary"),
            "formulas": list(raw.get("formulas") or []),
            "inputs": [_tensor(t) for t in case.inputs], "outputs": [_tensor(t) for t in case.outputs],
            "params": [{"name": k, "dtype": p.dtype, "tensor": bool(p.is_tensor), "value": _param_value(p.value)}
                       for k, p in case.params.items()],
            "executions": case.executions, "describe": case.describe()}  # fmt: skip


def differing(case: Case, real: list[np.ndarray], got: list[np.ndarray], precision: str | None,
              limit: int = SHOWN) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:  # fmt: skip
    """The first ``limit`` elements outside the case's budget, expected against got (in the stored units: codes for a
    fixed-point output, with the real values beside), and per output how many are outside of how many."""
    from cases.quant import dequantize
    from conformance.execute import accumulation_length
    from opdefs import dtypes
    from reference.compare import allowed_difference, encode_outputs
    from reference.tolerance import budget_for

    op = opdefs.load(case.op)
    k = accumulation_length(op, case)
    decls = case.outputs_per_execution
    stored = encode_outputs(case, real)
    rows: list[dict[str, Any]] = []
    counts: dict[str, list[int]] = {}
    for i, (decl, want_real, want, have) in enumerate(zip(decls, real, stored, got, strict=False)):
        label = decl.name if case.executions == 1 else f"{decl.name}, execution {i // len(case.outputs) + 1}"
        have = np.asarray(have)
        if tuple(have.shape) != tuple(decl.shape):
            counts[label] = [-1, int(np.prod(decl.shape))]
            rows.append({"output": label, "note": f"shape {list(have.shape)}, declared {list(decl.shape)}"})
            continue
        quantized = dtypes.get(decl.dtype).quantized
        allowed = allowed_difference(np.asarray(want_real).reshape(decl.shape), decl,
                                     budget_for(decl.dtype, op.tolerance, k, precision))  # fmt: skip
        w, h = np.asarray(want, np.float64).reshape(decl.shape), have.astype(np.float64)
        with np.errstate(invalid="ignore"):
            diff = np.where(np.isnan(w) & np.isnan(h), 0.0, np.abs(h - w))
        diff = np.where(np.isnan(diff), np.inf, diff)
        outside = diff > allowed
        counts[label] = [int(outside.sum()), int(diff.size)]
        got_real = dequantize(h, decl.encoding) if quantized and decl.encoding is not None else None
        for flat in np.flatnonzero(outside.reshape(-1))[: max(0, limit - len(rows))]:
            at = tuple(int(x) for x in np.unravel_index(int(flat), decl.shape))
            row = {"output": label, "index": list(at), "expected": float(w[at]), "got": float(h[at]),
                   "difference": float(diff[at]), "allowed": float(allowed[at]),
                   "units": "steps (codes)" if quantized else "absolute"}  # fmt: skip
            if got_real is not None:
                row["expected_real"] = float(np.asarray(want_real, np.float64).reshape(decl.shape)[at])
                row["got_real"] = float(got_real[at])
            rows.append(row)
    return rows, counts


def _replay(case: Case, case_path: Path, backend: str, entry: Entry | None, known: Expectations) -> dict[str, Any]:
    """The case run again on ``backend`` and judged as the run judges it: the verdict, the finding it shows, the
    elements that differ, and the backend's build."""
    import adapters
    from conformance.execute import RunContext, execute
    from reference.expected import expected

    options: dict[str, Any] = {}
    soc = _soc(entry)
    if soc is not None:
        options["soc"] = soc
    try:
        adapter = adapters.get(backend, options)
    except (KeyError, ValueError, TypeError, ImportError) as e:
        raise CannotExport(f"backend {backend}: {e}") from None
    try:
        ok, why = adapter.available()
        if not ok:
            raise CannotExport(f"backend {backend} unavailable: {why}")
        outcome = adapter.run(case)
        rec = execute(case, RunContext(adapter, backend, known=known), outcome=outcome)
        info = adapter.info()
    finally:
        adapter.close()
    rec.case_path = str(case_path)
    applied = known.apply_record(rec)
    precision = (outcome.details or {}).get("precision")
    out: dict[str, Any] = {
        "backend": backend, "verdict": rec.verdict, "applied": applied.verdict, "expectation": applied.expectation,
        "message": rec.message, "stage": (outcome.details or {}).get("stage"), "status": outcome.status,
        "log": _log(outcome.details or {}), "precision": precision,
        "near": applied.extra.get("near_findings") or [], "info": info,
    }  # fmt: skip
    if outcome.status == "ok" and outcome.outputs and not case.negative:
        try:
            out["differing"], out["counts"] = differing(case, expected(case), outcome.outputs, precision)
        except Exception as e:  # noqa: BLE001 - the verdict above stands; the listing is a convenience
            out["differing_error"] = f"{type(e).__name__}: {e}"
    return out


def _log(details: dict[str, Any], keep: int = 8) -> list[str]:
    """The backend's last words about the case: its warnings, or where the worker died the tail of its log."""
    lines = [str(x) for x in details.get("log") or []]
    if not lines and details.get("log_tail"):  # the Python side of a native crash (faulthandler) says nothing upstream
        python = ("File ", "Extension modules", "Current thread", "Thread 0x", "<no Python frame>", "Stack (most")
        lines = [ln for ln in str(details["log_tail"]).splitlines() if ln.strip() and
                 not ln.strip().startswith(python)]  # fmt: skip
    return lines[-keep:]


def _library_of(info: dict[str, Any]) -> str | None:
    """The QNN backend library the replay ran on (the EP's ``backend_path`` on the ONNX Runtime route)."""
    return info.get("library") or info.get("backend_path") or None


def _recordings(case: Case, out: Path, library: str | None, precision: str) -> tuple[dict, dict]:
    from adapters.qnn import capture

    saver = capture.saver(case, out / "saver", library, precision=precision)
    dlc = capture.dlc(case, out / "model.dlc", library)
    saver_d = {"files": [p.name for p in saver.files], "library": saver.library, "build_id": saver.build_id,
               "problem": saver.problem, "calls": saver.outcome.status if saver.outcome else None}  # fmt: skip
    dlc_d = {"file": dlc.files[0].name if dlc.files else None, "library": dlc.library, "build_id": dlc.build_id,
             "problem": dlc.problem, "finalize": _finalized(dlc.outcome)}  # fmt: skip
    return saver_d, dlc_d


def _finalized(outcome: Any) -> str | None:
    if outcome is None:
        return None
    stage = (outcome.details or {}).get("stage")
    # the IR backend refuses graphExecute by design: a graph that reached it was finalized, i.e. written
    return "yes" if outcome.status == "ok" or stage == "execute" else f"no ({outcome.status}: {outcome.message})"


def _qnn_inputs(case: Case, out: Path) -> list[str]:
    """The graph's non-static inputs as raw files and the ``input_list.txt`` qnn-net-run reads (names as the graph
    has them: in0, in1, ...)."""
    from adapters.qnn.graph import present_inputs

    folder = out / "qnn_inputs"
    folder.mkdir(parents=True, exist_ok=True)
    parts, files = [], []
    for i, t in enumerate(present_inputs(case)):
        if t.static or t.data is None:
            continue
        path = folder / f"in{i}.raw"
        np.ascontiguousarray(t.data).tofile(path)
        parts.append(f"in{i}:={path.relative_to(out).as_posix()}")
        files.append(path.relative_to(out).as_posix())
    (out / "input_list.txt").write_text(" ".join(parts) + "\n", encoding="utf-8")
    return files


def _onnx(case: Case, out: Path, backend: str, soc: int | None, run_standalone: bool) -> dict[str, Any]:
    """model.onnx with its feeds and expected outputs as .npy files, the EP options and the standalone script."""
    from adapters.onnx import Unlowerable
    from adapters.ort_qnn import provider_options
    from conformance.execute import onnx_repro

    try:
        model = onnx_repro(case, out / "model")
    except Unlowerable as e:
        return {"problem": f"the case has no ONNX form here: {e}"}
    arrays = np.load(out / "model.npz")
    written: dict[str, list[str]] = {"inputs": [], "expected": [], "budget": []}
    for key in arrays.files:
        kind, _, name = key.partition(":")
        folder = {"feed": "inputs", "expected": "expected", "budget": "budget"}.get(kind)
        if folder is None:
            continue
        (out / folder).mkdir(exist_ok=True)
        path = out / folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.npy"
        np.save(path, arrays[key])
        written[folder].append(path.relative_to(out).as_posix())
    ep = {k: v for k, v in provider_options("", "auto", soc, None).items() if k != "backend_path"}
    (out / "ep_options.json").write_text(json.dumps(ep, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    shutil.copyfile(STANDALONE, out / "repro.py")
    result: dict[str, Any] = {"model": model.name, "npz": "model.npz", **written, "ep_options": ep,
                              "script": "repro.py", "nodes": _node_types(model)}  # fmt: skip
    if run_standalone and backend.partition("@")[0] == EP_ROUTE:
        result["standalone"] = _standalone(out)
        result["ep_capture"] = _ep_capture(out, ep)
    return result


def _ep_capture(out: Path, ep: dict[str, str]) -> dict[str, Any]:
    """What the EP itself hands the backend, recorded by the same wheel's Saver and IR backend through the EP's own
    options (``qnn_saver_path``: the Saver as the EP's backend, writing ./saver_output of the process's cwd;
    ``dump_qnn_ir_dlc`` with ``dump_qnn_ir_dlc_dir`` and ``qnn_ir_backend_path``: a DLC per composed graph), made by
    running ``repro.py`` with them from ``ep_capture/``, where the two options files stay for a reader to do the same.
    The EP may compose the node differently from the suite's one QNN op (a Cast beside a Gather): this is the graph
    the EP route's finding is about. Neither run's outputs are judged."""
    folder = out / "ep_capture"
    if folder.exists():
        shutil.rmtree(folder)
    (folder / DLC_DUMP).mkdir(parents=True)
    got: dict[str, Any] = {"options": {}}
    for kind, options in (("saver", {**ep, **EP_SAVER}), ("dlc", {**ep, **EP_DLC})):
        name = f"{kind}_options.json"
        (folder / name).write_text(json.dumps(options, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        got["options"][kind] = name
        cmd = [sys.executable, "../repro.py", "../model.onnx", "--provider-options", name, "--json"]
        try:
            subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=STANDALONE_SECONDS,
                           env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})  # fmt: skip
        except subprocess.TimeoutExpired:
            got[f"{kind}_problem"] = f"no answer in {STANDALONE_SECONDS:g} s"
    saved = folder / "saver_output"
    got["saver"] = sorted(p.relative_to(out).as_posix() for p in saved.glob("*")) if saved.is_dir() else []
    got["dlc"] = sorted(p.relative_to(out).as_posix() for p in (folder / DLC_DUMP).glob("*.dlc"))
    got["ops"] = _saver_ops(saved / "saver_output.c")
    return got


def _saver_ops(program: Path) -> list[str]:
    """The QNN op types a Saver program adds to its graphs, in order."""
    if not program.is_file():
        return []
    text = program.read_text(encoding="utf-8", errors="replace")
    return re.findall(r'Qnn_OpConfigV1_t \w*context\w*_v1 = \{"[^"]*", "[^"]*", "(\w+)"', text)


def _node_types(model: Path) -> list[str]:
    try:
        import onnx

        return [n.op_type for n in onnx.load(str(model)).graph.node]
    except Exception:  # noqa: BLE001 - a note for the report only
        return []


def _standalone(out: Path) -> dict[str, Any]:
    """``repro.py`` run as a person outside the suite would run it: its own process, its folder as cwd, nothing of
    the suite on its path."""
    cmd = [sys.executable, "repro.py", "model.onnx", "--provider-options", "ep_options.json", "--json"]
    try:
        done = subprocess.run(cmd, cwd=out, capture_output=True, text=True, timeout=STANDALONE_SECONDS,
                              env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"reproduces": None, "why": f"no answer in {STANDALONE_SECONDS:g} s"}
    if done.returncode < 0:
        return {"reproduces": True, "why": f"the process died (signal {-done.returncode})", "exit": done.returncode}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"reproduces": None, "why": f"exit {done.returncode}: {(done.stderr or done.stdout)[-300:]}"}
    got = json.loads(lines[-1])
    return {"reproduces": got.get("reproduces"), "why": got.get("why"), "exit": done.returncode}


def _copy_case(case_path: Path, out: Path) -> str:
    folder = out / "case"
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in (".json", ".npz"):
        shutil.copyfile(case_path.with_suffix(suffix), folder / case_path.with_suffix(suffix).name)
    return (folder / case_path.with_suffix(".json").name).relative_to(out).as_posix()


def finding_facts(entry: Entry | None, op: str) -> dict[str, Any] | None:
    if entry is None:
        return None
    from reference.models import describe

    spec = entry.spec
    lines = findings_table.masteropdef_lines()
    text = None
    if spec is not None and lines is not None and spec.last < len(lines):
        text = "\n".join(lines[spec.first : spec.last + 1])
    return {"id": entry.id, "class": entry.klass, "reason": entry.reason, "contradicts": entry.info.get("contradicts"),
            "build": entry.info.get("build"), "log": entry.info.get("log"), "where": _relative(entry.where),
            "verdicts": list(entry.verdicts), "stage": ",".join(p.text for p in entry.stage or ()) or None,
            "model": entry.model, "model_sentence": describe(entry.model, op) if entry.model else None,
            "spec": {"first": spec.first, "last": spec.last, "quote": spec.quote} if spec else None,
            "masteropdef_text": text, "masteropdef": str(findings_table.masteropdef_path()),
            "case": entry.info.get("case")}  # fmt: skip


def _relative(where: str) -> str:
    """``file:line`` with the file as the checkout names it (``findings/qnn-htp.yaml:1481``)."""
    path, sep, line = where.rpartition(":")
    if not sep or not line.isdigit():
        path, line = where, ""
    try:
        path = Path(path).resolve().relative_to(REPO).as_posix()
    except ValueError:
        pass
    return f"{path}:{line}" if line else path


def export(target: str, out: Path, known: Expectations, backend: str | None = None,
           run_standalone: bool = True) -> dict[str, Any]:  # fmt: skip
    """Write one report folder at ``out``; returns its evidence (what report.md says, as data)."""
    entry, case_path, backend = resolve(target, known, backend)
    if not case_path.is_file() or not case_path.with_suffix(".npz").is_file():
        raise CannotExport(f"{target}: case {case_path} (with its .npz) is not there")
    try:
        case = Case.load(case_path)
    except (OSError, ValueError, KeyError) as e:
        raise CannotExport(f"{target}: cannot load case {case_path}: {e}") from None
    out.mkdir(parents=True, exist_ok=True)
    replay = _replay(case, case_path, backend, entry, known)
    info = replay.pop("info")
    shown = re.match(r"\[([^\]]+)\]", replay.get("expectation") or "")
    if entry is None and replay.get("applied") == "XFAIL" and shown:  # a case that shows a finding: its evidence too
        entry = next((e for e in known.entries if e.id == shown.group(1)), None)
    library = _library_of(info)
    saver, dlc = _recordings(case, out, library, str(info.get("precision") or "auto"))
    evidence: dict[str, Any] = {
        "target": target, "backend": backend, "finding": finding_facts(entry, case.op), "op": op_facts(case),
        "environment": _environment(info, replay.get("precision")), "replay": replay, "saver": saver, "dlc": dlc,
        "case_file": _copy_case(case_path, out), "case_in_checkout": _relative(str(case_path)),
        "qnn_inputs": _qnn_inputs(case, out),
        "onnx": _onnx(case, out, backend, _soc(entry), run_standalone),
        "suite_files": {"findings": _relative(entry.where).split(":")[0] if entry is not None else None},
    }  # fmt: skip
    if not evidence["environment"].get("build_id"):
        evidence["environment"]["build_id"] = saver.get("build_id") or dlc.get("build_id")
        evidence["environment"]["build_id_from"] = Path(saver.get("library") or "").name
    (out / "evidence.json").write_text(json.dumps(evidence, indent=1, sort_keys=True, default=str) + "\n",
                                       encoding="utf-8")  # fmt: skip
    (out / "report.md").write_text(render.report(evidence), encoding="utf-8")
    return evidence


def export_all(out: Path, known: Expectations, only: str | None = None, run_standalone: bool = True) -> list[str]:
    """One folder per finding (``out/<id>``); a finding that cannot be exported is one line, and the rest go on.
    Returns the lines of ``out/index.md``."""
    pattern = re.compile(only) if only else None
    lines = []
    for entry in known.entries:
        if not entry.id or (pattern is not None and not pattern.search(entry.id)):
            continue
        try:
            ev = export(entry.id, out / entry.id, known, run_standalone=run_standalone)
            lines.append(f"- [{entry.id}]({entry.id}/report.md): {render.summary_line(ev)}")
        except CannotExport as e:
            why = str(e)
            lines.append(f"- {entry.id}: cannot export: {why.removeprefix(f'{entry.id}: ')}")
        except Exception as e:  # noqa: BLE001 - one finding's trouble is its line, never the others' folders
            lines.append(f"- {entry.id}: cannot export: {type(e).__name__}: {e}")
        print(lines[-1], flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.md").write_text("# Upstream reports\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conformance upstream", description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="*", help="finding ids (findings/*.yaml) or saved case files (.json)")
    ap.add_argument("--out", type=Path, required=True,
                    help="the report's folder (one target), or the folder of one folder per target")
    ap.add_argument("--backend", default=None, help=f"backend of a case file (default {DEFAULT_BACKEND}), or "
                                                    "another backend to run a finding on")  # fmt: skip
    ap.add_argument("--all", action="store_true", help="every finding of the findings files, one folder each and "
                                                       "index.md (exit 1 when some could not be exported)")
    ap.add_argument("--only", default=None, help="with --all: only finding ids matching this regular expression")
    ap.add_argument("--file", type=Path, action="append", default=[], help="findings YAML (default: findings/*.yaml)")
    ap.add_argument("--no-standalone", action="store_true",
                    help="do not run repro.py on the ONNX model of an EP-route finding")  # fmt: skip
    args = ap.parse_args(argv)
    if not args.targets and not args.all:
        ap.error("name a finding id or case file, or --all")
    try:
        known = findings_table.load(args.file)
    except Exception as e:  # noqa: BLE001 - a findings file that does not load stops the command with its reason
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.all:
        lines = export_all(args.out, known, args.only, not args.no_standalone)
        failed = sum("cannot export" in line for line in lines)
        print(f"{len(lines) - failed} report(s) in {args.out}, {failed} finding(s) could not be exported")
        if not lines:
            print(f"error: no finding{' matches --only ' + args.only if args.only else ''}", file=sys.stderr)
            return 2
        return 1 if failed else 0
    status = 0
    for target in args.targets:
        out = args.out if len(args.targets) == 1 else args.out / Path(target).stem
        try:
            ev = export(target, out, known, args.backend, not args.no_standalone)
        except CannotExport as e:
            print(f"error: cannot export: {e}", file=sys.stderr)
            status = 2
            continue
        print(f"{out}: {render.summary_line(ev)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
