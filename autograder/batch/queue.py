"""`grade-all --queue`: workers on any machines claim the next ungraded submission from a PostgreSQL gradebook."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from autograder.batch.pool import WorkItem
from autograder.errors import GraderError

LEASE_SECONDS = 600.0  # how long a claim lasts unless renewed; the heartbeat renews it every third of that

_TABLE = """CREATE TABLE IF NOT EXISTS grading_queue (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    digest TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    worker TEXT,
    lease_until TIMESTAMPTZ,
    done BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (assignment, student))"""

# The claim id is the fencing token: each claim takes a new one, and only its holder may record the grade.
_CLAIMS = ("CREATE SEQUENCE IF NOT EXISTS grading_queue_claims",
           "ALTER TABLE grading_queue ADD COLUMN IF NOT EXISTS claim BIGINT")

# A changed submission (new digest) or grading setup goes back to the queue; an unchanged one keeps its state.
_ENQUEUE = """INSERT INTO grading_queue (assignment, student, digest, fingerprint) VALUES (%s, %s, %s, %s)
    ON CONFLICT (assignment, student) DO UPDATE SET digest = excluded.digest, fingerprint = excluded.fingerprint,
        worker = NULL, lease_until = NULL, claim = NULL, done = FALSE
    WHERE (grading_queue.digest, grading_queue.fingerprint) IS DISTINCT FROM (excluded.digest, excluded.fingerprint)"""

# The next submission nobody holds: unclaimed, or claimed by a worker whose lease ran out (dead, or stalled).
_CLAIM = """UPDATE grading_queue q SET worker = %s, lease_until = now() + make_interval(secs => %s),
        claim = nextval('grading_queue_claims')
    FROM (SELECT assignment, student FROM grading_queue
          WHERE assignment = %s AND student = ANY(%s) AND NOT done
            AND (lease_until IS NULL OR lease_until < now())
          ORDER BY student LIMIT 1 FOR UPDATE SKIP LOCKED) c
    WHERE q.assignment = c.assignment AND q.student = c.student
    RETURNING q.student, q.claim"""

_RENEW = """UPDATE grading_queue SET lease_until = now() + make_interval(secs => %s)
    WHERE assignment = %s AND claim = ANY(%s) AND NOT done"""

# Locks the row while the grade is recorded: a claim can neither expire into another's hands nor be stolen then.
_HOLDS = "SELECT claim FROM grading_queue WHERE assignment = %s AND student = %s AND NOT done FOR UPDATE"


def worker_name() -> str:
    """This process's name in the queue: host and process id (the one a scheduler's log shows)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _connect(url: str) -> Any:
    """An autocommit connection to the queue's database.

    Raises:
        GraderError: If psycopg is missing or the server cannot be reached.
    """
    try:
        import psycopg
    except ImportError:
        raise GraderError("--queue needs psycopg: pip install 'transformer-autograder[postgres]'") from None
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=30)
    except psycopg.Error as exc:
        raise GraderError(f"cannot open the queue: {' '.join(str(exc).split())}") from None


class ClaimQueue:
    """The class's shared queue, seen by one ``grade-all --queue`` process as the deque its worker pool pops.

    ``popleft`` claims the next free submission (or returns None while every one left is held by a live
    worker); the queue is true until every submission of the class is done, so a process whose own claims are
    finished keeps polling and takes over a dead worker's submission once its lease expires.

    Each claim carries a fresh claim id (a fencing token). A heartbeat thread, on its own connection, renews
    this process's claims every ``renew_every`` seconds while they are graded, however long that takes; a claim
    is lost only when the process stops (killed, or stalled longer than the lease). :meth:`recording` lets a
    grade be recorded only by the holder of the current claim, so a stalled process that wakes up after
    another took its submission over discards its result instead of recording it a second time.

    Args:
        url: The PostgreSQL gradebook's URL.
        assignment: The assignment's name.
        fingerprint: The grading setup's fingerprint.
        items: This process's planned work, by student (what it found to grade in the shared folder).
        graded: Students this process found graded already, with their digest (done in the queue too, in
            case their grader died between recording the grade and marking it done).
        lease_seconds: How long a claim lasts without renewal.
        renew_every: Seconds between two renewals (default: a third of the lease).
        log: Where to write a line if the heartbeat stops (the server gone).

    Raises:
        GraderError: If psycopg is missing or the server cannot be reached.
    """

    def __init__(self, url: str, assignment: str, fingerprint: str, items: dict[str, WorkItem],
                 graded: dict[str, str], lease_seconds: float = LEASE_SECONDS,
                 renew_every: float | None = None, log: Callable[[str], Any] | None = None) -> None:
        self._db: Any = _connect(url)
        self.assignment, self.items, self.lease = assignment, items, lease_seconds
        self.name = worker_name()
        self.held: dict[str, int] = {}  # student -> the claim id this process holds
        self._lock = threading.Lock()
        with self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext('grading_queue'))")  # one CREATE at a time
            self._db.execute(_TABLE)
            for statement in _CLAIMS:
                self._db.execute(statement)
            for item in items.values():
                self._db.execute(_ENQUEUE, (assignment, item.student, item.digest, fingerprint))
            for student, digest in graded.items():
                self._db.execute("UPDATE grading_queue SET done = TRUE, worker = NULL, lease_until = NULL, "
                                 "claim = NULL WHERE assignment = %s AND student = %s AND digest = %s "
                                 "AND fingerprint = %s", (assignment, student, digest, fingerprint))
        self._heartbeat = _Heartbeat(self, _connect(url), renew_every or lease_seconds / 3, log)

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
        with self._lock:
            self.held[row[0]] = row[1]
        return self.items[row[0]]

    def appendleft(self, item: WorkItem) -> None:
        """Give a claimed submission back (its worker could not start)."""
        self._release(item.student)

    @contextmanager
    def recording(self, student: str) -> Iterator[bool]:
        """Around the recording of a grade: yields whether this process still holds the submission's claim.

        While the block runs the queue's row is locked, so the claim cannot pass to another worker; when the
        block ends the submission is done. False means another worker took the submission over (this
        process's lease ran out): the block must discard the result. If the block raises, the claim stays
        and is given back at :meth:`close`.
        """
        with self._lock:
            claim = self.held.pop(student, None)
        with self._db.transaction():
            row = self._db.execute(_HOLDS, (self.assignment, student)).fetchone()
            held = claim is not None and row is not None and row[0] == claim
            if not held:
                yield False
                return
            try:
                yield True
            except BaseException:
                with self._lock:
                    self.held[student] = claim
                raise
            self._db.execute("UPDATE grading_queue SET done = TRUE, worker = NULL, lease_until = NULL, claim = NULL "
                             "WHERE assignment = %s AND student = %s AND claim = %s", (self.assignment, student, claim))

    def _renew(self, db: Any) -> None:
        """Extend the lease of every claim this process holds (the heartbeat's work, on its connection)."""
        with self._lock:
            claims = list(self.held.values())
        if claims:
            db.execute(_RENEW, (self.lease, self.assignment, claims))

    def _release(self, student: str) -> None:
        with self._lock:
            claim = self.held.pop(student, None)
        if claim is not None:
            self._db.execute("UPDATE grading_queue SET worker = NULL, lease_until = NULL, claim = NULL "
                             "WHERE assignment = %s AND student = %s AND claim = %s", (self.assignment, student, claim))

    def close(self) -> None:
        """Stop the heartbeat, give back what this process still holds and close the connection."""
        self._heartbeat.stop()
        for student in list(self.held):
            self._release(student)
        self._db.close()


class _Heartbeat:
    """A daemon thread renewing a queue's claims at a fixed interval, on its own connection, until stopped."""

    def __init__(self, queue: ClaimQueue, db: Any, interval: float, log: Callable[[str], Any] | None) -> None:
        self.queue, self.db, self.interval, self.log = queue, db, interval, log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="queue-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.queue._renew(self.db)
            except Exception as exc:  # noqa: BLE001 - the claims expire; the fence keeps that harmless
                if self.log is not None:
                    self.log(f"queue: the heartbeat stopped renewing this process's claims "
                             f"({' '.join(str(exc).split()) or type(exc).__name__}); a submission another worker "
                             f"takes over is then discarded here\n")
                return

    def stop(self) -> None:
        """Stop renewing and close the connection."""
        self._stop.set()
        self._thread.join(timeout=30)
        self.db.close()
