"""``grade-all --layout nbgrader`` as an unactivated venv runs it: no ``alembic`` on PATH, Latin-1 student folders,
in one real process, without grading (the submissions cannot be read, so the batch records them without workers)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STUDENTS = (b"ada", b"j\xf6rg")  # the second is Latin-1, not UTF-8


def path_without_alembic() -> str:
    """PATH without the interpreter's bin folder and without any other folder holding an ``alembic`` (a pyenv
    shim, a system package): what ``/path/venv/bin/grader`` sees when the venv is not activated."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    kept = [f for f in folders if f and Path(f).resolve() != Path(sys.executable).parent.resolve()
            and not (Path(f) / "alembic").exists()]
    return os.pathsep.join(kept)


def test_grade_all_writes_the_nbgrader_gradebook_without_alembic_on_path(tmp_path: Path) -> None:
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    course = tmp_path / "course"
    for student in STUDENTS:
        folder = course / "submitted" / os.fsdecode(student) / "assignment3"
        folder.mkdir(parents=True)
        (folder / "notes.txt").write_text("no package and no notebook\n")
        (folder / "timestamp.txt").write_text("2026-11-30 12:34:56.000000 UTC")
    env = {**os.environ, "PATH": path_without_alembic(), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "autograder.cli", "grade-all", "assignment3", str(course), "--layout", "nbgrader",
               "--gradebook", str(tmp_path / "ours.db")]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    # nbgrader's second new submission used to make SQLAlchemy print SAWarnings (a rerun: test_notebook.py)
    assert "Warning" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert "2 students written, 2 submission times from timestamp.txt; 2 could not be graded" in run.stdout
    with sqlite3.connect(course / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == \
            [(ScriptDirectory(ALEMBIC_DIR).get_current_head(),)]
        assert sorted(db.execute("SELECT id FROM student")) == [("ada",), ("j\\xf6rg",)]


def test_a_course_gradebook_nbgrader_cannot_use_is_one_line(tmp_path: Path) -> None:
    import pytest

    from autograder.batch.nbgrader_course import write_back
    from autograder.errors import GraderError
    from autograder.gradebook.store import Gradebook, Outcome
    from autograder.spec.assignment import load_assignment

    course = tmp_path / "course"
    (course / "submitted" / "ada" / "assignment3").mkdir(parents=True)
    (course / "gradebook.db").write_text("notes, not a database\n")
    with Gradebook(tmp_path / "ours.db") as book:
        book.record("assignment3", "fp", "ada", "d-ada", "ada", Outcome("error", 0.0, 100.0, message="no package"))
    with pytest.raises(GraderError, match=r"^the nbgrader gradebook sqlite:///.*/course/gradebook.db cannot be "
                                          r"written \(file is not a database\)$"):
        write_back(course, load_assignment("assignment3"), tmp_path / "ours.db")
