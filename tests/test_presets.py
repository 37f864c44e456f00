"""Named configuration presets (opdefs/presets/*.yaml) and the bit-width encodings some of them use."""

from __future__ import annotations

from pathlib import Path

import pytest

import opdefs
from cases import generate
from cases.case import Case, Encoding, Tensor
from opdefs import presets, spec

SPECS = opdefs.load_all()
USERS = {name: op for name, op in SPECS.items() if op.generation.get("extra_configs")}


def _named(op: opdefs.OpDef) -> list[str]:
    extra = op.generation["extra_configs"]
    items = [extra] if isinstance(extra, dict) else extra
    return [item["preset"] for item in items if isinstance(item, dict) and set(item) == {"preset"}]


@pytest.mark.parametrize("name", sorted(n for n, op in USERS.items() if _named(op)))
def test_a_spec_that_names_a_preset_gets_each_of_its_configurations(name: str) -> None:
    op = SPECS[name]
    labels = {c.label for c in generate.configs(op)}
    for preset in _named(op):
        for c in presets.presets()[preset]["configs"]:
            wanted = generate._curated_config(op.input_specs + op.output_specs, c).label
            assert wanted in labels, f"{name}: preset {preset} configuration {wanted} missing from {sorted(labels)}"


def test_no_spec_writes_out_a_configuration_a_preset_holds() -> None:
    held = [{k: v for k, v in c.items() if k != "why"} for p in presets.presets().values() for c in p["configs"]]
    for name, op in USERS.items():
        extra = op.generation["extra_configs"]
        for item in [extra] if isinstance(extra, dict) else extra:
            written = {k: v for k, v in item.items() if k != "why"}
            assert written not in held, f"{name} copies a preset's configuration instead of naming it: {written}"


def test_an_unknown_preset_is_a_spec_problem_naming_it(tmp_path: Path) -> None:
    text = (spec.HERE / "Conv2d.yaml").read_text().replace("preset: weights-4bit", "preset: no-such-set")
    path = tmp_path / "Conv2d.yaml"
    path.write_text(text)
    problems = spec.lint([path])
    assert any("no-such-set" in p.message and p.field == "generate.extra_configs" for p in problems), problems


def test_a_preset_for_another_family_is_a_spec_problem() -> None:
    messages = presets.problems([{"preset": "weights-8bit"}], {"in[0]", "out[0]"})
    assert messages and "in[1]" in messages[0], messages


def test_a_bitwidth_configuration_is_labelled_with_its_bits() -> None:
    labels = [c.label for c in generate.configs(SPECS["Conv2d"])]
    assert "UFIXED_POINT_16+SFIXED_POINT_8/bw4/axis+SFIXED_POINT_32" in labels, labels
    plain = "UFIXED_POINT_16+SFIXED_POINT_4/axis+SFIXED_POINT_32"
    assert plain in labels, "the plain 4-bit datatype stays a configuration of its own"


def test_an_encoding_without_a_bitwidth_leaves_the_case_id_as_it_was() -> None:
    t = Tensor("in[0]", "UFIXED_POINT_8", (2,), None, Encoding((0.5,), (-3,)))
    assert "bitwidth" not in t.encoding.to_json()
    case = Case("Relu", [t], {}, [])
    assert Encoding.from_json(t.encoding.to_json()) == t.encoding
    assert case.to_json()["inputs"][0]["encoding"] == {"scales": [0.5], "offsets": [-3], "axis": None}


def test_a_bitwidth_encoding_round_trips_through_json() -> None:
    enc = Encoding((0.5, 0.25), (0, 0), 3, 4)
    assert Encoding.from_json(enc.to_json()) == enc


def test_typical_4bit_weights_in_a_container_stay_inside_the_4bit_range() -> None:
    from hypothesis import HealthCheck, Phase, find, settings

    op = SPECS["Conv2d"]
    config = next(c for c in generate.configs(op) if "/bw4" in c.label)
    strategy = generate.case_strategy(op, config, generate.Settings(tier=generate.TYPICAL, stratify=False))
    quick = settings(database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    case = find(strategy, lambda c: True, settings=quick)
    w = case.inputs[1]
    assert w.dtype == "SFIXED_POINT_8" and w.encoding.bitwidth == 4 and w.encoding.per_axis, w.encoding
    assert -8 <= int(w.data.min()) and int(w.data.max()) <= 7, (w.data.min(), w.data.max())
    assert set(w.encoding.offsets) == {0}, "4-bit weights are symmetric"
