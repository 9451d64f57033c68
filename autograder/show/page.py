"""Lay the figures out as one self-contained HTML page (every student-derived text escaped, no external resource)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from html import escape
from pathlib import Path

from autograder.sandbox.tiers import in_plain_words

from .panel import DIAGNOSIS, DRAWN, UPSTREAM, Panel

MARKS = {"ok": "✓", "bad": "✗", "info": "•", DIAGNOSIS: "→", UPSTREAM: "↑"}
# Marks images that did not load, and records load results and script errors on <html> (the browser test reads
# them): a page whose picture is missing says so instead of showing an empty frame.
SCRIPT = """
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push(String(e.message || 'error')); });
window.addEventListener('load', function () {
  var widths = [];
  document.querySelectorAll('img').forEach(function (img) {
    widths.push(img.naturalWidth);
    if (!img.naturalWidth) { img.insertAdjacentText('afterend', ' (image missing)'); }
  });
  document.documentElement.setAttribute('data-images', widths.join(','));
  document.documentElement.setAttribute('data-errors', String(window.__errors.length));
});
""".strip()
STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-bottom: .2em; }
section { border-top: 1px solid #ddd; padding: .6em 0 1em; }
.caption { color: #444; margin: .2em 0 .6em; }
.images { display: flex; flex-wrap: wrap; gap: 1em; }
.images figure { margin: 0; flex: 1 1 420px; }
.images img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .85em; color: #666; }
ul.notes { list-style: none; padding-left: 0; margin: .4em 0; }
li.ok { color: #17692c; } li.bad { color: #a4161a; font-weight: 600; } li.info { color: #333; }
li.diagnosis { color: #5a3d8a; } li.upstream { color: #8a5a00; }
.reason { color: #8a5a00; }
.summary li { margin: .1em 0; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; max-height: 20em; }
""".strip()


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
    """The HTML page.

    Args:
        info: What to say about the run.
        panels: The figures, in order.
        expected: Figure name to the expected PNG's path relative to the page, where one stands beside.

    Returns:
        The page's text.
    """
    drawn = sum(panel.status == DRAWN for panel in panels)
    # The policy allows this one script by its hash (the element's exact text) and images beside the page only.
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    policy = f"default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'"
    head = (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(info.assignment)}: your figures</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n")
    intro = (f"<h1>{escape(info.title)}: the course's figures, drawn from your code</h1>\n"
             f"<p>Code: <code>{escape(info.source)}</code>. It ran as grading runs it, "
             f"{escape(in_plain_words(info.isolation))} ({info.seconds:.1f} s); only plain numbers came back, and the "
             f"pictures were drawn from them. {drawn} of {len(panels)} figures drawn. Each caption says what the "
             f"picture should show; the notes under it compare your numbers with what the course notes state "
             f"(they are not the hidden tests).</p>\n")
    summary = ("<ul class=\"summary\">\n" + "".join(f"<li>{escape(note)}</li>\n" for note in info.notes) + "</ul>\n"
               if info.notes else "")
    sections = "".join(_section(panel, expected.get(panel.figure.name)) for panel in panels)
    printed = (f"<details><summary>What your code printed</summary><pre>{escape(info.printed)}</pre></details>\n"
               if info.printed.strip() else "")
    return head + intro + summary + sections + printed + f"<script>{SCRIPT}</script>\n</body>\n</html>\n"


def _section(panel: Panel, expected: str | None) -> str:
    figure = panel.figure
    images = _image(panel.image, "your code" if panel.status == DRAWN else "your code: not drawn", figure.title)
    if expected:
        images += _image(expected, "expected (the reference solution's figure)", f"{figure.title}, expected")
    reason = f'<p class="reason">{escape(panel.reason)}</p>\n' if panel.reason else ""
    notes = "".join(f'<li class="{kind}">{MARKS.get(kind, "•")} {escape(text)}</li>\n'
                    for kind, text in panel.lines())
    return (f'<section id="{escape(figure.name)}">\n<h2>{escape(figure.title)}</h2>\n'
            f'<p class="caption">{escape(figure.caption)}</p>\n<div class="images">\n{images}</div>\n{reason}'
            + (f'<ul class="notes">\n{notes}</ul>\n' if notes else "") + "</section>\n")


def _image(source: str, label: str, alt: str) -> str:
    return (f'<figure><img src="{escape(source)}" alt="{escape(alt)}">'
            f"<figcaption>{escape(label)}</figcaption></figure>\n")


def write_page(folder: Path, text: str) -> Path:
    """Write ``index.html`` into ``folder`` (atomically: a half-written page is never opened)."""
    path = folder / "index.html"
    partial = folder / ".index.html.partial"
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return path
