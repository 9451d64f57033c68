"""The ``[audit]`` minimums: the one judgement ``grader verify`` and ``grader audit`` make of their figures."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from autograder.spec.assignment import MANIFEST, Assignment


@dataclass(frozen=True)
class Figure:
    """A count held to an ``[audit]`` minimum.

    Attributes:
        key: The ``[audit]`` key of its minimum, e.g. ``min_mistakes``.
        value: The count.
        where: What was counted in (a folder, or ``audit`` for the audit's own run).
        counted: What the count counts, e.g. "mistakes caught only in their task".
        remedy: How to raise it, e.g. "add more".
    """

    key: str
    value: int
    where: str
    counted: str
    remedy: str


def missed_minimums(assignment: Assignment, figures: Iterable[Figure]) -> list[str]:
    """One line per figure below its ``[audit]`` minimum, naming the minimum, the figure and the fix."""
    return [f"{figure.where}: {figure.value} {figure.counted}, [audit] {figure.key} asks for at least {minimum}; "
            f"{figure.remedy}, or lower [audit] {figure.key} in {MANIFEST}"
            for figure in figures if figure.value < (minimum := getattr(assignment.audit, figure.key))]
