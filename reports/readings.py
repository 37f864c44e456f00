"""Open readings of the spec: which one each backend follows.

Why a section of its own: where the MasterOpDef leaves a choice open (Nv12ToRgb's colour matrix and
range), the reference implements every plausible reading and judges by the one recorded as its
decision. A backend that follows another reading fails that cell, and the reader wants to know which
reading it chose, not only that it differs. The records carry ``metrics.reading`` (the reading whose
expectation is closest to the backend's outputs, ``reference.diagnose``); this section counts them.
"""

from __future__ import annotations

from reports.matrix import Matrix, op_sort_key


def to_markdown(m: Matrix) -> list[str]:
    """The "Readings" section (markdown lines); empty when no record carries a reading."""
    rows = []
    for cell in sorted(m.cells.values(), key=lambda c: (op_sort_key(c.op), c.config, c.backend)):
        if cell.readings:
            total = sum(cell.readings.values())
            found = ", ".join(f"{name} {n}/{total}" for name, n in cell.readings.most_common())
            rows.append(f"| {cell.op} | {cell.config} | {cell.backend} | {found} |")
    if not rows:
        return []
    return ["## Readings the spec leaves open", "",
            "Per cell, the reading whose expectation was closest to each judged case's outputs (the reference "
            "judges by the reading recorded as its decision in the op's spec).", "",
            "| op | config | backend | closest reading (cases) |", "|---|---|---|---|", *rows, ""]  # fmt: skip
