"""Per-student feedback from the gradebook: markdown (readable as plain text too) and a self-contained HTML page."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from autograder.gradebook.records import ERROR, SubmissionRow

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
    checks of one mistake read as one mistake."""
    lines: list[CheckLine] = []
    seen_failure = False
    shown_hints: set[str] = set()
    for check in task.get("checks", []):
        status = str(check.get("status", ""))
        message = " ".join(str(check.get("message", "")).split())
        if status != "passed":
            if seen_failure:
                message = _one_line(message)
            seen_failure = True
        hint = " ".join(str(check.get("hint", "")).split())
        hints = (hint,) if hint and hint not in shown_hints else ()
        shown_hints.update(hints)
        lines.append(CheckLine(status, str(check.get("description", check.get("name", ""))), message, hints))
    return lines


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


_STYLE = """body{font-family:system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;line-height:1.45;
color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}
td.n{text-align:right}.passed{color:#1a7f37}.failed,.error,.timeout{color:#b3261e}.not_implemented{color:#8a6d00}
pre{background:#f6f8fa;padding:.6rem;overflow:auto}.hint{color:#555}"""


def _h(value: Any) -> str:
    return html.escape(without_paths(" ".join(str(value).split())))


def render_feedback_html(row: SubmissionRow, figures: FigurePage | None = None) -> str:
    """A student's feedback as one self-contained HTML page (inline style, no scripts, no external resources).

    Args:
        row: The student's current submission.
        figures: Their drawn figures (``grade-all --figures``): a link to the figures page, and the drawn
            figures inline.
    """
    report = row.report or {}
    title = f"{report.get('assignment', row.assignment)}: feedback for {row.student}"
    body = [f"<h1>{_h(title)}</h1>"]
    if row.status == ERROR or not report:
        body += ["<p>Your submission could not be graded.</p>", f"<p>Reason: {_h(row.message or 'unknown')}</p>"]
        body += _figures_html(figures)
    else:
        body.append(f"<p><strong>Score: {row.score:g} / {row.max_score:g}</strong></p>")
        late = lateness_line(row)
        if late:
            body.append(f"<p>{_h(late)}</p>")
        body.append("<table><tr><th>task</th><th>score</th><th>status</th></tr>")
        for task in report.get("tasks", []):
            status = str(task.get("status", ""))
            body.append(f"<tr><td>{_h(task.get('title', task['id']))}</td><td class=n>{task['score']:g} / "
                        f"{task['max_score']:g}</td><td class=\"{_h(status)}\">{_h(status)}</td></tr>")
        body.append("</table>")
        for task in report.get("tasks", []):
            body += _task_html(task)
        if report.get("notes"):
            body += ["<h2>Notes</h2><ul>"] + [f"<li>{_h(n)}</li>" for n in report["notes"]] + ["</ul>"]
        body += _figures_html(figures)
        if report.get("student_output"):
            body.append("<h2>What your code printed</h2><pre>"
                        f"{html.escape(without_paths(str(report['student_output'])))}</pre>")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_h(title)}</title>"
            f"<style>{_STYLE}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")


def _figures_html(figures: FigurePage | None) -> list[str]:
    """The figures section: a relative link to the figures page, and each drawn figure inline.

    The images are embedded as base64 ``data:`` URIs rather than linked: the feedback page stays one
    self-contained file (it can be mailed or uploaded to an LMS alone and still shows the figures); the link to
    the full page (notes, placeholders, expected figures) is what needs the folder beside it.
    """
    if figures is None:
        return []
    summary = f": {_h(figures.summary)}" if figures.summary else ""
    link = f"<a href=\"{html.escape(figures.page)}\">{_h(figures.page)}</a>"
    lines = ["<h2>Your figures</h2>", f"<p>The course's figures drawn from your code, with notes: {link}{summary}.</p>"]
    for title, name, data in figures.images:
        lines.append(f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{_h(title)}\" "
                     f"style=\"max-width:100%\" data-file=\"{html.escape(name)}\"><figcaption>{_h(title)}"
                     f"</figcaption></figure>")
    return lines


def _task_html(task: dict[str, Any]) -> list[str]:
    status = str(task.get("status", ""))
    lines = [f"<h2>{_h(task.get('title', task['id']))}: {task['score']:g} / {task['max_score']:g} "
             f"(<span class=\"{_h(status)}\">{_h(status)}</span>)</h2>", f"<p>{_h(task_lead(task))}</p>",
             "<ul>"]
    for check in task_lines(task):
        item = f"<li><span class=\"{_h(check.status)}\">[{_h(check.status)}]</span> {_h(check.description)}"
        if check.message:
            item += f": {_h(check.message)}"
        item += "".join(f"<br><span class=hint>Hint: {_h(hint)}</span>" for hint in check.hints)
        lines.append(item + "</li>")
    return lines + ["</ul>"]
