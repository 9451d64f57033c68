"""Fixtures the authoring tests share: a private copy of assignment3, or of the topk fixture course, to break or
rebuild."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.spec.assignment import Assignment, load_assignment


@pytest.fixture
def assignment_copy(tmp_path: Path, repo: Path) -> Assignment:
    """assignment3 copied into a temporary tree (assignments/, reference_solutions/, student_template/)."""
    for part in ("assignments", "reference_solutions", "student_template"):
        shutil.copytree(repo / part / "assignment3", tmp_path / part / "assignment3",
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(repo / "student_template" / "assignment3.ipynb",
                    tmp_path / "student_template" / "assignment3.ipynb")
    return load_assignment("assignment3", root=tmp_path / "assignments")


@pytest.fixture
def topk_course(tmp_path: Path, repo: Path) -> Assignment:
    """The topk fixture course (tests/fixtures: written as WRITING_CHECKS.md teaches first, with public tests and a
    figure of -inf logits) copied into a temporary tree, to put one slip at a time into."""
    fixtures = repo / "tests" / "fixtures"
    for part in ("assignments", "reference_solutions"):
        shutil.copytree(fixtures / part / "topk", tmp_path / part / "topk", ignore=shutil.ignore_patterns("__pycache__"))
    return load_assignment("topk", root=tmp_path / "assignments")
