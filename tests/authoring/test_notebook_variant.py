"""The audit's notebook variant: decorators and defaults reaching helpers three levels down keep full marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.authoring.audit import FULL, audit_notebook_variant
from autograder.authoring.notebook_template import notebook_path
from autograder.authoring.notebook_variant import write_notebook_variant
from autograder.grading.grader import Grader
from autograder.spec.assignment import load_assignment
from autograder.spec.reference import load_package
from autograder.submission.notebook.extract import extract_notebook, write_package


def test_the_notebook_variant_extracts_to_modules_that_import_and_run_every_decorator(tmp_path: Path) -> None:
    """Every chain runs at import (a bare decorator's and a factory's, and a default's), in the right order."""
    assignment = load_assignment("assignment2")
    notebook = write_notebook_variant(assignment, notebook_path(assignment), tmp_path / "variant.ipynb")
    folder = write_package(extract_notebook(notebook, assignment), tmp_path / assignment.package)
    package = load_package(folder, "_test_notebook_variant", assignment.modules)  # the reference's code: trusted
    for module in assignment.modules:
        graded = [q.split(".", 1)[1] for task in assignment.tasks for q in task.functions if q.startswith(module)]
        namespace = vars(getattr(package, module))
        assert namespace["GRADED"] == {f"graded:{name}": namespace[name] for name in graded}
        assert namespace["COUNTS"] == {name.casefold(): 1 for name in graded}


@pytest.mark.slow
def test_the_notebook_variant_keeps_full_marks(tmp_path: Path) -> None:
    assignment = load_assignment("assignment2")
    with Grader(assignment) as grader:
        row = audit_notebook_variant(grader, assignment, tmp_path)
    assert row.verdict == FULL, row.detail
    assert set(row.scores) == {task.id for task in assignment.tasks}
    notebook = (tmp_path / row.mutation.id / "assignment2.ipynb").read_text()
    graded = sum(len(task.functions) for task in assignment.tasks)
    assert notebook.count("@_graded(") == notebook.count("@_counted\\n") == graded
