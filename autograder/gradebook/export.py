"""Exports of a gradebook: the class CSV, LMS import files and per-student feedback."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.errors import GraderError
from autograder.gradebook.records import GRADED, SubmissionRow
from autograder.reports.feedback import FigurePage, render_feedback, render_feedback_html
from autograder.util.atomic import write_atomic
from autograder.util.safety import csv_safe, printable

if TYPE_CHECKING:  # the feedback a grading worker draws figures for needs no database library
    from autograder.gradebook.store import Gradebook


def task_columns(rows: list[SubmissionRow]) -> list[str]:
    """Task ids in report order, over all rows (a row may lack tasks, e.g. one that could not be graded)."""
    columns: dict[str, None] = {}
    for row in sorted(rows, key=lambda r: -len(r.tasks)):
        for task in row.tasks:
            columns.setdefault(task["task"], None)
    return list(columns)


def gradebook_csv(rows: list[SubmissionRow]) -> str:
    """One line per student: id, per-task (raw) scores, raw total, submission time, lateness, penalty, final total,
    max, status (the score cells empty for a submission that could not be graded); no cell can start a spreadsheet
    formula."""
    columns = task_columns(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_safe(c) for c in ["student", *columns, "raw_score", "submitted_at", "lateness", "penalty",
                                           "total", "max_score", "status"]])
    for row in rows:
        scores = {t["task"]: t["score"] for t in row.tasks}
        graded = row.status == GRADED  # a submission that could not be graded has no score, not a 0
        cells = [row.student, *(_number(scores.get(c)) for c in columns), _number(row.raw if graded else None),
                 row.submitted_at or "", row.late_note, f"{row.penalty * 100:g}%" if graded else "",
                 _number(row.score if graded else None), _number(row.max_score), row.status]
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


FIGURES_SUFFIX = "-figures"
FIGURE_STAMP = "stamp.json"  # in a figures folder: the digest it was drawn for, and its panels


def figures_folder(folder: Path, student: str) -> Path:
    """Where ``grade-all --figures`` draws a student's figures: ``<stem>-figures/`` beside ``<stem>.html``."""
    return Path(folder) / (feedback_filename(student)[:-3] + FIGURES_SUFFIX)


def read_figure_stamp(folder: Path) -> dict | None:
    """A figures folder's stamp (``digest``, ``summary``, ``panels``), or None when there is no usable one."""
    try:
        stamp = json.loads((Path(folder) / FIGURE_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def figure_page(folder: Path, row: SubmissionRow) -> FigurePage | None:
    """The student's figures for their feedback, when drawn for this very submission (an older submission's
    figures are not shown beside a newer one's grade)."""
    where = figures_folder(folder, row.student)
    stamp = read_figure_stamp(where)
    if stamp is None or stamp.get("digest") != row.digest or not (where / "index.html").is_file():
        return None
    images = []
    for panel in stamp.get("panels") or []:
        image = where / str(panel.get("image", ""))
        if panel.get("status") == "drawn" and image.parent == where and image.is_file():
            images.append((str(panel.get("title") or panel.get("name") or image.stem), image.name,
                           base64.b64encode(image.read_bytes()).decode("ascii")))
    return FigurePage(f"{where.name}/index.html", str(stamp.get("summary", "")), images)


def export_feedback(book: Gradebook, assignment: str, folder: Path) -> int:
    """Write one markdown and one HTML feedback file per student of an assignment; return how many students.

    A student whose figures were drawn (``grade-all --figures``) gets a link to them, and the HTML shows them.

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
        figures = figure_page(folder, row)
        write_atomic(Path(folder) / name, render_feedback(row, figures))
        write_atomic(Path(folder) / (name[:-3] + ".html"), render_feedback_html(row, figures))
    return len(rows)


def feedback_written(students: int) -> str:
    """What :func:`export_feedback` wrote, in words: ``3 students, a .md and a .html each``."""
    return f"{students} student{'s' if students != 1 else ''}, a .md and a .html each"


# -- LMS imports ------------------------------------------------------------------------------------------

LMS_FORMATS = ("plain", "canvas", "moodle")
CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")  # Canvas's gradebook import columns
# The user fields Moodle's CSV import can match a row by ("Map from" a column, "Map to" the field), each with the
# roster columns that hold it, in the order the file lists them.
MOODLE_IDENTITIES = (("ID number", ("id_number", "idnumber")), ("Email address", ("email_address", "email")),
                     ("Username", ("username",)))
# Roster columns that may hold the grader's student id, tried in this order when there is no "grader_id" column
# (so Canvas's own gradebook export, or a Moodle export, can be given as the roster as it is), each with the name
# the messages and docs/INSTRUCTORS.md give it. Canvas's "Student" column is the student's name.
ROSTER_KEYS = (("grader_id", "grader_id"), ("sis_user_id", "SIS User ID"), ("sis_login_id", "SIS Login ID"),
               ("id_number", "ID number"), ("idnumber", "ID number"), ("email_address", "Email address"),
               ("email", "Email address"), ("username", "username"), ("login_id", "login_id"), ("id", "ID"))


@dataclass
class LmsExport:
    """An LMS import file, and the students it leaves out (each said on stderr by :meth:`warnings`).

    A student the file does not list keeps whatever grade the LMS has; an empty grade cell would not: Canvas takes
    a blank cell over an existing grade as a change to no grade, and Moodle reads an empty cell as "no grade".

    Attributes:
        text: The CSV.
        students: The students it lists.
        missing: Roster students with no submission in the gradebook (not in the file).
        extra: Graded students not on the roster (not in the file: the LMS could not tell who they are).
        ungraded: Students whose submission could not be graded (not in the file).
        unmatched: Graded roster students without the identity the LMS matches rows by (not in the file).
    """

    text: str
    students: int = 0
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    ungraded: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)

    def warnings(self, shown: int = 20) -> list[str]:
        """One line per kind of student left out, with their count and (the first ``shown`` of) their ids."""
        lines = []
        for label, students in (("on the roster without a submission (not in the file: the LMS keeps their "
                                 "grade)", self.missing),
                                ("graded but not on the roster (not in the file)", self.extra),
                                ("could not be graded (not in the file: the LMS keeps their grade)", self.ungraded),
                                ("graded, with no ID the LMS can match on the roster (not in the file)",
                                 self.unmatched)):
            if students:
                more = f" and {len(students) - shown} more" if len(students) > shown else ""
                lines.append(printable(f"{len(students)} {label}: {', '.join(students[:shown])}{more}", True))
        return lines


def _roster_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def roster_columns() -> str:
    """The roster columns a student id is matched against, as the messages and the docs name them."""
    return ", ".join(dict.fromkeys(shown for _, shown in ROSTER_KEYS))


def read_roster(path: Path) -> list[dict[str, str]]:
    """A roster CSV: one row per student, with columns named like Canvas's or Moodle's exports (any case).

    The grader's student id is matched against the ``grader_id`` column, else against the first of the other
    :data:`ROSTER_KEYS` the row fills.

    Raises:
        GraderError: If the file cannot be read, is not a UTF-8 CSV file, has no column to match student ids
            against, or lists no student.
    """
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            rows = [{_roster_key(k or ""): (v or "").strip() for k, v in row.items()} for row in reader]
            header = [_roster_key(name or "") for name in reader.fieldnames or []]
    except OSError as exc:
        raise GraderError(f"cannot read the roster {path}: {exc.strerror or exc}") from None
    except (csv.Error, UnicodeDecodeError) as exc:
        raise GraderError(f"the roster {path} is not a readable UTF-8 CSV file ({exc})") from None
    if not any(key in header for key, _ in ROSTER_KEYS):
        raise GraderError(f"the roster {path} has no column to match student ids against; expected a CSV file whose "
                          f"header has one of {roster_columns()} (any case)")
    # Canvas's export has a "Points Possible" row (and sometimes a muted-assignments row) before the students.
    rows = [r for r in rows if not any(v.strip().lower() in ("points possible", "muted") for v in r.values())]
    if not rows:
        raise GraderError(f"the roster {path} lists no student: expected its header, then one row per student")
    return rows


def _roster_index(roster: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    index: dict[str, dict[str, str]] = {}
    for row in roster:
        key = next((row[k] for k, _ in ROSTER_KEYS if row.get(k)), "")
        if key:
            index.setdefault(key, row)
    return index


def _identity(who: dict[str, str], keys: tuple[str, ...]) -> str:
    return next((who[key] for key in keys if who.get(key)), "")


def _moodle_columns(listed: dict[str, dict[str, str]]) -> tuple[list[tuple[str, tuple[str, ...]]], list[str]]:
    """The Moodle user fields the file gives, and the students left out for lacking it.

    Moodle matches a row by the one column the teacher maps, and a row empty there is not simply skipped (it can
    take the row before's student), so every row must fill every field the file gives: the fields every listed
    student has, else the first one any has, the students without it left out.

    Raises:
        GraderError: If no listed student has any field Moodle matches by.
    """
    def filled(keys: tuple[str, ...]) -> set[str]:
        return {student for student, who in listed.items() if _identity(who, keys)}

    complete = [(label, keys) for label, keys in MOODLE_IDENTITIES if filled(keys) == set(listed)]
    if complete:
        return complete, []
    partial = next(((label, keys) for label, keys in MOODLE_IDENTITIES if filled(keys)), None)
    if partial is None:
        raise GraderError(f"the roster gives Moodle nothing to match students by: add a column "
                          f"{', '.join(label for label, _ in MOODLE_IDENTITIES[:-1])} or "
                          f"{MOODLE_IDENTITIES[-1][0]} (the user field the import maps)")
    return [partial], sorted(set(listed) - filled(partial[1]))


def _csv_text(rows: list[list[str]]) -> str:
    """CSV text in which no cell, the header's included, can start a spreadsheet formula."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([[csv_safe(cell) for cell in row] for row in rows])
    return buffer.getvalue()


def _canvas_rows(listed: dict[str, dict[str, str]], scores: dict[str, float | None], column: str,
                 points: float) -> list[list[str]]:
    rows = [[*CANVAS_HEADER, column], ["Points Possible", "", "", "", "", _number(points)]]
    for student, who in listed.items():
        rows.append([who.get("student") or who.get("name") or student, who.get("id", ""), who.get("sis_user_id", ""),
                     who.get("sis_login_id", ""), who.get("section", ""), _number(scores[student])])
    return rows


def _moodle_rows(listed: dict[str, dict[str, str]], scores: dict[str, float | None], column: str,
                 identities: list[tuple[str, tuple[str, ...]]]) -> list[list[str]]:
    rows = [[*(label for label, _ in identities), column]]
    for student, who in listed.items():
        rows.append([*(_identity(who, keys) for _, keys in identities), _number(scores[student])])
    return rows


def lms_csv(rows: list[SubmissionRow], fmt: str, column: str, roster: list[dict[str, str]] | None,
            points: float | None = None) -> LmsExport:
    """The grade import file of an LMS: final scores (after any late penalty), one row per graded roster student.

    Args:
        rows: The current submissions.
        fmt: ``canvas`` or ``moodle`` (``plain`` is :func:`gradebook_csv`).
        column: The grade column's header (in Canvas, the assignment's name, optionally with its id:
            ``Assignment 3 (123456)``).
        roster: The roster rows (see :func:`read_roster`), or None to use the grader's ids as they are (Moodle's
            ID number).
        points: The points possible (Canvas's second row); default: the largest max score.

    Raises:
        GraderError: If the format is unknown, Canvas is asked for without a roster, no roster student is in the
            gradebook, or (Moodle) no roster student has an identity Moodle matches by.
    """
    _check_lms(fmt, roster)
    scores: dict[str, float | None] = {r.student: r.score if r.status == GRADED else None for r in rows}
    index = _matched_index(roster, scores)
    listed = {s: who for s, who in index.items() if scores.get(s) is not None}
    export = LmsExport("", missing=sorted(s for s in index if s not in scores),
                       extra=sorted(s for s, v in scores.items() if v is not None and s not in index),
                       ungraded=sorted(s for s, v in scores.items() if v is None))
    if fmt == "canvas":
        top = points if points is not None else max((r.max_score for r in rows), default=0.0)
        table = _canvas_rows(listed, scores, column, top)
    else:
        identities, export.unmatched = _moodle_columns(listed)
        table = _moodle_rows({s: w for s, w in listed.items() if s not in export.unmatched}, scores, column,
                             identities)
    export.text = _csv_text(table)
    export.students = len(table) - (2 if fmt == "canvas" else 1)
    return export


def _check_lms(fmt: str, roster: list[dict[str, str]] | None) -> None:
    """Refuse an unknown format, and Canvas without a roster.

    Raises:
        GraderError: With the reason.
    """
    if fmt not in ("canvas", "moodle"):
        raise GraderError(f"unknown LMS format {fmt!r} (choose from {', '.join(LMS_FORMATS)})")
    if fmt == "canvas" and roster is None:
        raise GraderError("Canvas matches students by its own IDs: give --roster ROSTER.csv (e.g. Canvas's "
                          "gradebook export, or a CSV with student and SIS User ID columns)")


def _matched_index(roster: list[dict[str, str]] | None, scores: dict[str, float | None]) -> dict[str, dict[str, str]]:
    """The roster by the grader's student id (without a roster: each id as its own ID number).

    Raises:
        GraderError: If no roster student has a submission in the gradebook (the ids are of another kind).
    """
    index = _roster_index(roster) if roster is not None else {s: {"id_number": s} for s in scores}
    if scores and not set(scores) & set(index):
        raise GraderError(printable(f"no student of the roster has a submission in the gradebook: the roster's ids "
                                    f"(e.g. {', '.join(list(index)[:3])}) must be the grader's student ids (e.g. "
                                    f"{', '.join(list(scores)[:3])}): put those in a grader_id column", True))
    return index


def export_lms(book: Gradebook, assignment: str, path: Path, fmt: str, roster_path: Path | None,
               column: str | None = None) -> LmsExport:
    """Write an LMS grade import file of an assignment atomically (``plain``: the class CSV).

    Raises:
        GraderError: See :func:`lms_csv` and :func:`read_roster`.
    """
    rows = book.current(assignment, with_reports=False)
    if fmt == "plain":
        export = LmsExport(gradebook_csv(rows), students=len(rows))
    else:
        roster = read_roster(roster_path) if roster_path else None
        export = lms_csv(rows, fmt, column or assignment, roster)
    write_atomic(Path(path), export.text)
    return export
