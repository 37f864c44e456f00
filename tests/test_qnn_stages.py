"""Where a case stopped in the backend (validate / finalize / execute / ok), the simulated SoC as a run option,
and the recorded findings still reproducing on the HTP simulator."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as plain `pytest` from anywhere

from adapters.base import output_digest  # noqa: E402
from adapters.qnn import adapter as qnn_adapter  # noqa: E402
from cases.case import Case, Param, Tensor  # noqa: E402
from reports.expectations import Expectations  # noqa: E402
from tests.simulator import MISSING, NEEDS_SIMULATOR  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FINDINGS = REPO / "findings" / "qnn-htp.yaml"

needs_simulator = NEEDS_SIMULATOR


def _transpose(perm: list[int], out_shape: tuple[int, ...]) -> Case:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    perm_param = Param("perm", "UINT_32", np.array(perm, np.uint32))
    return Case("Transpose", [Tensor("in[0]", "FLOAT_32", (2, 3), x)], {"perm": perm_param},
                [Tensor("out[0]", "FLOAT_32", out_shape)])


# ---- options (no simulator needed) -----------------------------------------------------------------
def test_soc_and_arch_come_from_the_environment_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(qnn_adapter.ENV_SOC, "43")
    monkeypatch.setenv(qnn_adapter.ENV_ARCH, "0x49")
    assert qnn_adapter.target_from_env({}) == {"soc": 43, "arch": 73}


def test_an_explicit_soc_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(qnn_adapter.ENV_SOC, "43")
    assert qnn_adapter.target_from_env({"soc": 57})["soc"] == 57


def test_a_soc_that_is_not_a_number_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(qnn_adapter.ENV_SOC, "sm8550")
    with pytest.raises(ValueError, match=r"\$QNN_HTP_SOC='sm8550' is not an integer"):
        qnn_adapter.target_from_env({})


def test_the_ort_qnn_adapter_takes_the_same_soc_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from adapters import ort_qnn

    monkeypatch.setenv(qnn_adapter.ENV_SOC, "43")
    ad = ort_qnn.make({"library": str(Path(__file__))})  # any existing file: the worker is not started
    assert ad.soc == 43, ad.soc
    assert ort_qnn.provider_options("lib", "auto", ad.soc, None)["soc_model"] == "43"


def test_the_replay_command_of_a_run_on_another_soc_names_that_soc(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.options import replay_line

    monkeypatch.setenv(qnn_adapter.ENV_SOC, "43")
    monkeypatch.setenv(qnn_adapter.ENV_ARCH, "73")
    opts = replay_line({"qnn_precision": "auto"}, dict(os.environ))
    assert opts == "--qnn-soc 43 --qnn-arch 73", opts


def test_the_replay_command_of_a_default_soc_run_names_none(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.options import replay_line

    monkeypatch.setenv(qnn_adapter.ENV_SOC, "")
    monkeypatch.setenv(qnn_adapter.ENV_ARCH, "")
    line = replay_line({}, dict(os.environ))
    assert "--qnn-soc" not in line, line


def test_replay_hands_its_soc_to_the_adapters_it_builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import conformance.replay as cli

    monkeypatch.setenv(qnn_adapter.ENV_SOC, "")  # restored after the test, whatever replay sets
    path = _transpose([1, 0], (3, 2)).save(tmp_path / "t")
    assert cli.main(["replay", str(path), "--backend", "reference", "--qnn-soc", "43"]) == 0
    assert os.environ.get(qnn_adapter.ENV_SOC) == "43", os.environ.get(qnn_adapter.ENV_SOC)


def test_the_output_digest_depends_on_bits_shape_and_dtype() -> None:
    a = np.zeros((2, 2), np.float32)
    assert output_digest([a]) == output_digest([a.copy()])
    assert output_digest([a]) != output_digest([a.reshape(4)])
    assert output_digest([a]) != output_digest([a.astype(np.float16)])
    b = a.copy()
    b[0, 0] = -0.0
    assert output_digest([a]) != output_digest([b]), "a sign bit is a different output"


# ---- on the simulator ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qnn():
    if MISSING:
        pytest.skip(MISSING)
    ad = qnn_adapter.QnnAdapter(timeout=30)
    ok, why = ad.available()
    if not ok:
        pytest.skip(why)
    yield ad
    ad.close()


@pytest.mark.qnn
def test_a_case_that_runs_through_says_ok_and_carries_its_output_digest(qnn) -> None:
    out = qnn.run(_transpose([1, 0], (3, 2)))
    assert out.status == "ok" and out.details["stage"] == "ok", (out.status, out.details)
    assert out.details["output_digest"] == output_digest(out.outputs)


@pytest.mark.qnn
def test_a_refused_case_stops_at_validate(qnn) -> None:
    out = qnn.run(_transpose([1, 0], (2, 3)))  # wrong output shape: validation refuses it
    assert out.status == "rejected" and out.details["stage"] == "validate", (out.status, out.details)


@pytest.mark.qnn
def test_the_default_soc_is_written_into_backend_info(qnn) -> None:
    info = qnn.info()
    assert (info["soc"], info["arch"]) == ("default", "default")


@pytest.mark.qnn
@pytest.mark.skipif(not FINDINGS.is_file(), reason="no findings file")
def test_a_finalize_failure_names_its_stage_and_call(qnn) -> None:
    case = Case.load(REPO / "findings/cases/Reshape/reshape-shape-input-static.json")
    out = qnn.run(case)
    assert out.status == "error" and (out.details["stage"], out.details["call"]) == ("finalize", "graphFinalize"), \
        (out.status, out.details)  # fmt: skip


@pytest.mark.qnn
@pytest.mark.skipif(not FINDINGS.is_file(), reason="no findings file")
def test_a_crash_records_the_stage_the_worker_died_in(qnn) -> None:
    out = qnn.run(Case.load(REPO / "findings/cases/ExpandDims/expanddims-unsorted-axes.json"))
    assert out.status == "crash" and out.details["stage"] == "validate", (out.status, out.details.get("stage"))


def _findings() -> list:
    if not FINDINGS.is_file():
        return []
    return [pytest.param(e, id=e.id, marks=needs_simulator) for e in Expectations.load(FINDINGS).entries]


@pytest.mark.parametrize("entry", _findings())
def test_every_recorded_finding_still_reproduces_with_its_case(entry) -> None:
    """A finding whose case no longer shows it is fixed: move it out of the findings file (or note the build)."""
    from conformance.execute import RunContext, execute

    soc = None if entry.soc is None or entry.soc[0].text == "default" else int(entry.soc[0].text)
    if entry.targets and "v68" not in entry.targets:  # on the first generation it was measured to hold on
        from adapters.qnn.targets import GENERATIONS

        soc = GENERATIONS[entry.targets[0]]
    os.environ.pop(qnn_adapter.ENV_SOC, None)
    known = Expectations.load(FINDINGS)
    with qnn_adapter.QnnAdapter(soc=soc, timeout=60) as ad:
        rec = execute(Case.load(REPO / entry.info["case"]), RunContext(ad, "qnn-htp", known=known))
    stage = (rec.extra.get("details") or {}).get("stage")
    assert rec.verdict in entry.verdicts, f"{entry.id}: now {rec.verdict} ({rec.message[:200]}): fixed in this build?"
    if entry.stage is not None:
        wanted = entry.stage[0].text
        assert any(p.matches(str(stage)) for p in entry.stage), f"{entry.id}: stopped at {stage}, not {wanted}"
    rec.case_path = str(REPO / entry.info["case"])
    shown = known.apply_record(rec).expectation or ""
    assert shown.startswith(f"[{entry.id}]"), (  # its selectors and its model hold for its own evidence
        f"{entry.id}: its case does not show it ({shown[:80] or 'no finding'}); models: {rec.metrics.get('models')}")
