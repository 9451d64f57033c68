"""Known mistakes and correct variants as text edits of the reference solution (for diagnosis and the audit)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder.errors import AssignmentError
from autograder.spec.assignment import Assignment
from autograder.spec.manifest import (
    BOOLEAN,
    REQUIRED,
    STRING,
    Key,
    Kind,
    Table,
    key_line,
    suggest,
    validate_all,
)
from autograder.spec.reference import PackageImportError, load_package
from autograder.util.paths import display_path
from autograder.util.syntax import parse
from autograder.util.tomlio import TOMLDecodeError, load_toml

MUTATION_FOLDERS = {"mistakes": "hidden/mistakes", "variants": "hidden/variants"}
_RUNNABLE = "a mistake or variant is code a student could run: fix its new text"
_ONE_EDIT = ("file", "old", "new")
_EDIT_KEYS = (Key("file", STRING, REQUIRED, "The reference file to edit, relative to the reference package."),
              Key("old", STRING, REQUIRED, "Text that occurs exactly once in that file."),
              Key("new", STRING, REQUIRED, "What replaces it."))
# What a mistakes or variants file may hold, checked by the manifest's own validator (one-line errors with the
# line and the nearest known name); the edit is file/old/new or [[mutation.edits]], never both.
SCHEMA = (Table("mutation", "A known mistake or a correct variant.", array=True, keys=(
    Key("id", STRING, REQUIRED, "Unique name, across the mistakes and the variants."),
    Key("task", STRING, "", "The task that must lose points (mistakes only)."),
    Key("hint", STRING, "", "Shown to a student whose outputs match this mistake's."),
    Key("description", STRING, "", "What the mutation does, for the audit table."),
    Key("diagnose", BOOLEAN, True, "Try this mistake when diagnosing a failed check."),
    *(Key(k.name, k.kind, None, k.doc) for k in _EDIT_KEYS),
    Key("edits", Kind("a list of [[mutation.edits]] tables", (list,), (dict,)), None, "Several edits, in order."),
)),)
EDITS = Table("mutation.edits", "One edit of a mutation with several.", array=True, keys=_EDIT_KEYS)


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` (which must occur exactly once) by ``new`` in one file of the reference.

    Attributes:
        file: The file, relative to the reference package.
        old: The text replaced.
        new: What replaces it.
        file_at: ``toml-file:line`` where ``file`` is written (for errors; empty when unknown).
        old_at: ``toml-file:line`` where ``old`` is written.
    """

    file: str
    old: str
    new: str
    file_at: str = field(default="", compare=False)
    old_at: str = field(default="", compare=False)


@dataclass(frozen=True)
class Mutation:
    """A mistake (``task`` must lose points; ``hint`` is the diagnosis) or a correct variant (``task`` empty).

    Attributes:
        id: Unique name.
        task: The task that must lose points (mistakes only).
        hint: Plain-words diagnosis shown to a student whose outputs match this mistake's.
        edits: Text edits applied to the reference.
        description: What the mutation does, for the audit table.
        diagnose: Whether the grader tries this mistake when diagnosing a failed check.
        at: ``toml-file:line`` of its ``id`` (for errors; empty when unknown).
    """

    id: str
    task: str
    hint: str
    edits: tuple[Edit, ...]
    description: str = ""
    diagnose: bool = True
    at: str = field(default="", compare=False)


Edited = tuple[Mutation, dict[str, str]]  # a mutation and the text of each file it edits (edited_texts)


def load_mutations(assignment: Assignment, which: str, present_tasks_only: bool = False) -> list[Mutation]:
    """Load the assignment's mistakes (``which="mistakes"``) or correct variants (``"variants"``).

    Each ``*.toml`` file in ``hidden/mistakes/`` or ``hidden/variants/`` holds ``[[mutation]]`` entries with
    ``id``, ``task`` (mistakes), ``hint``, ``description`` and either ``file``/``old``/``new`` or a list of
    ``edits`` (SCHEMA).

    Args:
        assignment: The assignment (possibly cut down to some of its tasks with ``dataclasses.replace``).
        which: ``"mistakes"`` or ``"variants"``.
        present_tasks_only: Drop mistakes of tasks this assignment does not have instead of refusing them
            (what a grader of a subset of the tasks needs; the audit stays strict, so typos are still caught).

    Raises:
        AssignmentError: One line: the first problem :func:`read_mutations` finds, with its file and line, and how
            many more there are (``grader verify`` lists every one).
    """
    mutations, problems = read_mutations(assignment, which, present_tasks_only)
    if problems:
        more = f" (and {len(problems) - 1} more: `grader verify {assignment.name}` lists each)" \
            if len(problems) > 1 else ""
        raise AssignmentError(problems[0] + more)
    return mutations


def read_mutations(assignment: Assignment, which: str,
                   present_tasks_only: bool = False) -> tuple[list[Mutation], list[str]]:
    """The sound mistakes or variants of the assignment, and one line per problem of every file (see
    :func:`load_mutations`): a malformed file (an unknown table or key, a value of the wrong type, both edit
    forms), a repeated id, a variant with a task, a mistake that names no task or an unknown one."""
    folder = assignment.root / MUTATION_FOLDERS[which]
    tasks = None if present_tasks_only else set(assignment.task_ids)
    mutations: list[Mutation] = []
    problems: list[str] = []
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        found, wrong = _load_file(path, which, tasks)
        mutations += found
        problems += wrong
    problems += _duplicate_id_problems(mutations)
    if which == "mistakes" and present_tasks_only:
        mutations = [m for m in mutations if m.task in assignment.task_ids]
    return mutations, problems


def _duplicate_id_problems(mutations: list[Mutation]) -> list[str]:
    """One line per id used by more than one mutation, naming where each is declared."""
    seen: dict[str, Mutation] = {}
    problems = []
    for mutation in mutations:
        first = seen.setdefault(mutation.id, mutation)
        if first is not mutation:
            problems.append(f"{_start(mutation.at)}mutation id {mutation.id!r} is already used"
                            f"{f' at {first.at}' if first.at else ''}; give each mistake and variant its own id")
    return problems


def _start(at: str) -> str:
    """``toml-file:line: `` to start a one-line error ('' for a mutation built in code, which has no file)."""
    return f"{at}: " if at else ""


def _load_file(path: Path, which: str, tasks: set[str] | None) -> tuple[list[Mutation], list[str]]:
    """One mistakes or variants file's sound mutations, checked against SCHEMA (and ``tasks`` when given), and
    one line per problem of its entries (an entry with a problem is left out; the others are still read)."""
    shown = Path(display_path(path))
    try:
        text = path.read_text(encoding="utf-8")
        data = load_toml(path)
    except (OSError, UnicodeDecodeError, TOMLDecodeError) as exc:
        return [], [f"{shown}: {exc}"]
    filled, problems = validate_all(data, text, shown, SCHEMA)
    # Every [[mutation.edits]] of the file, sound entry or not, so that each keeps its place in the file's order.
    raw = [_tables(entry.get("edits")) for entry in _tables(data.get("mutation"))]
    edits, edit_problems = validate_all({EDITS.name: [e for entry in raw for e in entry]}, text, shown, (EDITS,))
    problems += edit_problems
    mutations, used = [], 0
    for index, entry in enumerate(filled["mutation"]):
        own = edits[EDITS.name][used:used + len(raw[index])]
        if entry is not None and None not in own:
            try:
                mutations.append(_build(entry, own, used, _Where(shown, text, index), which, tasks))
            except AssignmentError as exc:
                problems.append(str(exc))
        used += len(raw[index])
    return mutations, sorted(problems, key=lambda problem: _line_number(problem, shown))


def _line_number(problem: str, path: Path) -> int:
    """The line a problem of ``path`` names (``path:line: ...``; 0 when it names none), to list them in file order."""
    line = problem[len(f"{path}:"):].partition(":")[0]
    return int(line) if problem.startswith(f"{path}:") and line.isdigit() else 0


def _tables(value: Any) -> list[dict[str, Any]]:
    """The tables of a ``[[table]]`` as TOML gives them (a list), none when the file writes it otherwise."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


@dataclass(frozen=True)
class _Where:
    """Where one ``[[mutation]]`` entry is written, to name its lines in errors."""

    path: Path
    text: str
    index: int

    def at(self, key: str | None, table: str = "mutation", index: int | None = None) -> str:
        line = key_line(self.text, table, key, self.index if index is None else index) or \
            key_line(self.text, "mutation", None, self.index)
        return f"{self.path}:{line}" if line else str(self.path)


def _build(entry: dict[str, Any], edits: list[dict[str, Any]], first_edit: int, where: _Where, which: str,
           tasks: set[str] | None) -> Mutation:
    """A validated ``[[mutation]]`` entry as a Mutation, once its form and task make sense."""
    name = entry["id"]
    single = [key for key in _ONE_EDIT if entry[key] is not None]
    if entry["edits"] is not None and single:
        raise AssignmentError(f"{where.at(single[0])}: mutation {name!r} has both {'/'.join(single)} and "
                              f"[[mutation.edits]]; keep one form (move the single edit into [[mutation.edits]])")
    if entry["edits"] is None and len(single) != len(_ONE_EDIT):
        missing = [key for key in _ONE_EDIT if key not in single]
        raise AssignmentError(f"{where.at(None)}: mutation {name!r} needs {', '.join(missing)} "
                              f"(or [[mutation.edits]])")
    if entry["edits"] == []:
        raise AssignmentError(f"{where.at('edits')}: mutation {name!r} has no edits; give it at least one")
    _check_task(entry, where, which, tasks)
    if entry["edits"] is None:
        built = (Edit(entry["file"], entry["old"], entry["new"], where.at("file"), where.at("old")),)
    else:
        built = tuple(Edit(e["file"], e["old"], e["new"], where.at("file", EDITS.name, first_edit + number),
                           where.at("old", EDITS.name, first_edit + number)) for number, e in enumerate(edits))
    return Mutation(id=name, task=entry["task"], hint=entry["hint"], edits=built,
                    description=entry["description"], diagnose=entry["diagnose"], at=where.at("id"))


def _check_task(entry: dict[str, Any], where: _Where, which: str, tasks: set[str] | None) -> None:
    """A variant has no task; a mistake names one of the assignment's (when ``tasks`` is given)."""
    name, task = entry["id"], entry["task"]
    if which == "variants" and task:
        raise AssignmentError(f"{where.at('task')}: variant {name!r} has task = {task!r}, but a variant must keep "
                              f"full marks in every task: remove task, or move it to {MUTATION_FOLDERS['mistakes']}/ "
                              f"if it must lose points")
    if which != "mistakes" or tasks is None or task in tasks:
        return
    if not task:
        raise AssignmentError(f"{where.at(None)}: mistake {name!r} needs task = the task that must lose points "
                              f"(one of: {', '.join(sorted(tasks))})")
    raise AssignmentError(f"{where.at('task')}: mistake {name!r} names unknown task {task!r}{suggest(task, tasks)}")


def edited_texts(reference: Path, mutation: Mutation) -> dict[str, str]:
    """The text of each file a mutation edits, once its edits are made (in order; nothing is written).

    Raises:
        AssignmentError: If an edit names a file the reference does not have, or its ``old`` text does not occur
            exactly once (the mutation went stale); one line with the mutation file's line.
    """
    texts: dict[str, str] = {}
    for edit in mutation.edits:
        if edit.file not in texts:
            texts[edit.file] = _reference_text(reference, mutation, edit)
        count = texts[edit.file].count(edit.old)
        if count != 1:
            fix = "copy it again from the reference" if count == 0 else "lengthen it until it occurs once"
            raise AssignmentError(f"{_start(edit.old_at or mutation.at)}mutation {mutation.id!r} is stale: its old "
                                  f"text occurs {count} times in {edit.file} of the reference (expected exactly "
                                  f"once); {fix}")
        texts[edit.file] = texts[edit.file].replace(edit.old, edit.new)
    return texts


def _reference_text(reference: Path, mutation: Mutation, edit: Edit) -> str:
    """The reference file an edit names (an AssignmentError naming the nearest one when it has none)."""
    path = reference / edit.file
    if not path.is_file():
        known = sorted(p.relative_to(reference).as_posix() for p in reference.rglob("*.py")
                       if "__pycache__" not in p.parts)
        raise AssignmentError(f"{_start(edit.file_at or mutation.at)}mutation {mutation.id!r}: file {edit.file!r} "
                              f"is not in the reference {display_path(reference)}{suggest(edit.file, known)}")
    return path.read_text(encoding="utf-8")


def apply_mutation(reference: Path, mutation: Mutation, destination: Path) -> Path:
    """Copy the reference package to ``destination`` and apply the mutation's edits.

    Returns:
        The mutated package folder.

    Raises:
        AssignmentError: If an edit does not apply (see edited_texts).
    """
    return write_mutated(reference, edited_texts(reference, mutation), destination)


def write_mutated(reference: Path, texts: dict[str, str], destination: Path) -> Path:
    """Copy the reference package to ``destination`` with the edited files of :func:`edited_texts` in place.

    Returns:
        The mutated package folder.
    """
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(reference, destination, ignore=shutil.ignore_patterns("__pycache__"))
    for name, text in texts.items():
        (destination / name).write_text(text, encoding="utf-8")
    return destination


def load_mutation(folder: Path, mutation: Mutation, name: str, modules: tuple[str, ...]) -> ModuleType:
    """Import a mutated package (:func:`apply_mutation`'s folder) under a private name, with its modules: the one
    test of whether a mutation imports, which the judge (it leaves such a mistake out of diagnosis) and
    ``grader verify`` (it refuses it, in a child process) both run.

    Raises:
        AssignmentError: If importing it raises: one line naming the mutation, its file and line, and the
            exception (:func:`unimportable`).
    """
    try:
        return load_package(folder, name, modules)
    except PackageImportError as exc:
        raise AssignmentError(unimportable(mutation, exc.detail)) from None


def unimportable(mutation: Mutation, detail: str) -> str:
    """The line for a mutation whose package does not import (``detail``: where and what): such a "mistake" is
    caught by the import, never by a check (its hint is never shown: the judge cannot run it on a probe), and
    such a variant cannot keep its marks."""
    return f"{_start(mutation.at)}mutation {mutation.id!r} does not import: {detail}; {_RUNNABLE}"


def combined_problems(reference: Path, mutations: list[Mutation]) -> tuple[list[str], list[Edited]]:
    """What only the mistakes and variants together show, one line each: an id used in both folders, an edit
    that does not apply to the reference (a misspelt file, an ``old`` text gone stale), an edit that leaves a file
    that is not Python. No grading: text only, each mutation's edits made once.

    Returns:
        The lines, and the mutations whose edits apply and leave Python, each with the text of every file it
        edits (what importing them needs: ``authoring/mutation_imports.py``).
    """
    problems, edited = _duplicate_id_problems(mutations), []
    for mutation in mutations:
        try:
            texts = edited_texts(reference, mutation)
        except AssignmentError as exc:
            problems.append(str(exc))
            continue
        syntax = _syntax_problems(mutation, texts)
        problems += syntax
        if not syntax:
            edited.append((mutation, texts))
    return problems, edited


def _syntax_problems(mutation: Mutation, texts: dict[str, str]) -> list[str]:
    """A line for each file the mutation's edits leave unparsable: such a mutation does not import either
    (:func:`unimportable`), but the text alone tells, and where."""
    found = []
    for file, text in texts.items():
        try:
            parse(text, filename=file)
        except SyntaxError as exc:
            found.append(f"{_start(mutation.at)}mutation {mutation.id!r} leaves {file} with a syntax error at line "
                         f"{exc.lineno} ({exc.msg}); {_RUNNABLE}")
    return found


def applying(reference: Path, mutations: list[Mutation]) -> tuple[list[Mutation], list[str]]:
    """The mutations whose edits apply to the reference, and one line for each of the others (see edited_texts)."""
    sound, problems = [], []
    for mutation in mutations:
        try:
            edited_texts(reference, mutation)
            sound.append(mutation)
        except AssignmentError as exc:
            problems.append(str(exc))
    return sound, problems


def diagnosable_mistakes(assignment: Assignment) -> tuple[list[Mutation], list[str]]:
    """The known mistakes a diagnosis may name (they carry a hint, are not excluded from diagnosis and apply to
    the reference), of the tasks the assignment has: what the judge compares a failed check's outputs with, and
    ``grader show`` too; and one line for each stale one left out (its ``old`` text gone from the reference:
    ``grader verify`` refuses it, grading and the figures name nothing with it). One that does not import is found
    only by importing it (:func:`load_mutation`), too slow to do for every mistake when a grader starts: the judge
    leaves it out when it first tries it (``Judge.unimportable``)."""
    named = [m for m in load_mutations(assignment, "mistakes", present_tasks_only=True) if m.diagnose and m.hint]
    return applying(assignment.reference, named)
