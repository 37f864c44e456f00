"""The readable grid: ops x (backend x datatype family), what the HTML and markdown pages and the summary chart show.

Display only: built from a ``reports.matrix.Matrix`` and never counting anything the matrix's cells do not hold, so the
pages cannot disagree with the records. Kept apart from the matrix, which is the counting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from reports.families import DTYPE_FAMILIES, dtype_family
from reports.matrix import ABBREVIATIONS, STATUS_PRECEDENCE, Cell, Matrix, config_sort_key
from reports.record import (
    BAD,
    CRASH,
    ERROR,
    FAIL,
    FP16_ACCURATE,
    PASS,
    REJECTED,
    SKIP,
    TIMEOUT,
    UNCHECKED,
    XFAIL,
    XPASS,
)

# The readable grid: ops x (backend x datatype family), what the HTML and markdown pages show
PARTIAL = "PARTIAL"  # some configurations of the family pass, the others are refused: partly supported
# every typical case refused as drawn, but the backend runs the configuration in a converter-standard form (the
# probe, cases.forms): not "unsupported" - the form is named, as what a converter must emit
FORM = "FORM"
BACKEND_TROUBLE = (ERROR, CRASH, TIMEOUT)  # the backend contradicted itself or died: marked apart from FAIL
GRID_STATUSES: tuple[str, ...] = (CRASH, ERROR, FAIL, XPASS, TIMEOUT, PARTIAL, REJECTED, FORM, FP16_ACCURATE, XFAIL,
                                  PASS, UNCHECKED, SKIP)  # fmt: skip
EDGE_MARK, TROUBLE_MARK, PARTIAL_MARK = "*", "!", "~"
VARIANT_MARK = "^"  # a generation or release (qnn-htp@v73) whose cell differs from its base's (qnn-htp)


@dataclass
class FamilyCell:
    """The typical cells of one op on one backend whose configurations share a datatype family.

    Display only: every count comes from the ``Cell`` objects it gathers, so it cannot disagree with
    them. Its rate is PASS cases over all typical cases of those configurations."""

    op: str
    backend: str
    dtype_family: str
    cells: list[Cell] = field(default_factory=list)
    differs: str = ""  # on a variant's column: its base's cell where the two differ ("base: 100%")

    @property
    def counts(self) -> Counter[str]:
        return _summed(c.counts for c in self.cells)

    @property
    def edge_counts(self) -> Counter[str]:
        return _summed(c.edge.counts for c in self.cells if c.edge is not None)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def passed(self) -> int:
        return self.counts[PASS]

    @property
    def status(self) -> str:
        """The colour: the most severe typical verdict (as a cell's), PARTIAL where passes sit beside
        refusals only, SKIP when no typical case ran."""
        counts = self.counts
        if not sum(counts.values()):
            return SKIP
        status = next(v for v in STATUS_PRECEDENCE if counts[v])
        if status == REJECTED and counts[PASS]:
            return PARTIAL
        if status == REJECTED and self.forms():
            return FORM
        return status

    @property
    def reasons(self) -> Counter[str]:
        """Refused typical cases per reason, over the family's configurations."""
        return _summed(c.reasons for c in self.cells)

    def forms(self) -> dict[str, str]:
        """Configuration -> the converter-standard form it runs in, for the configurations refused as drawn."""
        return {c.config: form for c in self.cells if (form := c.standard_form())}

    def edge_news(self) -> list[str]:
        """The edge notes of its configurations ("UFIXED_POINT_8: edge FAIL 2/5"), empty when all is well."""
        return [f"{c.config}: {c.edge_note()}" for c in self.cells if c.edge_note()]

    def deployed(self) -> str:
        """Whether the family holds at the deployed sizes of its model tier: "holds at deployed sizes (3 layers)",
        "fails at deployed sizes (1 of 3 layers)", or "" where no layer ran."""
        models = [c.model for c in self.cells if c.model is not None and c.model.total]
        if not models:
            return ""
        ran = sum(m.total for m in models)
        bad = sum(m.counts[v] for m in models for v in (*BAD, XPASS))
        return f"fails at deployed sizes ({bad} of {ran} layers)" if bad else f"holds at deployed sizes ({ran} layers)"

    def rate(self, percent_sign: bool = True) -> str:
        """Whole per cent of typical cases that passed; 100% only when every one did."""
        total = self.total
        return f"{100 * self.passed // total}{'%' if percent_sign else ''}" if total else ""

    def text(self, percent_sign: bool = True) -> str:
        """At most six characters (five without the per cent sign, as in the 200-column markdown grid):
        "100%", "50%~", "40%!*", "REJ".
        ``~`` the other cases were refused, ``!`` some errored/crashed/timed out, ``*`` edge-tier news."""
        status = self.status
        if status == SKIP:
            core = "-"
        elif status == REJECTED and not self.passed:
            core = "REJ"
        elif status == FORM:
            core = "FORM"
        elif status == UNCHECKED:
            core = "UNC"
        elif status == XFAIL and not self.passed:
            core = "XF"
        else:
            core = self.rate(percent_sign)
        counts = self.counts
        partly_refused = counts[REJECTED] and core[:1].isdigit()
        marks = (PARTIAL_MARK if partly_refused else "") + (
            TROUBLE_MARK if any(counts[v] for v in BACKEND_TROUBLE) else "") + (
            EDGE_MARK if self.edge_news() else "") + (VARIANT_MARK if self.differs else "")  # fmt: skip
        return core + marks

    def summary(self) -> str:
        """One line for a tooltip: "PASS 38/40, REJ 2 · edge: UFIXED_POINT_8: edge FAIL 1/2"."""
        counts = self.counts
        parts = [f"{ABBREVIATIONS.get(v, v)} {counts[v]}" for v in STATUS_PRECEDENCE if counts[v]]
        line = f"{self.passed}/{self.total} typical cases pass" + (f" ({', '.join(parts)})" if parts else "")
        news = self.edge_news()
        forms = self.forms()
        reasons = self.reasons
        if forms:
            line += " · " + "; ".join(f"{config}: refused as drawn, supported as {form}"
                                      for config, form in forms.items())  # fmt: skip
        if reasons:
            line += " · REJ: " + "; ".join(f"{why} ({n})" for why, n in reasons.most_common(3))
        deployed = self.deployed()
        return (line + (" · " + "; ".join(news) if news else "") + (f" · {deployed}" if deployed else "")
                + (f" · differs from {self.differs}" if self.differs else ""))  # fmt: skip


def _summed(counters: Iterable[Counter[str]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for c in counters:
        total.update(c)
    return total


@dataclass
class GridRow:
    op: str
    family: str
    cells: dict[tuple[str, str], FamilyCell]  # (backend, datatype family) -> cell
    not_generated: dict[str, str]  # backend -> the spec's reason


@dataclass
class Grid:
    """Rows are ops in family order; columns are (backend, datatype family), HTP first, reference last."""

    columns: list[tuple[str, str]]
    rows: list[GridRow]
    collapsed: dict[str, list[str]] = field(default_factory=dict)  # base -> its variants that agree on every cell

    def backends(self) -> list[str]:
        return list(dict.fromkeys(b for b, _ in self.columns))

    def label(self, backend: str) -> str:
        """The column group's heading: "qnn-htp = @v69 @v73" where those variants agree with it on every cell."""
        same = self.collapsed.get(backend)
        return f"{backend} = {' '.join('@' + v.split('@', 1)[1] for v in same)}" if same else backend

    def families_of(self, backend: str) -> list[str]:
        return [f for b, f in self.columns if b == backend]

    def passing_ops(self) -> dict[tuple[str, str], Counter[str]]:
        """Per column, how many ops have each status: what the summary chart draws. A variant folded into its base's
        column group (``collapsed``) keeps its cells in the rows but has no columns: it is counted as its base."""
        out: dict[tuple[str, str], Counter[str]] = {col: Counter() for col in self.columns}
        for row in self.rows:
            for col, cell in row.cells.items():
                if col in out:
                    out[col][cell.status] += 1
        return out


def grid(m: Matrix) -> Grid:
    """The op x (backend x datatype family) grid of a matrix (typical tier, positive cases)."""
    backends = m.backends()
    present: dict[str, set[str]] = {b: set() for b in backends}
    by_op: dict[str, dict[tuple[str, str], FamilyCell]] = {}
    for key in sorted(m.cells, key=lambda k: (k[0], config_sort_key(k[1]))):
        cell = m.cells[key]
        fam = dtype_family(cell.config)
        present[cell.backend].add(fam)
        slot = by_op.setdefault(cell.op, {})
        slot.setdefault((cell.backend, fam), FamilyCell(cell.op, cell.backend, fam)).cells.append(cell)
    collapsed = _collapse_variants(backends, present, by_op)
    gone = {v for vs in collapsed.values() for v in vs}
    columns = [(b, f) for b in backends if b not in gone for f in DTYPE_FAMILIES if f in present[b]]
    rows = []
    for op in m.ops():
        reasons = {b: why for (o, b), why in m.not_generated.items() if o == op}
        rows.append(GridRow(op, m.family(op), by_op.get(op, {}), reasons))
    return Grid(columns, rows, collapsed)


def _collapse_variants(backends: list[str], present: dict[str, set[str]],
                       by_op: dict[str, dict[tuple[str, str], FamilyCell]]) -> dict[str, list[str]]:  # fmt: skip
    """A sweep's variants (``qnn-htp@v73``, ``qnn-htp@2.47``: ``python -m conformance --sweep``) beside their base:
    those that agree with it on every cell (same status, same counts) fold into its column group, so that a sweep of
    eleven variants shows the few that differ; the differing cells of the others say what their base has there."""
    collapsed: dict[str, list[str]] = {}
    for variant in backends:
        base = variant.split("@", 1)[0]
        if "@" not in variant or base not in backends:
            continue
        families = present[variant] | present[base]
        differing = []
        for cells in by_op.values():
            for fam in families:
                mine, theirs = cells.get((variant, fam)), cells.get((base, fam))
                if _shown(mine) != _shown(theirs):
                    differing.append((mine, theirs))
        if not differing:
            collapsed.setdefault(base, []).append(variant)
        for mine, theirs in differing:
            if mine is not None:
                mine.differs = f"{base}: {theirs.text() if theirs else 'no case'}"
    return collapsed


def _shown(cell: FamilyCell | None) -> tuple:
    return () if cell is None else (cell.status, tuple(sorted(cell.counts.items())))




# One colour per grid status, shared by the HTML page and the summary chart so they read alike.
STATUS_COLOURS: dict[str, str] = {
    PASS: "#66bb6a", PARTIAL: "#c5e1a5", XFAIL: "#dcedc8", FAIL: "#e57373", XPASS: "#fff176",
    ERROR: "#ffb74d", CRASH: "#b71c1c", TIMEOUT: "#ba68c8", REJECTED: "#bdbdbd", FORM: "#80cbc4", UNCHECKED: "#90caf9",
    SKIP: "#eeeeee", FP16_ACCURATE: "#aed581",
}  # fmt: skip
STATUS_WORDS: dict[str, str] = {
    PASS: "every typical case passes", PARTIAL: "passes where accepted; other configurations refused",
    XFAIL: "known: failures a finding explains (XFAIL), never counted as passing",
    FAIL: "wrong numbers, shape or type", XPASS: "a known failure now passes",
    ERROR: "accepted, then failed to finalize or execute", CRASH: "the backend process died",
    TIMEOUT: "timed out", REJECTED: "refused at validation (unsupported), with the backend's reasons",
    FORM: "refused as drawn; runs in a converter-standard form (named): what a converter must emit",
    UNCHECKED: "ran; nothing checkable",
    SKIP: "no typical case ran",
    FP16_ACCURATE: "float16-accurate: outside binary32's budget, inside binary16's, as the backend documents",
}  # fmt: skip
