"""`grade-all --queue` on a real PostgreSQL: three workers share a class, one killed mid-grade; and its refusals."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import main
from autograder.gradebook.store import Gradebook

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SLOW = "cy"  # sleeps at import: the submission in flight when its worker is killed


def _class(folder: Path) -> Path:
    """Six ``mini`` submissions: four reference copies (one slow to import) and two template stubs."""
    reference = FIXTURES / "reference_solutions" / "mini"
    stub = re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", "raise NotImplementedError",
                  (reference / "ops.py").read_text(), flags=re.S)
    for student in ("ada", "bob", "cy", "dee", "eve", "fay"):
        package = folder / student / "mini"
        package.mkdir(parents=True)
        for file in reference.glob("*.py"):
            package.joinpath(file.name).write_text(file.read_text())
        if student in ("bob", "eve"):
            (package / "ops.py").write_text(stub)
        if student == SLOW:
            (package / "ops.py").write_text("import time\ntime.sleep(3)\n" + (package / "ops.py").read_text())
    return folder


def _holder(url: str, student: str, timeout: float) -> str:
    """The queue's name of the worker holding a student's submission, once one claims it."""
    import psycopg

    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as db:
        while time.monotonic() < deadline:
            try:
                row = db.execute("SELECT worker FROM grading_queue WHERE student = %s AND worker IS NOT NULL",
                                 (student,)).fetchone()
            except psycopg.errors.UndefinedTable:
                row = None
            if row:
                return row[0]
            time.sleep(0.2)
    raise AssertionError(f"nobody claimed {student} within {timeout} s")


@pytest.mark.slow
def test_three_workers_share_a_class_and_a_killed_one_loses_nothing(database, tmp_path):
    submissions = _class(tmp_path / "submissions")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADER_ASSIGNMENTS": str(FIXTURES / "assignments")}
    command = [sys.executable, "-m", "autograder.cli", "grade-all", "mini", str(submissions), "--queue", "--lease",
               "5", "--jobs", "1", "--gradebook", database]
    workers = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True) for _ in range(3)]
    try:
        holder = _holder(database, SLOW, 180)
        victim = next(w for w in workers if holder.endswith(f":{w.pid}"))
        time.sleep(1.0)  # its grading worker is busy with the submission (or starting to)
        os.killpg(victim.pid, signal.SIGKILL)
        outputs = {w.pid: w.communicate(timeout=300)[0] for w in workers}
    finally:
        for worker in workers:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    survivors = [w for w in workers if w is not victim]
    assert victim.returncode == -signal.SIGKILL
    assert all(w.returncode == 0 for w in survivors), [outputs[w.pid][-2000:] for w in survivors]
    assert sum(f"] {SLOW}: 5 / 5" in outputs[w.pid] for w in survivors) == 1  # taken over once its lease ran out
    with Gradebook(database, readonly=True) as book:
        current = {row.student: (row.score, row.status) for row in book.current("mini", with_reports=False)}
        counts = dict(book.db.execute("SELECT student, count(*) FROM submissions GROUP BY student").fetchall())
    assert current == {s: (0.0 if s in ("bob", "eve") else 5.0, "graded") for s in ("ada", "bob", "cy", "dee", "eve",
                                                                                    "fay")}
    assert counts == dict.fromkeys(current, 1)  # each graded once


@pytest.mark.parametrize(("args", "message"), [
    (["--queue"], "--queue needs a PostgreSQL gradebook (--gradebook postgresql://...)"),
    (["--queue", "--shard", "1/2", "--gradebook", "postgresql://nobody@/db"], "--queue and --shard exclude each other"),
    (["--lease", "30"], "--lease goes with --queue"),
    (["--queue", "--figures", "--feedback", "fb", "--gradebook", "postgresql://nobody@/db"],
     "--figures is not available with --queue"),
])
def test_the_queue_is_refused_in_one_line_without_what_it_needs(tmp_path, args, message):
    result = CliRunner().invoke(main, ["grade-all", "mini", str(tmp_path), "--gradebook", str(tmp_path / "g.db"),
                                       *args], env={"GRADER_ASSIGNMENTS": str(FIXTURES / "assignments")})
    assert result.exit_code == 2 and result.output.startswith(f"error: {message}"), result.output
