"""The class gradebook: graded submissions in SQLite (or PostgreSQL, gradebook/backend.py), merged, exported."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from autograder.errors import GraderError
from autograder.gradebook import backend
from autograder.spec.late import Lateness, as_utc_text

SCHEMA_VERSION = "2"
READABLE_VERSIONS = ("1", SCHEMA_VERSION)  # schema 1 files open read-only as they are and are migrated on write


GRADED, ERROR = "graded", "error"  # how grading a submission ended




_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS students (
    id TEXT PRIMARY KEY,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL REFERENCES students(id),
    digest TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    graded_at TEXT NOT NULL,
    score REAL NOT NULL DEFAULT 0,
    max_score REAL NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('graded', 'error')),
    message TEXT NOT NULL DEFAULT '',
    seconds REAL NOT NULL DEFAULT 0,
    check_seconds REAL NOT NULL DEFAULT 0,
    worker_rss_mb REAL,
    report_json TEXT,
    raw_score REAL,
    submitted_at TEXT,
    due_at TEXT,
    late_seconds REAL NOT NULL DEFAULT 0,
    penalty REAL NOT NULL DEFAULT 0,
    late_note TEXT NOT NULL DEFAULT '',
    UNIQUE (assignment, student, digest, fingerprint)
);
CREATE TABLE IF NOT EXISTS task_scores (
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    task TEXT NOT NULL,
    title TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    status TEXT NOT NULL,
    feedback TEXT NOT NULL,
    PRIMARY KEY (submission, task)
);
CREATE TABLE IF NOT EXISTS check_results (
    id INTEGER PRIMARY KEY,
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    task TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    weight REAL NOT NULL,
    status TEXT NOT NULL,
    message TEXT NOT NULL,
    hint TEXT NOT NULL,
    seconds REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS check_results_submission ON check_results(submission);
CREATE TABLE IF NOT EXISTS sources (
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    file TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (submission, file)
);
CREATE TABLE IF NOT EXISTS current (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL REFERENCES students(id),
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (assignment, student)
);
"""

# Schema 1 to 2: the lateness of a submission (raw score, times, penalty) and the student's source files.
_MIGRATIONS = {
    "1": [
        "ALTER TABLE submissions ADD COLUMN raw_score REAL",
        "ALTER TABLE submissions ADD COLUMN submitted_at TEXT",
        "ALTER TABLE submissions ADD COLUMN due_at TEXT",
        "ALTER TABLE submissions ADD COLUMN late_seconds REAL NOT NULL DEFAULT 0",
        "ALTER TABLE submissions ADD COLUMN penalty REAL NOT NULL DEFAULT 0",
        "ALTER TABLE submissions ADD COLUMN late_note TEXT NOT NULL DEFAULT ''",
        "UPDATE submissions SET raw_score = score",
        "CREATE TABLE sources (submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE, "
        "file TEXT NOT NULL, text TEXT NOT NULL, PRIMARY KEY (submission, file))",
    ],
}

SUBMISSION_COLUMNS = ("assignment", "student", "digest", "fingerprint", "source", "graded_at", "score", "max_score",
                       "status", "message", "seconds", "check_seconds", "worker_rss_mb", "report_json", "raw_score",
                       "submitted_at", "due_at", "late_seconds", "penalty", "late_note")
_COLUMN_DEFAULTS = {"raw_score": None, "submitted_at": None, "due_at": None, "late_seconds": 0.0, "penalty": 0.0,
                    "late_note": ""}  # what a schema 1 row holds for the columns it lacks


def now() -> str:
    """The current UTC time as an ISO 8601 string with microseconds (sorts chronologically)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@dataclass
class Outcome:
    """What grading one submission produced, ready to be stored.

    Attributes:
        status: ``graded`` (a report exists, whatever the score) or ``error`` (it could not be graded).
        score: Points earned.
        max_score: Points available.
        message: Why it could not be graded (status ``error``).
        seconds: Wall-clock seconds spent grading it.
        check_seconds: Sum of the hidden checks' own seconds (the computation the grader waits for).
        worker_rss_mb: Peak resident memory of the grading worker (and its zygote) so far, in MB.
        report: The GradeReport as a dict (``GradeReport.to_dict()``), or None.
    """

    status: str
    score: float = 0.0
    max_score: float = 0.0
    message: str = ""
    seconds: float = 0.0
    check_seconds: float = 0.0
    worker_rss_mb: float | None = None
    report: dict[str, Any] | None = None


@dataclass
class SubmissionRow:
    """A stored submission (the current one of a student, or any other)."""

    id: int
    assignment: str
    student: str
    digest: str
    fingerprint: str
    source: str
    graded_at: str
    score: float
    max_score: float
    status: str
    message: str
    seconds: float
    check_seconds: float
    worker_rss_mb: float | None
    raw_score: float | None = None
    submitted_at: str | None = None
    due_at: str | None = None
    late_seconds: float = 0.0
    penalty: float = 0.0
    late_note: str = ""
    report: dict[str, Any] | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def raw(self) -> float:
        """The score before any late penalty (``score`` is the final one)."""
        return self.score if self.raw_score is None else self.raw_score


class Gradebook:
    """One SQLite gradebook file in WAL mode; every recorded submission is one transaction.

    Args:
        path: The database file (created with its schema when missing).
        readonly: Open an existing file without writing to it.

    Raises:
        GraderError: If the file is not a gradebook or cannot be opened.
    """

    def __init__(self, path: Path | str, readonly: bool = False) -> None:
        location = backend.parse_location(path)
        self.path = location if isinstance(location, Path) else backend.display(location)
        if readonly and isinstance(location, Path) and not location.is_file():
            raise GraderError(f"gradebook not found: {self.path}")
        errors = backend.database_errors()
        try:
            self.db = backend.connect(location, readonly)
            if isinstance(location, Path):
                existing = location.is_file() and location.stat().st_size > 0
            else:
                existing = self.db.has_table("meta") or self.db.has_table("submissions")
            self.db.execute("PRAGMA foreign_keys = ON")
            self.version = SCHEMA_VERSION
            if existing or readonly:  # never add tables to some other database
                self.version = self._check_version()
            if not readonly:
                self._initialise()
        except errors as exc:
            raise GraderError(f"{self.path} is not a usable gradebook ({exc})") from None

    def _initialise(self) -> None:
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a killed process loses no commit
        if self.version != SCHEMA_VERSION:
            self._migrate()
        self.db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} INSERT OR IGNORE INTO meta(key, value) "
                              f"VALUES ('schema_version', '{SCHEMA_VERSION}'); COMMIT;")

    def _migrate(self) -> None:
        """Bring an older gradebook to the current schema in one transaction (nothing stored is lost)."""
        with self.transaction():
            while self.version != SCHEMA_VERSION:
                for statement in _MIGRATIONS[self.version]:
                    self.db.execute(statement)
                self.version = str(int(self.version) + 1)
            self.db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,))

    def _check_version(self) -> str:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except backend.database_errors():
            row = None
        if row is None or row["value"] not in READABLE_VERSIONS:
            found = row["value"] if row else "none"
            raise GraderError(f"{self.path} is not a gradebook of schema {SCHEMA_VERSION} (found {found}); "
                              f"grade into a new gradebook file")
        return row["value"]

    def close(self) -> None:
        """Close the connection (SQLite folds the WAL back into the main file when it is the last one)."""
        self.db.close()

    def __enter__(self) -> "Gradebook":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    class _Transaction:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, kind: object, *rest: object) -> None:
            self.db.execute("ROLLBACK" if kind else "COMMIT")

    def transaction(self) -> "Gradebook._Transaction":
        """A write transaction: committed when the block ends, rolled back if it raises."""
        return Gradebook._Transaction(self.db)

    # -- lookups ----------------------------------------------------------------------------------------

    def find(self, assignment: str, student: str, digest: str, fingerprint: str) -> SubmissionRow | None:
        """The stored submission with exactly this content and grading setup, if any."""
        row = self.db.execute(
            "SELECT * FROM submissions WHERE assignment = ? AND student = ? AND digest = ? AND fingerprint = ?",
            (assignment, student, digest, fingerprint)).fetchone()
        return _row(row) if row else None

    def current_id(self, assignment: str, student: str) -> int | None:
        """The id of a student's current submission, if any."""
        row = self.db.execute("SELECT submission FROM current WHERE assignment = ? AND student = ?",
                              (assignment, student)).fetchone()
        return row[0] if row else None

    def assignments(self) -> list[str]:
        """Assignments that have at least one current submission."""
        return [r[0] for r in self.db.execute("SELECT DISTINCT assignment FROM current ORDER BY assignment")]

    def current(self, assignment: str, with_reports: bool = True) -> list[SubmissionRow]:
        """The current submission of every student of an assignment, sorted by student id, with task scores."""
        rows = [_row(r, with_reports) for r in self.db.execute(
            "SELECT s.* FROM current c JOIN submissions s ON s.id = c.submission "
            "WHERE c.assignment = ? ORDER BY c.student", (assignment,))]
        by_id = {r.id: r for r in rows}
        for task in self.db.execute(
                "SELECT t.* FROM task_scores t JOIN current c ON c.submission = t.submission "
                "WHERE c.assignment = ? ORDER BY t.submission, t.position", (assignment,)):
            by_id[task["submission"]].tasks.append(dict(task))
        return rows

    def check_results(self, assignment: str) -> list[dict[str, Any]]:
        """Every check result of the current submissions of an assignment, with the student id."""
        return [dict(r) for r in self.db.execute(
            "SELECT c.student, r.task, r.name, r.description, r.status, r.message, r.hint, r.seconds "
            "FROM check_results r JOIN current c ON c.submission = r.submission WHERE c.assignment = ? "
            "ORDER BY c.student, r.id", (assignment,))]

    def sources(self, assignment: str) -> dict[str, dict[str, str]]:
        """The stored source files of every current submission of an assignment: student to {file: text}."""
        if self.version == "1":
            return {}
        found: dict[str, dict[str, str]] = {}
        for row in self.db.execute(
                "SELECT c.student, f.file, f.text FROM sources f JOIN current c ON c.submission = f.submission "
                "WHERE c.assignment = ? ORDER BY c.student, f.file", (assignment,)):
            found.setdefault(row["student"], {})[row["file"]] = row["text"]
        return found

    def count(self, assignment: str | None = None) -> int:
        """How many submissions are stored (of one assignment, or all)."""
        if assignment is None:
            return self.db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
        return self.db.execute("SELECT COUNT(*) FROM submissions WHERE assignment = ?", (assignment,)).fetchone()[0]

    # -- writes -----------------------------------------------------------------------------------------

    def mark_current(self, assignment: str, student: str, submission_id: int, late: Lateness | None = None) -> None:
        """Point a student's current submission at an already stored one (an unchanged rerun), in one transaction.

        Args:
            late: The submission's lateness now (the deadline, an extension or the policy may have changed).
        """
        with self.transaction():
            stamp = now()
            _touch_student(self.db, student, stamp)
            set_current(self.db, assignment, student, submission_id, stamp)
            if late is not None:
                _set_lateness(self.db, submission_id, late)

    def set_lateness(self, submission_id: int, late: Lateness) -> None:
        """Store a submission's lateness and recompute its final score from the raw one, in one transaction."""
        with self.transaction():
            _set_lateness(self.db, submission_id, late)

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
        report_json = json.dumps(outcome.report) if outcome.report is not None else None
        values = (assignment, student, digest, fingerprint, source, stamp, outcome.score, outcome.max_score,
                  outcome.status, outcome.message, outcome.seconds, outcome.check_seconds, outcome.worker_rss_mb,
                  report_json, outcome.score, None, None, 0.0, 0.0, "")
        with self.transaction():
            _touch_student(self.db, student, stamp)
            self.db.execute("DELETE FROM submissions WHERE assignment = ? AND student = ? AND digest = ? "
                            "AND fingerprint = ?", (assignment, student, digest, fingerprint))
            submission_id = insert_submission(self.db, values)
            _insert_details(self.db, submission_id, outcome.report)
            insert_sources(self.db, submission_id, files or {})
            if late is not None:
                _set_lateness(self.db, submission_id, late)
            set_current(self.db, assignment, student, submission_id, stamp)
        return submission_id


def _set_lateness(db: sqlite3.Connection, submission_id: int, late: Lateness) -> None:
    row = db.execute("SELECT score, raw_score FROM submissions WHERE id = ?", (submission_id,)).fetchone()
    raw = row["score"] if row["raw_score"] is None else row["raw_score"]
    db.execute("UPDATE submissions SET raw_score = ?, score = ?, submitted_at = ?, due_at = ?, late_seconds = ?, "
               "penalty = ?, late_note = ? WHERE id = ?",
               (raw, late.final(raw), as_utc_text(late.submitted_at), as_utc_text(late.due), late.late_seconds,
                late.penalty, late.note, submission_id))


def insert_sources(db: sqlite3.Connection, submission_id: int, files: dict[str, str]) -> None:
    """Store a submission's source files."""
    for name, text in sorted(files.items()):
        db.execute("INSERT INTO sources(submission, file, text) VALUES (?, ?, ?)", (submission_id, name, text))


def submission_values(row: sqlite3.Row) -> tuple[Any, ...]:
    """A stored submission's values in SUBMISSION_COLUMNS order (a schema 1 row gets the new columns' defaults)."""
    keys = set(row.keys())
    values = [row[c] if c in keys else _COLUMN_DEFAULTS[c] for c in SUBMISSION_COLUMNS]
    if "raw_score" not in keys:
        values[SUBMISSION_COLUMNS.index("raw_score")] = row["score"]
    return tuple(values)


def _touch_student(db: sqlite3.Connection, student: str, stamp: str) -> None:
    db.execute("INSERT INTO students(id, first_seen, last_seen) VALUES (?, ?, ?) "
               "ON CONFLICT(id) DO UPDATE SET last_seen = excluded.last_seen", (student, stamp, stamp))


def set_current(db: sqlite3.Connection, assignment: str, student: str, submission_id: int, stamp: str) -> None:
    db.execute("INSERT INTO current(assignment, student, submission, seen_at) VALUES (?, ?, ?, ?) "
               "ON CONFLICT(assignment, student) DO UPDATE SET submission = excluded.submission, "
               "seen_at = excluded.seen_at", (assignment, student, submission_id, stamp))


def insert_submission(db: sqlite3.Connection, values: tuple[Any, ...]) -> int:
    placeholders = ", ".join("?" for _ in SUBMISSION_COLUMNS)
    cursor = db.execute(f"INSERT INTO submissions({', '.join(SUBMISSION_COLUMNS)}) VALUES ({placeholders})", values)
    if cursor.lastrowid is None:
        raise GraderError("the gradebook did not record the submission (no row id)")
    return cursor.lastrowid


def _insert_details(db: sqlite3.Connection, submission_id: int, report: dict[str, Any] | None) -> None:
    for position, task in enumerate((report or {}).get("tasks", [])):
        db.execute("INSERT INTO task_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (submission_id, position, task["id"], task.get("title", ""), task["score"], task["max_score"],
                    task.get("status", ""), task.get("feedback", "")))
        for check in task.get("checks", []):
            db.execute("INSERT INTO check_results(submission, task, name, description, weight, status, message, "
                       "hint, seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (submission_id, task["id"], check["name"], check.get("description", ""),
                        check.get("weight", 0.0), check.get("status", ""), check.get("message", ""),
                        check.get("hint", ""), check.get("seconds", 0.0)))


def _row(row: sqlite3.Row, with_report: bool = True) -> SubmissionRow:
    data = {key: row[key] for key in row.keys() if key != "report_json"}
    report = json.loads(row["report_json"]) if with_report and row["report_json"] else None
    return SubmissionRow(**data, report=report)
