"""Check a notebook's work with the public tests: from `grader check` and from a cell inside the notebook."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.errors import NotebookError
from autograder.spec.assignment import Assignment
from autograder.submission.intake import prepare_extraction, prepare_submission
from autograder.submission.notebook.extract import Extraction, extract, write_package
from autograder.submission.notebook.read import Cell, is_notebook, read_notebook
from autograder.submission.package import PreparedSubmission

if TYPE_CHECKING:
    from autograder.sandbox.runtime import Runtime

KERNEL_WORK = Path("this notebook")  # how the cells a kernel ran are named: they have no file


@contextlib.contextmanager
def checked_work(assignment: Assignment, path: Path | None, show_extracted: Path | None = None
                 ) -> Iterator[PreparedSubmission]:
    """The work ``grader check`` tests, found and copied by the one intake, exactly as grading finds it.

    Args:
        assignment: The assignment.
        path: What the student gave (default: this folder: the package in it, or its notebook).
        show_extracted: For a notebook, a folder to copy the extracted package files into, for the student to
            read; locations still name the cells (the ``cell_map`` is kept), where the student writes the code.

    Yields:
        The prepared submission (removed afterwards).
    """
    with tempfile.TemporaryDirectory(prefix="grader-check-") as scratch:
        prepared = prepare_submission(path, assignment, Path(scratch))
        if show_extracted is not None and is_notebook(prepared.source):
            show_extracted.mkdir(parents=True, exist_ok=True)
            for file in sorted(prepared.package_dir.iterdir()):
                shutil.copyfile(file, show_extracted / file.name)
        yield prepared


def kernel_cells() -> list[Cell]:
    """The cells this Jupyter kernel has run, in the order it ran them (``In``), labelled ``In [n]``.

    Reading the kernel's history rather than the notebook file works the same on JupyterHub, Colab and VS Code,
    where the file's path is not known to the kernel (or not a local file at all).

    Raises:
        NotebookError: Outside an IPython kernel.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None  # type: ignore[assignment]
    shell = get_ipython() if get_ipython is not None else None
    history = shell.user_ns.get("In") if shell is not None else None
    if not history:
        raise NotebookError("check_notebook() reads the cells this notebook has run, so it works inside Jupyter or "
                            "Colab only; elsewhere pass the file: check_notebook(ASSIGNMENT, path='work.ipynb')")
    return [Cell(f"In [{number}]", source) for number, source in enumerate(history) if number and source]


def in_kernel() -> bool:
    """Whether this code runs inside a Jupyter kernel (JupyterLab, Colab, VS Code), not a script or a terminal."""
    if "IPython" not in sys.modules:  # a kernel imported it long before this; importing it here costs 0.3 s
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    # Kernel shells (ZMQInteractiveShell and Colab's subclass of it) hold their kernel; the terminal's does not.
    return shell is not None and getattr(shell, "kernel", None) is not None


def notebook_extraction(assignment: Assignment, path: Path | None = None) -> Extraction:
    """Extract a notebook's definitions exactly as the grader does, and print the notes the student should see.

    Args:
        assignment: The assignment.
        path: A saved notebook file; the cells this kernel ran when None.

    Returns:
        The extraction (write it with :func:`write_package`, or take it with :func:`prepare_kernel_work`); its
        notes are those printed, so what the intake keeps of them (``PreparedSubmission.reading``) is too.

    Raises:
        NotebookError: If the file is not a readable notebook, or (no path) outside a kernel.
    """
    cells = read_notebook(path) if path is not None else kernel_cells()
    extraction = extract(assignment, cells)
    if path is None:
        # A kernel rejects a cell with a syntax error whole, so a rejected entry of its history never defined
        # anything there either (and was most likely fixed and re-run): only the saved file's errors are news.
        rejected = {cell.note() for cell in extraction.cell_map.unreadable}
        # a rejected cell still counts where a stub stands in for what it meant to define (the Next line says so)
        defined = set(extraction.defined)
        extraction.cell_map.unreadable = [c for c in extraction.cell_map.unreadable if set(c.defines) - defined]
        extraction = dataclasses.replace(extraction, notes=[n for n in extraction.notes if n not in rejected])
    print("".join(f"note: {note}\n" for note in extraction.notes), end="")
    return extraction


def prepare_kernel_work(extraction: Extraction, assignment: Assignment, scratch: Path) -> PreparedSubmission:
    """The cells this kernel ran, taken by the one intake as a notebook file's are (the size rule, the notes, the
    cell map), named :data:`KERNEL_WORK`: ``check_notebook()`` and ``show()`` in a kernel both call this.

    Args:
        extraction: From :func:`notebook_extraction` (no path).
        assignment: The assignment.
        scratch: A private empty folder.
    """
    return prepare_extraction(extraction, assignment, scratch, KERNEL_WORK, str(KERNEL_WORK), KERNEL_WORK)


_kernel_runtime: Runtime | None = None  # the runtime every check_notebook() of this kernel reuses
_reminded = False  # whether a check of this kernel has said that hidden tests grade the work too


def reminds(task: str | None) -> bool:
    """Whether this check cell says that hidden tests grade the work too: the kernel's first check does, and
    every check of all the tasks (the notebook's "Before you submit" cell, where it matters); a task's check
    cell after the first does not (a student runs twenty of them)."""
    global _reminded
    said = task is None or not _reminded
    _reminded = True
    return said


def kernel_runtime() -> Runtime:
    """This kernel's runtime for checks (a warm template), started by the first check; it ends with the kernel."""
    from autograder.public.runner import check_runtime

    global _kernel_runtime
    if _kernel_runtime is None:
        _kernel_runtime = check_runtime()
        atexit.register(_kernel_runtime.close)
    return _kernel_runtime


def check_notebook(assignment: str, task: str | None = None, path: str | Path | None = None,
                   show_extracted: str | Path | None = None, verbose: bool = False) -> Any:
    """Run the public tests (one task's, or all) on this notebook's definitions and print the table.

    The definitions are extracted exactly as the grader extracts them, into a temporary package, and tested
    there by ``grader check``'s runner in a separate process: what passes here passes there.

    Args:
        assignment: The assignment's name (e.g. ``"attention101"``).
        task: A task id, or ``"quiz"`` for the format of ``ANSWERS``; all tasks when None.
        path: A saved notebook file to check instead of the cells this kernel ran.
        show_extracted: A folder to write the extracted package files into, to see what the grader sees.
        verbose: Also print pytest's full output of each failing test.

    Returns:
        The check outcome (``grader check``'s ``CheckOutcome``); end the cell with ``;`` to hide it.
    """
    from autograder.public.invocation import Invocation
    from autograder.public.outcome import CheckOutcome
    from autograder.public.render import Printer
    from autograder.public.runner import run_public_tests
    from autograder.spec.assignment import load_assignment

    spec = load_assignment(assignment)
    quiz_only = spec.quiz is not None and task == spec.quiz.task_id
    if task is not None and not quiz_only and task not in spec.task_ids:
        raise NotebookError(f"no task {task!r} in {spec.name} (tasks: {', '.join(spec.task_ids)})")
    selected = [] if quiz_only else (None if task is None else [task])
    invocation = Invocation.of(spec, None if path is None else str(path), cell=True,
                               tasks=() if task is None else (task,), verbose=verbose)
    printer = Printer(spec, lambda text: print(text, end=""), verbose=verbose, invocation=invocation,
                      remind=reminds(task))
    if path is not None:  # a saved file: the one intake takes it, as `grader check` and grading do
        with checked_work(spec, Path(path), Path(show_extracted) if show_extracted is not None else None) as prepared:
            print("".join(f"note: {note}\n" for note in prepared.reading), end="")
            printer.header(CheckOutcome(package=prepared.shown))
            return run_public_tests(spec, prepared.package_dir, selected=selected, listener=printer,
                                    shown=prepared.shown, refused=prepared.refused, runtime=kernel_runtime(),
                                    cell_map=prepared.cell_map)
    extraction = notebook_extraction(spec)  # prints what reading the cells found
    printer.header(CheckOutcome(package=KERNEL_WORK))
    with tempfile.TemporaryDirectory(prefix="check-notebook-") as scratch:
        prepared = prepare_kernel_work(extraction, spec, Path(scratch))  # the size rule too
        if show_extracted is not None:
            write_package(extraction, Path(show_extracted))
        outcome = run_public_tests(spec, prepared.package_dir, selected=selected, listener=printer, shown=KERNEL_WORK,
                                   refused=prepared.refused, runtime=kernel_runtime(), cell_map=prepared.cell_map)
    return outcome
