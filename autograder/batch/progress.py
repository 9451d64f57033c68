"""Progress of ``grader grade-all`` on stderr: a tqdm bar on a terminal, one plain line per submission otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from autograder.gradebook.records import ERROR, Outcome
from autograder.util.progress import is_terminal, progress_bar


class Progress:
    """Progress on stderr: a tqdm bar on a terminal, one plain line per submission otherwise (logs, CI).

    A ``grade-all --queue`` process shares the class with other processes: its bar and lines count the class
    (:meth:`follow_class`), so each worker's log says how far the class is, and each line says what this worker
    graded.

    Args:
        total: Submissions to grade.
        stream: Where to write (None: nowhere).
        jobs: Workers grading in parallel (for the ETA of the plain lines).
        tty: Force terminal (True) or plain (False) output; detected by default.
    """

    def __init__(self, total: int, stream: TextIO | None, jobs: int = 1, tty: bool | None = None) -> None:
        self.total = total
        self.jobs = max(1, min(jobs, total))
        self.busy_seconds = 0.0
        self.stream = stream
        self.tty = bool(stream is not None and (tty if tty is not None else is_terminal(stream)))
        self.done = 0  # graded by this process
        self.ungraded = 0  # submissions that could not be graded (not students who lost points)
        self.started = time.monotonic()
        self.class_left: Callable[[], int] | None = None
        self._bar = progress_bar(total, "grading", unit="submission", stream=stream, enabled=True) if self.tty \
            else None

    def follow_class(self, left: Callable[[], int]) -> None:
        """Count the class, not this process: ``left`` says how many of the ``total`` submissions no worker has
        graded yet (the queue's count, which every worker's grades lower)."""
        self.class_left = left

    def class_done(self) -> int:
        """How many of the ``total`` are graded: by this process, or by every worker of a queue."""
        if self.class_left is None:
            return self.done
        return min(self.total, max(0, self.total - self.class_left()))

    def eta(self, done: int) -> str:
        """Remaining time as ``m:ss`` once ``done`` of the ``total`` are graded: the mean grading time so far, times
        what is left, over the workers; for a queue's class, the time the class took so far per submission,
        whoever graded it, times what is left."""
        if not done:
            return "?"
        if self.class_left is not None:
            return _clock((time.monotonic() - self.started) / done * (self.total - done))
        return _clock(self.busy_seconds / done * (self.total - done) / self.jobs)

    def update(self, student: str, outcome: Outcome, score: float | None = None) -> None:
        """Count one finished submission and show it.

        Args:
            student: The student.
            outcome: What grading produced (its score is the raw one).
            score: The final score, after any late penalty (None: no deadline applies, the raw score is final).
        """
        self.done += 1
        self.ungraded += outcome.status == ERROR
        self.busy_seconds += outcome.seconds
        if self.stream is None:
            return
        done = self.class_done()
        if self._bar is not None:
            mine = f"this worker: {self.done}, " if self.class_left is not None else ""
            self._bar.set_postfix_str(f"{mine}could not be graded: {self.ungraded}", refresh=False)
            self._bar.update(done - self._bar.n)
            self._bar.refresh()  # submissions take seconds: show each, whatever tqdm's minimum interval
            return
        what = (f"could not be graded: {outcome.message}" if outcome.status == ERROR
                else f"{final_score(outcome, score)} in {outcome.seconds:.1f} s")
        mine = f"graded by this worker: {self.done}, " if self.class_left is not None else ""
        self.stream.write(f"[{done}/{self.total}] {student}: {what} ({mine}{self.ungraded} could not be graded so "
                          f"far, ETA {self.eta(done)})\n")
        self.stream.flush()

    def draw(self, force: bool = False) -> None:
        """Refresh the bar's clock (the bar redraws itself as submissions finish)."""
        if self._bar is not None:
            self._bar.refresh()

    def finish(self) -> None:
        """End the bar."""
        if self._bar is not None:
            self._bar.close()


def final_score(outcome: Outcome, score: float | None) -> str:
    """``80 / 100 (100 before the late penalty)``, or ``100 / 100`` when no penalty applies."""
    if score is None or score == outcome.score:
        return f"{outcome.score:g} / {outcome.max_score:g}"
    return f"{score:g} / {outcome.max_score:g} ({outcome.score:g} before the late penalty)"


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"
