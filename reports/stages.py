"""Validation versus execution: for each cell, how far its cases got into the backend.

Why a view of its own: a REJECTED case is the backend saying "unsupported" at validation, which is
its right; a case it accepted and then could not finalize or execute is the backend contradicting
itself. The support matrix folds both into one word per cell; this section separates them, so a
reader sees which configurations validateOpConfig accepts and then cannot build or run.
Stages come from the adapters (``details["stage"]``: validate, finalize, execute, ok); a crash
counts in the stage the worker was in when it died.
"""

from __future__ import annotations

from reports.matrix import (
    EXECUTE_STAGE,
    FINALIZE_STAGE,
    OK_STAGE,
    STAGES,
    VALIDATE_STAGE,
    Cell,
    Matrix,
    op_sort_key,
)


def stage_columns(cell: Cell) -> tuple[str, str, str]:
    """(validate, finalize, execute) for one cell: "accepted/sent", "built/accepted", "ran/built";
    "-" where no case got that far."""
    st = cell.stages()
    sent = st[VALIDATE_STAGE] + st[FINALIZE_STAGE] + st[EXECUTE_STAGE] + st[OK_STAGE]
    accepted = sent - st[VALIDATE_STAGE]
    built = accepted - st[FINALIZE_STAGE]
    ran = built - st[EXECUTE_STAGE]

    def frac(n: int, of: int) -> str:
        return "-" if of == 0 else f"{n}/{of}"

    return frac(accepted, sent), frac(built, accepted), frac(ran, built)


def contradicting_cells(m: Matrix, backend: str) -> list[Cell]:
    """Typical cells of ``backend`` with a case accepted at validation that then failed."""
    cells = [c for c in m.cells.values() if c.backend == backend and c.accepted_then_failed()]
    return sorted(cells, key=lambda c: (op_sort_key(c.op), c.config))


def to_markdown(m: Matrix) -> list[str]:
    """The "Validation vs execution" section (markdown lines); empty when no adapter reported stages."""
    out: list[str] = []
    for backend in m.backends():
        cells = [c for c in m.cells.values() if c.backend == backend]
        if not any(set(c.stages()) & set(STAGES) for c in cells):
            continue  # the adapter says nothing about stages (only cases it never sent): no section
        bad = contradicting_cells(m, backend)
        refused = sum(1 for c in cells if c.stages() and set(c.stages()) == {VALIDATE_STAGE})
        ran = sum(1 for c in cells if c.stages()[OK_STAGE] and not c.accepted_then_failed())
        if not out:
            out += ["## Validation vs execution", "",
                    "Typical cases per cell: accepted by backendValidateOpConfig / sent, finalized / accepted, "
                    "executed / finalized. Only cells where the backend accepted a case and then could not build "
                    "or run it are listed: the backend contradicting itself.", ""]  # fmt: skip
        out += [f"**{backend}**: {len(bad)} cell(s) accepted at validation then failed; {refused} refused at "
                f"validation only; {ran} ran every accepted case.", ""]  # fmt: skip
        if bad:
            rows = ["| op | config | validate | finalize | execute |", "|---|---|---|---|---|"]
            for c in bad:
                v, f, e = stage_columns(c)
                rows.append(f"| {c.op} | {c.config} | {v} | {f} | {e} |")
            out += rows + [""]
    return out
