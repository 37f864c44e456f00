"""The flow reads top-down in the tree: spec -> case -> reference -> adapter -> record/report -> run -> benchmark.
A module imports only its own room and the rooms before it (DESIGN.md: "a room only imports rooms to its left"),
lazy imports inside functions included: an arrow back up is how a loop between two packages starts."""

from __future__ import annotations

import ast

import pytest

from tests.paths import REPO

ROOMS = ("opdefs", "cases", "reference", "adapters", "reports", "findings", "conformance", "bench")
# ``qnn-conformance``, the installed front door, hands each subcommand to the room that does the job (benchmarks
# included): it is above every room, not part of the flow
FRONT_DOOR = "conformance/cli.py"


def _imports(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
    return out & set(ROOMS)


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_imports_only_the_rooms_before_it(room):
    allowed = set(ROOMS[: ROOMS.index(room) + 1])
    wrong = []
    for path in sorted((REPO / room).rglob("*.py")):
        if path.relative_to(REPO).as_posix() == FRONT_DOOR:
            continue
        for target in sorted(_imports(path) - allowed):
            wrong.append(f"{path.relative_to(REPO)} imports {target}")
    assert not wrong, f"{len(wrong)} arrow(s) back up the flow:\n" + "\n".join(wrong)


def test_the_run_has_no_module_at_the_top_level():
    """The run lives in ``conformance/``; a top-level module beside the rooms would be outside the order."""
    loose = sorted(p.name for p in REPO.glob("*.py") if p.name != "conftest.py")
    assert not loose, f"top-level modules outside every room: {loose}"
