"""One bug, one task: a failing task whose building blocks fail too is told to fix those first."""

from __future__ import annotations

from autograder.errors import GraderError
from autograder.public.outcome import FAILING, CheckOutcome, PublicTaskResult
from autograder.spec.assignment import Assignment


def used_tasks(assignment: Assignment, task_id: str) -> list[str]:
    """The other tasks whose code a task ``uses`` (from the manifest), in the manifest's order."""
    try:
        uses = assignment.task(task_id).uses
    except GraderError:
        return []
    owners = {owner.id for owner in (assignment.owner_of(q) for q in uses) if owner is not None}
    return [t.id for t in assignment.tasks if t.id in owners and t.id != task_id]


def dependency_hints(assignment: Assignment, outcome: CheckOutcome, result: PublicTaskResult) -> list[str]:
    """For a failing task: the tasks it uses that fail (or are not done) too, each to be fixed first; only those
    whose functions a failing (or not implemented) test called (directly or through other code), so that a hint
    never names code the test did not reach."""
    if result.status != "failed":
        return []
    status = {t.task: t.status for t in outcome.tasks}
    used = [other for other in used_tasks(assignment, result.task) if _reached(assignment, result, other)]
    failing = [other for other in used if status.get(other) in ("failed", "blocked")]
    missing = [other for other in used if status.get(other) == "not implemented"]
    hints = []
    if failing:
        also = f" ({_join(failing[1:])} {'fails' if len(failing) == 2 else 'fail'} too)" if failing[1:] else ""
        hints.append(f"may be caused by {failing[0]}, which fails: fix that first{also}")
    if missing:
        those = "that" if len(missing) == 1 else "those"
        hints.append(f"may be caused by {_join(missing)}, not implemented yet: do {those} first")
    return hints


def _reached(assignment: Assignment, result: PublicTaskResult, other: str) -> bool:
    """Whether a failing test of ``result`` called a function (or a method of a class) of task ``other``."""
    functions = assignment.task(other).functions
    frames = [frame for test in result.tests if test.status in (*FAILING, "not_implemented") for frame in test.frames]
    return any(frame == name or frame.startswith(f"{name}.") for frame in frames for name in functions)


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def add_dependency_hints(assignment: Assignment, outcome: CheckOutcome) -> None:
    """Fill every task's hints (see dependency_hints)."""
    for result in outcome.tasks:
        result.hints = dependency_hints(assignment, outcome, result)
