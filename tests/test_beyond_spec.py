"""Beyond the spec: once per op, the probe retypes a typical case into the HTP datatypes the MasterOpDef does not list
for the op (ElementWiseRsqrt is listed float only), and ``python -m reports capabilities`` lists the combinations the
backend accepted as ``beyond_the_spec``; no matrix cell counts them. Cases are drawn from the specs; records are made
by hand."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, find, settings

import opdefs
from cases import forms, generate, quant
from cases.case import Case
from reference.expected import infer
from reports import capabilities, matrix
from reports.record import Record

FLOAT_ONLY = "ElementWiseRsqrt"


def _first_case(op_name: str, label: str) -> Case:
    op = opdefs.load(op_name)
    cfg = next(c for c in generate.configs(op) if c.label == label)
    strategy = generate.case_strategy(op, cfg, generate.Settings(infer=infer, tier=generate.TYPICAL, stratify=False))
    return find(strategy, lambda c: True, settings=settings(database=None, phases=[Phase.generate],
                                                            suppress_health_check=list(HealthCheck)))  # fmt: skip


def test_the_datatypes_tried_are_the_htp_ones_the_spec_leaves_out() -> None:
    op = opdefs.load(FLOAT_ONLY)
    label = forms.beyond_spec_config(op)
    variants = forms.beyond_spec(op, _first_case(FLOAT_ONLY, label), infer)
    tried = [name.rsplit(" ", 1)[1] for name, _ in variants]
    assert tried == [d for d in forms.HTP_DATATYPES if d not in forms.listed_datatypes(op)], tried
    assert all(name.startswith(f"{forms.BEYOND_SPEC}: in[0], out[0] ") for name, _ in variants), variants


def test_a_retyped_case_keeps_its_values_within_half_a_step() -> None:
    op = opdefs.load(FLOAT_ONLY)
    case = _first_case(FLOAT_ONLY, forms.beyond_spec_config(op))
    for name, v in forms.beyond_spec(op, case, infer):
        x, x2 = case.inputs[0], v.inputs[0]
        step = x2.encoding.scales[0]
        moved = float(np.max(np.abs(quant.real_value(x2) - quant.real_value(x))))
        assert moved <= step / 2 + 1e-9, f"{name}: values moved {moved}, more than half a step ({step / 2})"


def test_quantized_outputs_get_a_grid_covering_what_the_reference_says() -> None:
    op = opdefs.load(FLOAT_ONLY)
    case = _first_case(FLOAT_ONLY, forms.beyond_spec_config(op))
    for name, v in forms.beyond_spec(op, case, infer):
        (real,) = infer(op, v)
        lo, hi = quant.real_range(v.outputs[0].encoding, v.outputs[0].dtype)
        assert lo[0] <= real.min() and real.max() <= hi[0], f"{name}: out[0] grid [{lo}, {hi}] misses the results"


def test_an_op_whose_spec_lists_every_htp_datatype_is_not_probed() -> None:
    every = [n for n, op in opdefs.load_all().items() if set(forms.HTP_DATATYPES) <= forms.listed_datatypes(op)]
    assert every and all(forms.beyond_spec_config(opdefs.load(n)) is None for n in every)


def test_an_op_whose_output_changes_datatype_is_not_retyped() -> None:
    """Dequantize's datatypes are its meaning: a float in[0] would ask another question."""
    op = opdefs.load("Dequantize")
    assert forms.listed_datatypes(op) == set() and forms.beyond_spec_config(op) is None


def _probe(verdict: str, dtype: str, stage: str) -> Record:
    form = f"{forms.BEYOND_SPEC}: in[0], out[0] {dtype}"
    return Record(op=FLOAT_ONLY, config="FLOAT_32", backend="qnn-htp", verdict=verdict, tier="typical", kind="probe",
                  dtypes={"in[0]": dtype, "out[0]": dtype},
                  extra={"probe": {"form": form, "of": "abc", "beyond_spec": True}, "details": {"stage": stage}})


def _own(verdict: str = "PASS") -> Record:
    return Record(op=FLOAT_ONLY, config="FLOAT_32", backend="qnn-htp", verdict=verdict, tier="typical",
                  dtypes={"in[0]": "FLOAT_32", "out[0]": "FLOAT_32"}, extra={"details": {"stage": "ok"}})


def test_capabilities_list_the_accepted_combinations_beyond_the_spec_and_only_those() -> None:
    doc = capabilities.envelope([_own(), _probe("PASS", "UFIXED_POINT_8", "ok"),
                                 _probe("REJECTED", "SFIXED_POINT_16", "validate")])  # fmt: skip
    entry = doc["backends"]["qnn-htp"]["ops"][FLOAT_ONLY]
    assert entry["beyond_the_spec"] == [{"datatypes": {"in[0]": "UFIXED_POINT_8", "out[0]": "UFIXED_POINT_8"},
                                         "status": "runs"}], entry.get("beyond_the_spec")  # fmt: skip
    marked = {k for k, c in entry["combinations"].items() if c.get("beyond_spec")}
    assert marked == {f"{forms.BEYOND_SPEC}: in[0], out[0] {d}" for d in ("UFIXED_POINT_8", "SFIXED_POINT_16")}


def test_no_matrix_cell_counts_a_probe_beyond_the_spec() -> None:
    m = matrix.build([_own(), _probe("FAIL", "UFIXED_POINT_8", "ok")])
    (cell,) = m.cells.values()
    assert cell.counts == {"PASS": 1} and not cell.probes, (cell.counts, cell.probes)
