"""The summary chart: how many ops pass per backend and datatype family, as an image.

One panel per backend (HTP first, reference last, as in the grid), one stacked bar per datatype
family: ops whose typical cases all pass at the bottom, then partly supported, failing, backend
trouble, refused and the rest, in the grid's colours. The README and the HTML page show the same
picture, so it is drawn from the ``Grid`` alone (results files only, no backend).
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

from reports.families import SHORT_DTYPE_FAMILY
from reports.grid import FORM, PARTIAL, STATUS_COLOURS, Grid
from reports.matrix import CRASH, ERROR, FAIL, FP16_ACCURATE, PASS, REJECTED, SKIP, TIMEOUT, UNCHECKED, XFAIL, XPASS

# Bottom to top; each layer gathers grid statuses that mean the same thing to a reader.
LAYERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("all typical cases pass", (PASS,), STATUS_COLOURS[PASS]),
    ("partly supported", (PARTIAL,), STATUS_COLOURS[PARTIAL]),
    ("runs in a standard form", (FORM,), STATUS_COLOURS[FORM]),
    ("float16-accurate", (FP16_ACCURATE,), STATUS_COLOURS[FP16_ACCURATE]),
    ("fail", (FAIL, XPASS), STATUS_COLOURS[FAIL]),
    ("error / crash / timeout", (ERROR, CRASH, TIMEOUT), STATUS_COLOURS[ERROR]),
    ("refused (unsupported)", (REJECTED,), STATUS_COLOURS[REJECTED]),
    ("unchecked / xfail / none ran", (UNCHECKED, XFAIL, SKIP), STATUS_COLOURS[UNCHECKED]),
)


def figure(g: Grid):  # -> matplotlib.figure.Figure (imported lazily: only charts need matplotlib)
    """The chart as a matplotlib Figure (no pyplot: no global state, safe in a library)."""
    from matplotlib.figure import Figure

    backends = g.backends()
    counts = g.passing_ops()
    fig = Figure(figsize=(max(4.8, 0.6 + 2.3 * len(backends)), 3.4), dpi=110, layout="constrained")
    if not backends:
        fig.text(0.5, 0.5, "no results", ha="center", va="center")
        return fig
    axes = fig.subplots(1, len(backends), sharey=True, squeeze=False)[0]
    top = max((sum(c.values()) for c in counts.values()), default=1) or 1
    for ax, backend in zip(axes, backends, strict=True):
        fams = g.families_of(backend)
        x = list(range(len(fams)))
        bottom = [0] * len(fams)
        for label, statuses, colour in LAYERS:
            heights = [sum(counts[(backend, f)][s] for s in statuses) for f in fams]
            ax.bar(x, heights, bottom=bottom, color=colour, edgecolor="white", linewidth=0.5, label=label)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        for xi, f in zip(x, fams, strict=True):
            n_pass = counts[(backend, f)][PASS]
            ax.text(xi, n_pass, str(n_pass), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x, [SHORT_DTYPE_FAMILY[f] for f in fams], fontsize=8)
        ax.set_title(backend, fontsize=9)
        ax.set_ylim(0, top * 1.08)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].set_ylabel("ops", fontsize=8)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=7, frameon=False)
    fig.suptitle("Ops per backend and datatype family (typical tier; number = ops passing)", fontsize=9)
    return fig


def render(g: Grid, fmt: str = "png") -> bytes:
    """The chart as PNG or SVG bytes (SVG without a date, so a re-render of the same results is identical)."""
    import matplotlib

    buf = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    with matplotlib.rc_context({"svg.hashsalt": "qnn-opdef-conformance"}):  # SVG ids otherwise differ per run
        figure(g).savefig(buf, format=fmt, metadata=metadata)
    return buf.getvalue()


def write(g: Grid, path: Path) -> Path:
    """Write the chart; the format follows the suffix (.png or .svg)."""
    fmt = path.suffix.lstrip(".").lower() or "png"
    if fmt not in ("png", "svg"):
        raise ValueError(f"{path}: the chart is written as .png or .svg")
    path.write_bytes(render(g, fmt))
    return path


def data_uri(g: Grid) -> str:
    """The PNG inline, for a self-contained HTML page."""
    return "data:image/png;base64," + base64.b64encode(render(g, "png")).decode("ascii")
