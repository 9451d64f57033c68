"""Per-student feedback in markdown, from a gradebook row."""

from __future__ import annotations

import html
import re
from typing import Any

from autograder.gradebook.store import ERROR, SubmissionRow


def _text(value: Any) -> str:
    """Report text made inert in markdown: no raw HTML, one line."""
    return html.escape(" ".join(str(value).split()), quote=False)


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def render_feedback(row: SubmissionRow) -> str:
    """A student's feedback as markdown: what the grade report shows (scores, messages, hints), nothing more."""
    report = row.report or {}
    title = report.get("assignment", row.assignment)
    lines = [f"# {_text(title)}: feedback for {_text(row.student)}", ""]
    if row.status == ERROR or not report:
        lines += ["Your submission could not be graded.", "", f"Reason: {_text(row.message or 'unknown')}", ""]
        return "\n".join(lines)
    lines += [f"**Score: {row.score:g} / {row.max_score:g}**", "", "| task | score | status |", "| --- | ---: | --- |"]
    for task in report.get("tasks", []):
        lines.append(f"| {_text(task.get('title', task['id'])).replace('|', '&#124;')} | "
                     f"{task['score']:g} / {task['max_score']:g} | {_text(task.get('status', ''))} |")
    for task in report.get("tasks", []):
        lines += _task_section(task)
    if report.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {_text(note)}" for note in report["notes"]]
    if report.get("student_output"):
        lines += ["", "## What your code printed", "", _fence(str(report["student_output"]))]
    environment = report.get("environment", {})
    lines += ["", f"_Graded in {report.get('seconds', 0):g} s; seed {_text(environment.get('seed'))}; "
                  f"torch {_text(environment.get('torch'))}._", ""]
    return "\n".join(lines)


def _task_section(task: dict[str, Any]) -> list[str]:
    lines = ["", f"## {_text(task.get('title', task['id']))}: {task['score']:g} / {task['max_score']:g} "
                 f"({_text(task.get('status', ''))})", "", _text(task.get("feedback", "")), ""]
    for check in task.get("checks", []):
        mark = "passed" if check.get("status") == "passed" else check.get("status", "")
        line = f"- [{_text(mark)}] {_text(check.get('description', check.get('name', '')))}"
        if check.get("message"):
            line += f": {_text(check['message'])}"
        lines.append(line)
        if check.get("hint"):
            lines.append(f"  - Hint: {_text(check['hint'])}")
    return lines
