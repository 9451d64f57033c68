"""``grader show``: the course's figures drawn from a student's own code (run in the sandbox, drawn in the parent).

From a notebook, in one line::

    from autograder.show import show
    show("attention101")                          # in the notebook: its own cells, figures shown under the cell
    show("attention101", "path/to/attention101")  # a package: writes ../attention101-figures/index.html

Importing this package is cheap (nothing of torch or matplotlib loads until a function runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def show(assignment: str, path: str | Path | None = None, out: str | Path | None = None, **options: Any) -> Path:
    """Render the figures of ``assignment`` from the student's code; return the page (``index.html``).

    In a Jupyter kernel the figures are also displayed under the cell (once, even without a closing ``;``).

    Args:
        assignment: The assignment's name (e.g. ``"attention101"``).
        path: The student's package folder, a folder holding it, a zip, or a saved notebook (``.ipynb``). By
            default, inside a notebook, the cells this kernel ran; elsewhere this folder (its package or notebook).
        out: The output folder (default ``<work>/../<package>-figures/``; ``./<package>-figures/`` for a kernel).
        **options: ``expected`` (bool), ``workers`` (int) and ``cache`` (bool: keep figures in ``<out>/.cache/``), as
            for :func:`autograder.show.render.render_figures`.

    Returns:
        The path of the page (a :class:`~autograder.show.inline.Shown`: also ``.page``, ``.folder``, ``.panels``,
        ``.summary()``, and ``_repr_html_`` for a notebook).

    Raises:
        GraderError: On bad input, with a one-line message.
    """
    from autograder.errors import GraderError

    from .inline import Shown, display_inline
    from .notebook import render_work

    try:
        rendered = render_work(assignment, path, out, **options)
    except GraderError as exc:
        # A student's mistake (a wrong name or path) is one line: not the frames of the grader it went through.
        raise exc.with_traceback(None) from None
    shown = Shown.of(rendered)
    display_inline(shown)
    return shown

