"""The matrix says why qnn-htp and ort-qnn differ on a cell: the mechanism or finding, or that nothing explains it."""

from __future__ import annotations

from pathlib import Path

from reports import formats, matrix, routes
from reports.record import Record

ROUTES = ("- {op: Gather, a: PASS, b: ERROR, mechanism: ep-fp32-graph-fails-finalize, finding: ep-x, case: c.json, "
          "why: w}\n")


def rec(backend: str, case_id: str, verdict: str, op: str = "Gather", config: str = "FLOAT_32") -> Record:
    return Record(op=op, config=config, backend=backend, verdict=verdict, case_id=case_id, tier="typical")


def pairs(*verdicts: tuple[str, str], op: str = "Gather") -> list[Record]:
    out = []
    for k, (a, b) in enumerate(verdicts):
        out += [rec("qnn-htp", f"{op}{k}", a, op), rec("ort-qnn", f"{op}{k}", b, op)]
    return out


def explained(tmp_path: Path, records: list[Record]) -> dict:
    path = tmp_path / "routes.yaml"
    path.write_text(ROUTES, encoding="utf-8")
    return routes.notes(records, path)


def test_a_cell_the_routes_disagree_on_names_the_mechanism_and_the_finding(tmp_path: Path) -> None:
    note = explained(tmp_path, pairs(("PASS", "ERROR"), ("PASS", "ERROR"), ("PASS", "PASS")))[("Gather", "FLOAT_32")]
    assert (note.mechanisms, note.findings, note.unexplained) == ({"ep-fp32-graph-fails-finalize": 2}, {"ep-x": 2}, 0)
    assert note.text() == "2 typical case(s) differ: ep-fp32-graph-fails-finalize (2); finding ep-x"


def test_a_disagreement_no_entry_explains_is_counted_as_unexplained(tmp_path: Path) -> None:
    note = explained(tmp_path, pairs(("FAIL", "PASS")))[("Gather", "FLOAT_32")]
    assert note.unexplained == 1 and "1 unexplained" in note.text()


def test_cells_the_routes_agree_on_have_no_note(tmp_path: Path) -> None:
    assert explained(tmp_path, pairs(("PASS", "PASS"), ("REJECTED", "REJECTED"))) == {}


def test_without_both_routes_there_is_nothing_to_say(tmp_path: Path) -> None:
    only_one = [r for r in pairs(("PASS", "ERROR")) if r.backend == "qnn-htp"]
    assert explained(tmp_path, only_one) == {}
    assert matrix.build(only_one).routes == {}


def test_the_markdown_matrix_lists_why_the_routes_differ(tmp_path: Path) -> None:
    records = pairs(("PASS", "ERROR"))
    m = matrix.build(records)
    m.routes = explained(tmp_path, records)
    text = formats.render(m, "md")
    assert "## Why qnn-htp and ort-qnn differ" in text
    assert "| Gather | `FLOAT_32` | PASS 1/1 | ERR | 1 typical case(s) differ: ep-fp32-graph-fails-finalize (1); " \
           "finding ep-x |" in text, text  # fmt: skip


def test_an_html_cell_of_either_route_links_to_the_note(tmp_path: Path) -> None:
    records = pairs(("PASS", "ERROR"))
    m = matrix.build(records)
    m.routes = explained(tmp_path, records)
    page = formats.render(m, "html")
    anchor = m.routes[("Gather", "FLOAT_32")].anchor
    assert page.count(f'href="#{anchor}"') == 2, "both routes' cells link to the note"
    assert f'<tr id="{anchor}">' in page, "the note the links point at"
