"""Upstream bug reports (``python -m conformance upstream``, ``python -m reports upstream``): a finding travels as the
QNN Saver's program, a DLC and an ONNX model with the EP's options, each runnable without this suite.

The captures need the simulator's wheel (its libQnnSaver.so and libQnnIr.so) and carry its marker; the report's
text, the element listing and the standalone script's imports are checked without it.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cases.case import Case
from reports import findings
from reports import upstream as render
from tests.paths import REPO, SEED
from tests.simulator import NEEDS_SIMULATOR

KNOWN = findings.load()
BY_ID = {e.id: e for e in KNOWN.entries if e.id}
# one finding each of four op families: normalization, matmul, data movement, convolution
SAMPLE = ("rmsnorm-beta-ignored", "matmul-fixed-bias-ignored", "stridedslice-negative-stride-begin-not-clipped",
          "conv-16x8-precision")  # fmt: skip
STANDALONE = REPO / "findings" / "cases" / "ort-qnn" / "repro.py"


def _case(finding_id: str) -> Case:
    return Case.load((REPO / BY_ID[finding_id].info["case"]).with_suffix(".json"))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Each sample finding's case recorded once by the Saver and the IR backend: files and the case."""
    from adapters.qnn import capture

    out = {}
    for fid in SAMPLE:
        folder = tmp_path_factory.mktemp(fid)
        case = _case(fid)
        saver = capture.saver(case, folder / "saver")
        dlc = capture.dlc(case, folder / "model.dlc")
        out[fid] = {"case": case, "saver": saver, "dlc": dlc, "folder": folder}
    return out


def _graph_nodes(program: str) -> list[tuple[str, str]]:
    """(package, op type) of every node the Saver's program adds to a graph (``graphAddNode``'s op configs)."""
    return re.findall(r'Qnn_OpConfigV1_t \w*context\w*_v1 = \{"[^"]*", "([^"]*)", "(\w+)"', program)


# ---- the captures (the simulator's wheel) ----------------------------------------------------------------------
@pytest.mark.parametrize("finding_id", SAMPLE)
@NEEDS_SIMULATOR[0]
@NEEDS_SIMULATOR[1]
def test_the_saver_capture_adds_the_ops_qnn_type_to_its_graph(recorded: dict, finding_id: str) -> None:
    got = recorded[finding_id]
    assert got["saver"].files, f"{finding_id}: no Saver capture: {got['saver'].problem}"
    program = (got["folder"] / "saver" / "saver_output.c").read_text(encoding="utf-8")
    assert _graph_nodes(program) == [("qti.aisw", got["case"].op)], (
        f"{finding_id}: the capture's graph nodes are {_graph_nodes(program)}, not one {got['case'].op}")


@pytest.mark.parametrize("finding_id", SAMPLE)
@NEEDS_SIMULATOR[0]
@NEEDS_SIMULATOR[1]
def test_the_saver_capture_names_every_parameter_of_the_case(recorded: dict, finding_id: str) -> None:
    got = recorded[finding_id]
    program = (got["folder"] / "saver" / "saver_output.c").read_text(encoding="utf-8")
    named = set(re.findall(r'Qnn_Param_t \w+ = \{\(Qnn_ParamType_t\)\d, "(\w+)"', program))
    missing = sorted(set(got["case"].params) - named)
    assert not missing, f"{finding_id}: the capture names no parameter {missing} (it names {sorted(named)})"


@pytest.mark.parametrize("finding_id", SAMPLE)
@NEEDS_SIMULATOR[0]
@NEEDS_SIMULATOR[1]
def test_the_saver_capture_holds_the_tensors_bytes(recorded: dict, finding_id: str) -> None:
    got = recorded[finding_id]
    case = got["case"]
    static = sum(np.asarray(t.data).nbytes for t in case.inputs if t is not None and t.static)
    params = sum(np.asarray(p.value).nbytes for p in case.params.values() if p.is_tensor)
    size = (got["folder"] / "saver" / "params.bin").stat().st_size
    assert size >= static + params, f"{finding_id}: params.bin has {size} bytes, the static data {static + params}"


@pytest.mark.parametrize("finding_id", SAMPLE)
@NEEDS_SIMULATOR[0]
@NEEDS_SIMULATOR[1]
def test_the_dlc_is_written_and_names_the_op(recorded: dict, finding_id: str) -> None:
    got = recorded[finding_id]
    path = got["folder"] / "model.dlc"
    assert got["dlc"].files == [path.absolute()], f"{finding_id}: no DLC: {got['dlc'].problem}"
    data = path.read_bytes()
    assert data[:2] == b"PK", f"{finding_id}: the DLC is not the zip archive libQnnIr.so writes"
    assert got["case"].op.encode() in data, f"{finding_id}: the DLC does not name {got['case'].op}"


@NEEDS_SIMULATOR[0]
@NEEDS_SIMULATOR[1]
def test_the_ir_backend_runs_nothing_so_its_outcome_is_never_a_result(recorded: dict) -> None:
    outcomes = {fid: (got["dlc"].outcome.status, got["dlc"].outcome.details.get("stage")) for fid, got in
                recorded.items()}  # fmt: skip
    assert set(outcomes.values()) == {("error", "execute")}, f"the IR backend's outcomes: {outcomes}"


@NEEDS_SIMULATOR[0]
@NEEDS_SIMULATOR[1]
def test_a_findings_report_names_the_qnn_build_and_holds_every_capture(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance import upstream

    monkeypatch.setenv(findings.MASTEROPDEF_ENV, str(SEED))
    ev = upstream.export("rmsnorm-beta-ignored", tmp_path, KNOWN, run_standalone=False)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    build = ev["environment"]["build_id"]
    assert re.fullmatch(r"v\d+\.\d+\.\d+\.\d+", build or ""), f"the replay reported build {build!r}"
    assert f"`{build}`" in text, "report.md does not name the QNN build"
    wanted = ["saver/saver_output.c", "saver/params.bin", "model.dlc", "model.onnx", "expected/out0.npy"]
    missing = [p for p in wanted if not (tmp_path / p).is_file()]
    assert not missing, f"the report's folder lacks {missing}"
    assert ev["replay"]["applied"] == "XFAIL", f"the finding no longer shows: {ev['replay']}"


@NEEDS_SIMULATOR[0]
@NEEDS_SIMULATOR[1]
def test_an_ep_route_report_holds_the_onnx_model_and_options_that_show_the_finding(tmp_path: Path) -> None:
    from conformance import upstream

    upstream.export("ep-gather-s8-sign-flip", tmp_path, KNOWN)
    options = json.loads((tmp_path / "ep_options.json").read_text(encoding="utf-8"))
    done = subprocess.run([sys.executable, "repro.py", "model.onnx", "--provider-options", "ep_options.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    assert done.returncode == 0 and last.startswith("REPRODUCES"), f"with EP options {options}: {last}"


# ---- the report and the pieces that need no backend ------------------------------------------------------------
@pytest.fixture
def evidence() -> dict:
    """The evidence of a report as conformance/upstream.py writes it, with a Saver that could not run."""
    case = _case("rmsnorm-beta-ignored")
    from conformance.upstream import finding_facts, op_facts

    return {
        "target": "rmsnorm-beta-ignored", "backend": "qnn-htp",
        "finding": finding_facts(BY_ID["rmsnorm-beta-ignored"], case.op),
        "op": op_facts(case), "case_file": "case/rmsnorm-beta-ignored.json", "qnn_inputs": ["qnn_inputs/in0.raw"],
        "case_in_checkout": BY_ID["rmsnorm-beta-ignored"].info["case"],
        "environment": {"onnxruntime_qnn": "2.7.0", "onnxruntime": "1.32.0", "qnn_sdk": "2.51.0",
                        "build_id": "v2.51.0.1", "library": "/x/onnxruntime_qnn/libQnnHtp.so", "soc": "default",
                        "arch": "default", "graph_precision": "float16", "host": "Linux x86_64"},
        "replay": {"verdict": "FAIL", "applied": "XFAIL", "expectation": "[rmsnorm-beta-ignored] drops beta",
                   "message": "out[0]: 1/4 elements outside", "stage": "ok", "near": [], "log": [],
                   "differing": [{"output": "out[0]", "index": [0, 1], "expected": 2.5, "got": 0.5, "difference": 2.0,
                                  "allowed": 0.01, "units": "absolute"}],
                   "counts": {"out[0]": [1, 4]}},
        "saver": {"files": [], "library": "/x/onnxruntime_qnn/libQnnSaver.so", "build_id": "",
                  "problem": "libQnnSaver.so does not exist"},
        "dlc": {"file": "model.dlc", "library": "/x/onnxruntime_qnn/libQnnIr.so", "build_id": "v2.51.0.1"},
        "onnx": {"problem": "the case has no ONNX form here: no lowering"},
        "suite_files": {"findings": "findings/qnn-htp.yaml"},
    }  # fmt: skip


def test_the_report_quotes_the_masteropdef_at_the_findings_lines(evidence: dict) -> None:
    spec = BY_ID["rmsnorm-beta-ignored"].spec
    text = render.report(evidence)
    assert f"lines {spec.first}-{spec.last}" in text and spec.quote[:60] in text, "the quote or its lines are missing"


def test_the_report_sets_expected_against_got_element_by_element(evidence: dict) -> None:
    text = render.report(evidence)
    assert "| out[0] | [0, 1] | 2.5 | 0.5 | 2 | 0.01 |" in text, "the differing element's row is not in the report"


def test_the_report_says_why_a_capture_is_missing(evidence: dict) -> None:
    text = render.report(evidence)
    assert "No capture: libQnnSaver.so does not exist" in text, "a missing Saver capture is not explained"


def test_the_report_gives_the_suites_replay_line_with_the_findings_file(evidence: dict) -> None:
    text = render.report(evidence)
    line = f"python -m conformance replay {evidence['case_in_checkout']} --backend qnn-htp --expectations " \
           "findings/qnn-htp.yaml"
    assert line in text, "the suite's replay line is not in the report"


def test_the_report_names_the_graph_precision_the_saver_could_not_record(evidence: dict) -> None:
    evidence["saver"].update(files=["saver_output.c", "params.bin"], build_id="v2.51.0.1", problem="")
    text = render.report(evidence)
    assert "the graph precision the suite asked for (float16) is not in it" in text, "the lost precision is not said"


def test_every_findings_model_reads_as_one_sentence() -> None:
    from reference.models import describe

    vague = {e.id: describe(e.model, e.op[0].text) for e in KNOWN.entries if e.model is not None}
    vague = {k: v for k, v in vague.items() if "bug named" in v or "unreadable" in v or len(v) < 20}
    assert not vague, f"{len(vague)} finding model(s) without a sentence: {vague}"


def test_differing_lists_the_elements_outside_the_budget_in_order() -> None:
    from conformance.upstream import differing
    from reference.expected import expected

    case = _case("rmsnorm-beta-ignored")
    real = expected(case)
    got = [np.asarray(real[0], np.float16).copy()]
    got[0][1, 0] += np.float16(1.0)
    rows, counts = differing(case, real, got, precision="float16")
    assert [r["index"] for r in rows] == [[1, 0]] and counts == {"out[0]": [1, 4]}, f"{rows} {counts}"


def test_the_standalone_script_imports_nothing_of_the_suite() -> None:
    allowed = {"numpy", "onnxruntime", "onnxruntime_qnn", *sys.stdlib_module_names}
    tree = ast.parse(STANDALONE.read_text(encoding="utf-8"))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= allowed, f"repro.py imports {sorted(names - allowed)}"


def test_reports_hands_upstream_to_the_run_without_importing_it() -> None:
    done = subprocess.run([sys.executable, "-m", "reports", "upstream", "--help"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "python -m conformance upstream" in done.stdout, done.stdout + done.stderr


def test_an_unknown_finding_is_refused_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "conformance", "upstream", "no-such-finding", "--out", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "no-such-finding" in lines[0], done.stderr


def test_a_finding_that_cannot_be_exported_is_one_line_and_the_rest_go_on(tmp_path: Path) -> None:
    entries = [{"id": "no-case-here", "backend": "qnn-htp", "op": "RmsNorm", "verdicts": ["FAIL"], "reason": "x",
                "case": "findings/cases/RmsNorm/not-there.json"},
               {"id": "unknown-backend", "backend": "no-such-backend", "op": "RmsNorm", "verdicts": ["FAIL"],
                "reason": "y", "case": BY_ID["rmsnorm-beta-ignored"].info["case"]}]  # fmt: skip
    (tmp_path / "f.yaml").write_text(json.dumps({"expectations": entries}), encoding="utf-8")  # YAML reads JSON
    done = subprocess.run([sys.executable, "-m", "conformance", "upstream", "--all", "--file", str(tmp_path / "f.yaml"),
                           "--out", str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True, timeout=120)
    index = (tmp_path / "out" / "index.md").read_text(encoding="utf-8").splitlines()
    lines = [ln for ln in index if "cannot export" in ln]
    assert done.returncode == 1 and [ln.split(":")[0] for ln in lines] == [f"- {e['id']}" for e in entries], index
