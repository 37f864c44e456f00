"""``python -m opdefs new MyOp``: a spec to start from that lints clean and runs; every datatype a spec lists
for a tensor is a datatype configuration of its own."""

from __future__ import annotations

import pytest

import opdefs
from cases import generate
from opdefs.__main__ import main


def test_new_writes_a_spec_that_lints_clean_and_has_a_configuration_per_listed_type(tmp_path, capsys):
    assert main(["new", "MyOp", "--dir", str(tmp_path)]) == 0
    path = tmp_path / "MyOp.yaml"
    assert opdefs.lint([path]) == [], "the starting spec does not lint clean"
    op = opdefs.load_file(path)
    listed = op.inputs[0]["dtypes"]
    assert [c.label for c in generate.configs(op)] == listed, "a listed datatype is not a configuration"
    assert f"--specs {tmp_path}" in capsys.readouterr().out, "the next steps do not say how to run it"


def test_new_names_the_package(tmp_path):
    assert main(["new", "MyOp", "--dir", str(tmp_path), "--package", "my.ops"]) == 0
    assert opdefs.load_file(tmp_path / "MyOp.yaml").package == "my.ops"


def test_new_does_not_overwrite_a_spec(tmp_path, capsys):
    path = tmp_path / "MyOp.yaml"
    path.write_text("mine")
    assert main(["new", "MyOp", "--dir", str(tmp_path)]) == 1
    assert path.read_text() == "mine" and "--force" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["myOp", "My-Op", "My Op"])
def test_new_refuses_a_name_qnn_would_not_have(tmp_path, name):
    assert main(["new", name, "--dir", str(tmp_path)]) == 2
    assert not list(tmp_path.iterdir())


def test_every_listed_datatype_of_every_spec_is_a_configuration():
    missing = []
    for name, op in opdefs.load_all().items():
        if generate.skip_reason(op):
            continue
        used = {pair for c in generate.configs(op) for pair in c.dtypes}
        missing += [f"{name}.{d.name}: {t}" for d in op.input_specs + op.output_specs for t in generate._listed(d)
                    if (d.name, t) not in used]  # fmt: skip
    assert not missing, f"{len(missing)} listed datatype(s) never tested: {', '.join(missing[:10])}"
