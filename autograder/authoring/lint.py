"""Authoring mistakes ``grader verify`` finds before grading: each one line naming the file and the fix."""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.authoring.minimums import Figure, missed_minimums
from autograder.authoring.mutation_imports import import_problems
from autograder.errors import AssignmentError, GraderError
from autograder.probe.checks import Check, checks_file_problems
from autograder.spec.assignment import MANIFEST, Assignment, missing_paths
from autograder.spec.manifest import location
from autograder.spec.mutation import combined_problems, read_mutations
from autograder.spec.quiz import load_key, load_questions
from autograder.util.syntax import parse
from autograder.util.names import nearest

LETTERS = "abcd"


def lint_assignment(assignment: Assignment, imports: bool = True) -> list[str]:
    """Every authoring problem of the assignment, one line each (none when it is sound); ``imports``: also import
    every mistake and variant (:func:`mutation_problems`), else they are read as text only."""
    return (declared_path_problems(assignment) + checks_problems(assignment) + public_test_problems(assignment)
            + reference_name_problems(assignment) + mutation_problems(assignment, imports)
            + key_balance_problems(assignment) + figure_problems(assignment))


def declared_path_problems(assignment: Assignment) -> list[str]:
    """Every file and folder the manifest names exists: each task's ``checks``, the quiz's ``questions`` and
    ``key``, ``public_tests`` (a student's copy lacks the hidden ones; the instructor's may not)."""
    return list(missing_paths(assignment).values())


def checks_problems(assignment: Assignment) -> list[str]:
    """Each task's checks file loads, binds every check to a task that exists, and names known tolerances
    wherever it names one (a helper shared by several files is reported once); a missing file is
    :func:`declared_path_problems`'."""
    problems: dict[str, None] = {}
    for index, task in enumerate(assignment.tasks):
        if task.checks is not None and task.checks.is_file():
            checks, found = checks_file_problems(task.checks, task.id, assignment.task_ids)
            problems.update(dict.fromkeys(found))
            if not found:
                problems.update(dict.fromkeys(_check_visibility_problems(assignment, index, checks)))
    return list(problems)


def _check_visibility_problems(assignment: Assignment, index: int, checks: list[Check]) -> list[str]:
    """Every name of the task's ``check_visibility`` is one of its checks: a misspelt one would leave the check
    shown with its task, e.g. a hidden check visible on Gradescope."""
    task = assignment.tasks[index]
    names = [check.name for check in checks]
    manifest = assignment.root / MANIFEST
    where = location(manifest, manifest.read_text(encoding="utf-8"), "tasks", "check_visibility", index)
    problems = []
    for name, _ in task.check_visibility:
        if name not in names:
            close = nearest(name, names)
            fix = f"did you mean {close}?" if close else f"its checks: {', '.join(names)}"
            problems.append(f"{where}task {task.id!r} check_visibility names {name!r}, which is not a check of "
                            f"the task (it would be shown with its task) — {fix}")
    return problems


def figure_problems(assignment: Assignment) -> list[str]:
    """The figure files of ``[figures]`` load as ``grader show`` and ``grader release`` load them (a file that
    fails to import, a probe naming no task, a name the release would refuse): the line they would stop with."""
    from autograder.show.catalog import load_catalog  # lazily: the figure files import torch and the drawing API
    from autograder.show.render import declares_figures

    if not declares_figures(assignment):
        return []
    try:
        load_catalog(assignment)
    except AssignmentError as exc:
        return [str(exc)]
    return []


def public_test_problems(assignment: Assignment) -> list[str]:
    """Every ``@pytest.mark.task("id")`` of the public tests names a code task of the manifest (``grader check``
    runs a test with its task, and one of no task not at all), and every public test file parses."""
    if not assignment.public_tests.is_dir():
        return []  # reported by declared_path_problems
    known = [task.id for task in assignment.tasks]
    problems = []
    for path in sorted(assignment.public_tests.rglob("*.py")):
        try:
            tree = parse(path.read_text(encoding="utf-8"), str(path))
        except SyntaxError as exc:
            problems.append(f"{path}:{exc.lineno or '?'}: SyntaxError: {exc.msg}")
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read it: {exc}")
            continue
        for line, task in _task_markers(tree):
            if task not in known:
                close = nearest(task, known)
                fix = f"did you mean {close}? " if close else ""
                problems.append(f"{path}:{line}: @pytest.mark.task({task!r}) names no task of the assignment "
                                f"(grader check does not run the test and reports it failed): {task} — {fix}"
                                f"(tasks: {', '.join(known)})")
    return problems


def _task_markers(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, task id)`` of each ``mark.task("id")`` in a test file (``pytest.mark.task`` or ``mark.task``), in
    decorators, ``pytestmark`` or anywhere else; an id that is not a literal string cannot be checked here."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "task"
                and isinstance(node.func.value, (ast.Attribute, ast.Name))
                and getattr(node.func.value, "attr", getattr(node.func.value, "id", "")) == "mark"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return sorted(found)


def reference_name_problems(assignment: Assignment) -> list[str]:
    """Every ``functions`` and ``uses`` entry names a function or class defined at the top of its reference
    module."""
    manifest = assignment.root / MANIFEST
    text = manifest.read_text(encoding="utf-8")
    defined = {module: _top_level_names(assignment.reference / f"{module}.py") for module in assignment.modules}
    problems = []
    for index, task in enumerate(assignment.tasks):
        for key, names in (("functions", task.functions), ("uses", task.uses)):
            for qualified in names:
                module, _, name = qualified.partition(".")
                known = defined.get(module)
                if known is None or name in known:
                    continue
                close = nearest(name, known)
                fix = f"did you mean {module}.{close}?" if close else \
                    f"define it in {assignment.reference / f'{module}.py'} or fix the name"
                problems.append(f"{location(manifest, text, 'tasks', key, index)}task {task.id!r} {key}: "
                                f"{qualified} is not defined in the reference — {fix}")
    return problems


def _top_level_names(path: Path) -> set[str] | None:
    try:
        tree = parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None  # the reference's own problem, reported when verify grades it
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                   ast.ClassDef))}
    names |= {target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets
              if isinstance(target, ast.Name)}
    return names


def mutation_problems(assignment: Assignment, imports: bool = True) -> list[str]:
    """Mistakes and variants load (one form per mutation, known tasks), have ids unique across both folders,
    apply to the reference (each ``old`` occurs once in its file) leaving Python, import (with ``imports``: in a
    child process, ``authoring/mutation_imports.py``) and are as many as ``[audit]`` asks."""
    problems, figures, loaded = [], [], []
    for which in ("mistakes", "variants"):
        mutations, found = read_mutations(assignment, which)  # every problem of every file, one line each
        problems += found
        loaded += mutations
        if not found:  # counted only once every one loads: a broken entry is not one too few
            figures.append(Figure(f"min_{which}", len(mutations), str(assignment.root / "hidden" / which), which,
                                  "add more"))
    combined, edited = combined_problems(assignment.reference, loaded)
    if imports and edited:
        combined += import_problems(assignment.reference, assignment.modules, edited)
    return problems + combined + missed_minimums(assignment, figures)


def key_balance_problems(assignment: Assignment) -> list[str]:
    """With ``[audit] balanced_key``, the quiz key uses each letter as often as the others, within one."""
    if assignment.quiz is None or not assignment.audit.balanced_key:
        return []
    try:
        questions, key = load_questions(assignment.quiz), load_key(assignment.quiz)
    except GraderError:
        return []  # reported by the quiz key finding
    letters = [key[q.id]["answer"] for q in questions if q.id in key]
    counts = {letter: letters.count(letter) for letter in LETTERS}
    if max(counts.values()) - min(counts.values()) <= 1:
        return []
    shown = ", ".join(f"{letter} {n}" for letter, n in counts.items())
    return [f"{assignment.quiz.key_file}: the key is unbalanced ({shown}); move answers between letters so each is "
            f"used as often as the others within one, or set [audit] balanced_key = false in {MANIFEST}"]
