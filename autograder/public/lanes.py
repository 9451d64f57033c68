"""``grader check``'s tasks as jobs of the sandbox's runtime, on session zygotes run side by side (lanes).

Each lane is a zygote forked from the check's runtime that opened a session (:mod:`autograder.public.session`:
the student's modules imported and the public tests collected once); each job, a fork of it, runs the tests of
one task, with the sandbox's wall clock per test (``autograder.sandbox.clock``). A job that a test crashes or
overruns costs that test only: the task's other tests run in a fresh job (:mod:`autograder.public.jobresults`).
Once a task's test overran, the tasks whose code runs that task's code (the manifest's ``uses``) are not run, or
stopped where they run: their tests would wait out the same loop, one wall clock each (``hints.hung_upstream``
says them not checked).

The lanes run in threads and only post events; the check's own thread turns them into its outcome.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autograder.errors import WorkerDied
from autograder.public.jobresults import StackLines, held_back, job_records, not_run_records
from autograder.sandbox.clock import Watch
from autograder.sandbox.host import JobResult, Limits, Zygote
from autograder.sandbox.results import read_results

OUTPUT_BYTES = 4096  # of what a job printed outside pytest's capture (which check never shows)
SESSIONS_PER_LANE = 3  # sessions a lane opens after its first one ended (a test that killed it)

Post = Callable[..., None]
Tests = list[dict[str, Any]]  # a task's tests: ``test``, ``nodeid`` and ``limit`` each


@dataclass
class Lane:
    """A session zygote and the task whose job it runs now (a hang elsewhere may stop that job)."""

    index: int
    zygote: Zygote | None = None
    task: str = ""
    stop: threading.Event = field(default_factory=threading.Event)  # ends the job of ``task`` when set
    lock: threading.Lock = field(default_factory=threading.Lock)


class Lanes:
    """The lanes of one check: the tasks waiting, and the tasks whose test overran.

    Args:
        open_session: Opens a session zygote for a lane (its index); None when it cannot.
        tasks: Each task's tests, in the order the tasks start.
        job_bytes: Each job's memory limit.
        workdir: The folder the jobs work in (the sessions' own).
        upstream: Each task's upstream tasks (``hints.upstream_tasks``).
        hung: Tasks whose test overran already (a ``--watch``'s earlier results).
        stack_lines: Where a test that overran was, from its job's stack.
        post: Posts an event to the check's thread.
    """

    def __init__(self, open_session: Callable[[int], Zygote | None], tasks: list[tuple[str, Tests]],
                 job_bytes: int, workdir: Path, upstream: Mapping[str, list[str]], hung: Collection[str],
                 stack_lines: StackLines, post: Post) -> None:
        self.open_session = open_session
        self.pending = deque(tasks)
        self.job_bytes = job_bytes
        self.workdir = workdir
        self.upstream = upstream
        self.hung = set(hung)
        self.stack_lines = stack_lines
        self.post = post
        self.lanes: list[Lane] = []
        self.lock = threading.Lock()
        self.aborted = False

    def start(self, first: Zygote, count: int) -> list[threading.Thread]:
        """Run the tasks on ``first``'s lane and ``count - 1`` more (each opens its own session first); the event
        ``lanes`` says how many, each lane's ``lane_done`` that it ended."""
        self.lanes = [Lane(0, first)] + [Lane(index) for index in range(1, count)]
        self.post("lanes", len(self.lanes))
        threads = [threading.Thread(target=self._serve, args=(lane,), daemon=True) for lane in self.lanes]
        for thread in threads:
            thread.start()
        return threads

    def abort(self) -> None:
        """Stop now: no task starts any more, and every lane's zygote is killed (its thread then ends)."""
        with self.lock:
            self.aborted = True
            self.pending.clear()
        for lane in self.lanes:
            with lane.lock:
                if lane.zygote is not None:
                    lane.zygote.kill()

    def held(self, task: str) -> list[str]:
        """The tasks upstream of ``task`` whose test overran (see :func:`held_back`)."""
        with self.lock:
            return held_back(task, self.upstream, self.hung)

    def _serve(self, lane: Lane) -> None:
        try:
            self._run_tasks(lane)
        except BaseException as exc:  # noqa: BLE001 - a lane never leaves the check waiting for it
            self.post("crashed", f"the public tests stopped: {type(exc).__name__}: {exc}")
        finally:
            if lane.zygote is not None:
                lane.zygote.close()
            self.post("lane_done")

    def _next(self) -> tuple[str, Tests] | None:
        with self.lock:
            return self.pending.popleft() if self.pending and not self.aborted else None

    def _run_tasks(self, lane: Lane) -> None:
        sessions = 0
        while (work := self._next()) is not None:
            task, tests = work
            while tests and not self.aborted:
                if lane.zygote is None:
                    sessions += 1
                    zygote = self.open_session(lane.index) if sessions <= SESSIONS_PER_LANE else None
                    if zygote is None:  # the other lanes go on: the task goes back to them
                        with self.lock:
                            self.pending.appendleft((task, tests))
                        return
                    with lane.lock:
                        lane.zygote = zygote
                tests = self._run_job(lane, task, tests)
            self.post("task_done", task)

    def _run_job(self, lane: Lane, task: str, tests: Tests) -> Tests:
        """Run one job of ``task``'s tests (none while a task it uses hung); post their results and return the
        tests left for a fresh job."""
        with lane.lock:  # with _hang's: a hang seen after this is seen by _hang with this task running
            held = self.held(task)
            if not held:
                lane.task, lane.stop = task, threading.Event()
        if held:
            self.post("results", not_run_records(task, tests, held))
            return []
        result = self._job(lane, task, tests)
        held = self.held(task)
        if held and (result.timed_out or result.stopped):  # it waited for a task it uses that hung meanwhile
            records, rest = job_records(task, tests, replace(result, timed_out=False, stopped=True), self.stack_lines)
            self.post("results", records + not_run_records(task, rest, held))
            return []
        records, rest = job_records(task, tests, result, self.stack_lines)
        self.post("results", records)
        return rest

    def _job(self, lane: Lane, task: str, tests: Tests) -> JobResult:
        job_dir = Path(tempfile.mkdtemp(prefix="job-", dir=self.workdir))
        limits = Limits(wall_seconds=max(test["limit"] for test in tests),
                        cpu_seconds=int(sum(test["limit"] for test in tests) * 2) + 5,
                        memory_bytes=self.job_bytes, steps=len(tests))
        job = {"package": "", "workdir": str(self.workdir), "session": {"nodeids": [t["nodeid"] for t in tests]}}
        with lane.lock:
            zygote, stop = lane.zygote, lane.stop
        assert zygote is not None
        watch = Watch(on_step=lambda step: self.post("step", lane.index, task, step),
                      on_overrun=lambda: self._hang(task), stop=stop)
        try:
            return zygote.run(job, limits, job_dir, OUTPUT_BYTES, watch)
        except WorkerDied as exc:  # its session ended (a test killed it): the rest run in a new one
            result = JobResult(job_dir=job_dir, exit={"code": None, "signal": None, "worker_died": str(exc)})
            read_results(result, job_dir, 0)
            with lane.lock:
                lane.zygote = None
            zygote.close()
            return result
        finally:
            with lane.lock:
                lane.task = ""
            self.post("job_end", lane.index)
            shutil.rmtree(job_dir, ignore_errors=True)

    def _hang(self, task: str) -> None:
        """A test of ``task`` overran: stop the jobs of the tasks that use it, which may wait out the same loop."""
        with self.lock:
            self.hung.add(task)
        for lane in self.lanes:
            with lane.lock:
                if lane.task and self.held(lane.task):
                    lane.stop.set()
