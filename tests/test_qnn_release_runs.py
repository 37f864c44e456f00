"""Every onnxruntime-qnn release through the same bindings: each library loads with its wheel's bundled
dependencies, the older struct versions hold (tensor params, quantize params, op configs give the
numbers worked out by hand), qnn-cpu runs, and a run on a release records that release.

These need the releases' wheels. They run when the wheel cache (``$QNN_CONFORMANCE_WHEELS``, default
``~/.cache/qnn-opdef-conformance/wheels``) already holds a release, or when ``QNN_CONFORMANCE_FETCH=1``
lets them fetch it with pip; otherwise each skips, saying which release is missing and how to get it.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from adapters.qnn import bindings, releases
from adapters.qnn.adapter import QnnAdapter, make_cpu
from cases.case import Case, Encoding, Param, Tensor
from tests import conformance_runs

FETCH_ENV = "QNN_CONFORMANCE_FETCH"


def release_library(release: releases.Release, kind: str = "htp"):
    """The release's library, or a skip saying how to have it."""
    if releases.installed_version() == release.wheel:
        return releases.library(release, kind, fetch_missing=False)
    if not releases.is_cached(release) and os.environ.get(FETCH_ENV) != "1":
        pytest.skip(f"onnxruntime-qnn {release.wheel} is not in {releases.cache_dir()}; fetch it with "
                    f"`pytest --backend qnn-htp --qnn-sdk ort-qnn=={release.wheel} --op ^Relu$` or set {FETCH_ENV}=1")
    try:
        return releases.library(release, kind)
    except releases.ReleaseNotAvailable as e:
        pytest.skip(str(e))


def _transpose_case() -> Case:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    return Case("Transpose", [Tensor("x", "FLOAT_32", (2, 3), x)],
                {"perm": Param("perm", "UINT_32", np.array([1, 0], np.uint32))},
                [Tensor("y", "FLOAT_32", (3, 2))])  # fmt: skip


def _u8_add_case() -> Case:
    # a: scale 0.5, offset -100 -> codes 100,102,110,90 are 0, 1, 5, -5; b: scale 0.25, offset -20 -> 0, 1, 5, -5
    # sum 0, 2, 10, -10 on scale 0.1, offset -128: codes 128, 148, 228, 28
    a = Tensor("a", "UFIXED_POINT_8", (4,), np.array([100, 102, 110, 90], np.uint8), Encoding((0.5,), (-100,)))
    b = Tensor("b", "UFIXED_POINT_8", (4,), np.array([20, 24, 40, 0], np.uint8), Encoding((0.25,), (-20,)))
    return Case("ElementWiseAdd", [a, b], {}, [Tensor("o", "UFIXED_POINT_8", (4,), None, Encoding((0.1,), (-128,)))])


@pytest.fixture(params=releases.KNOWN, ids=lambda r: f"qnn-{releases.short_qnn(r.qnn)}")
def htp_of_release(request):
    release = request.param
    ad = QnnAdapter(library=release_library(release), release=release, timeout=60)
    ok, why = ad.available()
    assert ok, f"{release}: {why}"
    yield release, ad
    ad.close()


@pytest.mark.qnn
def test_each_release_reports_the_qnn_version_its_wheel_carries(htp_of_release):
    release, ad = htp_of_release
    info = ad.info()
    assert info["qnn_sdk"] == release.qnn and info["wheel"] == f"onnxruntime-qnn=={release.wheel}", info


@pytest.mark.qnn
def test_each_release_reads_a_tensor_parameter_through_the_bindings(htp_of_release):
    """Transpose's perm is a STATIC tensor inside a Param: the param array's stride is the tensor's size."""
    _, ad = htp_of_release
    out = ad.run(_transpose_case())
    assert out.status == "ok", (out.message, out.details)
    np.testing.assert_array_equal(out.outputs[0], np.arange(6, dtype=np.float32).reshape(2, 3).T)


@pytest.mark.qnn
def test_each_release_reads_quantize_params_through_the_bindings(htp_of_release):
    _, ad = htp_of_release
    out = ad.run(_u8_add_case())
    assert out.status == "ok", (out.message, out.details)
    assert out.outputs[0].tolist() == [128, 148, 228, 28]


# ---- the QNN CPU backend -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qnn_cpu():
    release_library(releases.newest_with("cpu"), "cpu")
    ad = make_cpu({"timeout": 60})
    ok, why = ad.available()
    assert ok, why
    yield ad
    ad.close()


@pytest.mark.qnn
def test_qnn_cpu_is_the_cpu_backend_of_the_release_that_ships_it(qnn_cpu):
    info = qnn_cpu.info()
    release = releases.newest_with("cpu")
    assert info["provider"] == "CPU_QTI_AISW" and info["qnn_sdk"] == release.qnn, info
    assert "soc" not in info, "the CPU backend has no simulated target"


@pytest.mark.qnn
@pytest.mark.parametrize("make_case, expected", [
    (_transpose_case, np.arange(6, dtype=np.float32).reshape(2, 3).T),
    (_u8_add_case, np.array([128, 148, 228, 28], np.uint8)),
])  # fmt: skip
def test_qnn_cpu_computes_hand_worked_cases(qnn_cpu, make_case, expected):
    out = qnn_cpu.run(make_case())
    assert out.status == "ok", (out.message, out.details)
    np.testing.assert_array_equal(out.outputs[0], expected)


# ---- a library out of its wheel's layout ---------------------------------------------------------
@pytest.mark.qnn
def test_a_library_copied_out_of_its_wheel_loads_with_the_bundled_dependencies(tmp_path):
    source = release_library(releases.newest_with("cpu"), "cpu")
    copy = tmp_path / "elsewhere" / source.name
    copy.parent.mkdir()
    try:
        os.link(source, copy)  # same file, another directory: $ORIGIN no longer leads to onnxruntime_qnn.libs
    except OSError:
        shutil.copy2(source, copy)
    lib = bindings.QnnLibrary(copy, log_level="error")
    try:
        assert lib.path == copy and lib.build_id.startswith("v2."), lib.info()
    finally:
        lib.close()


# ---- a whole run on a release --------------------------------------------------------------------
@pytest.mark.qnn
@pytest.mark.slow
def test_a_run_with_qnn_sdk_records_that_release_in_every_record(tmp_path):
    release = releases.parse("2.47")
    release_library(release)
    results = tmp_path / "r.jsonl"
    proc = conformance_runs.run("--backend", "qnn-htp", "--qnn-sdk", "2.47", "--op", "^(Relu|Transpose)$",
                                "--examples", "1", "--seed", "1", "--no-shrink", f"--results={results}",
                                "-q")  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = [json.loads(x) for x in results.read_text().splitlines()]
    cases = [r for r in lines if r.get("kind") in ("positive", "negative")]
    assert cases, "the run recorded no case"
    seen = {(r["backend_info"].get("qnn_sdk"), r["backend_info"].get("wheel")) for r in cases}
    assert seen == {(release.qnn, f"onnxruntime-qnn=={release.wheel}")}, seen
    assert lines[0]["configuration"]["build"]["qnn_sdk"] == release.qnn, "the run header names the release too"




@pytest.mark.qnn
def test_a_release_that_is_not_there_stops_the_run_at_the_door_with_one_line():
    proc = conformance_runs.run("--backend", "qnn-htp", "--qnn-sdk", "2.45", "--op", "^Relu$")
    err = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 4 and len(err) == 1 and "QNN 2.45" in err[0], (proc.returncode, err)


# ---- the CPU backend's findings ------------------------------------------------------------------
CPU_FINDINGS = conformance_runs.REPO / "findings" / "qnn-cpu.yaml"
SEED = conformance_runs.REPO.parent / "shared" / "seeds" / "004_b46271055e0d5186.txt"


def _cpu_findings() -> list:
    from reports.expectations import Expectations

    return [pytest.param(e, id=e.id) for e in Expectations.load(CPU_FINDINGS).entries] if CPU_FINDINGS.is_file() else []


@pytest.mark.parametrize("entry", _cpu_findings())
def test_every_cpu_finding_quotes_the_masteropdef_lines_it_names(entry):
    if not SEED.is_file():
        pytest.skip(f"the MasterOpDef text is not beside the repo ({SEED})")
    lines = SEED.read_text(encoding="utf-8").splitlines()[entry.spec.first - 1:entry.spec.last]
    said = " ".join(" ".join(lines).split())
    where = f"lines {entry.spec.first}-{entry.spec.last}"
    assert " ".join(entry.spec.quote.split()) in said, f"{entry.id}: {where} say {said!r}"


@pytest.mark.qnn
@pytest.mark.parametrize("entry", _cpu_findings())
def test_every_cpu_finding_still_reproduces_with_its_case(entry, qnn_cpu):
    """A finding whose case no longer shows it is fixed in that build: move it out (or note the build). Each in a
    fresh worker, as the HTP's are: BoxWithNmsLimit's validation crash shows in a fresh worker and not in one that
    validated other ops first."""
    from conformance.execute import RunContext, execute

    with make_cpu({"timeout": 60}) as fresh:
        rec = execute(Case.load(conformance_runs.REPO / entry.info["case"]), RunContext(fresh, "qnn-cpu"))
    stage = (rec.extra.get("details") or {}).get("stage")
    assert rec.verdict in entry.verdicts, f"{entry.id}: now {rec.verdict} ({rec.message[:200]})"
    if entry.stage is not None:
        assert any(p.matches(str(stage)) for p in entry.stage), f"{entry.id}: stopped at {stage}"


@pytest.mark.qnn
def test_each_release_forks_its_fresh_workers_from_a_zygote(htp_of_release):
    """QNN 2.47 to 2.49 start the simulator's threads at backendCreate: a zygote that created the backend could not
    fork, and every fresh worker then started as a new process (184 ms against 3)."""
    release, ad = htp_of_release
    for _ in range(2):
        assert ad.run(_transpose_case()).status == "ok"
        ad._worker.renew()
    worker = ad._worker
    assert worker.use_zygote and worker._zygote is not None and worker._zygote.forks >= 2, (
        f"{release}: fresh workers were started the ordinary way, not forked from the zygote")
