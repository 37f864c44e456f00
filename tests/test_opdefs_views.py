"""A spec's tensors and parameters as typed views (opdefs/views.py): each field reads what the YAML says."""

from __future__ import annotations

import opdefs
from opdefs import ParamSpec, TensorSpec


def test_every_view_names_its_tensor_and_dims_as_the_yaml_does():
    wrong = []
    for name, op in opdefs.load_all().items():
        for raw, view in [*zip(op.inputs, op.input_specs, strict=True), *zip(op.outputs, op.output_specs, strict=True)]:
            if view.name != raw["name"] or view.dims != ((raw.get("shape") or {}).get("dims") or []):
                wrong.append(f"{name} {raw['name']}")
    assert not wrong, f"views that disagree with their YAML: {wrong[:10]}"


def test_a_repeated_range_starts_at_its_first_index_and_is_never_optional():
    t = TensorSpec({"name": "in[1..n]", "mandatory": False, "repeated": {"first": 1, "last": "n"}})
    assert (t.first_index, t.optional) == (1, False), (t.first_index, t.optional)


def test_an_input_the_spec_does_not_require_is_optional():
    t = TensorSpec({"name": "in[2]", "mandatory": False, "static": "preferred", "role": "bias"})
    assert t.optional and t.given_static and t.role == "bias" and t.encoding_from is None


def test_a_tensor_without_blocks_reads_as_empty_not_missing():
    t = TensorSpec({"name": "out[0]"})
    assert (t.shape, t.dims, t.values, t.quantization, t.dtypes) == ({}, [], {}, [], [])


def test_every_parameter_view_reads_its_type_default_and_members_as_the_yaml_does():
    wrong = []
    for name, op in opdefs.load_all().items():
        for pname, raw in op.params.items():
            view = op.param_specs[pname]
            if (view.dtype, view.default, view.members) != (raw["dtype"], raw.get("default"), raw.get("values") or {}):
                wrong.append(f"{name}.{pname}")
    assert not wrong, f"parameter views that disagree with their YAML: {wrong[:10]}"


def test_a_parameter_without_dims_or_rank_is_a_scalar_and_one_with_dims_is_not():
    assert ParamSpec({"name": "axis", "dtype": "INT_32"}).scalar
    assert not ParamSpec({"name": "perm", "dtype": "UINT_32", "shape": {"dims": ["N"]}}).scalar
