"""Gradescope's results.json: one test per task, each with the visibility the manifest sets for it."""

from __future__ import annotations

import json
from typing import Any

from autograder.judge.scoring import task_feedback
from autograder.reports.results import PASSED, CheckResult, GradeReport, TaskResult, one_cause, one_cause_words
from autograder.spec.assignment import Assignment
from autograder.spec.late import Lateness


def render_gradescope(report: GradeReport, spec: Assignment | None = None, late: Lateness | None = None) -> str:
    """A results.json following Gradescope's autograder specification (one test per task).

    Args:
        report: The grade report.
        spec: The assignment, for the visibilities its manifest sets (``[gradescope]``, a task's ``visibility``
            and ``check_visibility``); without it everything is visible and stdout hidden.
        late: The submission's lateness (from Gradescope's submission metadata): the score is the final one and
            the output says why.

    Returns:
        The JSON text.
    """
    task_visibility = {t.id: t.visibility for t in spec.tasks} if spec else {}
    check_visibility = {t.id: dict(t.check_visibility) for t in spec.tasks} if spec else {}
    tests: list[dict[str, Any]] = []
    for task in report.tasks:
        visibility = task_visibility.get(task.id, "visible")
        own = check_visibility.get(task.id, {})
        shown = [c for c in task.checks if own.get(c.name, visibility) == visibility]
        tests.append({
            "name": f"{task.id}: {task.title}",
            "number": str(len(tests) + 1),
            "score": task.score,
            "max_score": task.max_score,
            "status": "passed" if task.status == PASSED else "failed",
            "output": _output(_summary(task, shown), shown),
            "visibility": visibility,
        })
        tests += _separate_checks(task, own, visibility, len(tests))
    output = "\n".join(report.notes)
    score = report.score
    if late is not None:
        score = late.final(report.score)
        line = f"Lateness: {late.note}."
        if late.penalty:
            line += f" Score before the penalty {report.score:g}, after it {score:g}."
        output = line + ("\n" + output if output else "")
    if report.student_output:
        output += ("\n\n" if output else "") + _printed(report, tests, spec.visibility if spec else "visible")
    return json.dumps({
        "score": score,
        "execution_time": report.seconds,
        "output": output,
        "visibility": spec.visibility if spec else "visible",
        "stdout_visibility": spec.stdout_visibility if spec else "hidden",
        "tests": tests,
    }, indent=2) + "\n"


def _printed(report: GradeReport, tests: list[dict[str, Any]], visibility: str) -> str:
    """What the student's code printed, shown with the whole result (at its ``visibility``) only when no test is
    shown later than the result: output printed during such a test could show that test's inputs."""
    if all(test["visibility"] in ("visible", visibility) for test in tests):
        return "Your code printed:\n" + report.student_output
    return ("Your code printed output while it was graded; it is not shown here, because some tests are shown "
            "later or not at all and what is printed during them could show their inputs.")


def _summary(task: TaskResult, shown: list[CheckResult]) -> str:
    """The task's summary over the checks its test shows: the full one names the first problem and a hint,
    which may be those of a check shown at another time."""
    if len(shown) == len(task.checks):
        return task.feedback
    held = len(task.checks) - len(shown)
    later = f"{held} check{'s' if held != 1 else ''} of this task {'is' if held == 1 else 'are'} not shown here"
    return f"{task_feedback(shown)} ({later})" if shown else later[0].upper() + later[1:]


def _output(lead: str, checks: list[CheckResult]) -> str:
    """A test's output: ``lead`` (may be empty), then one line per check, each distinct hint once (after the first
    line that has it, the summary included), as the feedback files show hints: one mistake failing 12 checks
    reads as one mistake, not as 12 copies of its hint; checks that all failed for one cause are one line
    (:func:`one_cause`)."""
    said = {check.hint for check in checks if check.hint and f"Hint: {check.hint}" in lead}
    lines = [lead] if lead else []
    folded = one_cause(checks, _cause)
    for check in checks[:1] if folded else checks:
        lines.append(_line(check, hint=check.hint not in said, others=len(checks) - 1 if folded else 0))
        said.add(check.hint)
    return "\n".join(lines)


def _cause(check: CheckResult) -> tuple[str, str, str] | None:
    """A check's cause of failure, or None when it passed or says nothing (never folded into another's line)."""
    return None if check.passed or not check.message else (check.status, check.message, check.hint)


def _line(check: CheckResult, hint: bool = True, others: int = 0) -> str:
    """``[failed] what it checks: why``; ``others``: the checks after it that failed the same way, said once here."""
    mark = "passed" if check.passed else check.status
    detail = f": {check.message}{one_cause_words(others) if others else ''}" if check.message else ""
    said = f" Hint: {check.hint}" if check.hint and hint else ""
    return f"[{mark}] {check.description}{detail}{said}"


def _separate_checks(task: TaskResult, own: dict[str, str], visibility: str, numbered: int) -> list[dict[str, Any]]:
    """Checks whose visibility differs from their task's, as unscored tests of their own (the task keeps the
    points: Gradescope adds no test scores when results.json has a top-level score)."""
    groups: dict[str, list[CheckResult]] = {}
    for check in task.checks:
        wanted = own.get(check.name, visibility)
        if wanted != visibility:
            groups.setdefault(wanted, []).append(check)
    return [{"name": f"{task.id}: {task.title} ({wanted.replace('_', ' ')} checks)",
             "number": str(numbered + index),
             "status": "passed" if all(c.passed for c in checks) else "failed",
             "output": _output("", checks),
             "visibility": wanted}
            for index, (wanted, checks) in enumerate(sorted(groups.items()), start=1)]
