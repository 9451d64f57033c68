"""The progress line of grade-all on a terminal: submissions done, errors, time left."""

from __future__ import annotations

import time
from typing import TextIO

from autograder.gradebook.store import ERROR, Outcome


class Progress:
    """Progress on stderr: one redrawn bar on a terminal, one plain line per submission otherwise.

    Args:
        total: Submissions to grade.
        stream: Where to write (None: nowhere).
        jobs: Workers grading in parallel (for the ETA).
        tty: Force terminal (True) or plain (False) output; detected by default.
    """

    BAR = 24

    def __init__(self, total: int, stream: TextIO | None, jobs: int = 1, tty: bool | None = None) -> None:
        self.total = total
        self.jobs = max(1, min(jobs, total))
        self.busy_seconds = 0.0
        self.stream = stream
        self.tty = bool(stream is not None and (tty if tty is not None else _isatty(stream)))
        self.done = 0
        self.failures = 0
        self.started = time.monotonic()
        self._last_draw = 0.0

    def eta(self) -> str:
        """Remaining time as ``m:ss``: the mean grading time so far, times what is left, over the workers."""
        if not self.done:
            return "?"
        return _clock(self.busy_seconds / self.done * (self.total - self.done) / self.jobs)

    def update(self, student: str, outcome: Outcome) -> None:
        """Count one finished submission and show it."""
        self.done += 1
        self.failures += outcome.status == ERROR
        self.busy_seconds += outcome.seconds
        if self.stream is None:
            return
        if self.tty:
            self.draw(force=True)
            return
        what = (f"error: {outcome.message}" if outcome.status == ERROR
                else f"{outcome.score:g} / {outcome.max_score:g} in {outcome.seconds:.1f} s")
        self.stream.write(f"[{self.done}/{self.total}] {student}: {what} "
                          f"(failures {self.failures}, ETA {self.eta()})\n")
        self.stream.flush()

    def draw(self, force: bool = False) -> None:
        """Redraw the bar (at most a few times a second unless forced)."""
        if not self.tty or self.stream is None or (not force and time.monotonic() - self._last_draw < 0.25):
            return
        self._last_draw = time.monotonic()
        filled = int(self.BAR * self.done / self.total) if self.total else self.BAR
        bar = "#" * filled + "-" * (self.BAR - filled)
        self.stream.write(f"\r{self.done:>{len(str(self.total))}}/{self.total} [{bar}] failures {self.failures}"
                          f"  ETA {self.eta()}  elapsed {_clock(time.monotonic() - self.started)}  ")
        self.stream.flush()

    def finish(self) -> None:
        """End the bar's line."""
        if self.tty and self.stream is not None:
            self.draw(force=True)
            self.stream.write("\n")
            self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"
