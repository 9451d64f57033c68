"""A job's steps as its host sees them: a ``start`` line before each, and where the step was if its clock ran out.

The host restarts a job's wall clock on each ``start`` line it reads (``autograder.sandbox.results.StepCounter``),
for the seconds the line asks (at most the host's own limit), and kills the job when a step overruns. Before that,
faulthandler, armed here with the step's seconds, has written the job's stack to ``stack.txt`` from a thread of
its own (in C: a ``while True: pass`` and a long call into native code alike), so the host can say where the
code was when it was stopped (``grader check``'s ``stopped in the loop at attention.py, line 50``). This is the
one way a job's stack is taken, on every platform (no signal is involved).
"""

from __future__ import annotations

import faulthandler
import os
from typing import Any, TextIO

from autograder.judge.transport import dumps_record


class Steps:
    """Writes a job's step lines and arms its stack capture.

    Args:
        results: The job's results file (line-buffered text).
        stack_fd: The job's ``stack.txt``, opened for writing before the sandbox closed the job folder.
        seconds: The host's wall clock per step, for a step that asks for none of its own.
    """

    def __init__(self, results: TextIO, stack_fd: int, seconds: float) -> None:
        self.results = results
        self.stack_fd = stack_fd
        self.seconds = seconds

    def start(self, name: str, seconds: float | None = None) -> None:
        """Say that the step ``name`` starts, with its own wall clock (``seconds``) or the job's."""
        limit = seconds if seconds else self.seconds
        self._arm(limit)
        record: dict[str, Any] = {"start": name}
        if seconds:
            record["seconds"] = seconds
        self.write(record)

    def write(self, record: dict[str, Any]) -> None:
        """Write one record (a result) to the results file, at once."""
        self.results.write(dumps_record(record) + "\n")
        self.results.flush()

    def _arm(self, seconds: float) -> None:
        """Empty the stack file and have faulthandler write the stack into it once ``seconds`` have passed: the
        host kills the job at the same moment or later, never before (its clock starts when it reads the line)."""
        if self.stack_fd < 0 or not seconds:
            return
        try:
            os.ftruncate(self.stack_fd, 0)
            os.lseek(self.stack_fd, 0, os.SEEK_SET)
            faulthandler.dump_traceback_later(seconds, file=self.stack_fd)
        except (OSError, RuntimeError, ValueError):  # no thread left to start (a job at its process limit)
            pass
