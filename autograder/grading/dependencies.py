"""Which of a task's dependencies may be the student's own on a second run: those that pass their own task."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from autograder.spec.assignment import Assignment, Task


@dataclass(frozen=True)
class OwnDependencies:
    """The context of a task's second run, with the student's own code for some of what it ``uses``.

    Attributes:
        kept: The uses graded with the student's own code (their task scored full marks).
        uses: What the reference still stands in for: the other uses, and what the kept ones' own tasks are
            graded with (so each kept dependency runs in the context its own task verified it in).
    """

    kept: tuple[str, ...]
    uses: tuple[str, ...]


def own_dependencies(assignment: Assignment, task: Task,
                     full_marks: Callable[[Task], bool]) -> OwnDependencies | None:
    """The student's own dependencies a task may be graded with again, or None when there are none.

    A use is kept when the task that owns it scored full marks with the reference standing in for that task's
    own uses; the reference then still stands in for those, so the kept code runs exactly as it was verified.
    A use that one kept dependency's task is graded with stays the reference's. A dependency whose task is
    graded with this task's own functions is not kept (it was verified against the reference of this task).

    Args:
        assignment: The assignment.
        task: The task to grade again.
        full_marks: Whether a task scored full marks for this submission (called only for owners of ``uses``).

    Returns:
        The second run's context, or None when no dependency can be the student's own.
    """
    kept: list[str] = []
    uses: list[str] = []
    for qualified in task.uses:
        owner = assignment.owner_of(qualified)
        if (owner is not None and owner.id != task.id and not set(owner.uses) & set(task.functions)
                and full_marks(owner)):
            kept.append(qualified)
            uses.extend(owner.uses)
        else:
            uses.append(qualified)
    kept = [name for name in kept if name not in uses]
    if not kept:
        return None
    return OwnDependencies(tuple(kept), tuple(dict.fromkeys(uses)))
