"""Converter-standard forms (cases/forms.py): each changes one thing a converter emits differently, keeps the
values, and the probe tries them on a refused cell's cases. The simulator tests check the forms and the
bit-width encoding against the HTP itself."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, settings

import opdefs
from cases import forms, generate, quant
from cases.case import Case, Encoding, Tensor
from reference.expected import infer
from tests.simulator import NEEDS_SIMULATOR


def drawn(op_name: str, config: str, tier: str = generate.TYPICAL) -> tuple[opdefs.OpDef, Case]:
    """One case of the cell, the first one drawn (no shrinking: any case of the cell will do)."""
    op = opdefs.load(op_name)
    cfg = next(c for c in generate.configs(op) if c.label == config)
    strategy = generate.case_strategy(op, cfg, generate.Settings(infer=infer, tier=tier, stratify=False))
    quick = settings(database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    return op, find(strategy, lambda c: True, settings=quick)


def test_8bit_weights_requantize_the_weights_and_leave_the_activations() -> None:
    op, case = drawn("Conv2d", "UFIXED_POINT_16")
    changed = forms.weights_8bit(op, case)
    w, w8 = case.inputs[1], changed.inputs[1]
    assert w8.dtype == "UFIXED_POINT_8" and changed.inputs[0] is case.inputs[0]
    step = w8.encoding.scales[0]
    moved = np.max(np.abs(quant.real_value(w8) - quant.real_value(w)))
    assert moved <= step / 2 + 1e-12, f"values moved {moved}, more than half a step ({step / 2})"


def test_a_32bit_bias_is_scaled_input_times_weight_with_offset_zero() -> None:
    op, case = drawn("Conv2d", "UFIXED_POINT_16")
    b = forms.bias_32bit(op, case).inputs[2]
    x, w = case.inputs[0], case.inputs[1]
    assert b.dtype == "SFIXED_POINT_32" and set(b.encoding.offsets) == {0}
    assert b.encoding.scales[0] == pytest.approx(x.encoding.scales[0] * w.encoding.scales[0], rel=1e-6)


def test_8bit_weights_carry_a_32bit_bias_rescaled_to_the_new_weights() -> None:
    op, case = drawn("Conv2d", "UFIXED_POINT_16+SFIXED_POINT_16+SFIXED_POINT_32")
    changed = forms.weights_8bit(op, case)
    x, w8, b = changed.inputs[0], changed.inputs[1], changed.inputs[2]
    assert b.dtype == "SFIXED_POINT_32" and set(b.encoding.offsets) == {0}
    assert b.encoding.scales[0] == pytest.approx(x.encoding.scales[0] * w8.encoding.scales[0], rel=1e-6), (
        f"bias scale {b.encoding.scales[0]} still follows the 16-bit weights ({case.inputs[2].encoding.scales[0]})")


def test_plain_4bit_weights_move_into_an_8bit_container_with_the_same_codes() -> None:
    op, case = drawn("Conv2d", "UFIXED_POINT_8+SFIXED_POINT_4/axis+SFIXED_POINT_32")
    w, w4 = case.inputs[1], forms.bitwidth_4bit_weights(op, case).inputs[1]
    assert (w4.dtype, w4.encoding.bitwidth, w4.encoding.axis) == ("SFIXED_POINT_8", 4, w.encoding.axis)
    assert np.array_equal(w4.data.astype(np.int16), w.data.astype(np.int16))


def test_the_fixed_output_grid_is_the_one_the_spec_states() -> None:
    op, case = drawn("Tanh", "UFIXED_POINT_16", tier=generate.EDGE)
    case.outputs[0].encoding = Encoding((1e-4,), (-65535,))
    out = forms.fixed_output_encoding(op, case).outputs[0].encoding
    assert (out.scales[0], out.offsets[0]) == op.fixed_encoding(0, "UFIXED_POINT_16")


def test_a_form_that_changes_nothing_is_not_offered() -> None:
    op, case = drawn("Conv2d", "UFIXED_POINT_8+SFIXED_POINT_8/axis+SFIXED_POINT_32")
    names = [name for name, _ in forms.variants(op, case)]
    assert not any(n.startswith("32-bit bias") or n.startswith("signed symmetric") for n in names), names


def test_the_converter_form_is_offered_when_no_single_change_equals_it() -> None:
    op, case = drawn("Conv2d", "UFIXED_POINT_16")
    names = [name for name, _ in forms.variants(op, case, infer)]
    assert names[-1].startswith(forms.CONVERTER_FORM) and "in[1] SFIXED_POINT_8" in names[-1], names


def test_variants_keep_the_cell_and_say_their_form() -> None:
    op, case = drawn("Conv2d", "SFIXED_POINT_8")
    for name, variant in forms.variants(op, case, infer):
        assert variant.config == case.config and variant.tier == case.tier
        assert variant.strategy == f"probe:{name.split(':')[0]}" and variant.case_id() != case.case_id()


def test_an_op_without_weights_bias_or_fixed_grid_has_no_form() -> None:
    op, case = drawn("ElementWiseAdd", "SFIXED_POINT_16")
    assert forms.variants(op, case) == []


def test_a_run_probes_a_refused_cell_and_the_matrix_names_the_form(tmp_path) -> None:
    from reports import matrix, record
    from tests.conformance_runs import run

    results = tmp_path / "r.jsonl"
    proc = run("--backend", "tests.fake_backends:bias_32bit_only", "--op", "^FullyConnected$", "--tier", "typical",
               "--examples", "2", "--seed", "1", "--no-shrink", "-k", "FullyConnected-SFIXED_POINT_8-",
               "--results", str(results))  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    records = list(record.read([results]))
    probes = [r for r in records if r.kind == "probe"]
    assert probes and all(r.extra["probe"]["of"] for r in probes), f"no probe records: {[r.kind for r in records]}"
    cell = matrix.build(records).cells[("FullyConnected", "SFIXED_POINT_8", "tests.fake_backends:bias_32bit_only")]
    assert cell.counts == {"REJECTED": cell.total}, "probe records count in the cell's rates"
    assert cell.standard_form().startswith("32-bit bias: in[2] SFIXED_POINT_32"), cell.probes


def test_a_refused_cell_probes_only_its_first_cases(tmp_path) -> None:
    from conformance.cell import PROBED_CASES
    from reports import record
    from tests.conformance_runs import run

    results = tmp_path / "r.jsonl"
    proc = run("--backend", "tests.fake_backends:bias_32bit_only", "--op", "^FullyConnected$", "--tier", "typical",
               "--examples", str(PROBED_CASES + 3), "--seed", "1", "--no-shrink",
               "-k", "FullyConnected-SFIXED_POINT_8-",
               "--results", str(results))  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    records = list(record.read([results]))
    refused = [r.case_id for r in records if r.kind == "positive" and r.verdict == "REJECTED"]
    probed = {r.extra["probe"]["of"] for r in records if r.kind == "probe"}
    assert len(refused) > PROBED_CASES, f"the cell drew {len(refused)} refused cases: too few to show the limit"
    assert probed == set(refused[:PROBED_CASES]), f"probed {sorted(probed)}, first refused {refused[:PROBED_CASES]}"


# ---- on the simulator -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qnn():
    from adapters.qnn import adapter as qnn_adapter

    ad = qnn_adapter.QnnAdapter(timeout=30)
    ok, why = ad.available()
    if not ok:
        pytest.skip(why)
    yield ad
    ad.close()


@pytest.mark.qnn
@NEEDS_SIMULATOR[1]
def test_the_htp_runs_4bit_weights_given_in_the_bitwidth_encoding(qnn) -> None:
    _, case = drawn("Conv2d", "UFIXED_POINT_16+SFIXED_POINT_8/bw4/axis+SFIXED_POINT_32")
    out = qnn.run(case)
    assert out.status == "ok", (out.status, out.message, out.details.get("refusal"))


@pytest.mark.qnn
@NEEDS_SIMULATOR[1]
def test_a_refusal_on_the_htp_carries_its_reason_with_the_owner_named(qnn) -> None:
    op, case = drawn("Tanh", "UFIXED_POINT_16", tier=generate.EDGE)
    case.outputs[0] = Tensor("out[0]", "UFIXED_POINT_16", case.outputs[0].shape, None, Encoding((3e-5,), (-65535,)))
    out = qnn.run(case)
    assert out.status == "rejected" and out.details["refusal"]["reason"] == "out[0] offset must be -32768", out.details
    fixed = qnn.run(forms.fixed_output_encoding(op, case))
    assert fixed.status == "ok", (fixed.status, fixed.details.get("refusal"))
