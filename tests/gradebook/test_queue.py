"""`grade-all --queue` on a real PostgreSQL: three workers share a class, one killed mid-grade; a stalled worker's
late grade is discarded (the claim id fences the record); and its refusals."""

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
from sqlalchemy import text

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
    # a lease (1 s) shorter than the slow submission's grade (3 s at import): the heartbeat keeps it held
    command = [sys.executable, "-m", "autograder.cli", "grade-all", "mini", str(submissions), "--queue", "--lease",
               "1", "--jobs", "1", "--gradebook", database]
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
    # each student's grade is recorded by one worker only: a worker whose claim passed to another says it discarded
    lines = [line for w in workers for line in outputs[w.pid].splitlines()]
    for student in ("ada", "bob", "cy", "dee", "eve", "fay"):
        assert sum(re.search(rf"\] {student}: \d", line) is not None for line in lines) == 1, (student, lines)
    with Gradebook(database, readonly=True) as book:
        current = {row.student: (row.score, row.status) for row in book.current("mini", with_reports=False)}
        with book.engine.connect() as connection:
            counts = dict(connection.execute(text("SELECT student, count(*) FROM submissions GROUP BY student")).all())
            max_id = connection.execute(text("SELECT max(id) FROM submissions")).scalar()
    assert current == {s: (0.0 if s in ("bob", "eve") else 5.0, "graded") for s in ("ada", "bob", "cy", "dee", "eve",
                                                                                    "fay")}
    assert counts == dict.fromkeys(current, 1)  # each graded once
    assert max_id == len(current)  # and never recorded twice (a second record replaces the row under a new id)


def _queue(url: str, students: tuple[str, ...], version: str = "", **options):
    from autograder.batch.pool import WorkItem
    from autograder.batch.queue import ClaimQueue

    items = {s: WorkItem(i, s, Path(s), f"digest-{s}{version}") for i, s in enumerate(students)}
    return ClaimQueue(url, "mini", "setup", items, {}, **options)


def test_a_changed_submission_goes_back_to_the_queue_and_an_unchanged_one_keeps_its_state(database):
    first = _queue(database, ("ada", "bob"), lease_seconds=60.0)
    queues = [first]
    try:
        assert first.popleft().student == "ada"
        with first.recording("ada") as held:
            assert held
        assert first.popleft().student == "bob"  # held by the first process from now on
        queues.append(_queue(database, ("ada", "bob"), lease_seconds=60.0))  # another process, the same folder
        assert queues[-1].popleft() is None and len(queues[-1]) == 1  # ada stays done, bob stays held
        queues.append(_queue(database, ("ada",), version="-2", lease_seconds=60.0))  # ada resubmitted
        assert queues[-1].popleft().student == "ada" and queues[-1].popleft() is None
        with first.recording("bob") as held:  # the first process's claim on bob is untouched
            assert held
    finally:
        for queue in queues:
            queue.close()


def test_a_stalled_worker_whose_lease_ran_out_discards_its_grade_and_the_new_holder_records_it(database):
    stalled = _queue(database, ("ada",), lease_seconds=1.5, renew_every=3600.0)  # its heartbeat never comes
    other = _queue(database, ("ada", "bob"), lease_seconds=1.5)
    beating = _queue(database, ("bob",), lease_seconds=1.5)  # a heartbeat every third of the lease
    try:
        assert stalled.popleft().student == "ada" and beating.popleft().student == "bob"
        time.sleep(3.0)  # twice the lease: the stalled claim expires; the renewed one does not
        assert other.popleft().student == "ada" and other.popleft() is None  # bob is still held
        recorded = []
        with stalled.recording("ada") as held:  # wakes up with its grade: the claim has passed to another
            assert not held
        for queue, student in ((other, "ada"), (beating, "bob")):
            with queue.recording(student) as held:
                assert held
                recorded.append(student)
        assert recorded == ["ada", "bob"] and not other and not stalled  # every submission done, each recorded once
    finally:
        for queue in (stalled, other, beating):
            queue.close()


def test_a_grade_that_fails_to_record_keeps_the_claim_until_it_is_given_back(database):
    import psycopg

    queue = _queue(database, ("ada",), lease_seconds=60.0)
    try:
        queue.popleft()
        with pytest.raises(RuntimeError), queue.recording("ada") as held:
            assert held
            raise RuntimeError("the gradebook refused the report")
        assert queue.held.keys() == {"ada"} and queue
    finally:
        queue.close()
    with psycopg.connect(database, autocommit=True) as db:  # given back: the next worker claims it at once
        assert db.execute("SELECT worker, claim, done FROM grading_queue").fetchall() == [(None, None, False)]


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
