"""`grade-all --queue`: workers on any machines claim the next ungraded submission from a PostgreSQL gradebook."""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from autograder.batch.pool import WorkItem
from autograder.errors import GraderError

LEASE_SECONDS = 600.0  # how long a claim lasts unless renewed; a worker renews its own every third of it

_TABLE = """CREATE TABLE IF NOT EXISTS grading_queue (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    digest TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    worker TEXT,
    lease_until TIMESTAMPTZ,
    done BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (assignment, student))"""

# A changed submission (new digest) or grading setup goes back to the queue; an unchanged one keeps its state.
_ENQUEUE = """INSERT INTO grading_queue (assignment, student, digest, fingerprint) VALUES (%s, %s, %s, %s)
    ON CONFLICT (assignment, student) DO UPDATE SET digest = excluded.digest, fingerprint = excluded.fingerprint,
        worker = NULL, lease_until = NULL, done = FALSE
    WHERE (grading_queue.digest, grading_queue.fingerprint) IS DISTINCT FROM (excluded.digest, excluded.fingerprint)"""

# The next submission nobody holds: unclaimed, or claimed by a worker whose lease ran out (it died).
_CLAIM = """UPDATE grading_queue q SET worker = %s, lease_until = now() + make_interval(secs => %s)
    FROM (SELECT assignment, student FROM grading_queue
          WHERE assignment = %s AND student = ANY(%s) AND NOT done
            AND (lease_until IS NULL OR lease_until < now())
          ORDER BY student LIMIT 1 FOR UPDATE SKIP LOCKED) c
    WHERE q.assignment = c.assignment AND q.student = c.student
    RETURNING q.student"""


def worker_name() -> str:
    """This process's name in the queue: host and process id (the one a scheduler's log shows)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class ClaimQueue:
    """The class's shared queue, seen by one ``grade-all --queue`` process as the deque its worker pool pops.

    ``popleft`` claims the next free submission (or returns None while every one left is held by a live
    worker); the queue is true until every submission of the class is done, so a process whose own claims are
    finished keeps polling and takes over a dead worker's submission once its lease expires.

    Args:
        url: The PostgreSQL gradebook's URL.
        assignment: The assignment's name.
        fingerprint: The grading setup's fingerprint.
        items: This process's planned work, by student (what it found to grade in the shared folder).
        graded: Students this process found graded already, with their digest (done in the queue too, in
            case their grader died between recording the grade and marking it done).
        lease_seconds: How long a claim lasts without renewal.

    Raises:
        GraderError: If psycopg is missing or the server cannot be reached.
    """

    def __init__(self, url: str, assignment: str, fingerprint: str, items: dict[str, WorkItem],
                 graded: dict[str, str], lease_seconds: float = LEASE_SECONDS) -> None:
        try:
            import psycopg
        except ImportError:
            raise GraderError("--queue needs psycopg: pip install 'transformer-autograder[postgres]'") from None
        try:
            self._db: Any = psycopg.connect(url, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise GraderError(f"cannot open the queue: {' '.join(str(exc).split())}") from None
        self.assignment, self.items, self.lease = assignment, items, lease_seconds
        self.name = worker_name()
        self.held: set[str] = set()
        self._renewed = time.monotonic()
        with self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext('grading_queue'))")  # one CREATE at a time
            self._db.execute(_TABLE)
            for item in items.values():
                self._db.execute(_ENQUEUE, (assignment, item.student, item.digest, fingerprint))
            for student, digest in graded.items():
                self._db.execute("UPDATE grading_queue SET done = TRUE, worker = NULL, lease_until = NULL WHERE "
                                 "assignment = %s AND student = %s AND digest = %s AND fingerprint = %s",
                                 (assignment, student, digest, fingerprint))

    def __bool__(self) -> bool:
        return len(self) > 0

    def __len__(self) -> int:
        """Submissions of this process's class not done yet (held by others included: they may die)."""
        return self._db.execute("SELECT count(*) FROM grading_queue WHERE assignment = %s AND student = ANY(%s) "
                                "AND NOT done", (self.assignment, list(self.items))).fetchone()[0]

    def popleft(self) -> WorkItem | None:
        """Claim the next free submission this process can grade, or None when none is free now."""
        row = self._db.execute(_CLAIM, (self.name, self.lease, self.assignment, list(self.items))).fetchone()
        if row is None:
            return None
        self.held.add(row[0])
        return self.items[row[0]]

    def appendleft(self, item: WorkItem) -> None:
        """Give a claimed submission back (its worker could not start)."""
        self._release(item.student)

    def done(self, student: str) -> None:
        """Mark a submission graded (recorded in the gradebook) and drop its claim."""
        self._db.execute("UPDATE grading_queue SET done = TRUE, worker = NULL, lease_until = NULL "
                         "WHERE assignment = %s AND student = %s AND worker = %s", (self.assignment, student, self.name))
        self.held.discard(student)

    def renew(self) -> None:
        """Extend this process's claims, every third of the lease (called about once a second)."""
        if not self.held or time.monotonic() - self._renewed < self.lease / 3:
            return
        self._db.execute("UPDATE grading_queue SET lease_until = now() + make_interval(secs => %s) "
                         "WHERE assignment = %s AND worker = %s AND NOT done", (self.lease, self.assignment, self.name))
        self._renewed = time.monotonic()

    def _release(self, student: str) -> None:
        self._db.execute("UPDATE grading_queue SET worker = NULL, lease_until = NULL "
                         "WHERE assignment = %s AND student = %s AND worker = %s", (self.assignment, student, self.name))
        self.held.discard(student)

    def close(self) -> None:
        """Give back what this process still holds and close the connection."""
        for student in list(self.held):
            self._release(student)
        self._db.close()
