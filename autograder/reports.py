"""Render a GradeReport as text, JSON, Gradescope results.json or JUnit XML, and write it atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable
from xml.etree import ElementTree

from .results import NOT_IMPLEMENTED, PASSED, TIMEOUT, GradeReport

FORMATS = ("text", "json", "gradescope", "junit")
_MARK = {PASSED: "ok", NOT_IMPLEMENTED: "todo", TIMEOUT: "time"}


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


def render_json(report: GradeReport) -> str:
    """The full report as JSON (score, tasks with per-check detail, seeds, versions, timing)."""
    return json.dumps(report.to_dict(), indent=2) + "\n"


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


def render_junit(report: GradeReport) -> str:
    """JUnit XML with one testcase per check, grouped in one testsuite per task."""
    root = ElementTree.Element("testsuites", name=report.assignment, tests=str(sum(len(t.checks) for t in report.tasks)))
    for task in report.tasks:
        failures = sum(1 for c in task.checks if not c.passed)
        suite = ElementTree.SubElement(root, "testsuite", name=task.id, tests=str(len(task.checks)),
                                       failures=str(failures))
        for check in task.checks:
            case = ElementTree.SubElement(suite, "testcase", classname=task.id, name=check.name,
                                          time=f"{check.seconds:.3f}")
            if not check.passed:
                tag = "skipped" if check.status == NOT_IMPLEMENTED else "failure"
                element = ElementTree.SubElement(case, tag, message=f"{check.status}: {check.message}"[:500])
                element.text = check.hint or check.description
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


RENDERERS: dict[str, Callable[[GradeReport], str]] = {
    "text": render_text,
    "json": render_json,
    "gradescope": render_gradescope,
    "junit": render_junit,
}


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that readers see either the old content or the whole new content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
