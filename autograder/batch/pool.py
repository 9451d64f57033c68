"""The batch workers: processes that each hold one Grader and grade submissions sent to them, with a timeout each."""

from __future__ import annotations

import math
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Callable

from autograder.batch.failure import one_line
from autograder.errors import GraderError
from autograder.gradebook.records import ERROR, GRADED, Outcome
from autograder.sandbox.procfs import kill_tree, peak_rss_mb
from autograder.spec.assignment import Assignment
from autograder.submission.package import PreparedSubmission
from autograder.util.lifetime import die_with_parent

WORKER_STARTUP_SECONDS = 180.0


MAX_STARTUP_FAILURES = 3


GraderFactory = Callable[[Assignment], Any]
FiguresDone = Callable[["WorkItem", Any], None]  # (job, autograder.batch.figures.FigureResult)


@dataclass(frozen=True)
class SharedTemplate:
    """The batch's zygote template as a worker process receives it: its own way in, and the template's marker."""

    control: socket.socket
    marker: str


@dataclass(frozen=True)
class WorkItem:
    """One submission to grade, and/or whose figures to draw.

    Attributes:
        index: Its place in the batch.
        student: The student.
        path: The submission.
        digest: Its digest.
        grade: Whether to grade it (False: an unchanged submission that only needs its figures drawn).
        figures: Where to draw its figures after grading (``grade-all --figures``), or None.
        prepared: What the batch's intake made of it (its digest came from this copy), graded and drawn as it
            is: the intake runs once per submission; the parent removes the copy once the outcome is recorded
            and the figures (if any) are drawn.
    """

    index: int
    student: str
    path: Path
    digest: str
    grade: bool = True
    figures: Path | None = None
    prepared: PreparedSubmission | None = None


def _default_grader(assignment: Assignment, shared: SharedTemplate | None = None) -> Any:
    """A Grader with one zygote, started first so that its torch import overlaps with this process's own; forked
    from the batch's template when it shares one (every worker's zygote then shares one torch import)."""
    from autograder.sandbox.host import new_scratch, start_zygotes
    from autograder.sandbox.spawner import ZygoteTemplate

    scratch = new_scratch()
    template = ZygoteTemplate.attached(shared.control, shared.marker, scratch / "template") \
        if shared is not None else None
    zygotes = start_zygotes(1, scratch, template=template, protect=assignment.private_folders)
    try:
        from autograder.grading.grader import Grader

        grader = Grader(assignment, scratch=scratch, zygotes=zygotes)
        for zygote in zygotes:  # wait for its start-up here, not inside the first check's time limit
            getattr(zygote, "isolation", None)
        return grader
    except BaseException:
        for zygote in zygotes:
            zygote.close()
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _worker_main(conn: Connection, assignment: Assignment, factory: GraderFactory | None, parent: int,
                 shared: SharedTemplate | None = None) -> None:
    """A grading worker: build one grader, grade every job the parent sends until it sends None, then end.

    It ends with ``os._exit`` once its grader is closed and its messages are sent: the interpreter's teardown
    with torch loaded takes 0.3-0.5 s, which the parent would wait out in ``WorkerPool.close`` after the last
    submission, every batch."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, _exit_now)
    die_with_parent(signal.SIGTERM)  # no worker outlives its batch (a kill -9 of the parent included)
    if os.getppid() != parent:
        return
    code = 0
    try:
        _serve(conn, assignment, factory, shared)
    except SystemExit as exc:  # SIGTERM (_exit_now): its code is the worker's
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(code)


def _serve(conn: Connection, assignment: Assignment, factory: GraderFactory | None,
           shared: SharedTemplate | None) -> None:
    """Build the worker's grader, then grade (and draw) each job the parent sends until it sends None."""
    try:
        grader = factory(assignment) if factory is not None else _default_grader(assignment, shared)
    except BaseException as exc:  # noqa: BLE001 - report any failure to build the grader, then stop
        conn.send({"kind": "fatal", "message": one_line(exc)})
        return
    try:
        scratch = getattr(grader, "scratch", None)
        conn.send({"kind": "ready", "pid": os.getpid(), "scratch": str(scratch) if scratch else None})
        while True:
            try:
                job = conn.recv()
            except (EOFError, OSError):
                break
            if job is None:
                break
            if job.grade:  # the grade goes first: drawing the figures afterwards can never cost it
                outcome = grade_one(grader, job.path, assignment, job.prepared)
                conn.send({"kind": "result", "index": job.index, "outcome": outcome,
                           "left_out": list(getattr(grader, "unimportable_mistakes", ()))})
            if job.figures is not None:
                from autograder.batch.figures import draw_figures

                conn.send({"kind": "figures", "index": job.index,
                           "figures": draw_figures(grader, assignment, job.path, job.figures,
                                                   job.digest, job.prepared)})
    except (BrokenPipeError, EOFError, OSError):
        pass
    finally:
        close = getattr(grader, "close", None)
        if close:
            close()


def _exit_now(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def grade_one(grader: Any, path: Path, assignment: Assignment, prepared: PreparedSubmission | None = None) -> Outcome:
    """Grade one submission with a constructed grader; any failure becomes an ``error`` outcome, never a raise.

    Args:
        grader: The worker's grader.
        path: The submission as the student gave it.
        assignment: The assignment.
        prepared: What the intake already made of it (graded as it is), or None to run the intake here.
    """
    started = time.monotonic()
    try:
        report = grader.grade(Path(path), prepared=prepared)
    except Exception as exc:  # noqa: BLE001 - one student's submission must never stop the batch
        message = str(exc) if isinstance(exc, GraderError) else \
            f"the grader failed on this submission ({one_line(exc)})"
        return Outcome(ERROR, max_score=assignment.max_score, message=message,
                       seconds=round(time.monotonic() - started, 3), worker_rss_mb=_worker_rss_mb(grader))
    return Outcome(
        GRADED,
        score=report.score,
        max_score=report.max_score,
        seconds=report.seconds,
        check_seconds=round(sum(c.seconds for t in report.tasks for c in t.checks), 4),
        worker_rss_mb=_worker_rss_mb(grader),
        report=report.to_dict(),
    )


def _worker_rss_mb(grader: Any) -> float | None:
    """Peak resident memory of this worker plus its zygote (their VmHWM), in MB."""
    pids = [os.getpid()]
    for zygote in getattr(grader, "zygotes", None) or [getattr(grader, "zygote", None)]:
        process = getattr(zygote, "process", None)
        if process is not None and getattr(process, "pid", None):
            pids.append(process.pid)
    peaks = [peak_rss_mb(pid) for pid in pids]
    known = [p for p in peaks if p is not None]
    return round(sum(known), 1) if known else None


class _Worker:
    """The parent's handle on one worker process."""

    def __init__(self, context: Any, assignment: Assignment, factory: GraderFactory | None,
                 shared: SharedTemplate | None = None) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, assignment, factory, os.getpid(), shared),
                                       daemon=True, name="grader-worker")
        self.process.start()
        child.close()
        if shared is not None:
            shared.control.close()  # the worker has its own copy
        self.ready = False
        self.job: WorkItem | None = None
        self.graded = False  # its job's grade has arrived: it is drawing the job's figures
        self.deadline = math.inf
        self.scratch: str | None = None

    @property
    def drawing(self) -> bool:
        """Whether its job is past grading (or never graded): what is left is only figures."""
        return self.job is not None and (self.graded or not self.job.grade)

    def kill(self) -> None:
        """Kill the worker and its process tree, and remove the grader's scratch folder it can no longer clean."""
        if self.process.exitcode is None:  # not reaped yet, so the pid is still this worker's
            kill_tree(self.process.pid)
            self.process.join(5)
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def assign(self, job: WorkItem, timeout: float) -> None:
        self.conn.send(job)
        self.job = job
        self.graded = False
        self.deadline = time.monotonic() + timeout + (0.0 if self.ready else WORKER_STARTUP_SECONDS)

    def stop(self, wait_seconds: float) -> None:
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(wait_seconds)
        if self.process.is_alive():
            self.kill()
        self.conn.close()


class WorkerPool:
    """N worker processes, each holding one grader, fed one submission at a time.

    Args:
        assignment: The assignment (sent to each worker, which builds its own grader once).
        jobs: Number of workers.
        timeout: Seconds a submission may take before its worker is killed and replaced.
        factory: Builds the grader in each worker.
    """

    def __init__(self, assignment: Assignment, jobs: int, timeout: float, factory: GraderFactory | None) -> None:
        self.assignment = assignment
        self.jobs = jobs
        self.timeout = timeout
        self.factory = factory
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[_Worker] = []
        self.startup_failures = 0
        self.on_figures: FiguresDone = lambda job, result: None
        self.template: Any = None  # the zygote template every worker's zygote is forked from (autograder.sandbox)
        # the lines of the known mistakes a worker left out of diagnosis: those its judge found do not import
        # (Grader.unimportable_mistakes), and those the figures' diagnosis left out (Rendered.left_out: stale, or not
        # importing), once each however many workers and students met them: the instructor's to read after the
        # batch, never a student's
        self.left_out: dict[str, None] = {}

    def run(self, jobs: list[WorkItem], on_result: Callable[[WorkItem, Outcome], None], tick: Callable[[], None],
            on_figures: FiguresDone | None = None) -> None:
        """Grade every job, calling ``on_result`` in this process as each one finishes.

        Args:
            jobs: The work; or a shared queue with the same ``popleft``/``appendleft`` (``batch/queue.py``), whose
                ``popleft`` may return None while other processes hold what is left.
            on_result: Called with each graded job's outcome (jobs with ``grade=False`` have none).
            tick: Called about once a second.
            on_figures: Called with each job's figures result (jobs with ``figures`` set), failures included.

        Raises:
            GraderError: If the workers cannot build a grader (e.g. hidden checks missing).
        """
        queue = jobs if hasattr(jobs, "popleft") else deque(jobs)  # or a shared queue (batch/queue.py)
        finished = False
        if on_figures is not None:
            self.on_figures = on_figures
        try:
            self.workers = [self._spawn() for _ in range(min(self.jobs, len(queue)))]
            while queue or any(w.job for w in self.workers):
                for worker in self.workers:
                    job = queue.popleft() if worker.job is None and queue else None
                    if job is not None:  # a shared queue has none while others hold what is left
                        worker.assign(job, self.timeout)
                wait([w.conn for w in self.workers] + [w.process.sentinel for w in self.workers], timeout=1.0)
                survivors = []
                for worker in self.workers:
                    if self._service(worker, queue, on_result):
                        survivors.append(worker)
                    elif queue:
                        survivors.append(self._spawn())
                self.workers = survivors
                tick()
            finished = True
        finally:  # after an error or Ctrl-C, busy workers are killed: their submissions were not recorded
            self.close(wait_seconds=10.0 if finished else 0.5)

    def close(self, wait_seconds: float = 10.0) -> None:
        """Stop every worker (asking first, killing what does not stop)."""
        for worker in self.workers:
            try:
                worker.conn.send(None)
            except (OSError, ValueError):
                pass
        for worker in self.workers:
            worker.stop(wait_seconds)
        self.workers = []
        if self.template is not None:
            self.template.close()
            shutil.rmtree(self.template.home, ignore_errors=True)
            self.template = None

    def _spawn(self) -> _Worker:
        return _Worker(self.context, self.assignment, self.factory, self._shared_template())

    def _shared_template(self) -> SharedTemplate | None:
        """A way into the batch's zygote template for one more worker (started with the first; none for a
        custom grader factory, whose workers may not use zygotes at all)."""
        if self.factory is not None:
            return None
        from autograder.sandbox.host import known_capability, new_scratch
        from autograder.sandbox.spawner import ZygoteTemplate

        if self.template is None:
            self.template = ZygoteTemplate(new_scratch("grader-template-"))
            self.template.start(known_capability())  # torch is imported there, never here
        return SharedTemplate(self.template.client(), self.template.marker)

    def _service(self, worker: _Worker, queue: deque[WorkItem], on_result: Callable[[WorkItem, Outcome], None]) -> bool:
        """Read a worker's messages; return False when it is gone and must be replaced."""
        dead = False
        while not dead and worker.conn.poll():
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):
                dead = True
                break
            self._handle(worker, message, on_result)
        if dead or not worker.process.is_alive():
            self._buried(worker, queue, on_result)
            return False
        if worker.job is not None and time.monotonic() > worker.deadline:
            job, drawing = worker.job, worker.drawing
            worker.kill()
            worker.job = None
            if drawing:  # the grade (if any) is recorded: only the figures are lost
                self.on_figures(job, _no_figures(f"drawing the figures took longer than {self.timeout:g} s and "
                                                 f"was stopped"))
            else:
                on_result(job, Outcome(ERROR, max_score=self.assignment.max_score,
                                       message=f"grading took longer than {self.timeout:g} s and was stopped",
                                       seconds=self.timeout))
            worker.conn.close()
            return False
        return True

    def _handle(self, worker: _Worker, message: Any, on_result: Callable[[WorkItem, Outcome], None]) -> None:
        kind = message.get("kind") if isinstance(message, dict) else None
        if kind == "fatal":
            raise GraderError(f"the grading workers cannot start: {message.get('message')}")
        if kind == "ready":
            worker.ready = True
            worker.scratch = message.get("scratch") if isinstance(message.get("scratch"), str) else None
            if worker.job is not None:  # its first job starts now
                worker.deadline = time.monotonic() + self.timeout
        elif kind == "result" and worker.job is not None and not worker.drawing:
            self.left_out.update(dict.fromkeys(message.get("left_out") or ()))
            job = worker.job
            if job.figures is not None:  # the worker goes on to draw: a fresh time limit for that
                worker.graded, worker.deadline = True, time.monotonic() + self.timeout
            else:
                worker.job, worker.deadline = None, math.inf
            on_result(job, message["outcome"])
        elif kind == "figures" and worker.drawing:
            self.left_out.update(dict.fromkeys(message["figures"].left_out))
            job, worker.job, worker.deadline = worker.job, None, math.inf
            self.on_figures(job, message["figures"])

    def _buried(self, worker: _Worker, queue: deque[WorkItem], on_result: Callable[[WorkItem, Outcome], None]) -> None:
        worker.process.join(5)
        code = worker.process.exitcode
        worker.kill()
        worker.conn.close()
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        if not worker.ready:
            self.startup_failures += 1
            if worker.job is not None:
                queue.appendleft(worker.job)
            if self.startup_failures >= MAX_STARTUP_FAILURES:
                raise GraderError(f"the grading workers keep dying while starting ({how})")
            return
        if worker.drawing:
            self.on_figures(worker.job, _no_figures(f"the grading worker stopped unexpectedly ({how}) while "
                                                    f"drawing the figures"))
        elif worker.job is not None:
            on_result(worker.job, Outcome(ERROR, max_score=self.assignment.max_score,
                                          message=f"the grading worker stopped unexpectedly ({how}) while "
                                                  f"grading this submission"))


def _no_figures(note: str) -> Any:
    """A failed figures result, for a worker that was stopped or died while drawing."""
    from autograder.batch.figures import FigureResult

    return FigureResult(False, note)
