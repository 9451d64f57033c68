"""Grading a class: discover submissions, shard them, grade them in worker processes into the gradebook.

The Python API that docs/BATCH.md shows: ``from autograder.batch import BatchOptions, grade_all, render_summary``.
Those names are imported when first asked for: a grading worker, which imports this package for ``batch.pool``,
never loads ``run`` and the gradebook's database library with it (about 14 MB of each worker's memory).
"""

from __future__ import annotations

from typing import Any

__all__ = ["BatchOptions", "BatchSummary", "grade_all", "render_summary"]


def __getattr__(name: str) -> Any:
    if name in ("BatchOptions", "grade_all"):
        from autograder.batch import run

        return getattr(run, name)
    if name in ("BatchSummary", "render_summary"):
        from autograder.batch import summary

        return getattr(summary, name)
    raise AttributeError(f"module 'autograder.batch' has no attribute {name!r}")
