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


@pytest.fixture(scope="session", autouse=True)
def private_reference_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test (and every grader process it starts) keeps persisted reference outputs in one temporary folder,
    never in the user's ~/.cache (autograder.judge.refcache)."""
    import os

    folder = tmp_path_factory.mktemp("reference-store")
    previous = os.environ.get("GRADER_CACHE_DIR")
    os.environ["GRADER_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("GRADER_CACHE_DIR", None)
    else:
        os.environ["GRADER_CACHE_DIR"] = previous
