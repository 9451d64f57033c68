"""The class gradebook: an SQLite file of graded submissions, merged across shards, exported as CSV and feedback."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from .errors import GraderError
from .reports import write_atomic

try:  # another module may own the spreadsheet-safety rule; fall back to the same rule here
    from .safety import csv_safe  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on which modules are installed
    _FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

    def csv_safe(value: object) -> str:
        """A spreadsheet cell that never starts a formula: prefix ``'`` when it starts with = + - @ tab or CR."""
        text = "" if value is None else str(value)
        return "'" + text if text.startswith(_FORMULA_STARTS) else text

SCHEMA_VERSION = "1"
GRADED, ERROR = "graded", "error"
STATUSES = (GRADED, ERROR)

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
CREATE TABLE IF NOT EXISTS current (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL REFERENCES students(id),
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (assignment, student)
);
"""

_SUBMISSION_COLUMNS = ("assignment", "student", "digest", "fingerprint", "source", "graded_at", "score", "max_score",
                       "status", "message", "seconds", "check_seconds", "worker_rss_mb", "report_json")


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
    report: dict[str, Any] | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)


class Gradebook:
    """One SQLite gradebook file in WAL mode; every recorded submission is one transaction.

    Args:
        path: The database file (created with its schema when missing).
        readonly: Open an existing file without writing to it.

    Raises:
        GraderError: If the file is not a gradebook or cannot be opened.
    """

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly and not self.path.is_file():
            raise GraderError(f"gradebook not found: {self.path}")
        existing = self.path.is_file() and self.path.stat().st_size > 0
        try:
            if readonly:
                self.db = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA foreign_keys = ON")
            if existing or readonly:  # never add tables to some other database
                self._check_version()
            if not readonly:
                self._initialise()
        except sqlite3.DatabaseError as exc:
            raise GraderError(f"{self.path} is not a usable gradebook ({exc})") from None

    def _initialise(self) -> None:
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a killed process loses no commit
        self.db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} INSERT OR IGNORE INTO meta(key, value) "
                              f"VALUES ('schema_version', '{SCHEMA_VERSION}'); COMMIT;")

    def _check_version(self) -> None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is None or row["value"] != SCHEMA_VERSION:
            found = row["value"] if row else "none"
            raise GraderError(f"{self.path} is not a gradebook of schema {SCHEMA_VERSION} (found {found})")

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

    def count(self, assignment: str | None = None) -> int:
        """How many submissions are stored (of one assignment, or all)."""
        if assignment is None:
            return self.db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
        return self.db.execute("SELECT COUNT(*) FROM submissions WHERE assignment = ?", (assignment,)).fetchone()[0]

    # -- writes -----------------------------------------------------------------------------------------

    def mark_current(self, assignment: str, student: str, submission_id: int) -> None:
        """Point a student's current submission at an already stored one (an unchanged rerun), in one transaction."""
        with self.transaction():
            stamp = now()
            _touch_student(self.db, student, stamp)
            _set_current(self.db, assignment, student, submission_id, stamp)

    def record(self, assignment: str, fingerprint: str, student: str, digest: str, source: str,
               outcome: Outcome) -> int:
        """Store one graded submission and make it the student's current one, in one transaction.

        A stored submission with the same content and grading setup (a ``--force`` re-grade) is replaced.

        Returns:
            The new submission's row id.
        """
        stamp = now()
        report_json = json.dumps(outcome.report) if outcome.report is not None else None
        values = (assignment, student, digest, fingerprint, source, stamp, outcome.score, outcome.max_score,
                  outcome.status, outcome.message, outcome.seconds, outcome.check_seconds, outcome.worker_rss_mb,
                  report_json)
        with self.transaction():
            _touch_student(self.db, student, stamp)
            self.db.execute("DELETE FROM submissions WHERE assignment = ? AND student = ? AND digest = ? "
                            "AND fingerprint = ?", (assignment, student, digest, fingerprint))
            submission_id = _insert_submission(self.db, values)
            _insert_details(self.db, submission_id, outcome.report)
            _set_current(self.db, assignment, student, submission_id, stamp)
        return submission_id


def _touch_student(db: sqlite3.Connection, student: str, stamp: str) -> None:
    db.execute("INSERT INTO students(id, first_seen, last_seen) VALUES (?, ?, ?) "
               "ON CONFLICT(id) DO UPDATE SET last_seen = excluded.last_seen", (student, stamp, stamp))


def _set_current(db: sqlite3.Connection, assignment: str, student: str, submission_id: int, stamp: str) -> None:
    db.execute("INSERT INTO current(assignment, student, submission, seen_at) VALUES (?, ?, ?, ?) "
               "ON CONFLICT(assignment, student) DO UPDATE SET submission = excluded.submission, "
               "seen_at = excluded.seen_at", (assignment, student, submission_id, stamp))


def _insert_submission(db: sqlite3.Connection, values: tuple[Any, ...]) -> int:
    placeholders = ", ".join("?" for _ in _SUBMISSION_COLUMNS)
    cursor = db.execute(f"INSERT INTO submissions({', '.join(_SUBMISSION_COLUMNS)}) VALUES ({placeholders})", values)
    assert cursor.lastrowid is not None
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


# -- merge ---------------------------------------------------------------------------------------------------

@dataclass
class MergeSummary:
    """What a merge did: submissions added, replaced by a newer copy, or kept because OUT's copy was newer."""

    added: int = 0
    replaced: int = 0
    kept: int = 0
    students: int = 0


def merge_gradebooks(output: Path, inputs: Iterable[Path]) -> MergeSummary:
    """Combine gradebooks (e.g. one per shard) into ``output``, one transaction per input.

    The same submission (student, content, grading setup) in several inputs is kept once, the most recently
    graded copy winning; a student's current submission is the most recently seen one.

    Raises:
        GraderError: If an input is missing, is not a gradebook, or is the output itself.
    """
    inputs = [Path(p) for p in inputs]
    if not inputs:
        raise GraderError("name at least one gradebook to merge")
    for path in inputs:
        if path.exists() and Path(output).exists() and path.resolve() == Path(output).resolve():
            raise GraderError(f"{path} is both an input and the output of the merge")
    summary = MergeSummary()
    with Gradebook(output) as book:
        for path in inputs:
            with Gradebook(path, readonly=True) as source:
                with book.transaction():
                    _merge_one(book.db, source.db, summary)
        summary.students = book.db.execute("SELECT COUNT(*) FROM students").fetchone()[0]
    return summary


def _merge_one(out: sqlite3.Connection, source: sqlite3.Connection, summary: MergeSummary) -> None:
    for student in source.execute("SELECT * FROM students"):
        out.execute("INSERT INTO students(id, first_seen, last_seen) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                    "first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)",
                    (student["id"], student["first_seen"], student["last_seen"]))
    mapping: dict[int, int] = {}
    for row in source.execute("SELECT * FROM submissions ORDER BY id"):
        mapping[row["id"]] = _merge_submission(out, source, row, summary)
    for pointer in source.execute("SELECT * FROM current"):
        mine = out.execute("SELECT seen_at FROM current WHERE assignment = ? AND student = ?",
                           (pointer["assignment"], pointer["student"])).fetchone()
        if mine is None or mine["seen_at"] < pointer["seen_at"]:
            _set_current(out, pointer["assignment"], pointer["student"], mapping[pointer["submission"]],
                         pointer["seen_at"])


def _merge_submission(out: sqlite3.Connection, source: sqlite3.Connection, row: sqlite3.Row,
                      summary: MergeSummary) -> int:
    key = (row["assignment"], row["student"], row["digest"], row["fingerprint"])
    existing = out.execute("SELECT id, graded_at FROM submissions WHERE assignment = ? AND student = ? AND "
                           "digest = ? AND fingerprint = ?", key).fetchone()
    if existing is not None and existing["graded_at"] >= row["graded_at"]:
        summary.kept += 1
        return existing["id"]
    pointers = []
    if existing is not None:
        pointers = [tuple(p) for p in out.execute("SELECT assignment, student, seen_at FROM current "
                                                  "WHERE submission = ?", (existing["id"],))]
        out.execute("DELETE FROM submissions WHERE id = ?", (existing["id"],))
        summary.replaced += 1
    else:
        summary.added += 1
    new_id = _insert_submission(out, tuple(row[c] for c in _SUBMISSION_COLUMNS))
    for task in source.execute("SELECT * FROM task_scores WHERE submission = ?", (row["id"],)):
        out.execute("INSERT INTO task_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (new_id, *tuple(task)[1:]))
    for check in source.execute("SELECT * FROM check_results WHERE submission = ? ORDER BY id", (row["id"],)):
        out.execute("INSERT INTO check_results(submission, task, name, description, weight, status, message, hint, "
                    "seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (new_id, *tuple(check)[2:]))
    for assignment, student, seen_at in pointers:  # pointers to the replaced copy follow it
        _set_current(out, assignment, student, new_id, seen_at)
    return new_id


# -- exports -------------------------------------------------------------------------------------------------

def task_columns(rows: list[SubmissionRow]) -> list[str]:
    """Task ids in report order, over all rows (a row may lack tasks, e.g. one that could not be graded)."""
    columns: dict[str, None] = {}
    for row in sorted(rows, key=lambda r: -len(r.tasks)):
        for task in row.tasks:
            columns.setdefault(task["task"], None)
    return list(columns)


def gradebook_csv(rows: list[SubmissionRow]) -> str:
    """One line per student: id, per-task scores, total, max, status; no cell can start a spreadsheet formula."""
    columns = task_columns(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_safe(c) for c in ["student", *columns, "total", "max_score", "status"]])
    for row in rows:
        scores = {t["task"]: t["score"] for t in row.tasks}
        cells = [row.student, *(_number(scores.get(c)) for c in columns), _number(row.score),
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
    """Write one markdown feedback file per student of an assignment; return how many were written.

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
        write_atomic(Path(folder) / feedback_filename(row.student), render_feedback(row))
    return len(rows)


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
