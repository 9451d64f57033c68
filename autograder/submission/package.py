"""The student's package: find it in a folder, and copy only the files the assignment declares, within the size rule."""

from __future__ import annotations

import ast
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import SubmissionError
from autograder.spec.assignment import MANIFEST, Assignment
from autograder.submission.notebook.places import CellMap, module_words
from autograder.util.syntax import parse

MAX_STUDENT_FILE_BYTES = 2 * 1024 * 1024  # one graded file, whatever holds it (folder, zip or notebook)
SEARCH_DEPTH = 3
MAX_IGNORED_LISTED = 20
_HOOKS = {"conftest.py", "sitecustomize.py", "usercustomize.py"}


PACKAGE_README = "README.md"  # the student README the template writes into the package (authoring/template.py)


@dataclass
class PreparedSubmission:
    """A submission copied into a private folder, and what was found, taken and left.

    Attributes:
        workdir: Folder that holds the copied package (``workdir/<package>/``).
        package_dir: The copied package folder.
        source: Where the graded work was found: the package folder, or the notebook (inside the grader's scratch
            folder when it came from a zip).
        label: How messages name what the user gave (the folder's, zip's or notebook's name).
        shown: How the graded work is named to the user: its path in their folder, or inside their zip.
        copied: Declared files that were present and copied.
        missing: Declared files that were absent.
        refused: Declared files that were present but cannot be graded, with the one message that says why.
        ignored: Other files of the student's package that were not taken, with the reason.
        reading: What reading a notebook found that the student should know (a cell with a syntax error, ...).
        choice: One sentence when the choice of what to grade needed the rule (a package beside a notebook).
        digest: SHA-256 over the copied files' names and contents and, for a notebook, its cell map and
            ``reading`` (what its feedback says of where things are: see :func:`take_files`).
        cell_map: For a notebook, where each line of the extracted files comes from, so a location is said as its
            cell and line (``autograder.submission.notebook.places.place``); None for a package.
    """

    workdir: Path
    package_dir: Path
    source: Path
    label: str = ""
    shown: Path = Path()
    copied: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    reading: list[str] = field(default_factory=list)
    choice: str = ""
    digest: str = ""
    cell_map: CellMap | None = None

    def notes(self, ignored: bool = True) -> list[str]:
        """What the student should know about the intake, one sentence each, the choice of what was graded first.

        Args:
            ignored: Whether to list the files that were left out, too.
        """
        left = [f"ignored: {name}" for name in self.ignored] + [f"ignored: {self.source.name}: {note}"
                                                                for note in self.reading]
        return ([self.choice] if self.choice else []) + list(self.refused.values()) + [
            f"missing file: {name}" for name in self.missing] + (left if ignored else [])

    def cannot_import(self, module: str, reason: str) -> str:
        """``kv_cache.py could not be imported: <reason>``, a notebook's module named by its cells
        (:func:`autograder.submission.notebook.places.module_words`)."""
        return f"{module_words(module, self.cell_map)} could not be imported: {reason}"

    def import_notes(self, broken: dict[str, str]) -> list[str]:
        """A note for each module that could not be imported (module name to why), except those the intake already
        names in :meth:`notes` (refused or missing)."""
        return [self.cannot_import(module, reason) for module, reason in broken.items()
                if f"{module}.py" not in self.refused and f"{module}.py" not in self.missing]


def find_package(root: Path, assignment: Assignment, label: str | None = None, nested: bool = True) -> Path | None:
    """Locate the student's package folder at or under ``root``, or None when there is none.

    Accepts the package folder itself, a folder holding the package's files directly, or a folder containing it (a
    repository root, Gradescope's ``/autograder/submission``): up to a few levels deep, or, unless ``nested``, only
    as ``root/<package>/`` (the working folder: a shared one holds other people's work further down). Hidden
    folders (``.git``, ``.ipynb_checkpoints``) and ``__MACOSX`` are not searched. Messages name the submission by
    ``label`` (default: the folder's name), never by a path of this machine.

    Raises:
        SubmissionError: If several packages are found.
    """
    markers = module_files(assignment)
    if _looks_like_package(root, markers):
        return root
    if not nested:
        own = root / assignment.package
        return own if _looks_like_package(own, markers) and not _course_material(own, root, assignment) else None
    return _package_below(root, assignment, markers, label)


def _package_below(root: Path, assignment: Assignment, markers: set[str], label: str | None) -> Path | None:
    """The one package a few levels below ``root`` (one named like the package first), or None.

    Raises:
        SubmissionError: If several packages are found.
    """
    folders = [p for p in _folders(root, SEARCH_DEPTH) if not _course_material(p, root, assignment)]
    candidates = [p for p in folders if p.name == assignment.package and _looks_like_package(p, markers)]
    if not candidates:
        candidates = [p for p in folders if _looks_like_package(p, markers)]
    if len(candidates) > 1:
        listed = ", ".join(c.relative_to(root).as_posix() for c in candidates[:4])
        raise SubmissionError(f"several candidate {assignment.package}/ packages in {label or root.name}: {listed}")
    return candidates[0] if candidates else None


def _course_material(folder: Path, root: Path, assignment: Assignment) -> bool:
    """Whether a folder found below ``root`` is an assignment's own (figures, tests, checks: files named like the
    student's modules), never a student's work: it lies in a folder with a manifest (``assignment.toml``) at or
    below ``root``, and is not this assignment's declared reference or template package. A manifest above
    ``root`` does not count: submissions may be kept inside an assignment's folder."""
    resolved = folder.resolve()
    if any(resolved.is_relative_to(base.resolve()) for base in (assignment.reference, assignment.template)):
        return False
    for here in [folder, *folder.parents]:  # ``folder`` was found below ``root``: the walk meets it
        if (here / MANIFEST).is_file():
            return True
        if here == root:
            break
    return False


def module_files(assignment: Assignment) -> set[str]:
    """The declared ``.py`` files that make a folder the student's package (``__init__.py`` alone does not)."""
    return {f for f in assignment.student_files if f.endswith(".py") and f != "__init__.py"}


def _folders(root: Path, depth: int) -> list[Path]:
    found: list[Path] = []
    frontier = [root]
    for _ in range(depth):
        nxt = []
        for folder in frontier:
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
                                  and not p.name.startswith(".") and p.name != "__MACOSX")
            except OSError:
                continue
            found.extend(children)
            nxt.extend(children)
        frontier = nxt
    return found


def _looks_like_package(folder: Path, marker_files: set[str]) -> bool:
    return any((folder / name).is_file() for name in marker_files)


def missing_name_message(file: str, name: str, user: str) -> str:
    """The one sentence for a name the student's file lacks (renamed or removed), wherever it is found.

    Args:
        file: The student's file as the reader sees it (``assignment3/attention.py``).
        name: The missing name (``causal_mask``).
        user: Who looks it up, with the verb (``the public tests import``, ``the grader calls``).
    """
    return f"{file} has no {name} (renamed or removed? {user} it by that name)"


def size_message(name: str, size: int) -> str:
    """The one sentence for a graded file over the limit, wherever it came from."""
    return f"{name} is {size / 1e6:.1f} MB; the limit for a graded file is {MAX_STUDENT_FILE_BYTES >> 20} MiB"


def new_prepared(scratch: Path, assignment: Assignment, source: Path, label: str, shown: Path) -> PreparedSubmission:
    """An empty prepared submission whose package folder is ``scratch/submission/<package>/`` (created)."""
    workdir = scratch / "submission"
    package_dir = workdir / assignment.package
    package_dir.mkdir(parents=True)
    return PreparedSubmission(workdir=workdir, package_dir=package_dir, source=source, label=label, shown=shown)


def copy_package(prepared: PreparedSubmission, assignment: Assignment, sizes: dict[Path, int] | None = None) -> None:
    """Copy the declared files of the package folder ``prepared.source``; a file over the limit is never read.

    Args:
        prepared: From :func:`new_prepared`.
        assignment: The assignment.
        sizes: The real sizes of files cut short when unpacked (a zip's), by path.
    """
    source = prepared.source
    if source.is_symlink():  # e.g. a repository's package folder -> a copy of the reference elsewhere
        raise SubmissionError(f"the {assignment.package}/ package folder is a symbolic link; submit the "
                              f"files themselves")
    files: dict[str, bytes | int | None] = {}
    for name in assignment.student_files:
        file = source / name
        if not file.is_file() or file.is_symlink():
            files[name] = None
            continue
        size = (sizes or {}).get(file, file.stat().st_size)
        files[name] = size if size > MAX_STUDENT_FILE_BYTES else _read_at_most(file, MAX_STUDENT_FILE_BYTES + 1)
    take_files(prepared, assignment, files)
    prepared.ignored.extend(ignored_notes(_files_below(source), not_noted(assignment)))


def _read_at_most(file: Path, limit: int) -> bytes:
    """The first ``limit`` bytes of ``file`` (a file that grew since it was measured is still read no further)."""
    with open(file, "rb") as handle:
        return handle.read(limit)


def take_files(prepared: PreparedSubmission, assignment: Assignment, files: dict[str, bytes | int | None],
               cell_map: CellMap | None = None, reading: Sequence[str] = ()) -> None:
    """Write the declared files into the prepared package, and digest what a grade and its feedback depend on.

    The digest decides "unchanged" (``grade-all`` skips a student whose digest it graded, the queue and the
    figures' stamps key on it), so it covers the files' names and bytes and, for a notebook, where their lines
    come from and the notes that name its cells: a line added above a definition in its cell moves every
    ``cell 9, line 14`` below it without changing a byte of the files. A package has neither, so its digest is
    its files' alone, the value it always had (an upgrade regrades no unchanged package).

    Args:
        prepared: From :func:`new_prepared`.
        assignment: The assignment.
        files: Each declared file's bytes, its size when it was too large to read, or None when absent.
        cell_map: For a notebook, where each line of its extracted files comes from (kept as ``prepared.cell_map``).
        reading: For a notebook, what reading it found (kept as ``prepared.reading``).
    """
    digest = hashlib.sha256()
    for name in assignment.student_files:
        data = files.get(name)
        if isinstance(data, bytes) and len(data) > MAX_STUDENT_FILE_BYTES:
            data = len(data)
        if data is None:
            prepared.missing.append(name)
        elif isinstance(data, int):
            prepared.refused[name] = size_message(name, data)
        else:
            (prepared.package_dir / name).write_bytes(data)
            prepared.copied.append(name)
            digest.update(name.encode() + b"\0" + data + b"\0")
    if cell_map is not None:  # JSON escapes what UTF-8 cannot encode (a lone surrogate from a cell's text)
        digest.update(b"notebook\0" + json.dumps({"cells": cell_map.to_data(), "reading": list(reading)},
                                                  sort_keys=True).encode())
    _use_original_init(prepared, assignment)
    prepared.cell_map, prepared.reading = cell_map, list(reading)
    prepared.digest = digest.hexdigest()


def not_noted(assignment: Assignment) -> set[str]:
    """The package's files no "ignored" note is worth: the graded ones, and the README the student template writes
    into every package (:data:`PACKAGE_README`), which every student's folder holds."""
    return set(assignment.student_files) | {PACKAGE_README}


def ignored_notes(relatives: Iterable[str], declared: set[str]) -> list[str]:
    """One note per file of the package that is not graded (at most a few, then how many more there are).

    Args:
        relatives: The package's files, as posix paths relative to it (a folder's or a zip's alike).
        declared: The files not to note (:func:`not_noted`).
    """
    notes: list[str] = []
    more = 0
    for relative in relatives:
        parts = relative.split("/")
        if relative in declared or "__pycache__" in parts or any(p.startswith(".") for p in parts):
            continue
        if len(notes) >= MAX_IGNORED_LISTED:
            more += 1
            continue
        name = parts[-1]
        if name in _HOOKS or name.endswith(".pth"):
            notes.append(f"{relative} (would run code before grading; not used)")
        elif name.endswith(".py"):
            notes.append(f"{relative} (not a file of this assignment; not used)")
        else:
            notes.append(f"{relative} (not graded; not read)")
    return notes + ([f"{more} more file{'s' * (more != 1)} (not graded; not read)"] if more else [])


def _files_below(folder: Path) -> Iterator[str]:
    """The files below ``folder`` as sorted posix paths relative to it, hidden folders and links not entered."""
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        base = Path(top).relative_to(folder)
        for name in sorted(names):
            yield (base / name).as_posix()


def _use_original_init(prepared: PreparedSubmission, assignment: Assignment) -> None:
    """Grade with the package's original ``__init__.py`` (students are told to leave it as it is): code added there
    would run before every task, so one broken import in it would cost every task, not one. The original is the
    student template's (generated, so never a solution), or an empty file where the template is not installed."""
    original = assignment.template / "__init__.py"
    text = original.read_bytes() if original.is_file() else b""
    target = prepared.package_dir / "__init__.py"
    if target.is_file() and not _holds_no_code(target.read_bytes()):
        prepared.ignored.append("__init__.py (changed; graded with the original, which the README asks you to "
                                "leave as it is)")
    target.write_bytes(text)


def _holds_no_code(source: bytes) -> bool:
    """Whether a module is empty or only a docstring (and comments)."""
    try:
        body = parse(source).body
    except (SyntaxError, ValueError):
        return False
    return not body or (len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str))
