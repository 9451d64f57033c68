"""nbgrader courses: read the ``submitted/`` tree and write the scores into the course's own nbgrader gradebook."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.errors import GraderError
from autograder.spec.assignment import Assignment
from autograder.util.safety import printable

SUBMITTED = "submitted"
TIMESTAMP_FILE = "timestamp.txt"
NBGRADER_DB = "gradebook.db"
MAX_TIMESTAMP_BYTES = 200


@dataclass
class WriteBack:
    """What was written to the nbgrader gradebook.

    Attributes:
        database: The gradebook's SQLAlchemy URL.
        students: Students whose scores were written.
        errors: Students whose submission could not be graded (written as 0, flagged for manual grading).
        timestamps: Students whose ``timestamp.txt`` was recorded as the submission time.
    """

    database: str
    students: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    timestamps: int = 0


def discover(course: Path, assignment_name: str) -> tuple[list[tuple[str, Path]], list[str]]:
    """One ``(student, folder)`` per ``COURSE/submitted/<student>/<assignment>/`` (what ``nbgrader collect`` and
    the exchange leave there: a notebook or a package, and ``timestamp.txt``).

    Raises:
        GraderError: If ``course`` has no ``submitted/`` folder.
    """
    submitted = course / SUBMITTED
    if not submitted.is_dir():
        raise GraderError(f"{course} is not an nbgrader course folder: it has no {SUBMITTED}/ folder (run "
                          f"`nbgrader collect {assignment_name}` first, or give the course's root folder)")
    pairs, ignored = [], []
    for student in sorted(submitted.iterdir()):
        if student.name.startswith(".") or not student.is_dir() or student.is_symlink():
            continue
        folder = student / assignment_name
        if folder.is_dir() and not folder.is_symlink():
            pairs.append((student.name, folder))
        else:
            ignored.append(f"{printable(student.name)} (no {assignment_name}/ submission)")
    return pairs, ignored


def read_timestamp(folder: Path) -> str | None:
    """The submission time nbgrader recorded in ``timestamp.txt`` (its own text), or None."""
    path = folder / TIMESTAMP_FILE
    try:
        text = path.read_bytes()[:MAX_TIMESTAMP_BYTES].decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def nbgrader_url(course: Path) -> str:
    """The course's nbgrader gradebook (nbgrader's default: ``COURSE/gradebook.db``)."""
    return f"sqlite:///{(course / NBGRADER_DB).resolve()}"


def write_back(course: Path, assignment: Assignment, gradebook: Path, database: str | None = None) -> WriteBack:
    """Write every student's current scores from our gradebook into the course's nbgrader gradebook.

    Each task (and the quiz) is a grade cell of one notebook named after the assignment, worth the task's
    points; a student's task score is that cell's automatic score, so formgrader shows the same totals. An
    ungraded submission gets 0 and is flagged as needing manual grading.

    Args:
        course: The nbgrader course folder.
        assignment: The assignment.
        gradebook: Our SQLite gradebook (``grade-all --gradebook``).
        database: The nbgrader gradebook's URL (default: the course's ``gradebook.db``).

    Raises:
        GraderError: If nbgrader is not installed, or its gradebook refuses an entry or cannot be written.
    """
    # nbgrader is an instructor extra whose import takes seconds: imported on this path only (with SQLAlchemy).
    try:
        from nbgrader import api
        from sqlalchemy.exc import SQLAlchemyError
    except ImportError:
        raise GraderError("writing to an nbgrader gradebook needs nbgrader: pip install -e '.[instructor]'") from None
    from autograder.gradebook.store import Gradebook

    with Gradebook(gradebook, readonly=True) as book:
        rows = book.current(assignment.name, with_reports=False)
    folders = {printable(student): folder for student, folder in discover(course, assignment.name)[0]}
    outcome = WriteBack(database or nbgrader_url(course))
    try:
        _create_database(api, outcome.database)
        with api.Gradebook(outcome.database) as nb:
            cells = _declare(nb, assignment)
            for row in rows:
                timestamp = read_timestamp(folders[row.student]) if row.student in folders else None
                _write_student(nb, api, assignment, row, cells, timestamp)
                outcome.students.append(row.student)
                outcome.errors += [row.student] if row.status != "graded" else []
                outcome.timestamps += timestamp is not None
    except (api.InvalidEntry, api.MissingEntry, ValueError) as exc:
        raise GraderError(f"the nbgrader gradebook {outcome.database} refused an entry: {exc}") from None
    except SQLAlchemyError as exc:  # not a database, locked, or on a disk that refuses it
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        raise GraderError(f"the nbgrader gradebook {outcome.database} cannot be written ({reason})") from None
    return outcome


def _create_database(api: Any, url: str) -> None:
    """Create a new nbgrader gradebook as nbgrader does, in this process.

    nbgrader stamps a new gradebook with its schema's revision by running ``alembic heads`` found on PATH,
    which is missing when the grader runs as ``venv/bin/grader`` without the venv activated; the revision is
    read here with alembic's own API instead, so nbgrader finds an existing gradebook and runs nothing.
    """
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(url)
    try:
        if inspect(engine).get_table_names():
            return
        api.Base.metadata.create_all(bind=engine)
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            connection.execute(text("INSERT INTO alembic_version (version_num) VALUES (:head)"),
                               {"head": ScriptDirectory(ALEMBIC_DIR).get_current_head()})
    finally:
        engine.dispose()


def _declare(nb: Any, assignment: Assignment) -> dict[str, float]:
    """The assignment, its notebook and one grade cell per task (idempotent)."""
    points = {task.id: task.points for task in assignment.tasks}
    if assignment.quiz is not None:
        points[assignment.quiz.task_id] = assignment.quiz.points
    nb.update_or_create_assignment(assignment.name)
    nb.update_or_create_notebook(assignment.name, assignment.name)
    for task_id, max_score in points.items():
        nb.update_or_create_grade_cell(task_id, assignment.name, assignment.name, max_score=max_score,
                                       cell_type="code")
    return points


def _write_student(nb: Any, api: Any, assignment: Assignment, row: Any, cells: dict[str, float],
                   timestamp: str | None) -> None:
    nb.update_or_create_student(row.student)
    extra = {"timestamp": timestamp} if timestamp and _parses(api, timestamp) else {}
    # nbgrader builds a new submission's objects before adding them to its session; an autoflush meanwhile
    # makes SQLAlchemy warn (SAWarning "... not in session") to the user's terminal. Nothing needs flushing here.
    with nb.db.no_autoflush:
        nb.update_or_create_submission(assignment.name, row.student, **extra)
    scores = {task["task"]: float(task["score"]) for task in row.tasks}
    for task_id in cells:
        grade = _grade(nb, api, task_id, assignment.name, row.student)
        grade.auto_score = scores.get(task_id, 0.0)
        grade.needs_manual_grade = row.status != "graded"
    nb.db.commit()


def _grade(nb: Any, api: Any, task_id: str, name: str, student: str) -> Any:
    """The student's grade of one grade cell; created when the cell was added after the submission."""
    try:
        return nb.find_grade(task_id, name, name, student)
    except api.MissingEntry:
        cell = nb.find_grade_cell(task_id, name, name)
        grade = api.Grade(cell_id=cell.id, notebook=nb.find_submission_notebook(name, name, student))
        nb.db.add(grade)
        return grade


def _parses(api: Any, text: str) -> bool:
    from nbgrader import utils

    try:
        utils.parse_utc(text)
    except (ValueError, TypeError, OverflowError):
        return False
    return True


def render_write_back(outcome: WriteBack) -> str:
    """One line for the batch summary."""
    flagged = f"; {len(outcome.errors)} could not be graded (0, flagged for manual grading)" if outcome.errors else ""
    return (f"nbgrader gradebook {outcome.database}: {len(outcome.students)} students written, "
            f"{outcome.timestamps} submission times from timestamp.txt{flagged}\n")
