"""What `grader check` found: per-test and per-task results, import problems, the quiz's format."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.submission.notebook.places import CellMap, place
from autograder.submission.package import missing_name_message
from autograder.util.paths import display_path

FAILING = ("failed", "timeout", "crashed")  # statuses that fail a test
NOT_RUN = "not_run"  # the status of a test not run (or stopped) because a task its task uses hung


@dataclass
class TestResult:
    """One public test's outcome."""

    test: str
    status: str
    summary: list[str] = field(default_factory=list)
    detail: str = ""
    frames: list[str] = field(default_factory=list)  # the student's functions it called or its traceback passes through


@dataclass(frozen=True)
class MissingName:
    """A name the public tests import from a student's file that the file does not define (renamed or removed).

    Attributes:
        file: The student's file, as the student sees it (``assignment3/attention.py``).
        name: The name the tests import (``causal_mask``).
    """

    file: str
    name: str

    def sentence(self) -> str:
        """The wording grading uses too (``submission.package.missing_name_message``)."""
        return missing_name_message(self.file, self.name, "the public tests import")


@dataclass(frozen=True)
class StillRunning:
    """A public test, or the import of a student module, that has run for a while (``grader check`` says so once).

    Attributes:
        task: The test's task ('' for an import).
        test: The test's name, or the module being imported.
        limit: Its wall clock, in seconds: when it is stopped.
    """

    task: str
    test: str
    limit: float


@dataclass
class ImportProblem:
    """A student module that could not be imported (said once, with the tasks it blocks)."""

    module: str
    kind: str
    message: str
    file: str = ""
    line: int = 0
    text: str = ""
    cause: str = ""
    blocks: list[str] = field(default_factory=list)


@dataclass
class PublicTaskResult:
    """Public-test outcome of one task."""

    task: str
    tests: list[TestResult] = field(default_factory=list)
    expected: int = 0
    done: bool = False
    blocked_by: str = ""
    problem: str = ""
    missing: MissingName | None = None  # why its test file could not be imported, when that is the reason
    hints: list[str] = field(default_factory=list)
    held_by: list[str] = field(default_factory=list)  # tasks it uses that hung: its own results are not reported
    stub: bool = False  # its functions are still the template's stubs (raise NotImplementedError and nothing else)

    def count(self, *statuses: str) -> int:
        return sum(t.status in statuses for t in self.tests)

    @property
    def passed(self) -> int:
        return self.count("passed")

    @property
    def failures(self) -> list[TestResult]:
        return [t for t in self.tests if t.status in FAILING]

    @property
    def status(self) -> str:
        if self.blocked_by or self.missing:  # its module cannot be imported, or its tests import a name it lacks
            return "blocked"
        if self.held_by:  # held back by a hang upstream; a stub's tests would only have said it is not done
            return "not implemented" if self.stub else "not checked"
        return self._tested_status()

    def _tested_status(self) -> str:
        """The status its own tests give it."""
        if self.failures or self.problem:
            return "failed"
        if self.count("not_implemented"):
            return "not implemented"
        if not self.done or self.count(NOT_RUN):  # the worker stopped its tests, for a reason the lines say
            return "did not run"
        return "passed" if self.passed else "no tests"


@dataclass
class CheckOutcome:
    """Everything ``grader check`` found (``cell_map``: a notebook's map of its extracted files, None for a package,
    or when the student asked for the extracted files, which are then named; ``earlier``: a ``--watch`` re-run's
    last results of the tasks it does not check, for what they say of the tasks that use them (a hang) and for the
    next step)."""

    package: Path
    tasks: list[PublicTaskResult] = field(default_factory=list)
    imports: list[ImportProblem] = field(default_factory=list)
    quiz_problems: list[str] = field(default_factory=list)
    quiz_unanswered: list[str] = field(default_factory=list)
    quiz_missing: bool = False
    quiz_answered: int = 0
    quiz_questions: int = 0
    quiz_checked: bool = False
    crashed: str = ""
    cell_map: CellMap | None = None
    earlier: list[PublicTaskResult] = field(default_factory=list)

    @property
    def latest(self) -> list[PublicTaskResult]:
        """Each task's latest result: this check's, then the earlier ones of the tasks it did not check."""
        return [*self.tasks, *self.earlier]

    @property
    def ok(self) -> bool:
        return (not self.crashed and not self.imports and all(t.status == "passed" for t in self.tasks)
                and not self.quiz_problems and not self.quiz_unanswered)

    def shown_file(self, name: str) -> str:
        """A file of the student's package (``attention.py``), named as the student sees it."""
        return display_path(self.package / name)

    def shown_place(self, name: str, line: int, path: bool = True) -> str:
        """A line of a file of the student's package as the student knows it: the file (its path when ``path``)
        and line, or a notebook's cell and its line."""
        return place(self.shown_file(name) if path else name, line, self.cell_map)

    def task(self, task_id: str) -> PublicTaskResult:
        for task in self.tasks:
            if task.task == task_id:
                return task
        result = PublicTaskResult(task_id)
        self.tasks.append(result)
        return result
