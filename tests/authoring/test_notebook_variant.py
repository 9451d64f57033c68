"""The audit's notebook variant: decorators and defaults reaching helpers two levels down keep full marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.authoring.audit import FULL, audit_notebook_variant
from autograder.grading.grader import Grader
from autograder.spec.assignment import load_assignment


@pytest.mark.slow
def test_the_notebook_variant_keeps_full_marks(tmp_path: Path) -> None:
    assignment = load_assignment("assignment2")
    with Grader(assignment) as grader:
        row = audit_notebook_variant(grader, assignment, tmp_path)
    assert row.verdict == FULL, row.detail
    assert set(row.scores) == {task.id for task in assignment.tasks}
    notebook = (tmp_path / row.mutation.id / "assignment2.ipynb").read_text()
    assert notebook.count("@_graded(") == sum(len(task.functions) for task in assignment.tasks)
