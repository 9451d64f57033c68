"""Check a notebook's work with the public tests: from `grader check` and from a cell inside the notebook."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autograder.errors import NotebookError, SubmissionError
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.extract import (
    Extraction,
    extract,
    find_notebook,
    use_notebook,
    write_package,
)
from autograder.submission.notebook.read import Cell, read_notebook


@contextlib.contextmanager
def checked_work(assignment: Assignment, path: Path | None, show_extracted: Path | None = None
                 ) -> Iterator[tuple[Path, Path | None, list[str]]]:
    """The package ``grader check`` tests: the student's package, or one extracted from their notebook.

    Yields:
        The package folder, the notebook it came from (None for a package), and notes for the student.
    """
    from autograder.public.runner import locate_work

    if path is not None and not path.exists():
        raise SubmissionError(f"{path} does not exist")
    if path is None and (Path.cwd() / assignment.package).is_dir():
        yield locate_work(assignment, None), None, []
        return
    target = (path or Path.cwd()).resolve()
    with tempfile.TemporaryDirectory(prefix="grader-notebook-") as scratch:
        folder, notes = use_notebook(target, assignment, Path(scratch))
        if folder == target:  # a package (a notebook beside it is mentioned in the notes)
            yield locate_work(assignment, path), None, notes
            return
        package = folder / assignment.package
        if show_extracted is not None:
            show_extracted.mkdir(parents=True, exist_ok=True)
            for file in sorted(package.iterdir()):
                shutil.copyfile(file, show_extracted / file.name)
        yield package, find_notebook(target, assignment), notes


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
        The extraction (write it with :func:`write_package`).

    Raises:
        NotebookError: If the file is not a readable notebook, or (no path) outside a kernel.
    """
    cells = read_notebook(path) if path is not None else kernel_cells()
    extraction = extract(assignment, cells)
    # A kernel rejects a cell with a syntax error whole, so a rejected entry of its history never defined
    # anything there either (and was most likely fixed and re-run): only the saved file's errors are news.
    shown = extraction.notes if path is not None else [n for n in extraction.notes if "syntax error" not in n]
    print("".join(f"note: {note}\n" for note in shown), end="")
    return extraction


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
    extraction = notebook_extraction(spec, Path(path) if path is not None else None)
    invocation = Invocation.of(spec, None if path is None else str(path), cell=True, tasks=() if task is None else (task,))
    printer = Printer(spec, lambda text: print(text, end=""), verbose=verbose, invocation=invocation)
    printer.header(CheckOutcome(package=Path(path) if path is not None else Path("this notebook")))
    with tempfile.TemporaryDirectory(prefix="check-notebook-") as scratch:
        package = write_package(extraction, Path(scratch) / spec.package)
        if show_extracted is not None:
            write_package(extraction, Path(show_extracted))
        selected = [] if quiz_only else (None if task is None else [task])
        outcome = run_public_tests(spec, package, selected=selected, listener=printer)
    return outcome
