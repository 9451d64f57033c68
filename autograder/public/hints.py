"""One bug, one task: a failing task whose building blocks fail too is told to fix those first."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from pathlib import Path

from autograder.errors import GraderError
from autograder.public.outcome import FAILING, CheckOutcome, PublicTaskResult
from autograder.spec.assignment import Assignment
from autograder.util.syntax import parse


def wrong_used_tasks(assignment: Assignment, tasks: Iterable[str], wrong: Callable[[str], bool],
                     unseen: Callable[[str], bool] = lambda _: False) -> list[str]:
    """The tasks to fix first: those whose code ``tasks`` use (the manifest's ``uses``), other than ``tasks``
    themselves, that ``wrong`` says are wrong, in the manifest's order.

    Each surface passes its own notion of wrong (``grader check``: a failing public test that reached the task's
    code; ``grader show``: a ✗ on another figure of the task, ``show/upstream.py``); which tasks are upstream is
    decided here only. A used task the caller has no verdict on (``unseen``: ``grader show``'s tasks that no
    figure shows) is looked through: what it uses counts in its place, transitively. A task with a verdict ends
    the walk there: a wrong one is named (its own line names what it uses), a right one is not gone past.

    Args:
        assignment: The assignment.
        tasks: The task ids whose building blocks are asked for (a figure's probe may declare several).
        wrong: Whether a used task is wrong, by its id.
        unseen: Whether the caller has no verdict on a used task, by its id (default: it has one on every task).

    Returns:
        Task ids, in the manifest's order.
    """
    walked = set(tasks)
    todo = list(walked)
    found: set[str] = set()
    while todo:
        for owner in _used_owners(assignment, todo.pop()):
            if owner in walked:
                continue
            walked.add(owner)
            if wrong(owner):
                found.add(owner)
            elif unseen(owner):
                todo.append(owner)
    return [t.id for t in assignment.tasks if t.id in found]


def _used_owners(assignment: Assignment, task_id: str) -> set[str]:
    """The tasks owning the names a task ``uses`` (none for an id that is not a task)."""
    try:
        uses = assignment.task(task_id).uses
    except GraderError:
        return set()
    return {owner.id for owner in (assignment.owner_of(q) for q in uses) if owner is not None}


def upstream_tasks(assignment: Assignment, task_id: str) -> list[str]:
    """The other tasks whose code a task's code can run (the manifest's ``uses``, transitively:
    :meth:`Assignment.reaches`), in the manifest's order, without those that can run its code in turn (a cycle of
    ``uses``): a task's line waits for these, and one of them that hangs holds it back (:func:`hung_upstream`)."""
    def reached(task: str) -> set[str]:
        return {owner.id for owner in map(assignment.owner_of, assignment.reaches([task])) if owner is not None}

    mine = reached(task_id)
    return [t.id for t in assignment.tasks if t.id in mine and t.id != task_id and task_id not in reached(t.id)]


def hung_upstream(assignment: Assignment, outcome: CheckOutcome, task_id: str) -> list[str]:
    """The tasks of :func:`upstream_tasks` that hung in this check (or, for a task a ``--watch`` re-run does not
    check, in its latest result: :attr:`CheckOutcome.latest`): a test of theirs did not finish in time, and none of
    the tasks they use hung.

    A task that uses one of them is not reported on its own (its tests are stopped as soon as the hang is
    seen, ``lanes.Lanes``): its tests would wait out the same loop, and how many of them ran before the hang
    was seen is a matter of timing. Decided from the tasks it uses alone, its line is the same on every run.
    """
    timed_out = {result.task for result in outcome.latest if result.count("timeout")}

    def hung(task: str) -> bool:  # the tasks upstream of ``task`` are strictly fewer: the recursion ends
        return task in timed_out and not hung_upstream(assignment, outcome, task)

    return [task for task in upstream_tasks(assignment, task_id) if hung(task)]


def dependency_hints(assignment: Assignment, outcome: CheckOutcome, result: PublicTaskResult) -> list[str]:
    """For a failing task: the tasks it uses that fail (or are not done) too, each to be fixed first; only those
    whose functions a failing (or not implemented) test called (directly or through other code), so that a hint
    never names code the test did not reach."""
    if result.status != "failed":
        return []
    status = {t.task: t.status for t in outcome.latest}  # a --watch re-run: the tasks it did not re-run count too

    def wrong(*statuses: str) -> Callable[[str], bool]:
        return lambda other: status.get(other) in statuses and _reached(assignment, result, other)

    failing = wrong_used_tasks(assignment, (result.task,), wrong("failed", "blocked"))
    missing = wrong_used_tasks(assignment, (result.task,), wrong("not implemented"))
    hints = []
    if failing:
        verb = "fails" if len(failing) == 2 else "fail"
        also = f" ({join_names(failing[1:])} {verb} too)" if failing[1:] else ""
        hints.append(f"may be caused by {failing[0]}, which fails: fix that first{also}")
    if missing:
        those = "that" if len(missing) == 1 else "those"
        hints.append(f"may be caused by {join_names(missing)}, not implemented yet: do {those} first")
    return hints


def _reached(assignment: Assignment, result: PublicTaskResult, other: str) -> bool:
    """Whether a failing test of ``result`` called a function (or a method of a class) of task ``other``."""
    functions = assignment.task(other).functions
    frames = [frame for test in result.tests if test.status in (*FAILING, "not_implemented") for frame in test.frames]
    return any(frame == name or frame.startswith(f"{name}.") for frame in frames for name in functions)


def join_names(names: list[str], word: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (or with ``word`` in place of "and")."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" {word} " + names[-1]


def stub_tasks(assignment: Assignment, package: Path) -> set[str]:
    """The tasks whose functions (and, for a class, each of its methods) all still do nothing but raise
    NotImplementedError, as the template's stubs do, read from the source without running it.

    A hang upstream holds such a task's tests back like any other's, but what they would say is known: not
    implemented, on every run.
    """
    defined = _definitions(assignment, package)
    found = set()
    for task in assignment.tasks:
        nodes = [defined.get(qualified) for qualified in task.functions]
        if nodes and all(node is not None and _is_stub(node) for node in nodes):
            found.add(task.id)
    return found


def _definitions(assignment: Assignment, package: Path) -> dict[str, ast.stmt]:
    """The top-level functions and classes of the student's modules, by qualified name (``attention.causal_mask``);
    none of a module that cannot be read or parsed."""
    defined: dict[str, ast.stmt] = {}
    for module in assignment.modules:
        try:
            body = parse((package / f"{module}.py").read_bytes()).body
        except (OSError, SyntaxError, ValueError):
            continue
        defined.update({f"{module}.{node.name}": node for node in body
                        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))})
    return defined


def _is_stub(node: ast.stmt) -> bool:
    """A function whose body is a docstring at most, ``super()`` calls (a module's ``__init__``) and ``raise
    NotImplementedError``, as the template's stubs are; a class whose methods are all such functions."""
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return bool(methods) and all(_is_stub(method) for method in methods)
    body = _without_docstring(list(getattr(node, "body", [])))
    return bool(body) and _raises_not_implemented(body[-1]) and all(map(_calls_super, body[:-1]))


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    docstring = bool(body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    return body[1:] if docstring else body


def _raises_not_implemented(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.Raise):
        return False
    raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def _calls_super(statement: ast.stmt) -> bool:
    """``super().__init__(...)`` and the like: a statement a stub's ``__init__`` keeps before it raises."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    owner = call.func.value if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
    return isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super"


def note_upstream(assignment: Assignment, outcome: CheckOutcome, result: PublicTaskResult) -> None:
    """What a task's line says of the tasks it uses: those that hung (:func:`hung_upstream`), which stand in for its
    own results, else its hints (:func:`dependency_hints`)."""
    result.held_by = hung_upstream(assignment, outcome, result.task)
    result.hints = dependency_hints(assignment, outcome, result)


def add_dependency_hints(assignment: Assignment, outcome: CheckOutcome) -> None:
    """Note every task's hung upstream tasks and hints (see note_upstream)."""
    for result in outcome.tasks:
        note_upstream(assignment, outcome, result)
