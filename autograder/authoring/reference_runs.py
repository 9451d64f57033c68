"""``grader verify`` runs the reference through what students run: the public tests and the figures, each slip one
line naming the file, the line and the fix.

A public test that fails on the reference, or a figure with a ✗ on it, would tell every student to fix code that is
right. Both run on the reference as the intake takes it from a submission (its ``student_files`` only), so a test
that imports a file students lack fails here as it would for them.
"""

from __future__ import annotations

import ast
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.errors import GraderError
from autograder.spec.assignment import Assignment
from autograder.util.syntax import parse

if TYPE_CHECKING:
    from autograder.public.outcome import CheckOutcome, TestResult
    from autograder.show.panel import Panel

PUBLIC_FIX = ("a public test must pass on the reference (grader check would tell students to fix code that is right): "
              "fix the test")
FIGURE_FIX = ("the reference's own figure must show no ✗, or every correct student sees it: a ±inf that is right "
              "there (a masked logit) is read with data.tensor(name, allow_inf=True); any other ✗ is the note's test "
              "to fix")


@dataclass
class ReferenceRun:
    """What one run of the reference found: whether it holds, one line per problem, or what was seen."""

    ok: bool
    details: list[str] = field(default_factory=list)


def public_tests_on_reference(assignment: Assignment) -> ReferenceRun:
    """Run every public test on the reference's student files, as ``grader check`` runs them on a student's."""
    from autograder.public.runner import run_public_tests
    from autograder.submission.intake import prepare_submission

    if not assignment.public_tests.is_dir() or not any(assignment.public_tests.rglob("test*.py")):
        return ReferenceRun(True, ["no public tests"])
    with tempfile.TemporaryDirectory(prefix="grader-verify-public-") as scratch:
        try:
            prepared = prepare_submission(assignment.reference, assignment, Path(scratch))
            outcome = run_public_tests(assignment, prepared.package_dir)
        except GraderError as exc:
            return ReferenceRun(False, [str(exc)])
    problems = public_test_failures(assignment, outcome)
    if _failed(problems):
        return ReferenceRun(False, problems)
    count = sum(task.passed for task in outcome.tasks)
    return ReferenceRun(True, [f"{count} public test{'s pass' if count != 1 else ' passes'} on the reference's "
                               f"student files, as grader check runs them"] + problems)


def public_test_failures(assignment: Assignment, outcome: CheckOutcome) -> list[str]:
    """One line per public test that did not pass on the reference, at its definition, with the fix."""
    defined = test_definitions(assignment.public_tests)
    problems = [f"the public tests did not run on the reference: {outcome.crashed}"] if outcome.crashed else []
    problems += [f"the reference's {problem.module}.py does not import from its student files alone: "
                 f"{problem.message}" for problem in outcome.imports]
    for task in outcome.tasks:
        problems += [_failure_line(test, task.task, defined, assignment.public_tests) for test in task.tests
                     if test.status not in ("passed", "skipped")]
    return problems


def _failed(problems: list[str]) -> bool:
    """Whether a run's lines hold a failure (not only notes)."""
    return any(not line.startswith("note: ") for line in problems)


def _failure_line(test: TestResult, task: str, defined: dict[str, str], folder: Path) -> str:
    """``file:line: public test NAME (task) failed on the reference: what pytest said — the fix``; a test that ran
    out of time is a ``note: `` line (a busy machine can make a test that passes late, never fail)."""
    bare = test.test.split("[")[0].split("::")[-1]
    where = defined.get(bare) or str(folder / test.test)  # a test file that could not be imported: the file
    said = "; ".join(line.strip() for line in test.summary if line.strip()) or test.status
    if test.status == "timeout":
        return f"note: {where}: public test {test.test} ({task}) ran out of time on the reference: {said} — if it " \
               f"does on a quiet machine too, give it @pytest.mark.time_limit(seconds) or its task a public_timeout"
    return f"{where}: public test {test.test} ({task}) {test.status.replace('_', ' ')} on the reference: {said} — " \
           f"{PUBLIC_FIX}"


def test_definitions(folder: Path) -> dict[str, str]:
    """Where each public test function is defined, by name: ``file:line`` (the first, if two files share one)."""
    defined: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        try:
            tree = parse(path.read_text(encoding="utf-8"), str(path))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue  # named by the lint
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                defined.setdefault(node.name, f"{path}:{node.lineno}")
    return defined


def figures_on_reference(assignment: Assignment) -> ReferenceRun:
    """Draw every figure from the reference's student files, as ``grader show`` draws a student's: none may fail to
    draw or show a ✗ of its own notes. The ✗ ``grader show`` adds by itself for NaN or infinite values is said as a
    note, without failing: the reference is right by definition, so every correct student sees that ✗ until the
    figure reads the output with ``allow_inf=True`` (an assignment written before that existed still verifies)."""
    from autograder.show.render import render_figures

    with tempfile.TemporaryDirectory(prefix="grader-verify-figures-") as scratch:
        try:
            rendered = render_figures(assignment, assignment.reference, Path(scratch) / "figures", expected=False,
                                      cache=False)
        except GraderError as exc:
            return ReferenceRun(False, [str(exc)])
    problems = [line for panel in rendered.panels for line in figure_problems(panel)]
    if _failed(problems):
        return ReferenceRun(False, problems)
    count = len(rendered.panels)
    return ReferenceRun(True, [f"{count} figure{'s' if count != 1 else ''} drawn from the reference, none with a ✗ "
                               f"of its own notes"] + problems)


def figure_problems(panel: Panel) -> list[str]:
    """One line per ✗ of a figure drawn from the reference (or why it was not drawn), at its draw function; a ✗
    ``grader show`` adds for NaN or infinite values is a ``note: `` line."""
    from autograder.show.draw import NON_FINITE
    from autograder.show.figures import NOTE_BAD
    from autograder.show.panel import DRAWN

    code = panel.figure.draw.__code__
    where = f"{code.co_filename}:{code.co_firstlineno}"
    if panel.status != DRAWN:
        return [f"{where}: the reference's figure {panel.figure.name} was not drawn: {panel.reason}"]
    return [f"{'note: ' if text.endswith(NON_FINITE) else ''}{where}: the reference's figure {panel.figure.name} "
            f"shows ✗ {text} — {FIGURE_FIX}" for kind, text in panel.notes if kind == NOTE_BAD]
