"""The checked-in specs say what the MasterOpDef says: every op, tensor, parameter, default, enum value.

The seed is re-read here with plain regexes, independently of the importer's parser, so a parser
bug cannot hide itself.
"""

import re

import pytest

import opdefs
from opdefs import masteropdef
from tests.paths import SEED

pytestmark = pytest.mark.skipif(not SEED.exists(), reason=f"seed not found at {SEED}")


def _seed_ops() -> dict[str, dict]:
    text = SEED.read_text(encoding="utf-8")
    ops: dict[str, dict] = {}
    for block in re.split(r"^## ", text, flags=re.M)[1:]:
        name = block.splitlines()[0].strip().replace("\\", "")
        sections = dict(re.findall(r"^### (Inputs|Parameters|Outputs)\n(.*?)(?=^### |\Z)", block, flags=re.M | re.S))
        entry = {k: re.findall(r"^#### (.*)$", v, flags=re.M) for k, v in sections.items()}
        params = {}
        for pblock in re.split(r"^#### ", sections.get("Parameters", ""), flags=re.M)[1:]:
            pname = re.sub(r"\s*\(\\\(.*\\\)\)$", "", pblock.splitlines()[0].strip()).replace("\\", "")
            default = re.search(r"^- Default: ?(.*)$", pblock, flags=re.M)
            values = dict(re.findall(r"^>\s*- ([A-Za-z0-9_\\]+) = (-?\d+)", pblock, flags=re.M))
            params[pname] = {
                "default": default.group(1).replace("\\", "").strip() if default else None,
                "values": {k.replace("\\", ""): int(v) for k, v in values.items()},
            }
        entry["params"] = params
        ops[name] = entry
    return ops


SEED_OPS = _seed_ops() if SEED.exists() else {}
SPECS = opdefs.load_all()


def test_seed_reads_as_the_same_ops_here_and_in_the_importer():
    importer_ops = {op.name for op in masteropdef.parse_file(SEED)}
    assert set(SEED_OPS) == importer_ops, f"the two readings of the seed differ: {sorted(set(SEED_OPS) ^ importer_ops)}"


def test_every_seed_op_has_a_spec():
    assert SEED_OPS, f"no ops read from {SEED}"
    missing = sorted(set(SEED_OPS) - set(SPECS))
    assert not missing, f"seed ops without a spec: {missing}"


@pytest.mark.parametrize("op", sorted(SEED_OPS))
def test_tensor_and_param_counts_match_the_seed(op):
    seed, spec = SEED_OPS[op], SPECS[op]
    counts = {
        "inputs": (len(seed.get("Inputs", [])), len(spec.inputs)),
        "params": (len(seed.get("Parameters", [])), len(spec.params)),
        "outputs": (len(seed.get("Outputs", [])), len(spec.outputs)),
    }
    wrong = {k: v for k, v in counts.items() if v[0] != v[1]}
    assert not wrong, f"{op}: (seed, spec) counts differ: {wrong}"


def _same_default(seed_text: str, p: dict) -> bool:
    if "default_text" in p:
        return p["default_text"] == seed_text
    d = p.get("default")
    if isinstance(d, bool):
        return int(d) == int(float(seed_text))
    if isinstance(d, list):
        return d == __import__("json").loads(seed_text)
    return float(d) == float(seed_text)


@pytest.mark.parametrize("op", sorted(SEED_OPS))
def test_every_default_and_enum_value_is_preserved(op):
    spec_params = SPECS[op].params
    for name, seed in SEED_OPS[op]["params"].items():
        p = spec_params[name]
        if seed["default"]:
            assert "default" in p or "default_text" in p, f"{op}.{name}: seed default {seed['default']!r} lost"
            assert _same_default(seed["default"], p), f"{op}.{name}: seed default {seed['default']!r}, spec {p}"
        if seed["values"]:
            assert p.get("values") == seed["values"], f"{op}.{name}: enum {p.get('values')} != seed {seed['values']}"


def test_conditional_defaults_keep_each_operation_value():
    alpha = SPECS["ElementWiseNeuron"].params["alpha"]
    assert alpha["default"] == {"by_operation": {"ELU": 1.0, "HARD_SIGMOID": 0.2}}


def test_input_tensor_fill_defaults_are_kept():
    bias = next(t for t in SPECS["Conv2d"].inputs if t["name"] == "in[2]")
    assert bias["default"] == {"fill": 0} and bias["mandatory"] is False


def test_variadic_headings_become_repeated_ranges():
    concat_in = SPECS["Concat"].inputs[0]
    assert concat_in["name"] == "in[0..m]" and concat_in["repeated"] == {"first": 0, "last": "m"}
    nms_out = SPECS["MultiClassNms"].outputs[-1]
    assert nms_out["repeated"] == {"first": 4, "last": "M"}
    assert SPECS["CollectRpnProposals"].inputs[1]["repeated"] == {"first": 1, "last": 4}


def test_deprecated_ops_say_what_replaces_them():
    for op in ("Relu1", "Relu6"):
        assert "ReluMinMax" in (SPECS[op].deprecated or ""), f"{op} deprecation lost"


def test_if_has_no_outputs_and_says_so():
    assert SPECS["If"].outputs == [] and "Outputs" in SPECS["If"].sections_none


def test_reference_labels_are_normalised_to_catalogues():
    cats = {r["catalogue"] for s in SPECS.values() for r in s.references}
    assert cats <= {"onnx", "nnapi", "tensorflow", "pytorch", "qnn", "caffe2", "paper"}, cats


def test_latex_stays_out_of_parameter_names():
    neuron = SPECS["ElementWiseNeuron"].params
    assert "alpha" in neuron and neuron["alpha"]["symbol"] == "\\alpha"


def test_no_formula_keeps_the_copy_to_clipboard_artefact():
    for s in SPECS.values():
        text = str(s.as_dict())
        assert "Copy to clipboard" not in text, f"{s.name} still has a 'Copy to clipboard' line"


def test_per_class_datatypes_of_elementwise_binary_are_kept():
    out = SPECS["ElementWiseBinary"].outputs[0]
    assert out["dtypes_by_class"]["Comparison"] == ["backend_specific", "BOOL_8"]
