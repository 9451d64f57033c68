"""What a gradebook holds about a submission, as plain data: importable where no database library is wanted
(the grading workers, the feedback renderer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

GRADED, ERROR = "graded", "error"  # how grading a submission ended


def now() -> str:
    """The current UTC time as an ISO 8601 string with microseconds (sorts chronologically)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@dataclass
class Outcome:
    """What grading one submission produced, ready to be stored.

    Attributes:
        status: ``graded`` (a report exists, whatever the score) or ``error`` (it could not be graded).
        score: Points earned.
        max_score: Points available.
        message: Why it could not be graded (status ``error``).
        seconds: Wall-clock seconds spent grading it.
        check_seconds: Sum of the hidden checks' own seconds (the computation the grader waits for).
        worker_rss_mb: Peak resident memory of the grading worker (and its zygote) so far, in MB.
        report: The GradeReport as a dict (``GradeReport.to_dict()``), or None.
    """

    status: str
    score: float = 0.0
    max_score: float = 0.0
    message: str = ""
    seconds: float = 0.0
    check_seconds: float = 0.0
    worker_rss_mb: float | None = None
    report: dict[str, Any] | None = None


@dataclass
class SubmissionRow:
    """A stored submission (the current one of a student, or any other)."""

    id: int
    assignment: str
    student: str
    digest: str
    fingerprint: str
    source: str
    graded_at: str
    score: float
    max_score: float
    status: str
    message: str
    seconds: float
    check_seconds: float
    worker_rss_mb: float | None
    raw_score: float | None = None
    submitted_at: str | None = None
    due_at: str | None = None
    late_seconds: float = 0.0
    penalty: float = 0.0
    late_note: str = ""
    report: dict[str, Any] | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def raw(self) -> float:
        """The score before any late penalty (``score`` is the final one)."""
        return self.score if self.raw_score is None else self.raw_score
