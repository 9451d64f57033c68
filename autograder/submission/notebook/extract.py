"""Extract a notebook into the package the grader grades, and find the notebook of a submission."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import NotebookError, SubmissionError
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.collect import ANSWERS_NAME, MAX_NOTES, collect
from autograder.submission.notebook.layout import answers_toml, build_modules, layout_sources, parse_layout
from autograder.submission.notebook.read import NOTEBOOK_SUFFIX, Cell, is_notebook, read_notebook


@dataclass
class Extraction:
    """What the extraction made of a notebook.

    Attributes:
        files: The package's files by name (``attention.py``, ``answers.toml``, ...).
        notes: One sentence per thing the student should know (a cell with a syntax error, a dropped constant).
        cells: Code cells read.
        dropped: Top-level statements that are not definitions and were left out (prints, training runs, ...).
        defined: Names the notebook defines (the final definition of each).
    """

    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cells: int = 0
    dropped: int = 0
    defined: list[str] = field(default_factory=list)


def extract(assignment: Assignment, cells: Sequence[Cell]) -> Extraction:
    """The package files a notebook's cells amount to.

    Args:
        assignment: The assignment (its manifest and template say which name goes to which module).
        cells: The code cells, in notebook order.

    Returns:
        The files and what the student should know about them.
    """
    collected = collect(cells, assignment.package)
    layouts = {m: parse_layout(m, text) for m, text in layout_sources(assignment).items()}
    extraction = Extraction(cells=len(cells), dropped=collected.dropped, notes=collected.notes[:MAX_NOTES])
    extraction.defined = sorted(collected.by_name)
    extraction.files = build_modules(assignment, collected, layouts)
    init = assignment.template / "__init__.py"
    extraction.files["__init__.py"] = init.read_text(encoding="utf-8") if init.is_file() else ""
    if assignment.quiz is not None:
        if isinstance(collected.answers, tuple) and isinstance(collected.answers[0], dict):
            extraction.files[assignment.quiz.answers_file] = answers_toml(collected.answers[0])
        elif collected.answers is not None:
            extraction.notes.append(f"{collected.answers[1]}: {ANSWERS_NAME} must be a dict such as "
                                    f"{{\"q1\": \"b\"}}; the quiz was not read")
    return extraction


def write_package(extraction: Extraction, folder: Path) -> Path:
    """Write the extracted files into ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in extraction.files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def extract_notebook(path: Path, assignment: Assignment, destination: Path) -> tuple[Path, list[str]]:
    """Extract a notebook file into ``destination/<package>/``.

    Returns:
        The folder holding the package, and one note per thing the student should know (prefixed by the name).

    Raises:
        NotebookError: If the file is not a readable notebook.
    """
    cells = read_notebook(path)
    if not cells:
        raise NotebookError(f"{path.name} has no code cells: nothing to grade (is it the right notebook?)")
    extraction = extract(assignment, cells)
    write_package(extraction, destination / assignment.package)
    summary = (f"everything in the notebook {path.name} but its definitions ({extraction.cells} code cells read, "
               f"never run; {extraction.dropped} top-level statements left out)")
    return destination, [summary] + [f"{path.name}: {note}" for note in extraction.notes]


def find_notebook(root: Path, assignment: Assignment) -> Path | None:
    """The student's notebook at or below ``root`` (a few levels), or None.

    Checkpoints (``.ipynb_checkpoints``) and ``__MACOSX`` are skipped. Several notebooks: the one named after
    the assignment or its package wins.

    Raises:
        SubmissionError: If several notebooks are found and none is named after the assignment.
    """
    if root.is_file():
        return root if is_notebook(root) else None
    found = [p for p in _notebooks_below(root, depth=3)]
    if len(found) <= 1:
        return found[0] if found else None
    named = [p for p in found if p.stem in {assignment.name, assignment.package}]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(p.relative_to(root).as_posix() for p in found[:4])
    raise SubmissionError(f"several notebooks in {root.name}: {listed}; submit one, or name it "
                          f"{assignment.name}{NOTEBOOK_SUFFIX}")


def _notebooks_below(root: Path, depth: int) -> list[Path]:
    found, frontier = [], [root]
    for _ in range(depth + 1):
        following = []
        for folder in frontier:
            try:
                children = sorted(folder.iterdir())
            except OSError:
                continue
            for child in children:
                if child.name.startswith(".") or child.name == "__MACOSX" or child.is_symlink():
                    continue
                if child.is_dir():
                    following.append(child)
                elif is_notebook(child) and child.is_file():
                    found.append(child)
        frontier = following
    return found


def use_notebook(path: Path, assignment: Assignment, scratch: Path) -> tuple[Path, list[str]]:
    """Where to look for the student's package: ``path`` itself, or the package extracted from its notebook.

    A notebook file is extracted. In a folder, a package wins over a notebook unless its modules are the
    untouched template (a student who worked in the notebook of the student release and handed in the whole
    folder); a folder with no package and one notebook is the notebook.

    Args:
        path: A notebook, or a folder (a zip already unpacked).
        assignment: The assignment.
        scratch: A private folder; the extraction goes to ``scratch/notebook``.

    Returns:
        The folder to look for the package in, and notes for the report.
    """
    from autograder.submission.package import find_package

    if path.is_file():
        return extract_notebook(path, assignment, scratch / "notebook") if is_notebook(path) else (path, [])
    try:
        package = find_package(path.absolute(), assignment)
    except SubmissionError as exc:
        if not str(exc).startswith("no "):  # several packages: ambiguous, whatever notebooks there are
            raise
        notebook = find_notebook(path, assignment)
        if notebook is None:
            raise SubmissionError(f"{exc}, nor a notebook (.ipynb)") from None
        return extract_notebook(notebook, assignment, scratch / "notebook")
    if not _untouched_template(package, assignment):
        return path, []  # a package the student worked on: notebooks beside it are not looked at
    try:
        notebook = find_notebook(path, assignment)
    except SubmissionError:
        return path, []
    if notebook is None:
        return path, []
    folder, notes = extract_notebook(notebook, assignment, scratch / "notebook")
    return folder, notes + [f"{package.name}/ (the untouched template; the notebook was graded instead)"]


def _untouched_template(package: Path, assignment: Assignment) -> bool:
    if not assignment.template.is_dir():
        return False
    for name in assignment.student_files:
        if name.endswith(".py") and name != "__init__.py":
            mine, theirs = package / name, assignment.template / name
            if mine.is_file() != theirs.is_file():
                return False
            # sizes first: a submitted file is never read whole just to learn it is not the template
            if mine.is_file() and (mine.stat().st_size != theirs.stat().st_size
                                   or mine.read_bytes() != theirs.read_bytes()):
                return False
    return True
