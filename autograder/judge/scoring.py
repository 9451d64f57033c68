"""Turn check outcomes into task scores, statuses and feedback (partial credit by check weight)."""

from __future__ import annotations

from autograder.reports.results import (
    ERROR,
    FAILED,
    NOT_IMPLEMENTED,
    PASSED,
    TIMEOUT,
    CheckResult,
    TaskResult,
)

SCORE_DECIMALS = 2


def task_status(checks: list[CheckResult]) -> str:
    """One status for a task from its checks.

    ``passed`` if every check passed; ``not_implemented`` if every check hit NotImplementedError;
    ``timeout`` if any check ran out of time; ``error`` if nothing passed and some check raised;
    ``failed`` otherwise.
    """
    statuses = [c.status for c in checks]
    if statuses and all(s == PASSED for s in statuses):
        return PASSED
    if statuses and all(s == NOT_IMPLEMENTED for s in statuses):
        return NOT_IMPLEMENTED
    if TIMEOUT in statuses:
        return TIMEOUT
    if ERROR in statuses and PASSED not in statuses:
        return ERROR
    return FAILED


def score_task(task_id: str, title: str, points: float, checks: list[CheckResult]) -> TaskResult:
    """Score a task: its points times the weighted share of passed checks, rounded to 2 decimals.

    Args:
        task_id: The task's id.
        title: The task's title.
        points: The task's points.
        checks: The task's check results.

    Returns:
        The task result with a one-paragraph feedback summary.
    """
    score = _share(points, sum(c.weight for c in checks if c.passed), checks)
    return TaskResult(task_id, title, score, points, task_status(checks), task_feedback(checks), checks)


def task_feedback(checks: list[CheckResult]) -> str:
    """The one-paragraph summary of a task's checks: how many passed, the first problem and a hint.

    Args:
        checks: The checks to summarise (at least one).

    Returns:
        The summary.
    """
    return _feedback(task_status(checks), checks)


def paying_checks(task: TaskResult) -> list[tuple[str, float]]:
    """Each check of a task that passed, with the points it earned (its weighted share of the task's)."""
    return [(c.name, _share(task.max_score, c.weight, task.checks)) for c in task.checks if c.passed]


def _share(points: float, weight: float, checks: list[CheckResult]) -> float:
    """The points ``weight`` of the checks' total weight earns, rounded to SCORE_DECIMALS."""
    total_weight = sum(c.weight for c in checks)
    return round(points * weight / total_weight, SCORE_DECIMALS) if total_weight else 0.0


def _feedback(status: str, checks: list[CheckResult]) -> str:
    passed = sum(c.passed for c in checks)
    if status == PASSED:
        return f"all {len(checks)} checks passed"
    if status == NOT_IMPLEMENTED:
        return "not implemented (the function still raises NotImplementedError)"
    first = next(c for c in checks if not c.passed)
    summary = f"{passed} of {len(checks)} checks passed; first problem: {first.description}: {first.message}"
    hint = first.hint or next((c.hint for c in checks if c.hint), "")
    return summary + (f" Hint: {hint}" if hint else "")
