"""An upstream bug report, ``report.md``, from the evidence ``python -m conformance upstream`` gathered.

Why the report is written for someone who has never seen this suite: the people who own a backend act on a bug when
they can see, on one page, what was run (package, QNN build, library, target, graph options), what the op was given
(datatypes, shapes, parameters), what the MasterOpDef says it must do, what came back instead, and how to run it with
their own tools (the Saver's C program, a DLC, an ONNX model with the EP's options). The suite's own replay line comes
too, for whoever has it.

Only data is read here (``evidence.json``, written beside the report): running the backends is the run's job
(``conformance/upstream.py``), and this room imports no later one. ``python -m reports upstream`` and ``python -m
reports findings --upstream`` therefore hand their command line to ``python -m conformance upstream`` in a child
process (``delegate``): the same command, never an import of ``conformance``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BACKEND_TITLES = {"qnn-htp": "QNN HTP simulator", "ort-qnn": "ONNX Runtime QNN EP (HTP)", "qnn-cpu": "QNN CPU backend"}
TENSOR_KINDS = {True: "static (in the graph)", False: "graph input"}


def delegate(argv: list[str]) -> int:
    """``python -m conformance upstream ARGV`` in a child process, from this checkout: its exit status."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return subprocess.call([sys.executable, "-m", "conformance", "upstream", *argv], env=env)


def load(folder: Path) -> dict[str, Any]:
    return json.loads((Path(folder) / "evidence.json").read_text(encoding="utf-8"))


def _cell(value: Any) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


def _num(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) else str(x)


def summary_line(ev: dict[str, Any]) -> str:
    r, op = ev["replay"], ev["op"]
    shown = f"{r['verdict']}" + (f" ({r['applied']})" if r.get("expectation") else "")
    parts = [f"{op['name']} {op['config']} on {ev['backend']}: {shown}",
             "saver " + (", ".join(ev["saver"]["files"]) or f"none ({ev['saver']['problem']})"),
             "dlc " + (ev["dlc"]["file"] or f"none ({ev['dlc']['problem']})"),
             "onnx " + (ev["onnx"].get("model") or "none")]  # fmt: skip
    if "standalone" in ev["onnx"]:
        s = ev["onnx"]["standalone"]
        parts.append(f"repro.py: {'REPRODUCES' if s.get('reproduces') else 'does not reproduce'}")
    return "; ".join(parts)


def _title(ev: dict[str, Any]) -> str:
    op, f = ev["op"], ev.get("finding")
    where = BACKEND_TITLES.get(ev["backend"].partition("@")[0], ev["backend"])
    what = _headline(f["reason"]) if f else f"replay of {Path(ev['case_file']).name}"
    return f"# {where}: {op['name']} {op['config']}: {_cell(what)}"


def _headline(reason: str, limit: int = 140) -> str:
    """A finding's reason as a title: whole when short, else its first sentence, else cut at a word."""
    text = " ".join(reason.split())
    if len(text) <= limit:
        return text
    first = re.split(r"(?<=[\w)\]])\. (?=[A-Z])", text)[0]
    if len(first) <= limit:
        return first
    return text[:limit].rsplit(" ", 1)[0] + " ..."


def _environment(ev: dict[str, Any]) -> list[str]:
    env = ev["environment"]
    wheel = str(env.get("wheel") or f"onnxruntime-qnn=={env.get('onnxruntime_qnn') or '?'}")
    rows = [("Package", f"{wheel.replace('==', ' ')} (installed here: onnxruntime-qnn {env.get('onnxruntime_qnn')}, "
                        f"onnxruntime {env.get('onnxruntime')})"),
            ("QNN SDK / build", f"{env.get('qnn_sdk') or '?'}, build id `{env.get('build_id') or '?'}`"
             + (f" (read from {env['build_id_from']} of the same wheel)" if env.get("build_id_from") else ""))]
    library = env.get("library") or env.get("backend_path")
    if library:
        labels = (("provider", "provider"), ("core_api", "core API"), ("backend_api", "backend API"))
        api = ", ".join(f"{label} {env[k]}" for k, label in labels if env.get(k))
        rows.append(("Backend library", f"`{_short(library)}`" + (f" ({api})" if api else "")))
    if ev["backend"].partition("@")[0] == "ort-qnn":
        rows.append(("Route", "ONNX model -> ONNX Runtime -> QNN Execution Provider -> the backend library above"))
    target = env.get("target") or "default"
    soc = env.get("soc", "default")
    htp = "soc" in env or ev["backend"].partition("@")[0] == "ort-qnn"
    if not htp:
        rows.append(("Target", "none: the backend has no simulated target (SoC and arch are HTP options)"))
    else:
        rows.append(("Target", "the simulator's own default (an SM8350-class v68 HTP; no SoC or arch config sent)"
                     if str(soc) == "default" and str(env.get("arch", "default")) == "default"
                     else f"soc_model {soc}, arch {env.get('arch', 'default')} ({target})"))  # fmt: skip
    precision = env.get("graph_precision")
    rows.append(("Graph precision", f"the suite asked for {precision} (HTP graph custom config 'precision'; the "
                                    "adapter's 'auto': float16 where the case holds a FLOAT_16 tensor, else float32)"
                 if precision else "no precision option sent (the backend's default)"))  # fmt: skip
    rows.append(("Host", env.get("host", "?") + (" (the HTP runs in simulation on x86_64)" if htp and "x86_64" in
                                                 env.get("host", "") else "")))  # fmt: skip
    return ["## Environment", "", "| | |", "|---|---|", *[f"| {k} | {_cell(v)} |" for k, v in rows], ""]


def _short(path: str) -> str:
    """A library's path from its wheel's directory on (``onnxruntime_qnn/libQnnHtp.so``), as a reader's would be."""
    p = Path(path)
    return f"{p.parent.name}/{p.name}" if p.parent.name else p.name


def _encoding(enc: dict[str, Any] | None) -> str:
    if not enc:
        return "-"
    if enc.get("axis") is not None:
        text = f"per axis {enc['axis']}, {enc['count']} scales {enc['scales']}, offsets {enc['offsets']}"
    else:
        text = f"scale {enc['scales'][0]:.6g}, offset {enc['offsets'][0]}"
    return text + (f", bit width {enc['bitwidth']}" if enc.get("bitwidth") else "")


def _op(ev: dict[str, Any]) -> list[str]:
    op = ev["op"]
    out = ["## The op", "", f"`{op['name']}` (package `{op['package']}`"
           + (f", family {op['family']}" if op.get("family") else "") + f"), datatype configuration "
           f"`{op['config']}`, {op.get('tier') or 'typical'} case" + (f", executed {op['executions']} times"
                                                                       if op.get("executions", 1) > 1 else "") + ".",
           "", "| tensor | datatype | shape | kind | quantization (real = scale x (code + offset)) |",
           "|---|---|---|---|---|"]  # fmt: skip
    for i, t in enumerate(op["inputs"]):
        if t is None:
            out.append(f"| in[{i}] | (not given) | | | |")
            continue
        out.append(f"| {t['name']} | {t['dtype']} | {t['shape']} | {TENSOR_KINDS[t['static']]} | "
                   f"{_cell(_encoding(t['encoding']))} |")  # fmt: skip
    for t in op["outputs"]:
        out.append(f"| {t['name']} | {t['dtype']} | {t['shape']} | graph output | {_cell(_encoding(t['encoding']))} |")
    if op["params"]:
        out += ["", "| parameter | datatype | value |", "|---|---|---|"]
        out += [f"| {p['name']} | {p['dtype']}{' (tensor)' if p['tensor'] else ''} | `{_cell(p['value'])}` |"
                for p in op["params"]]  # fmt: skip
    out += ["", "Input values: `inputs/*.npy` (by ONNX graph input), `qnn_inputs/*.raw` (by QNN graph input, for "
            "qnn-net-run); static tensors are inside `saver/params.bin`, `model.dlc` and `model.onnx`.", ""]
    return out


def _spec(ev: dict[str, Any]) -> list[str]:
    f, op = ev.get("finding"), ev["op"]
    out = ["## What the MasterOpDef says", ""]
    if op.get("section"):
        first, last = op["section"]
        out += [f"The op's section is lines {first}-{last} of the QNN MasterOpDef"
                + (f": {_cell(op['summary'])}" if op.get("summary") else "."), ""]  # fmt: skip
        out += [f"- formula: `{_cell(x)}`" for x in op.get("formulas") or []]
        out += [""] if op.get("formulas") else []
    if not f:
        return out if op.get("section") else []
    spec = f.get("spec")
    if spec:
        lines = f"lines {spec['first']}-{spec['last']}" if spec["last"] != spec["first"] else f"line {spec['first']}"
        out += [f"QNN MasterOpDef, {lines}:", "", f"> {_cell(spec['quote'])}", ""]
        if f.get("masteropdef_text"):
            out += ["The lines as the document has them:", "", "```", f["masteropdef_text"].rstrip(), "```", ""]
    if f.get("contradicts"):
        out += [f"What the backend contradicts: {_cell(f['contradicts'])}", ""]
    out += [f"Class: **{f.get('class') or 'unclassified'}**"
            + {"deviation": " (the spec says one thing, the backend does another)",
               "self-contradiction": " (validation accepts the op, finalize or execute then fails)",
               "accuracy": " (outside the budget, inside the finding's band)",
               "crash": " (the backend's process dies)"}.get(f.get("class") or "", "") + ".", ""]  # fmt: skip
    if f.get("model_sentence"):
        out += [f"The bug in one sentence (the finding's model, checked on the backend's outputs): "
                f"{f['model_sentence']}", ""]  # fmt: skip
    return out


def _results(ev: dict[str, Any]) -> list[str]:
    r = ev["replay"]
    out = ["## Expected against got", "",
           f"Replayed on `{ev['backend']}` for this report: **{r['verdict']}**"
           + (f", stage {r['stage']}" if r.get("stage") and r["stage"] != "ok" else "")
           + (f"; under the suite's findings: {r['applied']} ({_cell(r['expectation'])})" if r.get("expectation")
              else "") + "."]  # fmt: skip
    if r.get("applied") == "XFAIL":
        out.append("The backend still shows the finding's bug (XFAIL: the case fails as the finding says"
                   + (", its outputs as the finding's model gives them)." if (ev.get("finding") or {}).get("model")
                      else ")."))  # fmt: skip
    elif r.get("applied") == "XPASS":
        out.append("**The case passes now**: the bug looks fixed in this build.")
    elif r.get("near"):
        out.append(f"The case fails but not as the finding says (near {', '.join(r['near'])}): read the numbers below.")
    if r.get("message"):
        out += ["", f"The suite's judgement: {_cell(r['message'])[:1500]}"]
    rows = r.get("differing") or []
    if rows:
        units = {row.get("units") for row in rows if "units" in row}
        out += ["", "First elements outside the budget (`allowed`: the largest difference the suite accepts there, "
                f"{' / '.join(sorted(u for u in units if u))}; the reference is a float64 computation of the "
                "MasterOpDef formula):", "", "| output | index | expected | got | difference | allowed |",
                "|---|---|---|---|---|---|"]  # fmt: skip
        for row in rows:
            if "note" in row:
                out.append(f"| {row['output']} | | | | {row['note']} | |")
                continue
            exp, got = _num(row["expected"]), _num(row["got"])
            if "expected_real" in row:
                exp, got = f"{exp} (= {_num(row['expected_real'])})", f"{got} (= {_num(row['got_real'])})"
            out.append(f"| {row['output']} | {row['index']} | {exp} | {got} | {_num(row['difference'])} | "
                       f"{_num(row['allowed'])} |")  # fmt: skip
        counts = r.get("counts") or {}
        out += ["", "Elements outside the budget: " + ", ".join(
            f"{k} {n} of {m}" if n >= 0 else f"{k} wrong shape" for k, (n, m) in counts.items()) + "."]  # fmt: skip
    if r.get("log"):
        out += ["", "The backend's log for the case:", "", "```", *[str(x) for x in r["log"]], "```"]
    f = ev.get("finding") or {}
    if f.get("log") and f.get("build"):
        out += ["", f"As recorded with the finding (build {f['build']}): `{_cell(f['log'])}`"]
    return [*out, ""]


def _reproduce(ev: dict[str, Any]) -> list[str]:
    env, saver, dlc, onnx = ev["environment"], ev["saver"], ev["dlc"], ev["onnx"]
    findings_file = (ev.get("suite_files") or {}).get("findings")
    out = ["## Reproduce", ""]
    ep_route = ev["backend"].partition("@")[0] == "ort-qnn"
    if ep_route:
        out += _onnx(ev, onnx, first=True)
    out += ["### Without this suite: the QNN Saver capture (`saver/`)", ""]
    if ep_route:
        out += ["On this route `saver/` and `model.dlc` hold the case as the one QNN op it is about, built the way the "
                "suite's direct QNN API route builds it, not the graph the EP composed (that one is in `ep_capture/`, "
                "above).", ""]  # fmt: skip
    if saver["files"]:
        build = saver.get("build_id") or "?"
        library = Path(str(env.get("library") or "libQnnHtp.so")).name
        link = library[3:-3] if library.startswith("lib") and library.endswith(".so") else "QnnHtp"
        wheel = str(env.get("wheel") or f"onnxruntime-qnn=={env.get('onnxruntime_qnn')}")
        if env.get("build_id") and saver.get("build_id") and env["build_id"] != saver["build_id"]:
            out += [f"The backend's release ({wheel}, build `{env['build_id']}`) keeps no Saver in this suite's "
                    f"cache: the capture was made with the installed wheel's (build `{build}`); the calls are the "
                    "same C API.", ""]  # fmt: skip
        out += ["`saver_output.c` and `params.bin` record every QNN call the suite made for this case (backend, "
                "validation, context, graph, tensors, node, finalize, execute), written by "
                f"`{_short(saver['library'])}` (build `{build}`) through the same graph-building code as the replay "
                "above. "
                "Build it against the QNN SDK's headers of that release (not in the wheel: the program was not built "
                "for this report) and link the backend to test:", "",
                "```sh", f"pip install {wheel}   # the backend library: {library}", "cd saver",
                "WHEEL=$(python -c 'import onnxruntime_qnn, os; print(os.path.dirname(onnxruntime_qnn.__file__))')",
                f'cc -std=gnu99 -I"$QNN_SDK_ROOT/include/QNN" saver_output.c -o repro -L"$WHEEL" -l{link} '
                '-Wl,-rpath,"$WHEEL"', "./repro --logging warn   # reads params.bin from the current directory",
                "```", "",
                "The program checks each call's return code and prints the failing line; it does not print outputs "
                "(print the output tensor's client buffer after `graphExecute` to see them). The Saver records no HTP "
                "custom config, so the program sends none: "
                + (f"the graph precision the suite asked for ({env['graph_precision']}) is not in it"
                   if env.get("graph_precision") else "nothing is lost here")
                + ("" if str(env.get("soc", "default")) == "default" else
                   f", nor the SoC (soc_model {env.get('soc')}): add it as a device config")
                + ". The Saver's own results (success, zeros) are not results and were not judged.", ""]  # fmt: skip
    else:
        out += [f"No capture: {saver['problem']}", ""]
    out += ["### Without this suite: the DLC (`model.dlc`)", ""]
    if dlc.get("file"):
        out += [f"The graph as `{_short(dlc['library'])}` (build `{dlc.get('build_id') or '?'}`) serialized it at "
                "graphFinalize; the graph's inputs are in `qnn_inputs/` and listed in `input_list.txt`. With the "
                "QNN SDK's tools (not in the wheel, not run here):", "", "```sh",
                'qnn-net-run --backend "$QNN_SDK_ROOT/lib/x86_64-linux-clang/libQnnHtp.so" '
                '--model "$QNN_SDK_ROOT/lib/x86_64-linux-clang/libQnnModelDlc.so" --dlc_path model.dlc '
                "--input_list input_list.txt --output_dir dlc_output", "```", "",
                "Outputs land in `dlc_output/Result_0/` as raw files; compare them with `expected/*.npy` "
                "(same order and type as the graph's outputs)." if onnx.get("model") else
                "Outputs land in `dlc_output/Result_0/` as raw files.", ""]  # fmt: skip
    else:
        out += [f"No DLC: {dlc['problem']}", ""]
    if not ep_route:
        out += _onnx(ev, onnx, first=False)
    in_checkout = ev.get("case_in_checkout") or ""
    case_path = in_checkout if in_checkout and not Path(in_checkout).is_absolute() else ev["case_file"]
    where = ("its case is in the checkout" if case_path == in_checkout
             else "run from this folder: the case's files are in `case/`")  # fmt: skip
    out += ["### With this suite", "", f"From a checkout of the suite ({where}; a copy is in `case/`):", "", "```sh",
            f"python -m conformance replay {case_path} --backend {ev['backend']}"
            + (f" --expectations {findings_file}" if findings_file else ""),
            f"python -m conformance upstream {ev['target']} --out DIR   # this folder again", "```", ""]  # fmt: skip
    return out


def _onnx(ev: dict[str, Any], onnx: dict[str, Any], first: bool) -> list[str]:
    title = "### Without this suite: ONNX Runtime with the QNN EP (`model.onnx`)"
    if not onnx.get("model"):
        return [title, "", f"No ONNX model: {onnx.get('problem', 'not written')}", ""]
    options = json.dumps({"backend_path": "<onnxruntime_qnn/libQnnHtp.so>", **onnx["ep_options"]}, sort_keys=True)
    out = [title, "", f"`model.onnx` ({' -> '.join(onnx.get('nodes') or []) or 'the op'}), its inputs "
           "(`inputs/*.npy`), the outputs the MasterOpDef gives (`expected/*.npy`, in the output's own type: codes for "
           "a quantized output) and per element the difference the suite accepts (`budget/*.npy`); the same arrays "
           "are in `model.npz`, which `repro.py` reads. `repro.py` needs only numpy, onnxruntime and onnxruntime-qnn:",
           "", "```sh", f"pip install onnxruntime-qnn=={ev['environment'].get('onnxruntime_qnn') or 'X'} numpy",
           "python repro.py model.onnx --provider-options ep_options.json", "```", "",
           f"The session: QNN EP options `{options}` (`ep_options.json` holds all but the path), session config "
           "`session.disable_cpu_ep_fallback=1`, so that every node runs on the HTP or the session is "
           "refused."]  # fmt: skip
    s = onnx.get("standalone")
    if s is not None:
        verdict = "REPRODUCES" if s.get("reproduces") else ("DOES NOT REPRODUCE" if s.get("reproduces") is False
                                                            else "UNDECIDED")  # fmt: skip
        out += ["", f"Run for this report, outside the suite: **{verdict}**: {_cell(s.get('why'))}"]
    cap = onnx.get("ep_capture")
    if cap:
        ops = " -> ".join(cap.get("ops") or []) or "?"
        files = [*cap.get("saver", []), *cap.get("dlc", [])]
        out += ["", "What the EP hands the backend (`ep_capture/`): the same model run by `repro.py` with the EP's own "
                "recording options, the same wheel's Saver as its backend (`qnn_saver_path`: "
                "`ep_capture/saver_output/`) and the IR backend's DLC dump (`dump_qnn_ir_dlc`: "
                "`ep_capture/dlc_dump/*.dlc`). The EP composed: "
                f"{ops}." + ("" if files else " (Nothing was written.)"), "", "```sh", "cd ep_capture",
                f"python ../repro.py ../model.onnx --provider-options {cap['options']['saver']}   "
                "# writes ./saver_output (its outputs are not results)",
                f"python ../repro.py ../model.onnx --provider-options {cap['options']['dlc']}   "
                "# writes ./dlc_dump/*.dlc (execute is refused: the IR backend runs nothing)", "```"]  # fmt: skip
        for kind in ("saver", "dlc"):
            if cap.get(f"{kind}_problem"):
                out.append(f"({kind}: {cap[f'{kind}_problem']})")
    elif not first:
        out += ["", "This finding is about the QNN API route: the ONNX model is the same op for the EP's maintainers "
                "to try, and was not run for this report (the EP may hand the backend a different graph)."]  # fmt: skip
    return [*out, ""]


def _files(ev: dict[str, Any]) -> list[str]:
    rows = [("report.md", "this report"), ("evidence.json", "what this report says, as data"),
            (ev["case_file"], "the suite's case (with its .npz)")]
    rows += [(f"saver/{name}", "QNN Saver capture") for name in ev["saver"]["files"]]
    if ev["dlc"].get("file"):
        rows += [(ev["dlc"]["file"], "DLC (libQnnIr.so)"), ("input_list.txt", "qnn-net-run's input list")]
        rows += [(p, "a QNN graph input, raw") for p in ev.get("qnn_inputs") or []]
    onnx = ev["onnx"]
    if onnx.get("model"):
        rows += [(onnx["model"], "ONNX model"), (onnx["npz"], "feeds, expected outputs and budget, for repro.py"),
                 ("ep_options.json", "QNN EP provider options"), ("repro.py", "standalone runner")]
        rows += [(p, "ONNX graph input") for p in onnx.get("inputs") or []]
        rows += [(p, "expected output") for p in onnx.get("expected") or []]
        cap = onnx.get("ep_capture") or {}
        rows += [(p, "what the EP handed the backend, recorded") for p in [*cap.get("saver", []), *cap.get("dlc", [])]]
    return ["## Files", "", *[f"- `{a}`: {b}" for a, b in rows], ""]


def report(ev: dict[str, Any]) -> str:
    """report.md from the evidence of one finding or case."""
    f = ev.get("finding")
    head = [_title(ev), ""]
    if f:
        head += [f"Finding `{f['id']}` of the QNN op-definition conformance suite ({f['where'].split(':')[0]}), "
                 f"class {f.get('class')}, first seen on build `{f.get('build')}`.", ""]  # fmt: skip
    else:
        head += [f"A saved case of the QNN op-definition conformance suite, run on `{ev['backend']}`.", ""]
    return "\n".join([*head, *_environment(ev), *_op(ev), *_spec(ev), *_results(ev), *_reproduce(ev),
                      *_files(ev)]).rstrip() + "\n"  # fmt: skip
