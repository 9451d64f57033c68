"""The figures as a notebook shows them: the page's path, displayed inline as the figures themselves."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.util.pages import render_html

from .page import MARKS
from .panel import DRAWN, Panel

if TYPE_CHECKING:
    from .render import Rendered

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
    """One HTML fragment (``templates/html/show/inline.html.j2``): the summary, then each figure (its PNG
    embedded), caption, reason and notes.

    Everything the student's code influences is escaped; the images are data URIs, so the fragment needs no file
    beside the notebook (the page stays in the folder for a browser).
    """
    return render_html("show/inline.html.j2", summary=rendered.summary(), page=str(rendered.page),
                       notes=rendered.outcome.notes, printed=rendered.outcome.printed, marks=MARKS,
                       panels=[_panel_view(panel, rendered.folder, rendered.expected.get(panel.figure.name))
                               for panel in rendered.panels])


def _panel_view(panel: Panel, folder: Path, expected: str | None) -> dict[str, Any]:
    """A figure as the notebook shows it: its texts, its PNG and the expected one read in, why it was not drawn."""
    figure = panel.figure
    return {"title": figure.title, "caption": figure.caption, "lines": panel.lines(),
            "image": _image(folder / panel.image) if panel.status == DRAWN else None,
            "expected": _image(folder / expected) if expected else None,
            "reason": panel.reason if panel.status != DRAWN else None}


def _image(path: Path) -> dict[str, str]:
    """A PNG as base64 for a data URI (``data`` empty when it cannot be read: the fragment says it is missing)."""
    try:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError:
        data = ""
    return {"name": path.name, "data": data}
