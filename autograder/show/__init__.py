"""``grader show``: the course's figures drawn from a student's own code (run in the sandbox, drawn in the parent).

From a notebook, in one line::

    from autograder.show import show
    show("attention101", "path/to/attention101")   # writes ../attention101-figures/index.html, returns its path

Importing this package is cheap (nothing of torch or matplotlib loads until a function runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def show(assignment: str, path: str | Path | None = None, out: str | Path | None = None, **options: Any) -> Path:
    """Render the figures of ``assignment`` from the code at ``path``; return the page (``index.html``).

    Args:
        assignment: The assignment's name (e.g. ``"attention101"``).
        path: The student's package folder, a folder holding it, or a zip (default ``./<package>``).
        out: The output folder (default ``<package>/../<package>-figures/``).
        **options: ``expected`` (bool) and ``workers`` (int), as for :func:`autograder.show.render.render_figures`.

    Returns:
        The path of the page.
    """
    from .render import render_figures

    return render_figures(assignment, path, out, **options).page


def render_figures(*args: Any, **kwargs: Any) -> Any:
    """See :func:`autograder.show.render.render_figures` (e.g. for ``grade-all --feedback``)."""
    from .render import render_figures as render

    return render(*args, **kwargs)


def render_expected(*args: Any, **kwargs: Any) -> Any:
    """See :func:`autograder.show.render.render_expected` (for ``grader release``)."""
    from .render import render_expected as render

    return render(*args, **kwargs)
