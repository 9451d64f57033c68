"""Shared fixtures for the grader's own tests: the repository's paths and the assignment3 declaration."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.spec.assignment import Assignment, load_assignment

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def assignment3() -> Assignment:
    return load_assignment("assignment3")
