"""Known mistakes and correct variants as text edits of the reference solution (for diagnosis and the audit)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from autograder.errors import AssignmentError
from autograder.spec.assignment import Assignment
from autograder.spec.manifest import location
from autograder.util.tomlio import TOMLDecodeError, load_toml

MUTATION_FOLDERS = {"mistakes": "hidden/mistakes", "variants": "hidden/variants"}


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` (which must occur exactly once) by ``new`` in one file of the reference."""

    file: str
    old: str
    new: str


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
    """

    id: str
    task: str
    hint: str
    edits: tuple[Edit, ...]
    description: str = ""
    diagnose: bool = True


def load_mutations(assignment: Assignment, which: str, present_tasks_only: bool = False) -> list[Mutation]:
    """Load the assignment's mistakes (``which="mistakes"``) or correct variants (``"variants"``).

    Each ``*.toml`` file in ``hidden/mistakes/`` or ``hidden/variants/`` holds ``[[mutation]]`` entries with
    ``id``, ``task`` (mistakes), ``hint``, ``description`` and either ``file``/``old``/``new`` or a list of
    ``edits``.

    Args:
        assignment: The assignment (possibly cut down to some of its tasks with ``dataclasses.replace``).
        which: ``"mistakes"`` or ``"variants"``.
        present_tasks_only: Drop mistakes of tasks this assignment does not have instead of refusing them
            (what a grader of a subset of the tasks needs; the audit stays strict, so typos are still caught).

    Raises:
        AssignmentError: If a file is malformed, ids repeat, or a mistake names an unknown task.
    """
    folder = assignment.root / MUTATION_FOLDERS[which]
    mutations: list[Mutation] = []
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        try:
            text = path.read_text(encoding="utf-8")
            mutations += [_build(entry, path, text, index)
                          for index, entry in enumerate(load_toml(path).get("mutation", []))]
        except (OSError, UnicodeDecodeError, TOMLDecodeError, KeyError, TypeError) as exc:
            raise AssignmentError(f"{path}: {exc}") from None
    ids = [m.id for m in mutations]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise AssignmentError(f"{folder}: duplicate mutation ids {duplicates}")
    if which == "mistakes" and present_tasks_only:
        return [m for m in mutations if m.task in assignment.task_ids]
    for mutation in mutations:
        if which == "mistakes" and mutation.task not in assignment.task_ids:
            raise AssignmentError(f"{folder}: mistake {mutation.id!r} names unknown task {mutation.task!r}")
    return mutations


_ONE_EDIT = ("file", "old", "new")
_KEYS = {"id", "task", "hint", "description", "diagnose", "edits", *_ONE_EDIT}


def _build(entry: dict, path: Path, text: str, index: int) -> Mutation:
    where = location(path, text, "mutation", None, index)
    name = entry.get("id", f"number {index + 1}")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise AssignmentError(f"{where}mutation {name!r} has unknown keys {unknown}; known: {', '.join(sorted(_KEYS))}")
    single = [key for key in _ONE_EDIT if key in entry]
    if "edits" in entry and single:
        raise AssignmentError(f"{where}mutation {name!r} has both {'/'.join(single)} and [[mutation.edits]]; keep "
                              f"one form (move the single edit into [[mutation.edits]])")
    if "edits" not in entry and len(single) != len(_ONE_EDIT):
        missing = [key for key in _ONE_EDIT if key not in entry]
        raise AssignmentError(f"{where}mutation {name!r} needs {', '.join(missing)} (or [[mutation.edits]])")
    edits = entry.get("edits") or [{key: entry[key] for key in _ONE_EDIT}]
    return Mutation(
        id=entry["id"],
        task=entry.get("task", ""),
        hint=entry.get("hint", ""),
        edits=tuple(Edit(e["file"], e["old"], e["new"]) for e in edits),
        description=entry.get("description", ""),
        diagnose=bool(entry.get("diagnose", True)),
    )


def apply_mutation(reference: Path, mutation: Mutation, destination: Path) -> Path:
    """Copy the reference package to ``destination`` and apply the mutation's edits.

    Returns:
        The mutated package folder.

    Raises:
        AssignmentError: If an edit's ``old`` text does not occur exactly once (the mutation went stale).
    """
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(reference, destination, ignore=shutil.ignore_patterns("__pycache__"))
    for edit in mutation.edits:
        path = destination / edit.file
        text = path.read_text()
        count = text.count(edit.old)
        if count != 1:
            raise AssignmentError(f"mutation {mutation.id!r}: the text to replace occurs {count} times in "
                                  f"{edit.file} (expected exactly once); update the mutation")
        path.write_text(text.replace(edit.old, edit.new))
    return destination


def diagnosable_mistakes(assignment: Assignment) -> list[Mutation]:
    """The known mistakes a diagnosis may name (they carry a hint and are not excluded from diagnosis), of the
    tasks the assignment has: what the judge compares a failed check's outputs with, and ``grader show`` too."""
    return [m for m in load_mutations(assignment, "mistakes", present_tasks_only=True) if m.diagnose and m.hint]
