"""`grade-all --queue`: workers on any machines claim the next ungraded submission from a PostgreSQL gradebook."""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, delete, func, insert, or_, select, update

from autograder.batch.pool import WorkItem
from autograder.gradebook import backend
from autograder.gradebook.migrate import open_database
from autograder.gradebook.schema import grading_queue as queue

LEASE_SECONDS = 600.0  # how long a claim lasts unless renewed; the heartbeat renews it every third of that

_FREE = {"worker": None, "lease_until": None, "claim": None}  # a row nobody holds


def worker_name() -> str:
    """This process's name in the queue: host and process id (the one a scheduler's log shows)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _enqueue(connection: Connection, assignment: str, fingerprint: str, items: dict[str, WorkItem],
             graded: dict[str, str]) -> None:
    """Put a process's plan into the queue (in a write transaction: one process at a time).

    A new submission is added; a changed one (new digest) or one to grade with another setup goes back to the
    queue as a fresh row; an unchanged one keeps its state; one this process found graded already is done.
    """
    of_class = queue.c.assignment == assignment
    known = {row.student: (row.digest, row.fingerprint) for row in connection.execute(
        select(queue.c.student, queue.c.digest, queue.c.fingerprint).where(of_class))}
    fresh = [item for item in items.values() if known.get(item.student) != (item.digest, fingerprint)]
    if fresh:
        connection.execute(delete(queue).where(of_class, queue.c.student.in_([item.student for item in fresh])))
        connection.execute(insert(queue), [{"assignment": assignment, "student": item.student, "digest": item.digest,
                                            "fingerprint": fingerprint} for item in fresh])
    if graded:
        connection.execute(update(queue).where(of_class, queue.c.student == bindparam("who"),
                                               queue.c.digest == bindparam("was"), queue.c.fingerprint == fingerprint)
                           .values(**_FREE, done=True), [{"who": s, "was": d} for s, d in graded.items()])


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
        self._engine: Engine = open_database(url)
        self.assignment, self.items, self.lease = assignment, items, timedelta(seconds=lease_seconds)
        self.name = worker_name()
        self.held: dict[str, int] = {}  # student -> the claim id this process holds
        self._lock = threading.Lock()
        with backend.writing(self._engine) as connection:
            _enqueue(connection, assignment, fingerprint, items, graded)
        self._heartbeat = _Heartbeat(self, renew_every or lease_seconds / 3, log)

    def _mine(self) -> list[Any]:
        """The condition of this process's class: the assignment's submissions it found in its folder."""
        return [queue.c.assignment == self.assignment, queue.c.student.in_(list(self.items))]

    def __bool__(self) -> bool:
        return len(self) > 0

    def __len__(self) -> int:
        """Submissions of this process's class not done yet (held by others included: they may die)."""
        with self._engine.connect() as connection:
            return connection.execute(select(func.count()).select_from(queue).where(*self._mine(), ~queue.c.done)
                                      ).scalar_one()

    def popleft(self) -> WorkItem | None:
        """Claim the next free submission this process can grade, or None when none is free now.

        Free: unclaimed, or claimed by a worker whose lease ran out (dead, or stalled). The row is locked while it
        is claimed and rows other claimers hold locked are skipped, so two processes never claim the same one.
        """
        with self._engine.begin() as connection:
            student = connection.execute(
                select(queue.c.student).where(*self._mine(), ~queue.c.done,
                                              or_(queue.c.lease_until.is_(None), queue.c.lease_until < func.now()))
                .order_by(queue.c.student).limit(1).with_for_update(skip_locked=True)).scalar()
            if student is None:
                return None
            claim = secrets.randbits(63)  # a fresh fencing token: only its holder may record the grade
            connection.execute(update(queue).where(queue.c.assignment == self.assignment, queue.c.student == student)
                               .values(worker=self.name, lease_until=func.now() + self.lease, claim=claim))
        with self._lock:
            self.held[student] = claim
        return self.items[student]

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
        row = queue.c.assignment == self.assignment, queue.c.student == student
        with self._engine.begin() as connection:
            holder = connection.execute(select(queue.c.claim).where(*row, ~queue.c.done).with_for_update()).first()
            if claim is None or holder is None or holder.claim != claim:
                yield False
                return
            try:
                yield True
            except BaseException:
                with self._lock:
                    self.held[student] = claim
                raise
            connection.execute(update(queue).where(*row, queue.c.claim == claim).values(**_FREE, done=True))

    def _renew(self) -> None:
        """Extend the lease of every claim this process holds (the heartbeat's work, on a connection of its own)."""
        with self._lock:
            claims = list(self.held.values())
        if claims:
            with self._engine.begin() as connection:
                connection.execute(update(queue).where(queue.c.assignment == self.assignment,
                                                       queue.c.claim.in_(claims), ~queue.c.done)
                                   .values(lease_until=func.now() + self.lease))

    def _release(self, student: str) -> None:
        with self._lock:
            claim = self.held.pop(student, None)
        if claim is not None:
            with self._engine.begin() as connection:
                connection.execute(update(queue).where(queue.c.assignment == self.assignment,
                                                       queue.c.student == student, queue.c.claim == claim)
                                   .values(**_FREE))

    def close(self) -> None:
        """Stop the heartbeat, give back what this process still holds and close the connections."""
        self._heartbeat.stop()
        for student in list(self.held):
            self._release(student)
        self._engine.dispose()


class _Heartbeat:
    """A daemon thread renewing a queue's claims at a fixed interval until stopped (the engine's pool gives it a
    connection of its own while the worker's records)."""

    def __init__(self, queue: ClaimQueue, interval: float, log: Callable[[str], Any] | None) -> None:
        self.queue, self.interval, self.log = queue, interval, log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="queue-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.queue._renew()
            except Exception as exc:  # noqa: BLE001 - the claims expire; the fence keeps that harmless
                if self.log is not None:
                    self.log(f"queue: the heartbeat stopped renewing this process's claims "
                             f"({backend.reason(exc)}); a submission another worker "
                             f"takes over is then discarded here\n")
                return

    def stop(self) -> None:
        """Stop renewing."""
        self._stop.set()
        self._thread.join(timeout=30)
