"""The class gradebook: graded submissions recorded, looked up and re-pointed, in SQLite or PostgreSQL alike."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Executable, Row, Table, delete, func, insert, select, update

from autograder.gradebook import backend
from autograder.gradebook.migrate import open_database
from autograder.gradebook.records import ERROR, GRADED, Outcome, SubmissionRow, now
from autograder.gradebook.schema import check_results, current, sources, students, submissions, task_scores
from autograder.spec.late import Lateness, as_utc_text

# The plain records (records.py) stay importable from here, where their callers have always found them.
__all__ = ["ERROR", "GRADED", "SUBMISSION_COLUMNS", "Gradebook", "Outcome", "SubmissionRow", "insert_sources",
           "insert_submission", "now", "same_submission", "set_current", "upsert"]

SUBMISSION_COLUMNS = tuple(column.name for column in submissions.columns if column.name != "id")
_WITHOUT_REPORT = [column for column in submissions.columns if column.name != "report_json"]


class Gradebook:
    """One gradebook, an SQLite file (in WAL mode) or a PostgreSQL database; every recorded submission is one
    transaction. Opening it brings its schema to this grader's (gradebook/migrate.py).

    Args:
        path: An SQLite file (created with its schema when missing), ``sqlite:///path`` or a PostgreSQL URL.
        readonly: Read an existing gradebook without writing grades to it.

    Attributes:
        path: The location, fit for messages (a URL without its password).
        engine: The SQLAlchemy engine every statement runs on.

    Raises:
        GraderError: If the gradebook is missing (read-only), is not a gradebook, or cannot be opened.
    """

    def __init__(self, path: Path | str, readonly: bool = False) -> None:
        location = backend.parse_location(path)
        self.path = location if isinstance(location, Path) else backend.display(location)
        self.engine = open_database(location, readonly)

    def close(self) -> None:
        """Close every connection (SQLite folds the WAL back into the main file when the last one closes)."""
        self.engine.dispose()

    def __enter__(self) -> "Gradebook":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A write transaction (the gradebook's only writer while it lasts): committed when the block ends, rolled
        back if it raises."""
        with backend.writing(self.engine) as connection:
            yield connection

    def _rows(self, statement: Executable) -> list[Row[Any]]:
        with self.engine.connect() as connection:
            return list(connection.execute(statement))

    # -- lookups ----------------------------------------------------------------------------------------

    def find(self, assignment: str, student: str, digest: str, fingerprint: str) -> SubmissionRow | None:
        """The stored submission with exactly this content and grading setup, if any."""
        found = self._rows(select(submissions).where(*same_submission(assignment, student, digest, fingerprint)))
        return _row(found[0]) if found else None

    def current_id(self, assignment: str, student: str) -> int | None:
        """The id of a student's current submission, if any."""
        found = self._rows(select(current.c.submission).where(current.c.assignment == assignment,
                                                              current.c.student == student))
        return found[0][0] if found else None

    def assignments(self) -> list[str]:
        """Assignments that have at least one current submission."""
        return [r[0] for r in self._rows(select(current.c.assignment).distinct().order_by(current.c.assignment))]

    def current(self, assignment: str, with_reports: bool = True) -> list[SubmissionRow]:
        """The current submission of every student of an assignment, sorted by student id, with task scores."""
        columns = submissions.columns if with_reports else _WITHOUT_REPORT
        with self.engine.connect() as connection:
            rows = [_row(r, with_reports) for r in connection.execute(
                _of_current(select(*columns), submissions.c.id, assignment).order_by(current.c.student))]
            by_id = {r.id: r for r in rows}
            for task in connection.execute(_of_current(select(task_scores), task_scores.c.submission, assignment)
                                           .order_by(task_scores.c.submission, task_scores.c.position)):
                by_id[task.submission].tasks.append(dict(task._mapping))
        return rows

    def check_results(self, assignment: str) -> list[dict[str, Any]]:
        """Every check result of the current submissions of an assignment, with the student id."""
        r = check_results.c
        statement = select(current.c.student, r.task, r.name, r.description, r.status, r.message, r.hint, r.seconds)
        return [dict(row._mapping) for row in self._rows(
            _of_current(statement, r.submission, assignment).order_by(current.c.student, r.id))]

    def sources(self, assignment: str) -> dict[str, dict[str, str]]:
        """The stored source files of every current submission of an assignment: student to {file: text}."""
        found: dict[str, dict[str, str]] = {}
        statement = select(current.c.student, sources.c.file, sources.c.text)
        for row in self._rows(_of_current(statement, sources.c.submission, assignment)
                              .order_by(current.c.student, sources.c.file)):
            found.setdefault(row.student, {})[row.file] = row.text
        return found

    def count(self, assignment: str | None = None) -> int:
        """How many submissions are stored (of one assignment, or all)."""
        statement = select(func.count()).select_from(submissions)
        if assignment is not None:
            statement = statement.where(submissions.c.assignment == assignment)
        return self._rows(statement)[0][0]

    # -- writes -----------------------------------------------------------------------------------------

    def mark_current(self, assignment: str, student: str, submission_id: int, late: Lateness | None = None) -> None:
        """Point a student's current submission at an already stored one (an unchanged rerun), in one transaction.

        Args:
            late: The submission's lateness now (the deadline, an extension or the policy may have changed).
        """
        with self.transaction() as connection:
            stamp = now()
            _touch_student(connection, student, stamp)
            set_current(connection, assignment, student, submission_id, stamp)
            if late is not None:
                _set_lateness(connection, submission_id, late)

    def set_lateness(self, submission_id: int, late: Lateness) -> None:
        """Store a submission's lateness and recompute its final score from the raw one, in one transaction."""
        with self.transaction() as connection:
            _set_lateness(connection, submission_id, late)

    def record(self, assignment: str, fingerprint: str, student: str, digest: str, source: str,
               outcome: Outcome, late: Lateness | None = None, files: dict[str, str] | None = None) -> int:
        """Store one graded submission and make it the student's current one, in one transaction.

        A stored submission with the same content and grading setup (a ``--force`` re-grade) is replaced.

        Args:
            late: Its lateness (None: no deadline applies; the final score is the raw one).
            files: The student's source files (name to text), kept for the similarity review.

        Returns:
            The new submission's row id.
        """
        stamp = now()
        values = {"assignment": assignment, "student": student, "digest": digest, "fingerprint": fingerprint,
                  "source": source, "graded_at": stamp, "score": outcome.score, "max_score": outcome.max_score,
                  "status": outcome.status, "message": outcome.message, "seconds": outcome.seconds,
                  "check_seconds": outcome.check_seconds, "worker_rss_mb": outcome.worker_rss_mb,
                  "report_json": json.dumps(outcome.report) if outcome.report is not None else None,
                  "raw_score": outcome.score}
        with self.transaction() as connection:
            _touch_student(connection, student, stamp)
            connection.execute(delete(submissions).where(*same_submission(assignment, student, digest, fingerprint)))
            submission_id = insert_submission(connection, values)
            _insert_details(connection, submission_id, outcome.report)
            insert_sources(connection, submission_id, files or {})
            if late is not None:
                _set_lateness(connection, submission_id, late)
            set_current(connection, assignment, student, submission_id, stamp)
        return submission_id


def same_submission(assignment: str, student: str, digest: str, fingerprint: str) -> list[Any]:
    """The condition of a stored submission's identity: its student's content graded with one grading setup."""
    c = submissions.c
    return [c.assignment == assignment, c.student == student, c.digest == digest, c.fingerprint == fingerprint]


def _of_current(statement: Any, submission: Any, assignment: str) -> Any:
    """``statement`` limited to the rows of the current submissions of an assignment (joined on ``submission``)."""
    return statement.join_from(current, submission.table, current.c.submission == submission).where(
        current.c.assignment == assignment)


def upsert(connection: Connection, table: Table, key: Mapping[str, Any], values: Mapping[str, Any]) -> None:
    """Update the row of ``table`` with this key, or insert it when there is none.

    Two statements instead of a dialect's ``ON CONFLICT``: every write transaction holds the writers' lock
    (backend.writing), so no other writer can insert the same key in between.
    """
    where = [table.c[name] == value for name, value in key.items()]
    if connection.execute(update(table).where(*where).values(dict(values))).rowcount == 0:
        connection.execute(insert(table).values({**key, **values}))


def _set_lateness(connection: Connection, submission_id: int, late: Lateness) -> None:
    row = connection.execute(select(submissions.c.score, submissions.c.raw_score)
                             .where(submissions.c.id == submission_id)).one()
    raw = row.score if row.raw_score is None else row.raw_score
    connection.execute(update(submissions).where(submissions.c.id == submission_id).values(
        raw_score=raw, score=late.final(raw), submitted_at=as_utc_text(late.submitted_at), due_at=as_utc_text(late.due),
        late_seconds=late.late_seconds, penalty=late.penalty, late_note=late.note))


def insert_sources(connection: Connection, submission_id: int, files: Mapping[str, str]) -> None:
    """Store a submission's source files."""
    if files:
        connection.execute(insert(sources), [{"submission": submission_id, "file": name, "text": text}
                                             for name, text in sorted(files.items())])


def _touch_student(connection: Connection, student: str, stamp: str) -> None:
    if connection.execute(update(students).where(students.c.id == student).values(last_seen=stamp)).rowcount == 0:
        connection.execute(insert(students).values(id=student, first_seen=stamp, last_seen=stamp))


def set_current(connection: Connection, assignment: str, student: str, submission_id: int, stamp: str) -> None:
    """Make a stored submission the student's current one, seen at ``stamp``."""
    upsert(connection, current, {"assignment": assignment, "student": student},
           {"submission": submission_id, "seen_at": stamp})


def insert_submission(connection: Connection, values: Mapping[str, Any]) -> int:
    """Store a submission's row (SUBMISSION_COLUMNS); return its new id."""
    return connection.execute(insert(submissions).values(dict(values))).inserted_primary_key[0]


def _insert_details(connection: Connection, submission_id: int, report: dict[str, Any] | None) -> None:
    tasks = (report or {}).get("tasks", [])
    scores = [{"submission": submission_id, "position": position, "task": task["id"], "title": task.get("title", ""),
               "score": task["score"], "max_score": task["max_score"], "status": task.get("status", ""),
               "feedback": task.get("feedback", "")} for position, task in enumerate(tasks)]
    checks = [{"submission": submission_id, "task": task["id"], "name": check["name"],
               "description": check.get("description", ""), "weight": check.get("weight", 0.0),
               "status": check.get("status", ""), "message": check.get("message", ""), "hint": check.get("hint", ""),
               "seconds": check.get("seconds", 0.0)} for task in tasks for check in task.get("checks", [])]
    if scores:
        connection.execute(insert(task_scores), scores)
    if checks:
        connection.execute(insert(check_results), checks)


def _row(row: Row[Any], with_report: bool = True) -> SubmissionRow:
    data = dict(row._mapping)
    report_json = data.pop("report_json", None)
    return SubmissionRow(**data, report=json.loads(report_json) if with_report and report_json else None)
