"""The PostgreSQL gradebook against a real server started here: round trip, merge, concurrent and killed writers.

Skipped, saying why, where no PostgreSQL server can be started (Debian's ``postgresql`` package provides
``/usr/lib/postgresql/*/bin``; psycopg comes with the ``postgres`` extra).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sqlalchemy import text

from autograder.errors import GraderError
from autograder.gradebook import backend
from autograder.gradebook.merge import merge_gradebooks
from autograder.gradebook.store import GRADED, Gradebook, Outcome

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[postgres]')")

WRITER = r'''
import sys
from autograder.gradebook.store import Gradebook, Outcome
url, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
report = {"tasks": [{"id": f"t{i}", "title": "T", "score": 1.0, "max_score": 1.0, "status": "passed",
                     "feedback": "", "checks": [{"name": f"t{i}.c{j}", "status": "passed"} for j in range(5)]}
                    for i in range(4)]}
with Gradebook(url) as book:
    for n in range(count):
        book.record("a1", "fp", f"{prefix}{n:04d}", f"d{n}", "src", Outcome("graded", 4.0, 4.0, report=report))
        print(f"{prefix}{n:04d}", flush=True)
'''


def _report(tasks: int = 2, checks: int = 3) -> dict:
    return {"tasks": [{"id": f"t{i}", "title": f"Task {i}", "score": 0.5, "max_score": 1.0, "status": "failed",
                       "feedback": "f", "checks": [{"name": f"t{i}.c{j}", "description": "d", "weight": 1.0,
                                                    "status": "passed", "message": "", "hint": "h", "seconds": 0.01}
                                                   for j in range(checks)]} for i in range(tasks)]}


def test_a_gradebook_round_trips_on_postgres(database):
    with Gradebook(database) as book:
        first = book.record("a1", "fp", "alice", "d1", "src/alice", Outcome(GRADED, 1.0, 2.0, seconds=1.25,
                                                                             report=_report()))
        book.record("a1", "fp", "bob", "d2", "src/bob", Outcome("error", message="no package"))
        again = book.record("a1", "fp", "alice", "d1", "src/alice", Outcome(GRADED, 2.0, 2.0, report=_report()))
        assert again != first and book.count() == 2 and book.count("a1") == 2
        rows = book.current("a1")
        assert [r.student for r in rows] == ["alice", "bob"]
        assert rows[0].score == 2.0 and rows[0].seconds == 0.0 and len(rows[0].tasks) == 2
        assert rows[0].tasks[1]["task"] == "t1" and rows[0].report["tasks"][0]["id"] == "t0"
        assert rows[1].status == "error" and rows[1].message == "no package"
        assert len(book.check_results("a1")) == 6
        assert book.find("a1", "alice", "d1", "fp").id == again and book.current_id("a1", "bob") is not None
        assert book.assignments() == ["a1"]
    with Gradebook(database, readonly=True) as book:
        assert book.current("a1", with_reports=False)[0].report is None
        with pytest.raises(backend.database_errors()), book.engine.begin() as connection:
            connection.execute(text("DELETE FROM students"))


def test_precise_seconds_survive(database):
    with Gradebook(database) as book:
        book.record("a1", "fp", "carol", "d", "s", Outcome(GRADED, 1 / 3, 1.0, seconds=12.345678901))
        row = book.current("a1")[0]
    assert row.score == 1 / 3 and row.seconds == 12.345678901  # double precision, not PostgreSQL's REAL


def test_sqlite_shards_merge_into_postgres(database, tmp_path):
    for shard, students in enumerate((["ann", "ben"], ["cat"])):
        with Gradebook(tmp_path / f"g{shard}.db") as book:
            for student in students:
                book.record("a1", "fp", student, "d", "s", Outcome(GRADED, 1.0, 2.0, report=_report()))
    done = merge_gradebooks(database, [tmp_path / "g0.db", str(tmp_path / "g1.db")])
    assert (done.students, done.added) == (3, 3)
    again = merge_gradebooks(database, [f"sqlite:///{tmp_path / 'g0.db'}"])
    assert again.kept == 2 and again.added == 0
    with Gradebook(database, readonly=True) as book:
        assert [r.student for r in book.current("a1")] == ["ann", "ben", "cat"]
        assert len(book.check_results("a1")) == 18


def test_two_writers_at_once_lose_nothing(database):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, database, prefix, "40"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for prefix in ("x", "y")]
    for writer in writers:
        _, errors = writer.communicate(timeout=300)
        assert writer.returncode == 0, errors
    with Gradebook(database, readonly=True) as book:
        rows = book.current("a1")
        assert len(rows) == 80 and book.count() == 80
        assert all(len(r.tasks) == 4 for r in rows)
        assert len(book.check_results("a1")) == 80 * 4 * 5


def test_a_writer_killed_mid_batch_loses_no_committed_submission(database):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, database, "k", "100000"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    committed = [writer.stdout.readline().strip() for _ in range(25)]
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=60)
    with Gradebook(database) as book:  # a new writer opens the same database after the kill
        rows = {r.student: r for r in book.current("a1")}
        assert set(committed) <= set(rows)
        assert all(len(r.tasks) == 4 for r in rows.values())  # never half a submission
        assert len(book.check_results("a1")) == len(rows) * 4 * 5
        book.record("a1", "fp", "after", "d", "s", Outcome(GRADED, 1.0, 1.0, report=_report()))
        assert book.current_id("a1", "after") is not None


def test_unreachable_server_and_foreign_database_are_one_line_errors(server, database):
    with pytest.raises(GraderError, match=r"cannot open the gradebook postgresql://grader:\*\*\*@/nonexistent_db"):
        Gradebook("postgresql://grader:secret@/nonexistent_db?host=/nonexistent")
    with psycopg.connect(database, autocommit=True) as other:
        other.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        other.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    with pytest.raises(GraderError, match=r"not a gradebook this grader can read \(schema version 99\)"):
        Gradebook(database)


def test_gradebook_locations():
    assert backend.parse_location("sqlite:///tmp/g.db") == Path("/tmp/g.db")
    assert backend.parse_location("postgres://h/db") == "postgres://h/db"
    assert backend.parse_location("postgresql+psycopg://h/db") == "postgresql+psycopg://h/db"
    with pytest.raises(GraderError, match="three slashes"):
        backend.parse_location("sqlite://g.db")


def test_a_postgres_url_without_its_driver_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as where the `postgres` extra is not installed
    with pytest.raises(GraderError, match=r"^a PostgreSQL gradebook needs psycopg: pip install "
                                          r"'transformer-autograder\[postgres\]'$"):
        Gradebook("postgresql://grader@/course?host=/nonexistent")
