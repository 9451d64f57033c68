"""The wall clock of a running job, kept by the host: one deadline per step, a hard cap, and a stop on request.

A job writes a ``start`` line before each step (a hidden check, an import, a public test); the clock restarts on
each for the seconds the line asks, never more than the host's own limit per step (``Limits.wall_seconds``), and
the whole job never runs past ``Limits.total_wall_seconds``, whatever the untrusted lines say. This is the one
wall clock of every surface: grading's checks, ``grader show``'s probes and ``grader check``'s public tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.sandbox.limits import Limits
from autograder.sandbox.results import Step, StepCounter, stack_written

POLL_SECONDS = 0.1  # how often the job's results file is read for new steps (and a stop request looked at)
STACK_WAIT_SECONDS = 0.5  # how long an overrun job may take to finish writing its stack before it is killed

@dataclass
class Watch:
    """What the caller of a job hears of its clock, and how it may end it (from another thread).

    Attributes:
        on_step: Told of each step as it starts, with its seconds (``grader check`` says a test still runs).
        on_overrun: Told at once when a step overran, before the job's stack is awaited and the job killed
            (``grader check`` stops the jobs of the tasks that use this one meanwhile).
        stop: Set to end the job now (its result then says ``stopped``).
    """

    on_step: Callable[[Step], None] | None = None
    on_overrun: Callable[[], None] | None = None
    stop: threading.Event = field(default_factory=threading.Event)


class JobClock:
    """The deadlines of one job, from the moment it started.

    Args:
        limits: The job's limits (seconds per step, steps).
        results: The job's results file, where its ``start`` lines arrive.
        watch: The caller's hooks and stop (none by default).
    """

    def __init__(self, limits: Limits, results: Path, watch: Watch | None = None) -> None:
        now = time.monotonic()
        self.limits = limits
        self.cap = now + limits.total_wall_seconds
        self.deadline = now + limits.wall_seconds
        self.steps = StepCounter(results)
        self.watch = watch or Watch()

    def wake(self) -> float:
        """When to look again: the step's deadline, the cap, or the next poll, whichever is first."""
        return min(self.deadline, self.cap, time.monotonic() + POLL_SECONDS)

    def expired(self) -> bool:
        """Read the steps started since the last look; True when the job must end now (overrun or stopped)."""
        for step in self.steps.started():
            seconds = min(step.seconds or self.limits.wall_seconds, self.limits.wall_seconds)
            self.deadline = time.monotonic() + seconds
            if self.watch.on_step is not None:
                self.watch.on_step(Step(step.name, seconds))
        if self.watch.stop.is_set():
            return True
        overran = time.monotonic() >= min(self.deadline, self.cap)
        if overran and self.watch.on_overrun is not None:
            self.watch.on_overrun()
        return overran

    @property
    def stopped(self) -> bool:
        """Whether the job was ended at the caller's request rather than by its wall clock."""
        return self.watch.stop.is_set()


def await_stack(job_dir: Path, seconds: float = STACK_WAIT_SECONDS) -> None:
    """Give an overrun job up to ``seconds`` to write its stack (its faulthandler fires when its own clock runs
    out, which started before the host's: usually it has written already)."""
    deadline = time.monotonic() + seconds
    while not stack_written(job_dir) and time.monotonic() < deadline:
        time.sleep(0.02)
