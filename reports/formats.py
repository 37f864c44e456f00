"""One entry point for every matrix rendering, so ``python -m reports matrix`` and the main job
(``conformance/main_job.py``) name formats alike."""

from __future__ import annotations

from collections.abc import Callable

from reports import html_page, render_text
from reports.matrix import Matrix

DEFAULT_TITLE = "QNN op support matrix"
FORMATS: dict[str, Callable[[Matrix, str], str]] = {
    "md": render_text.to_markdown,
    "html": html_page.to_html,
    "csv": lambda m, title: render_text.to_csv(m),
    "json": lambda m, title: render_text.to_json(m),
}


def render(m: Matrix, fmt: str, title: str = DEFAULT_TITLE) -> str:
    """The matrix as text in one of FORMATS ("md", "html", "csv", "json")."""
    try:
        renderer = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown matrix format {fmt!r} (one of {', '.join(FORMATS)})") from None
    return renderer(m, title)
