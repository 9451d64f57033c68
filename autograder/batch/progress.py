"""Progress of ``grader grade-all`` on stderr: a tqdm bar on a terminal, one plain line per submission otherwise."""

from __future__ import annotations

import time
from typing import TextIO

from autograder.gradebook.records import ERROR, Outcome
from autograder.util.progress import is_terminal, progress_bar


class Progress:
    """Progress on stderr: a tqdm bar on a terminal, one plain line per submission otherwise (logs, CI).

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
        self.done = 0
        self.ungraded = 0  # submissions that could not be graded (not students who lost points)
        self.started = time.monotonic()
        self._bar = progress_bar(total, "grading", unit="submission", stream=stream, enabled=True) if self.tty \
            else None

    def eta(self) -> str:
        """Remaining time as ``m:ss``: the mean grading time so far, times what is left, over the workers."""
        if not self.done:
            return "?"
        return _clock(self.busy_seconds / self.done * (self.total - self.done) / self.jobs)

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
        if self._bar is not None:
            self._bar.set_postfix_str(f"could not be graded: {self.ungraded}", refresh=False)
            self._bar.update(1)
            self._bar.refresh()  # submissions take seconds: show each, whatever tqdm's minimum interval
            return
        what = (f"could not be graded: {outcome.message}" if outcome.status == ERROR
                else f"{final_score(outcome, score)} in {outcome.seconds:.1f} s")
        self.stream.write(f"[{self.done}/{self.total}] {student}: {what} "
                          f"({self.ungraded} could not be graded so far, ETA {self.eta()})\n")
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
