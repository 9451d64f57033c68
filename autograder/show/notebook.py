"""Where ``show()`` takes the code from: a package, a saved notebook, or the cells this Jupyter kernel ran."""

from __future__ import annotations

import atexit
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.errors import GraderError, SubmissionError
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.read import is_notebook

from .render import Rendered, _resolve, declares_figures, render_figures
from .run import start_workers, stop_workers

if TYPE_CHECKING:
    from autograder.sandbox.host import Zygote

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
    if "zygotes" not in options and notebook.in_kernel() and declares_figures(spec):
        try:
            return _render_work(spec, target, out, {**options, "zygotes": kernel_workers(spec)}, notebook)
        except GraderError:
            raise  # bad input, said before any job ran: the workers are sound
        except BaseException:
            # A run stopped half-way (an interrupted cell) may leave a worker mid-job: the next show() starts anew.
            drop_kernel_workers()
            raise
    return _render_work(spec, target, out, options, notebook)


def _render_work(spec: Assignment, target: Path | None, out: Path | str | None, options: dict[str, Any],
                 notebook: Any) -> Rendered:
    """render_work once its workers are chosen."""
    if target is not None and target.is_file() and is_notebook(target):  # the intake extracts it, as grading does
        rendered = render_figures(spec, target, out, **options)
        print("".join(f"note: {note}\n" for note in rendered.reading), end="")
        return rendered
    if target is None and notebook.in_kernel():
        extraction = notebook.notebook_extraction(spec)  # prints what reading the cells found
        with tempfile.TemporaryDirectory(prefix="grader-show-notebook-") as scratch:
            prepared = notebook.prepare_kernel_work(extraction, spec, Path(scratch))  # the intake, as check's
            return render_figures(spec, None, out or Path.cwd() / f"{spec.package}-figures", source=KERNEL_SOURCE,
                                  prepared=prepared, **options)
    return render_figures(spec, target, out, **options)


_kernel_workers: dict[Path, list[Zygote]] = {}  # the workers every show() of this kernel reuses, per assignment


def kernel_workers(assignment: Assignment) -> list[Zygote]:
    """The sandboxed workers this kernel keeps for ``assignment``'s figures: started by the first show(), reused by
    the next ones (no interpreter or torch start; a worker that died is restarted by its next job), stopped when
    the kernel exits."""
    key = assignment.root.resolve()
    if key not in _kernel_workers:
        _kernel_workers[key] = start_workers(assignment)
        if len(_kernel_workers) == 1:
            atexit.register(drop_kernel_workers)
    return _kernel_workers[key]


def drop_kernel_workers() -> None:
    """Stop every worker this kernel keeps (at exit, or after a show() that did not finish)."""
    while _kernel_workers:
        stop_workers(_kernel_workers.popitem()[1])
