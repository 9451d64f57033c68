"""Why a known mistake escaped ``grader audit``: the checks of its task it passed, and how near each came to failing.

An escaped mistake is a check to sharpen; which one, and by how much, is what the instructor needs: a check whose
outputs were the same as the reference's never reached the mistake (other inputs), one that came within a share of
its tolerance saw it but let it through (other inputs, or a tighter tolerance).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.reports.results import PASSED, TaskResult
from autograder.spec.mutation import Mutation

if TYPE_CHECKING:
    from autograder.grading.grader import Grader


def escaped_detail(target: TaskResult | None, closeness: dict[str, str] | None = None) -> str:
    """What an escaped mistake went through: the checks of its task that ran and passed (the ones to sharpen),
    each with how near the mistake's outputs came to failing it, where known (:func:`closeness_words`)."""
    if target is None:
        return "its task was not graded"
    near = closeness or {}
    passed = [c.name + (f" ({near[c.name]})" if near.get(c.name) else "") for c in target.checks if c.status == PASSED]
    if not passed:
        return "no check of its task ran"
    fix = "; give them inputs this mistake changes" if near else ""
    return f"passed {len(passed)} check{'s' if len(passed) != 1 else ''}: {', '.join(passed)}{fix}"


def closeness_words(grader: Grader, mutation: Mutation, target: TaskResult) -> dict[str, str]:
    """For each check of its task an escaped mistake passed, how near the mistake's outputs came to failing it, in
    words: its package runs the probe on the check's seed in this process, as the judge runs a known mistake."""
    checks = {check.name: check for check in grader.checks.get(target.id, [])}
    words = {}
    for result in target.checks:
        check = checks.get(result.name)
        if result.status == PASSED and check is not None and result.seed is not None:
            words[result.name] = _closeness_words(grader.judge.mistake_closeness(mutation, check, result.seed),
                                                  check.tolerance, check.compare_reference)
    return words


def _closeness_words(ratio: float | None, tolerance: str, compared: bool) -> str:
    if ratio is None:
        return ""
    if ratio == 0:
        return "the same outputs as the reference's"
    if ratio <= 1:
        share = f"{ratio:.0%}" if ratio >= 0.01 else "under 1%"
        return f"its outputs differ from the reference's by {share} of what {tolerance} allows"
    if not compared:
        return "its outputs differ from the reference's, which this check does not compare"
    return "its outputs differ from the reference's where the task's uses are its own"
