"""Lay the figures out as one self-contained HTML page (every student-derived text escaped, no external resource)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.sandbox.tiers import in_plain_words
from autograder.util.pages import asset_text, render_html

from .panel import DIAGNOSIS, DRAWN, UPSTREAM, Panel

MARKS = {"ok": "✓", "bad": "✗", "info": "•", DIAGNOSIS: "→", UPSTREAM: "↑"}  # each note's mark, by its kind
# Marks images that did not load, and records load results and script errors on <html> (the browser test reads
# them): a page whose picture is missing says so instead of showing an empty frame.
SCRIPT = asset_text("show/page.js").strip()


@dataclass(frozen=True)
class PageInfo:
    """What the page says about the run.

    Attributes:
        assignment: The assignment's name.
        title: The assignment's title.
        source: Where the code came from (shown as is, escaped).
        isolation: The sandbox tier the code ran under (said in plain words: ``sandbox.tiers.in_plain_words``).
        notes: Missing files and modules that could not be imported.
        printed: What the code printed.
        seconds: Wall time of the run.
    """

    assignment: str
    title: str
    source: str
    isolation: str
    notes: tuple[str, ...] = ()
    printed: str = ""
    seconds: float = 0.0


def render_page(info: PageInfo, panels: list[Panel], expected: dict[str, str]) -> str:
    """The HTML page (``templates/html/show/page.html.j2``).

    Args:
        info: What to say about the run.
        panels: The figures, in order.
        expected: Figure name to the expected PNG's path relative to the page, where one stands beside.

    Returns:
        The page's text.
    """
    # The policy allows this one script by its hash (the element's exact text) and images beside the page only.
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    policy = f"default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'"
    return render_html("show/page.html.j2", policy=policy, assignment=info.assignment, title=info.title,
                       source=info.source, isolation=in_plain_words(info.isolation), seconds=f"{info.seconds:.1f}",
                       drawn=sum(panel.status == DRAWN for panel in panels), notes=info.notes, printed=info.printed,
                       panels=[_panel_view(panel, expected.get(panel.figure.name)) for panel in panels], marks=MARKS,
                       script=SCRIPT)


def _panel_view(panel: Panel, expected: str | None) -> dict[str, Any]:
    """A figure's section: its declaration's texts, its PNG and the expected one, why it was not drawn, the notes."""
    figure = panel.figure
    return {"name": figure.name, "title": figure.title, "caption": figure.caption, "image": panel.image,
            "drawn": panel.status == DRAWN, "expected": expected, "reason": panel.reason, "lines": panel.lines()}


def write_page(folder: Path, text: str) -> Path:
    """Write ``index.html`` into ``folder`` (atomically: a half-written page is never opened)."""
    path = folder / "index.html"
    partial = folder / ".index.html.partial"
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return path
