"""What a run learnt about memory the backend does not own: the cases whose verdict or outputs in a worker that had run
other cases differed from those of a fresh worker, and the cases whose two runs in a fresh worker disagreed
(``conformance.fresh``). A backend author reads this as a list of kernels that read uninitialised or foreign memory;
each case comes with the finding that covers it, if one does, and its replay command.
"""

from __future__ import annotations

from collections.abc import Iterable

from reports.matrix import config_sort_key, op_sort_key
from reports.record import POSITIVE, RAW_VERDICT_KEY, SHRUNK, Record
from reports.render_text import md


def _rows(records: Iterable[Record]) -> tuple[list[Record], list[Record], list[Record]]:
    changed, outputs, varies = [], [], []
    for r in records:
        if r.kind not in (POSITIVE, "negative", SHRUNK):
            continue
        details = r.extra.get("details") or {}
        long_lived = (details.get("fresh") or {}).get("long_lived") or {}
        if long_lived:
            raw = r.extra.get(RAW_VERDICT_KEY, r.verdict)
            (changed if long_lived.get("verdict") != raw else outputs).append(r)
        if details.get("nondeterministic"):
            varies.append(r)
    return changed, outputs, varies


def _key(r: Record) -> tuple:
    return op_sort_key(r.op), config_sort_key(r.config), r.tier or "typical", r.case_id or ""


def _line(r: Record) -> str:
    known = f" ({md(str(r.expectation))[:160]})" if r.expectation else " (no finding covers it)"
    return f"- **{md(r.op)}** `{md(r.config)}` {r.tier or 'typical'}: {r.verdict}{known}"


def report(records: Iterable[Record], backend: str | None = None) -> str:
    """Markdown: verdicts only a used worker gave, outputs only a used worker gave, and cases that vary between runs."""
    records = [r for r in records if backend is None or r.backend == backend]
    changed, outputs, varies = (sorted(rows, key=_key) for rows in _rows(records))
    checked = sum(1 for r in records if (r.extra.get("details") or {}).get("fresh"))
    out = [f"# Memory the backend does not own{f': {md(backend)}' if backend else ''}", "",
           f"{checked} case(s) ran again in a fresh worker; {len(changed)} verdict(s) only a used worker gave, "
           f"{len(outputs)} output(s) only a used worker gave, {len(varies)} case(s) that vary between two fresh runs.",
           ""]  # fmt: skip
    sections = (("Verdicts only a used worker gave", changed), ("Outputs only a used worker gave", outputs),
                ("Cases that vary between two fresh runs", varies))  # fmt: skip
    for title, rows in sections:
        out += [f"## {title}", ""]
        if not rows:
            out += ["None.", ""]
            continue
        for r in rows:
            details = r.extra.get("details") or {}
            fresh = details.get("fresh") or {}
            out.append(_line(r))
            long_lived = fresh.get("long_lived") or {}
            if long_lived:
                out.append(f"  - in a worker {fresh.get('age', '?')} cases old: {long_lived.get('verdict')}, "
                           f"digest {long_lived.get('digest') or '-'} (fresh: {details.get('output_digest') or '-'}): "
                           f"{md(str(long_lived.get('message') or ''))[:200]}")  # fmt: skip
            nd = details.get("nondeterministic") or {}
            for name, d in (nd.get("outputs") or {}).items():
                out.append(f"  - {md(name)}: {d.get('elements')} of {d.get('of')} elements differ "
                           f"(first at flat {d.get('first')})")  # fmt: skip
            if nd.get("status"):
                out.append(f"  - statuses {' then '.join(nd['status'])}")
            if r.replay:
                out.append(f"  - `{r.replay}`")
        out.append("")
    return "\n".join(out)
