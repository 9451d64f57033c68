"""Gradescope's results.json from a GradeReport."""

from __future__ import annotations

import json

from autograder.reports.results import PASSED, GradeReport


def render_gradescope(report: GradeReport) -> str:
    """A results.json following Gradescope's autograder specification (one test per task)."""
    tests = []
    for number, task in enumerate(report.tasks, start=1):
        lines = [task.feedback]
        for check in task.checks:
            mark = "passed" if check.passed else check.status
            detail = f": {check.message}" if check.message else ""
            hint = f" Hint: {check.hint}" if check.hint else ""
            lines.append(f"[{mark}] {check.description}{detail}{hint}")
        tests.append({
            "name": f"{task.id}: {task.title}",
            "number": str(number),
            "score": task.score,
            "max_score": task.max_score,
            "status": "passed" if task.status == PASSED else "failed",
            "output": "\n".join(lines),
            "visibility": "visible",
        })
    output = "\n".join(report.notes)
    if report.student_output:
        output += ("\n\n" if output else "") + "Your code printed:\n" + report.student_output
    return json.dumps({
        "score": report.score,
        "execution_time": report.seconds,
        "output": output,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }, indent=2) + "\n"
