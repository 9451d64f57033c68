"""``grader check``: run the public tests on a student's work and check the quiz answers' format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import GraderError
from autograder.public.plugin import RESULTS_ENV
from autograder.spec.assignment import Assignment
from autograder.spec.quiz import check_format, load_questions, read_answers
from autograder.submission.package import find_package
from autograder.util.paths import PACKAGE_ROOT
from autograder.util.safety import printable

PUBLIC_TIMEOUT = 600


@dataclass
class PublicTaskResult:
    """Public-test outcome of one task."""

    task: str
    passed: int = 0
    failed: int = 0
    not_implemented: int = 0
    first_failure: str = ""

    @property
    def status(self) -> str:
        if self.failed:
            return "failed"
        if self.not_implemented:
            return "not implemented"
        return "passed" if self.passed else "no tests"


@dataclass
class CheckOutcome:
    """Everything ``grader check`` found."""

    package: Path
    tasks: list[PublicTaskResult] = field(default_factory=list)
    quiz_problems: list[str] = field(default_factory=list)
    quiz_answered: int = 0
    quiz_questions: int = 0
    crashed: str = ""

    @property
    def ok(self) -> bool:
        return not self.crashed and all(t.status == "passed" for t in self.tasks) and not self.quiz_problems


def locate_work(assignment: Assignment, path: Path | None) -> Path:
    """The student's package: PATH if given, else ``./<package>`` or a package found under the current folder."""
    if path is not None:
        if not path.exists():
            raise GraderError(f"{path} does not exist")
        return find_package(path.resolve(), assignment)
    default = Path.cwd() / assignment.package
    return find_package(default if default.is_dir() else Path.cwd(), assignment)


def run_public_tests(assignment: Assignment, package: Path) -> CheckOutcome:
    """Run the public tests in a separate pytest process against ``package``.

    Args:
        assignment: The assignment.
        package: The student's package folder.

    Returns:
        Per-task outcomes and the quiz format check.
    """
    outcome = CheckOutcome(package=package)
    with tempfile.TemporaryDirectory(prefix="grader-check-") as tmp:
        import_root = _importable_root(assignment, package, Path(tmp))
        results_file = Path(tmp) / "results.json"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(import_root), str(PACKAGE_ROOT)]),
                   PYTHONDONTWRITEBYTECODE="1", **{RESULTS_ENV: str(results_file)})
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "autograder.public.plugin",
                   "--continue-on-collection-errors", "--rootdir", str(assignment.public_tests), "-o", "addopts=",
                   str(assignment.public_tests)]
        try:
            completed = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True,
                                       timeout=PUBLIC_TIMEOUT)
        except subprocess.TimeoutExpired:
            outcome.crashed = f"the public tests did not finish within {PUBLIC_TIMEOUT} s"
            return outcome
        if results_file.is_file():
            try:
                _tally(outcome, json.loads(results_file.read_text(errors="replace")), assignment)
            except (ValueError, TypeError, KeyError, AttributeError):
                outcome.crashed = ("the public tests' results could not be read (did your code end the test run or "
                                   "write over its files?)")
        else:
            tail = (completed.stdout + completed.stderr).strip().splitlines()[-3:]
            outcome.crashed = "the public tests could not run: " + " | ".join(tail)
    _check_quiz(assignment, package, outcome)
    return outcome


def _importable_root(assignment: Assignment, package: Path, tmp: Path) -> Path:
    """A folder from which ``import <package>`` finds the student's files (a copy when the folder is named otherwise)."""
    if package.name == assignment.package:
        return package.parent
    copy = tmp / "import" / assignment.package
    copy.mkdir(parents=True)
    for name in assignment.student_files:
        if (package / name).is_file():
            (copy / name).write_bytes((package / name).read_bytes())
    return copy.parent


def _tally(outcome: CheckOutcome, records: list[dict], assignment: Assignment) -> None:
    by_task = {t.id: PublicTaskResult(t.id) for t in assignment.tasks}
    for record in records:
        task = by_task.setdefault(record["task"], PublicTaskResult(record["task"]))
        status = record["status"]
        if status == "passed":
            task.passed += 1
        elif status == "not_implemented":
            task.not_implemented += 1
        elif status == "failed":
            task.failed += 1
            task.first_failure = task.first_failure or f"{record['test']}: {record['message']}"
    outcome.tasks = list(by_task.values())


def _check_quiz(assignment: Assignment, package: Path, outcome: CheckOutcome) -> None:
    if assignment.quiz is None:
        return
    questions = load_questions(assignment.quiz)
    answers, problem = read_answers(package / assignment.quiz.answers_file)
    outcome.quiz_questions = len(questions)
    if problem:
        outcome.quiz_problems.append(problem)
        return
    for verdict in check_format(questions, answers):
        if verdict.valid:
            outcome.quiz_answered += 1
        else:
            outcome.quiz_problems.append(f"{verdict.question}: {verdict.message}")


def render_check(assignment: Assignment, outcome: CheckOutcome) -> str:
    """The per-task table a student sees."""
    lines = [f"Public tests of {assignment.name} on {outcome.package}", ""]
    if outcome.crashed:
        lines.append(f"error: {outcome.crashed}")
    width = max([len(t.task) for t in outcome.tasks] + [4])
    for task in outcome.tasks:
        total = task.passed + task.failed + task.not_implemented
        lines.append(f"{task.task.ljust(width)}  {task.passed:>2}/{total:<2} {task.status}")
        if task.first_failure:
            lines.append(f"{' ' * width}  first failure: {task.first_failure}")
    if assignment.quiz is not None:
        lines.append("")
        lines.append(f"quiz: {outcome.quiz_answered} of {outcome.quiz_questions} answers well-formed "
                     "(format only; answers are graded at grading time)")
        lines += [f"  - {problem}" for problem in outcome.quiz_problems[:20]]
    lines += ["", "These are the public tests only. Hidden tests run at grading time: they compare your functions",
              "with a reference solution on random inputs of several shapes, so passing here does not",
              "guarantee full marks."]
    return printable("\n".join(lines)) + "\n"
