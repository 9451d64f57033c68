"""Compare two gradebooks of one assignment (before and after a regrade): who gained or lost points, per task."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import GraderError
from autograder.gradebook.store import Gradebook, SubmissionRow
from autograder.util.table import LEFT, RIGHT, table


@dataclass
class StudentChange:
    """One student's scores in both gradebooks (None: not in that gradebook).

    Attributes:
        tasks: Task id to ``(old, new)`` raw task scores, only for tasks whose score changed.
    """

    student: str
    old: float | None
    new: float | None
    tasks: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)

    @property
    def delta(self) -> float:
        return (self.new or 0.0) - (self.old or 0.0)


@dataclass
class GradebookDiff:
    """The comparison of an assignment across two gradebooks."""

    assignment: str
    old: Path
    new: Path
    changes: list[StudentChange] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def _pick(old: Gradebook, new: Gradebook, assignment: str | None) -> str:
    both = sorted(set(old.assignments()) & set(new.assignments()))
    if assignment is not None:
        if assignment not in both:
            raise GraderError(f"{assignment!r} is not in both gradebooks (in both: {', '.join(both) or 'none'})")
        return assignment
    if len(both) != 1:
        raise GraderError(f"the gradebooks share {len(both)} assignments ({', '.join(both) or 'none'}); choose one "
                          f"with --assignment")
    return both[0]


def diff_gradebooks(old_path: Path, new_path: Path, assignment: str | None = None) -> GradebookDiff:
    """Compare the current submissions of an assignment in two gradebooks.

    Raises:
        GraderError: If a gradebook cannot be read, or the assignment is not in both.
    """
    with Gradebook(Path(old_path), readonly=True) as old, Gradebook(Path(new_path), readonly=True) as new:
        name = _pick(old, new, assignment)
        before = {r.student: r for r in old.current(name, with_reports=False)}
        after = {r.student: r for r in new.current(name, with_reports=False)}
    result = GradebookDiff(name, Path(old_path), Path(new_path))
    for student in sorted(set(before) | set(after)):
        change = _change(student, before.get(student), after.get(student))
        if change.old == change.new and not change.tasks:
            result.unchanged.append(student)
        else:
            result.changes.append(change)
    return result


def _change(student: str, old: SubmissionRow | None, new: SubmissionRow | None) -> StudentChange:
    change = StudentChange(student, old.score if old else None, new.score if new else None)
    old_tasks = {t["task"]: t["score"] for t in (old.tasks if old else [])}
    new_tasks = {t["task"]: t["score"] for t in (new.tasks if new else [])}
    for task in list(dict.fromkeys([*old_tasks, *new_tasks])):
        if old_tasks.get(task) != new_tasks.get(task):
            change.tasks[task] = (old_tasks.get(task), new_tasks.get(task))
    return change


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _row(change: StudentChange) -> tuple[str, str, str, str, str]:
    """A student's row: the totals before and after, the change where both exist, and each task that changed."""
    moved = change.old is not None and change.new is not None and change.delta
    tasks = "; ".join(f"{task} {_score(before)} -> {_score(after)}" for task, (before, after) in change.tasks.items())
    return change.student, _score(change.old), _score(change.new), f"{change.delta:+g}" if moved else "", tasks


def render_diff(diff: GradebookDiff, show_all: bool = False) -> str:
    """The comparison as text: gains, then losses, then students in only one gradebook, each with its tasks."""
    gained = [c for c in diff.changes if c.old is not None and c.new is not None and c.delta > 0]
    lost = [c for c in diff.changes if c.old is not None and c.new is not None and c.delta < 0]
    moved = [c for c in diff.changes if c.old is not None and c.new is not None and c.delta == 0]
    only = [c for c in diff.changes if c.old is None or c.new is None]
    lines = [f"{diff.assignment}: {diff.old} -> {diff.new}",
             f"  {len(gained)} gained points, {len(lost)} lost points, {len(moved)} same total with task changes, "
             f"{len(only)} in one gradebook only, {len(diff.unchanged)} unchanged"]
    groups = (("gained", sorted(gained, key=lambda c: -c.delta)), ("lost", sorted(lost, key=lambda c: c.delta)),
              ("same total, tasks changed", moved), ("in one gradebook only", only))
    for title, group in groups:
        if group:
            lines += ["", f"{title}:"] + table(["student", "before", "after", "change", "tasks changed"],
                                               [_row(change) for change in group],
                                               [LEFT, RIGHT, RIGHT, RIGHT, LEFT], indent="  ")
    if show_all and diff.unchanged:
        lines += ["", "unchanged: " + ", ".join(diff.unchanged)]
    return "\n".join(lines) + "\n"
