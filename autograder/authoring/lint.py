"""Authoring mistakes ``grader verify`` finds before grading: each one line naming the file and the fix."""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.authoring.hidden_names import hidden_imports, hidden_modules
from autograder.authoring.minimums import Figure, missed_minimums
from autograder.authoring.mutation_imports import import_problems
from autograder.errors import AssignmentError, GraderError
from autograder.probe.checks import Check, checks_file_problems
from autograder.spec.assignment import MANIFEST, Assignment, missing_paths
from autograder.spec.manifest import key_line, location
from autograder.spec.mutation import combined_problems, read_mutations
from autograder.spec.quiz import load_key, load_questions
from autograder.util.names import nearest
from autograder.util.syntax import parse
from autograder.util.tomlio import load_toml

LETTERS = "abcd"


def lint_assignment(assignment: Assignment, imports: bool = True) -> list[str]:
    """Every authoring problem of the assignment, one line each (none when it is sound); ``imports``: also import
    every mistake and variant (:func:`mutation_problems`), else they are read as text only."""
    return (declared_path_problems(assignment) + student_file_problems(assignment) + points_problems(assignment)
            + checks_problems(assignment) + public_test_problems(assignment) + reference_name_problems(assignment)
            + mutation_problems(assignment, imports) + key_balance_problems(assignment) + figure_problems(assignment))


def declared_path_problems(assignment: Assignment) -> list[str]:
    """Every file and folder the manifest names exists: each task's ``checks``, the quiz's ``questions`` and
    ``key``, ``public_tests`` (a student's copy lacks the hidden ones; the instructor's may not)."""
    return list(missing_paths(assignment).values())


def student_file_problems(assignment: Assignment) -> list[str]:
    """Every file of the reference that a student file imports (``from . import x``, ``from .x import``, ``from
    <package>.x import``) is a student file too: grading takes only ``student_files`` from a submission, and the
    template holds only them, so importing another file of the reference fails for every student (and for the
    reference when ``grader verify`` grades it)."""
    manifest = assignment.root / MANIFEST
    where = location(manifest, manifest.read_text(encoding="utf-8"), "assignment", "student_files").rstrip(": ")
    listed = set(assignment.student_files)
    problems = []
    for name in sorted(n for n in listed if n.endswith(".py") and "/" not in n):
        path = assignment.reference / name
        try:
            tree = parse(path.read_text(encoding="utf-8"), str(path))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue  # a missing or broken reference file: grading the reference says so
        for line, target in _sibling_imports(tree, assignment.package, assignment.reference):
            if target not in listed:
                problems.append(f"{path}:{line}: imports {target}, which is not in [assignment] student_files: "
                                f"grading takes only those files of a submission, so this import fails for every "
                                f"student — add \"{target}\" to student_files ({where})")
    return problems


def _sibling_imports(tree: ast.AST, package: str, folder: Path) -> list[tuple[int, str]]:
    """``(line, file)`` of each import, in a top-level file of the package, of another file beside it."""
    found = set()
    for node in ast.walk(tree):
        for module in _imported_siblings(node, package):
            for target in (f"{module}.py", f"{module}/__init__.py"):
                if (folder / target).is_file():
                    found.add((node.lineno, target))
                    break
    return sorted(found)


def _imported_siblings(node: ast.AST, package: str) -> list[str]:
    """The modules of the package an import statement names (``from . import x``, ``from .x import``, ``from
    <package>.x import``, ``import <package>.x``), by their first name below the package."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level <= 1:
        prefix = f"{package}." if node.level else ""
        names = [prefix + node.module] if node.module else [prefix + alias.name for alias in node.names]
    else:
        return []
    return [name.split(".")[1] for name in names if name.startswith(f"{package}.")]


def points_total(assignment: Assignment) -> tuple[float, float | None]:
    """What the tasks' and the quiz's points add up to, and what ``[assignment] total_points`` says they must (None
    when it says nothing)."""
    declared = load_toml(assignment.root / MANIFEST).get("assignment", {}).get("total_points")
    return assignment.max_score, None if declared is None else float(declared)


def points_problems(assignment: Assignment) -> list[str]:
    """The points add up to ``[assignment] total_points`` where it is declared: one line naming it and each
    ``points`` line."""
    total, declared = points_total(assignment)
    if declared is None or abs(total - declared) < 1e-9:
        return []
    manifest = assignment.root / MANIFEST
    text = manifest.read_text(encoding="utf-8")
    parts = [f"{task.id} {task.points:g} (line {key_line(text, 'tasks', 'points', index)})"
             for index, task in enumerate(assignment.tasks)]
    if assignment.quiz is not None:
        parts.append(f"{assignment.quiz.task_id} {assignment.quiz.points:g} (line {key_line(text, 'quiz', 'points')})")
    return [f"{location(manifest, text, 'assignment', 'total_points')}[assignment] total_points is {declared:g}, but "
            f"the points add up to {total:g}: {', '.join(parts)} — change a task's points, or total_points"]


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
    runs a test with its task, and one of no task not at all), every public test file parses, and none imports a
    module only the instructor's copy has (``authoring/hidden_names.py``, as the release's leak scan reads it)."""
    if not assignment.public_tests.is_dir():
        return []  # reported by declared_path_problems
    known = [task.id for task in assignment.tasks]
    hidden = hidden_modules(assignment)
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
        problems += _marker_problems(path, tree, known)
        problems += [f"{path}:{found.line}: {found.sentence()}" for found in hidden_imports(tree, hidden)]
    return problems


def _marker_problems(path: Path, tree: ast.AST, known: list[str]) -> list[str]:
    """One line per ``mark.task`` of a public test file that names no task of the manifest."""
    problems = []
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
