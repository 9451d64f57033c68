"""The figures as a notebook shows them: the page's path, displayed inline as the figures themselves."""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from .page import MARKS
from .panel import DIAGNOSIS, DRAWN, UPSTREAM, Panel

if TYPE_CHECKING:
    from .render import Rendered

# A notebook's output area ignores the page's stylesheet (and sanitises <style> in some front ends): styles inline.
REASON_STYLE = "color:#8a5a00"
NOTE_STYLES = {"ok": "color:#17692c", "bad": "color:#a4161a;font-weight:600", "info": "color:#333",
               DIAGNOSIS: "color:#5a3d8a", UPSTREAM: "color:#8a5a00"}


# The concrete class (PosixPath here): Path itself cannot be subclassed before Python 3.12.
class Shown(type(Path())):  # type: ignore[misc]
    """The page's path, as ``show()`` always returned, holding what was drawn; a notebook displays the figures.

    Paths derived from it (``.parent``, ``/ "x"``) are of this class too but hold nothing, and display as paths.
    """

    _rendered: Rendered | None = None
    _displayed_in: int | None = None

    @classmethod
    def of(cls, rendered: Rendered) -> Shown:
        """The page of ``rendered``, holding it."""
        shown = cls(rendered.page)
        shown._rendered = rendered
        return shown

    @property
    def rendered(self) -> Rendered:
        """What was written (the folder, the page, the panels, how each probe went)."""
        if self._rendered is None:
            raise AttributeError(f"{self} is a path derived from the page; it holds no figures")
        return self._rendered

    @property
    def page(self) -> Path:
        """The page (``index.html``), as a plain path."""
        return Path(self)

    @property
    def folder(self) -> Path:
        """The output folder."""
        return self.rendered.folder

    @property
    def panels(self) -> list[Panel]:
        """The figures, in page order."""
        return self.rendered.panels

    def summary(self) -> str:
        """One line: how many figures were drawn, why the others were not, how long it took."""
        return self.rendered.summary()

    def _repr_html_(self) -> str | None:
        return inline_html(self._rendered) if self._rendered is not None else None

    def _ipython_display_(self) -> None:
        """Display the figures once per cell: ``show()`` displays them itself (a cell ending with ``;`` hides
        its value), so the same cell's value must not show them a second time."""
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        count = getattr(shell, "execution_count", None)
        if self._rendered is not None and count is not None and self._displayed_in == count:
            return
        self._displayed_in = count
        html = self._repr_html_()
        display({"text/plain": repr(self), **({"text/html": html} if html else {})}, raw=True)


def display_inline(shown: Shown) -> None:
    """In a Jupyter kernel, display the figures now; elsewhere (a script, a terminal) do nothing."""
    from autograder.public import notebook

    if notebook.in_kernel():
        from IPython.display import display

        display(shown)


def inline_html(rendered: Rendered) -> str:
    """One HTML fragment: the summary, then each figure (its PNG embedded), caption, reason and notes.

    Everything the student's code influences is escaped; the images are data URIs, so the fragment needs no file
    beside the notebook (the page stays in the folder for a browser).
    """
    head = (f"<p><b>{escape(rendered.summary())}</b>. Each caption says what the picture should show; the notes "
            f"compare your numbers with what the course notes state. Page: <code>{escape(str(rendered.page))}</code>"
            f"</p>\n")
    notes = "".join(f"<li>{escape(note)}</li>\n" for note in rendered.outcome.notes)
    sections = "".join(_section(panel, rendered.folder, rendered.expected.get(panel.figure.name))
                       for panel in rendered.panels)
    printed = rendered.outcome.printed
    details = (f"<details><summary>What your code printed</summary><pre>{escape(printed)}</pre></details>\n"
               if printed.strip() else "")
    return (f'<div class="grader-show">\n{head}' + (f"<ul>\n{notes}</ul>\n" if notes else "") + sections + details
            + "</div>\n")


def _section(panel: Panel, folder: Path, expected: str | None = None) -> str:
    figure = panel.figure
    body = _image(folder / panel.image, figure.title) if panel.status == DRAWN else ""
    if expected:  # the instructor lets the expected figure stand beside the student's (the release carries it)
        body = (f'<div style="display:flex;flex-wrap:wrap;gap:12px">\n'
                f'<figure style="margin:0">{body or "<p>(not drawn)</p>"}<figcaption>your code</figcaption></figure>\n'
                f'<figure style="margin:0">{_image(folder / expected, figure.title + ", expected")}'
                f"<figcaption>expected (the reference solution's figure)</figcaption></figure>\n</div>\n")
    reason = f'<p style="{REASON_STYLE}">Not drawn: {escape(panel.reason)}</p>\n' if panel.status != DRAWN else ""
    notes = "".join(f'<li style="{NOTE_STYLES.get(kind, "")}">{MARKS.get(kind, "•")} {escape(text)}</li>\n'
                    for kind, text in panel.lines())
    return (f"<h4>{escape(figure.title)}</h4>\n<p>{escape(figure.caption)}</p>\n{body}{reason}"
            + (f'<ul style="list-style:none;padding-left:0">\n{notes}</ul>\n' if notes else ""))


def _image(path: Path, alt: str) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return f'<p style="{REASON_STYLE}">(image missing: {escape(path.name)})</p>\n'
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img src="data:image/png;base64,{encoded}" alt="{escape(alt)}" style="max-width:100%;height:auto">\n'

