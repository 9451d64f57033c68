"""Per-student feedback from the gradebook: markdown (readable as plain text too) and a self-contained HTML page."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from autograder.gradebook.records import ERROR, SubmissionRow
from autograder.reports.results import one_cause, one_cause_words
from autograder.util.pages import render_html

# Characters that start markdown syntax (emphasis, code, links, raw HTML, entities, table cells) inside a line;
# everything else, e.g. the ">" of "(j > i)", is shown as it is.
_MARKDOWN_ACTIVE = re.compile(r"([\\`*\[\]<&|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_LINE_START = re.compile(r"^(\s*)(>|(?:[#+-]|\d+[.)])(?=\s|$))")
# An absolute path of the grading machine (e.g. the class folder); feedback names only its last part.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~:/])(?:/[^\s/'\"():,;]+)+/([^\s/'\"():,;]+)")


@dataclass(frozen=True)
class FigurePage:
    """A student's figures drawn by ``grade-all --figures``, as their feedback shows them.

    Attributes:
        page: The figures page relative to the feedback file, e.g. ``alice-figures/index.html``.
        summary: One line, e.g. ``3 of 4 figures drawn in 12.0 s``.
        images: ``(title, file name, base64 PNG)`` of each drawn figure, in page order.
    """

    page: str
    summary: str = ""
    images: list[tuple[str, str, str]] = field(default_factory=list)


def without_paths(text: str) -> str:
    """Text with every absolute path cut to its file name (``/srv/class/frank.zip`` -> ``frank.zip``)."""
    return _ABSOLUTE_PATH.sub(r"\1", text)


def markdown_text(value: Any) -> str:
    """Report text made inert in markdown without HTML escapes: one line, markdown-active characters escaped."""
    text = without_paths(" ".join(str(value).split()))
    return _LINE_START.sub(r"\1\\\2", _MARKDOWN_ACTIVE.sub(r"\\\1", text))


_text = markdown_text


def code_span(value: Any) -> str:
    """Text as an inline code span (shown literally; backticks inside get a longer fence)."""
    text = " ".join(str(value).split())
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if text.startswith("`") or text.endswith("`") else f"{fence}{text}{fence}"


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def lateness_line(row: SubmissionRow) -> str | None:
    """The lateness of a submission in one plain sentence, or None when no deadline applied."""
    if not row.late_note and row.due_at is None:
        return None
    if row.submitted_at is None:
        return f"Deadline {row.due_at or 'none'}: no time recorded, so no late penalty."
    line = f"Submitted {row.submitted_at}, deadline {row.due_at}: {row.late_note}."
    if row.penalty:
        line += f" Score before the penalty {row.raw:g}, after it {row.score:g}."
    return line


def render_feedback(row: SubmissionRow, figures: FigurePage | None = None) -> str:
    """A student's feedback as markdown: what the grade report shows (scores, messages, hints), nothing more.

    Args:
        row: The student's current submission.
        figures: Their drawn figures (``grade-all --figures``), linked from the feedback.
    """
    report = row.report or {}
    title = report.get("assignment", row.assignment)
    lines = [f"# {_text(title)}: feedback for {_text(row.student)}", ""]
    if row.status == ERROR or not report:
        lines += ["Your submission could not be graded.", "", f"Reason: {_text(row.message or 'unknown')}", ""]
        return "\n".join(lines + _figures_markdown(figures))
    lines += [f"**Score: {row.score:g} / {row.max_score:g}**", ""]
    late = lateness_line(row)
    if late:
        lines += [_text(late), ""]
    lines += ["| task | score | status |", "| --- | ---: | --- |"]
    for task in report.get("tasks", []):
        lines.append(f"| {_text(task.get('title', task['id']))} | "
                     f"{task['score']:g} / {task['max_score']:g} | {_text(task.get('status', ''))} |")
    for task in report.get("tasks", []):
        lines += _task_section(task)
    if report.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {_text(note)}" for note in report["notes"]]
    if figures is not None:
        lines += [""] + _figures_markdown(figures)[:-1]
    if report.get("student_output"):
        lines += ["", "## What your code printed", "", _fence(without_paths(str(report["student_output"])))]
    environment = report.get("environment", {})
    lines += ["", f"_Graded in {report.get('seconds', 0):g} s; seed {_text(environment.get('seed'))}; "
                  f"torch {_text(environment.get('torch'))}._", ""]
    return "\n".join(lines)


def _figures_markdown(figures: FigurePage | None) -> list[str]:
    """The figures section: a link to the page (markdown viewers differ on embedded images, so only the link)."""
    if figures is None:
        return []
    summary = f": {_text(figures.summary)}" if figures.summary else ""
    link = f"[{_text(figures.page)}]({figures.page})"
    return ["## Your figures", "", f"The course's figures drawn from your code: {link}{summary}.", ""]


FOLLOWING_WIDTH = 60  # characters of a later failing check's message (one line each; the first one in full)


@dataclass(frozen=True)
class CheckLine:
    """One check as a task's feedback shows it.

    Attributes:
        status: ``passed``, ``failed``, ``timeout``...
        description: What the check tests.
        message: What went wrong: in full for the task's first failing check, cut to one line for the others.
        hints: The hints shown under this line (each of a task's hints once, under the first check that has it).
    """

    status: str
    description: str
    message: str = ""
    hints: tuple[str, ...] = ()


def task_lines(task: dict[str, Any]) -> list[CheckLine]:
    """A task's checks as its feedback shows them, the same in markdown and HTML: the first failing check in full,
    every later one in one line, and each distinct hint once (under the first check that has it), so that 12 failed
    checks of one mistake read as one mistake; checks that all failed for one cause are one line
    (:func:`one_cause`)."""
    checks = task.get("checks", [])
    folded = one_cause(checks, _cause)
    lines: list[CheckLine] = []
    seen_failure = False
    shown_hints: set[str] = set()
    for check in checks[:1] if folded else checks:
        status = str(check.get("status", ""))
        message = " ".join(str(check.get("message", "")).split())
        if status != "passed":
            if seen_failure:
                message = _one_line(message)
            seen_failure = True
        hint = " ".join(str(check.get("hint", "")).split())
        hints = (hint,) if hint and hint not in shown_hints else ()
        shown_hints.update(hints)
        lines.append(CheckLine(status, str(check.get("description", check.get("name", ""))),
                               message + (one_cause_words(len(checks) - 1) if folded else ""), hints))
    return lines


def _cause(check: dict[str, Any]) -> tuple[str, str, str] | None:
    """A stored check's cause of failure (status, message, hint), or None when it passed or says nothing."""
    status, message = str(check.get("status", "")), str(check.get("message", ""))
    return None if status == "passed" or not message else (status, message, str(check.get("hint", "")))


def _one_line(message: str) -> str:
    """A later failing check's message in at most FOLLOWING_WIDTH characters, cut between words (a single word
    longer than that is cut where it must be)."""
    if len(message) <= FOLLOWING_WIDTH:
        return message
    room = message[: FOLLOWING_WIDTH - 2]  # for " …"
    return (room.rsplit(" ", 1)[0] if " " in room else room) + " …"


def task_lead(task: dict[str, Any]) -> str:
    """The sentence under a task's heading: how many checks passed when some failed (the checks below say the
    rest, so the report's summary, which repeats the first problem and its hint, is not shown again)."""
    checks = task.get("checks", [])
    failing = [c for c in checks if c.get("status") != "passed"]
    if not failing or task.get("status") == "not_implemented":
        return str(task.get("feedback", ""))
    return f"{len(checks) - len(failing)} of {len(checks)} checks passed."


def _task_section(task: dict[str, Any]) -> list[str]:
    heading = (f"## {_text(task.get('title', task['id']))}: {task['score']:g} / {task['max_score']:g} "
               f"({_text(task.get('status', ''))})")
    lines = ["", heading, "", _text(task_lead(task)), ""]
    for check in task_lines(task):
        line = f"- \\[{_text(check.status)}\\] {_text(check.description)}"
        lines.append(line + (f": {_text(check.message)}" if check.message else ""))
        lines += [f"  - Hint: {_text(hint)}" for hint in check.hints]
    return lines


def _plain(value: Any) -> str:
    """Report text as a page shows it: one line, absolute paths cut to their file names (the template escapes it)."""
    return without_paths(" ".join(str(value).split()))


def render_feedback_html(row: SubmissionRow, figures: FigurePage | None = None) -> str:
    """A student's feedback as one self-contained HTML page (``templates/html/feedback.html.j2``: inline style, no
    scripts, no external resources).

    Args:
        row: The student's current submission.
        figures: Their drawn figures (``grade-all --figures``): a link to the figures page, and the drawn
            figures inline.
    """
    report = row.report or {}
    graded = row.status != ERROR and bool(report)
    return render_html(
        "feedback.html.j2", title=_plain(f"{report.get('assignment', row.assignment)}: feedback for {row.student}"),
        reason=None if graded else _plain(row.message or "unknown"), score=f"{row.score:g} / {row.max_score:g}",
        late=_plain(lateness_line(row) or ""), tasks=[_task_view(task) for task in report.get("tasks", [])],
        notes=[_plain(note) for note in report.get("notes", [])], figures=_figures_view(figures),
        printed=without_paths(str(report.get("student_output") or "")) if graded else "")


def _task_view(task: dict[str, Any]) -> dict[str, Any]:
    """A task as the page shows it: its heading's parts, the sentence under it and its checks (``task_lines``)."""
    return {"title": _plain(task.get("title", task["id"])), "score": f"{task['score']:g} / {task['max_score']:g}",
            "status": _plain(task.get("status", "")), "lead": _plain(task_lead(task)),
            "checks": [{"status": _plain(check.status), "description": _plain(check.description),
                        "message": _plain(check.message), "hints": [_plain(hint) for hint in check.hints]}
                       for check in task_lines(task)]}


def _figures_view(figures: FigurePage | None) -> dict[str, Any] | None:
    """The figures section: the relative link to the figures page, its summary and each drawn figure."""
    if figures is None:
        return None
    return {"page": figures.page, "summary": _plain(figures.summary),
            "images": [{"title": _plain(title), "file": name, "data": data} for title, name, data in figures.images]}
