"""Grading a class: discover submissions, shard them, grade them in worker processes into the gradebook.

The Python API that docs/BATCH.md shows: ``from autograder.batch import BatchOptions, grade_all, render_summary``.
"""

from autograder.batch.run import BatchOptions, grade_all
from autograder.batch.summary import BatchSummary, render_summary

__all__ = ["BatchOptions", "BatchSummary", "grade_all", "render_summary"]
