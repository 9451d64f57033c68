"""The data a grading run produces: check, task and submission results, plain and JSON-serialisable."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from autograder.util.safety import printable

PASSED, FAILED, ERROR, TIMEOUT, NOT_IMPLEMENTED = "passed", "failed", "error", "timeout", "not_implemented"

Check = TypeVar("Check")


@dataclass
class CheckResult:
    """The outcome of one hidden check (or one quiz question).

    Attributes:
        name: The check's name (``task.function``).
        description: What the check verifies, for the student.
        weight: The check's weight inside its task.
        status: PASSED, FAILED, ERROR, TIMEOUT or NOT_IMPLEMENTED.
        message: Why it did not pass (empty when it passed).
        hint: The likely mistake, when the failure matches a known one.
        seed: The seed the check ran with.
        seconds: Wall-clock time the probe took in the worker.
        cpu_seconds: CPU time the probe took in the worker.
    """

    name: str
    description: str
    weight: float
    status: str
    message: str = ""
    hint: str = ""
    seed: int | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == PASSED


@dataclass
class TaskResult:
    """A task's score and status, with its checks."""

    id: str
    title: str
    score: float
    max_score: float
    status: str
    feedback: str
    checks: list[CheckResult] = field(default_factory=list)


@dataclass
class GradeReport:
    """Everything a grading run found, ready for any report format."""

    assignment: str
    submission: str
    score: float
    max_score: float
    tasks: list[TaskResult]
    digest: str = ""
    notes: list[str] = field(default_factory=list)
    student_output: str = ""
    environment: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--format json`` report)."""
        return asdict(self)

    def make_printable(self) -> GradeReport:
        """Pass every text that student code can influence through :func:`autograder.util.safety.printable`."""
        self.submission = printable(self.submission, one_line=True)
        self.notes = [printable(note, one_line=True) for note in self.notes]
        self.student_output = printable(self.student_output)
        for task in self.tasks:
            task.feedback = printable(task.feedback, one_line=True)
            for check in task.checks:
                check.description, check.message, check.hint = (
                    printable(check.description, one_line=True), printable(check.message, one_line=True),
                    printable(check.hint, one_line=True))
        return self


def one_cause(checks: Sequence[Check], cause: Callable[[Check], Hashable | None]) -> bool:
    """Whether every one of a task's checks (two at least) failed for one cause: the same status, message and hint
    (a quiz without its answers file fails every question for that reason; a function that raises on every call
    fails every check with its error). A report then says the cause on the first check's line only, with
    :func:`one_cause_words`, instead of once per check; the feedback files and Gradescope's output both ask this.

    Args:
        checks: The task's checks.
        cause: A check's cause of failure (None for a check that passed or says nothing).
    """
    causes = {cause(check) for check in checks}
    return len(checks) > 1 and len(causes) == 1 and None not in causes


def one_cause_words(others: int) -> str:
    """What the one line adds for the checks it stands for: `` (the 15 checks after it fail the same way)``."""
    return f" (the {others} checks after it fail the same way)" if others > 1 else \
        " (the check after it fails the same way)"
