"""Exports of a gradebook: the class CSV, LMS import files and per-student feedback."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from autograder.errors import GraderError
from autograder.gradebook.store import Gradebook, SubmissionRow
from autograder.reports.feedback import render_feedback, render_feedback_html
from autograder.util.atomic import write_atomic
from autograder.util.safety import csv_safe


def task_columns(rows: list[SubmissionRow]) -> list[str]:
    """Task ids in report order, over all rows (a row may lack tasks, e.g. one that could not be graded)."""
    columns: dict[str, None] = {}
    for row in sorted(rows, key=lambda r: -len(r.tasks)):
        for task in row.tasks:
            columns.setdefault(task["task"], None)
    return list(columns)


def gradebook_csv(rows: list[SubmissionRow]) -> str:
    """One line per student: id, per-task (raw) scores, raw total, submission time, lateness, penalty, final total,
    max, status; no cell can start a spreadsheet formula."""
    columns = task_columns(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_safe(c) for c in ["student", *columns, "raw_score", "submitted_at", "lateness", "penalty",
                                           "total", "max_score", "status"]])
    for row in rows:
        scores = {t["task"]: t["score"] for t in row.tasks}
        cells = [row.student, *(_number(scores.get(c)) for c in columns), _number(row.raw),
                 row.submitted_at or "", row.late_note, f"{row.penalty * 100:g}%", _number(row.score),
                 _number(row.max_score), row.status]
        writer.writerow([csv_safe(cell) for cell in cells])
    return buffer.getvalue()


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def export_csv(book: Gradebook, assignment: str, path: Path) -> int:
    """Write the class CSV of an assignment atomically; return the number of students."""
    rows = book.current(assignment, with_reports=False)
    write_atomic(Path(path), gradebook_csv(rows))
    return len(rows)


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._@+-]")


def feedback_filename(student: str) -> str:
    """A file name for a student's feedback that cannot leave its folder or hide itself."""
    name = _UNSAFE_NAME.sub("_", student).lstrip(".") or "student"
    return name[:120] + ".md"


def export_feedback(book: Gradebook, assignment: str, folder: Path) -> int:
    """Write one markdown and one HTML feedback file per student of an assignment; return how many students.

    Raises:
        GraderError: If two student ids map to the same file name.
    """
    rows = book.current(assignment)
    names: dict[str, str] = {}
    for row in rows:
        name = feedback_filename(row.student)
        if name in names:
            raise GraderError(f"students {names[name]!r} and {row.student!r} would share feedback file {name}")
        names[name] = row.student
    for row in rows:
        name = feedback_filename(row.student)
        write_atomic(Path(folder) / name, render_feedback(row))
        write_atomic(Path(folder) / (name[:-3] + ".html"), render_feedback_html(row))
    return len(rows)
