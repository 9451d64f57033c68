"""Where ``show()`` takes the code from: a package, a saved notebook, or the cells this Jupyter kernel ran."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.errors import SubmissionError
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.read import is_notebook

from .render import Rendered, _resolve, render_figures

if TYPE_CHECKING:
    from autograder.submission.notebook.extract import Extraction

KERNEL_SOURCE = "this notebook (the cells this kernel ran)"


def render_work(assignment: Assignment | str, path: Path | str | None = None, out: Path | str | None = None,
                **options: Any) -> Rendered:
    """Render the figures of the student's work, wherever it is.

    * ``path`` a notebook file: its definitions, extracted as the grader extracts them (figures beside it).
    * No ``path``, inside a Jupyter kernel: the definitions of the cells this kernel ran, as ``check_notebook``
      reads them (figures in ``./<package>-figures/``), even beside a ``./<package>`` folder: the student release
      has one (the stubs), and the notebook's show cell means the notebook.
    * Otherwise a package folder, a folder holding it, or a zip, as ``grader show`` takes it.

    Args:
        assignment: The assignment (or its name).
        path: The work (see above).
        out: The output folder (default: as above).
        **options: As for :func:`autograder.show.render.render_figures`.

    Returns:
        What was written.

    Raises:
        GraderError: On bad input (unknown assignment, missing path, unreadable notebook, no package there).
    """
    from autograder.public import notebook  # imported late: the kernel check is looked up there (tests replace it)

    spec = _resolve(assignment)
    target = Path(path).expanduser() if path is not None else None
    if target is not None and not target.exists():
        raise SubmissionError(f"{target} does not exist")
    if target is not None and target.is_file() and is_notebook(target):  # the intake extracts it, as grading does
        rendered = render_figures(spec, target, out, **options)
        print("".join(f"note: {note}\n" for note in rendered.reading), end="")
        return rendered
    if target is None and notebook.in_kernel():
        extraction = notebook.notebook_extraction(spec)
        return _render_extracted(spec, extraction, out or Path.cwd() / f"{spec.package}-figures", KERNEL_SOURCE,
                                 options)
    return render_figures(spec, target, out, **options)


def _render_extracted(spec: Assignment, extraction: Extraction, out: Path | str, source: str,
                      options: dict[str, Any]) -> Rendered:
    """Write the extracted package into a temporary folder (removed afterwards) and render from it."""
    from autograder.submission.notebook.extract import write_package

    with tempfile.TemporaryDirectory(prefix="grader-show-notebook-") as scratch:
        package = write_package(extraction, Path(scratch) / spec.package)
        return render_figures(spec, package, out, source=source, **options)
