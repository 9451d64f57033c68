"""Extract a notebook into the files of the package the grader grades."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import NotebookError
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.collect import ANSWERS_NAME, MAX_NOTES, collect
from autograder.submission.notebook.layout import answers_toml, build_modules, layout_sources, parse_layout
from autograder.submission.notebook.places import CellMap
from autograder.submission.notebook.read import Cell, read_notebook


@dataclass
class Extraction:
    """What the extraction made of a notebook.

    Attributes:
        files: The package's files by name (``attention.py``, ``answers.toml``, ...).
        notes: One sentence per thing the student should know (a cell with a syntax error, a dropped constant).
        cells: Code cells read.
        dropped: Top-level statements that are not definitions and were left out (prints, training runs, ...).
        defined: Names the notebook defines (the final definition of each).
        cell_map: Where each line of the extracted modules comes from (a cell and its line, or the grader's text).
    """

    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cells: int = 0
    dropped: int = 0
    defined: list[str] = field(default_factory=list)
    cell_map: CellMap = field(default_factory=CellMap)


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
    extraction.files, extraction.cell_map = build_modules(assignment, collected, layouts)
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


def extract_notebook(path: Path, assignment: Assignment) -> Extraction:
    """Read a notebook file and extract its package files.

    Raises:
        NotebookError: If the file is not a readable notebook, or has no code cells.
    """
    cells = read_notebook(path)
    if not cells:
        raise NotebookError(f"{path.name} has no code cells: nothing to grade (is it the right notebook?)")
    return extract(assignment, cells)


def extraction_summary(name: str, extraction: Extraction) -> str:
    """What was taken from the notebook ``name`` and what was left out, in one sentence."""
    return (f"everything in the notebook {name} but its definitions ({extraction.cells} code cells read, "
            f"never run; {extraction.dropped} top-level statements left out)")
