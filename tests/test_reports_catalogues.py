"""Catalogue coverage from spec YAML plus seed catalogue files (fixtures in tests/data/reports/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports import catalogues, record

DATA = Path(__file__).parent / "data" / "reports"
SPECS, SEEDS = DATA / "opdefs", DATA / "seeds"


@pytest.fixture(scope="module")
def report() -> catalogues.CoverageReport:
    return catalogues.coverage(record.read([DATA / "results.jsonl"]), SPECS, SEEDS)


def by_key(report: catalogues.CoverageReport, key: str) -> catalogues.CatalogueCoverage:
    return next(c for c in report.catalogues if c.key == key)


def test_hexagon_nn_ops_are_the_column_zero_headers() -> None:
    ops = catalogues.hexagon_nn_ops((SEEDS / "000_hexagon_nn_v2.txt").read_text())
    assert ops == ["INPUT", "Add_f", "QuantizedAdd_8p8to8", "QuantizedConv2d_8x8to32", "QuantizedConv2d_16x16to32",
                   "QuantizedMean_8", "Gather_f"], "prose lines and 'Examples:' must not count as ops"


def test_hexagon_nn_catalogue_is_the_union_of_both_seed_files(report: catalogues.CoverageReport) -> None:
    names = [o.name for o in by_key(report, "hexagon_nn").ops]
    assert names[-1] == "Supernode_8x8p8to8" and names.count("Add_f") == 1, names


def test_nnapi_ops_come_from_the_operation_type_enum_only() -> None:
    ops = catalogues.nnapi_ops((SEEDS / "003_nnapi_1_0.txt").read_text())
    assert ops == ["ADD", "CONV_2D", "RELU", "TANH"], "OperandType/FusedActivationFunc values and OEM are not ops"


def test_nhwc_schema_ops_come_from_the_index_list() -> None:
    assert catalogues.nhwc_schema_ops((SEEDS / "002_nhwc_schema.txt").read_text()) == ["Add", "Conv", "Relu"]


def test_qnn_catalogue_is_the_spec_names(report: catalogues.CoverageReport) -> None:
    qnn = by_key(report, "qnn")
    assert [o.name for o in qnn.ops] == ["Conv2d", "ElementWiseAdd", "ReduceMean", "Relu"]


def test_yaml_files_without_a_name_are_not_specs(report: catalogues.CoverageReport) -> None:
    assert [Path(p).name for p in report.ignored_spec_files] == ["not-a-spec.yaml"]


def test_equivalents_accept_the_prefixed_nnapi_spelling(report: catalogues.CoverageReport) -> None:
    conv = next(o for o in by_key(report, "nnapi_1_0").ops if o.name == "CONV_2D")
    assert conv.qnn_ops == ["Conv2d"], "ANEURALNETWORKS_CONV_2D in a spec names CONV_2D"


def test_counts_per_catalogue(report: catalogues.CoverageReport) -> None:
    nnapi = by_key(report, "nnapi_1_0")
    got = (len(nnapi.ops), nnapi.count("equivalent"), nnapi.count("spec"), nnapi.count("reference"),
           nnapi.count("pass", "qnn-htp"))
    assert got == (4, 3, 3, 2, 2), "NNAPI: 4 ops, ADD/CONV_2D/RELU mapped, ADD and CONV_2D referenced and passing"


def test_a_skipped_reference_is_not_a_reference() -> None:
    r = [record.Record(op="ElementWiseAdd", config="FLOAT_32", backend="reference", verdict="SKIP")]
    nnapi = by_key(catalogues.coverage(r, SPECS, SEEDS), "nnapi_1_0")
    assert nnapi.count("reference") == 0


def test_equivalents_missing_from_the_catalogue_are_reported(report: catalogues.CoverageReport) -> None:
    assert by_key(report, "hexagon_nn").unknown_names == {"Mean_f": ["ReduceMean"]}


def test_markdown_summary_has_a_row_per_catalogue_and_a_column_per_backend(report: catalogues.CoverageReport) -> None:
    md = catalogues.to_markdown(report)
    assert "| NNAPI 1.0               | 4     | 3/4" in md
    assert "PASS on reference" in md and "PASS on qnn-htp" in md
    assert "Without a QNN equivalent (1): TANH" in md


def test_a_missing_seed_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no seed file 000_"):
        catalogues.coverage([], SPECS, tmp_path)


@pytest.mark.skipif(not catalogues.DEFAULT_SEEDS.is_dir(), reason="the shared seed catalogues are not on this machine")
def test_the_real_seed_catalogues_parse_to_plausible_sizes() -> None:
    sizes = {c.key: len(catalogues.catalogue_ops(c, catalogues.DEFAULT_SEEDS)[0]) for c in catalogues.SEED_CATALOGUES}
    assert sizes["nnapi_1_0"] == 29, "NNAPI 1.0 defines operation codes 0..28"
    assert sizes["nhwc_schema"] == 36, sizes
    assert 240 <= sizes["hexagon_nn"] <= 270, sizes


def test_without_the_seed_documents_the_shipped_op_lists_stand_in(tmp_path):
    for cat in catalogues.SEED_CATALOGUES:
        ops, sources = catalogues.catalogue_ops(cat, tmp_path / "no-seeds-here")
        assert ops and catalogues.SHIPPED.name in sources[0], (cat.key, sources)


@pytest.mark.skipif(not catalogues.DEFAULT_SEEDS.is_dir(), reason="the shared seed catalogues are not on this machine")
def test_the_shipped_op_lists_are_what_the_seed_documents_say():
    import json

    shipped = json.loads(catalogues.SHIPPED.read_text())
    assert shipped == catalogues.derive(catalogues.DEFAULT_SEEDS), \
        "stale: python -m reports catalogues --derive --seeds ../shared/seeds"  # fmt: skip
