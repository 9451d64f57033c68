"""The text report a terminal shows: one line per task, then what to look at."""

from __future__ import annotations

from autograder.reports.results import PASSED, GradeReport


def render_text(report: GradeReport) -> str:
    """A readable per-task table with the first problem of each task."""
    width = max(len(t.id) for t in report.tasks) if report.tasks else 10
    lines = [f"{report.assignment}: {report.score:g} / {report.max_score:g}", ""]
    lines.append(f"{'task'.ljust(width)}  {'score':>13}  status")
    for task in report.tasks:
        score = f"{task.score:g} / {task.max_score:g}"
        lines.append(f"{task.id.ljust(width)}  {score:>13}  {task.status}")
    problems = [t for t in report.tasks if t.status != PASSED]
    if problems:
        lines += ["", "What to look at:"]
        for task in problems:
            lines.append(f"- {task.id}: {task.feedback}")
    if report.notes:
        lines += ["", "Notes:"] + [f"- {note}" for note in report.notes]
    lines += ["", f"graded in {report.seconds:g} s; seed {report.environment.get('seed')}; "
                  f"torch {report.environment.get('torch')}; isolation {report.environment.get('isolation')}"]
    return "\n".join(lines) + "\n"
