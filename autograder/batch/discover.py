"""Find each student's submission in a class folder (plain, Gradescope export, GitHub Classroom) and its id."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from autograder.errors import GraderError
from autograder.util.safety import printable

LAYOUTS = ("auto", "plain", "gradescope", "classroom", "nbgrader")


GRADESCOPE_METADATA = "submission_metadata.yml"


@dataclass(frozen=True)
class Entry:
    """One student's submission: the student id and the folder or zip holding their work."""

    student: str
    path: Path


def discover(root: Path, layout: str, assignment_name: str) -> tuple[list[Entry], list[str]]:
    """Find one submission per student in ``root``.

    Layouts: ``plain`` (a subfolder or ``.zip`` per student, named by the student id), ``gradescope`` (an
    unzipped "Export Submissions" folder: ``submission_<n>/`` folders and ``submission_metadata.yml``; the id
    is the submitter's SID, else e-mail, else name, group members joined by ``+``), ``classroom`` (GitHub
    Classroom's ``<assignment>-<username>`` folders; the id is the username), ``nbgrader`` (a course's
    ``submitted/<student>/<assignment>/``) and ``auto`` (gradescope when the metadata file is present, plain
    otherwise; an nbgrader course is refused, naming the layouts to choose).

    Returns:
        The entries sorted by student id, and the names of entries that were not used.

    Raises:
        GraderError: If the folder is missing or holds no submission, the layout is unknown, two entries claim
            the same student, or ``auto`` is given an nbgrader course.
    """
    if not root.is_dir():
        raise GraderError(f"submissions folder not found: {root}")
    if layout not in LAYOUTS:
        raise GraderError(f"unknown layout {layout!r} (choose from {', '.join(LAYOUTS)})")
    if layout == "auto":
        if _is_nbgrader_course(root, assignment_name):
            raise GraderError(f"{root} is an nbgrader course (submitted/<student>/{assignment_name}/): grade it with "
                              f"--layout nbgrader, or --layout plain to take each entry of {root} as a student")
        layout = "gradescope" if (root / GRADESCOPE_METADATA).is_file() else "plain"
    if layout == "nbgrader":  # ROOT is an nbgrader course: submitted/<student>/<assignment>/
        from autograder.batch.nbgrader_course import discover as nbgrader_discover

        pairs, ignored = nbgrader_discover(root, assignment_name)
        return _unique(_some(pairs, ignored, f"{root}/submitted/<student>/{assignment_name}/ folders")), ignored
    candidates, ignored = _candidates(root)
    if layout == "gradescope":
        pairs = _gradescope_ids(root, candidates)
    elif layout == "classroom":
        pairs = _classroom_ids(candidates, assignment_name)
    else:
        pairs = [(_stem(p), p) for p in candidates]
    return _unique(_some(pairs, ignored, f"one folder, .zip or .ipynb per student in {root}")), ignored


def _is_nbgrader_course(root: Path, assignment_name: str) -> bool:
    """Whether ``root`` holds the submissions of an nbgrader course (``submitted/<student>/<assignment>/``): taken
    as plain, it would be one student named "submitted"; and the nbgrader layout writes the course's gradebook, so
    it is chosen, never guessed."""
    from autograder.batch.nbgrader_course import SUBMITTED
    from autograder.batch.nbgrader_course import discover as nbgrader_discover

    return (root / SUBMITTED).is_dir() and bool(nbgrader_discover(root, assignment_name)[0])


def _some(pairs: list[tuple[str, Path]], ignored: list[str], expected: str) -> list[tuple[str, Path]]:
    """The submissions found; none is an error (a class of nobody is a wrong folder, not a result)."""
    if not pairs:
        found = f"; found only {', '.join(ignored[:5])}" if ignored else "; it is empty"
        raise GraderError(f"no submissions to grade: expected {expected}{found}")
    return pairs


def _candidates(root: Path) -> tuple[list[Path], list[str]]:
    used, ignored = [], []
    for path in sorted(root.iterdir()):
        if path.name.startswith(".") or path.name == "__MACOSX" or path.name == GRADESCOPE_METADATA:
            continue
        if path.is_symlink():
            ignored.append(f"{printable(path.name)} (a symbolic link)")
        elif path.is_dir() or (path.is_file() and path.suffix.lower() in (".zip", ".ipynb")):  # a notebook is extracted
            used.append(path)
        else:
            ignored.append(f"{printable(path.name)} (neither a folder nor a .zip)")
    return used, ignored


def _stem(path: Path) -> str:
    if path.is_file() and path.suffix.lower() in (".zip", ".ipynb"):
        return path.name[: -len(path.suffix)]
    return path.name


def _unique(pairs: list[tuple[str, Path]]) -> list[Entry]:
    seen: dict[str, Path] = {}
    for student, path in pairs:
        student = printable(student)  # a folder name need not be UTF-8; ids end up in SQLite, CSV and reports
        if not student.strip():
            raise GraderError(f"cannot derive a student id from '{printable(path.name)}'")
        if student in seen:
            raise GraderError(f"two submissions for student '{student}': {printable(seen[student].name)} and "
                              f"{printable(path.name)}")
        seen[student] = path
    return [Entry(student, seen[student]) for student in sorted(seen)]


def _gradescope_ids(root: Path, candidates: list[Path]) -> list[tuple[str, Path]]:
    metadata_path = root / GRADESCOPE_METADATA
    metadata = read_gradescope_metadata(metadata_path) if metadata_path.is_file() else {}
    pairs = []
    for path in candidates:
        submitters = metadata.get(_stem(path), [])
        ids = [_submitter_id(s) for s in submitters]
        ids = [i for i in ids if i]
        pairs.append(("+".join(sorted(ids)) if ids else _stem(path), path))
    return pairs


def _submitter_id(submitter: dict[str, Any]) -> str:
    for key in ("sid", "email", "name"):
        value = submitter.get(key)
        if value not in (None, ""):
            return str(value).strip()
    return ""


@dataclass(frozen=True)
class ExportedSubmission:
    """One folder of a Gradescope export as ``submission_metadata.yml`` lists it.

    Attributes:
        submitters: Each submitter's fields (``name``, ``sid``, ``email``), without Ruby's leading colon.
        created_at: The submission time as Gradescope wrote it ('' when absent;
            ``batch/timestamps.py:parse_loose_time`` reads it).
    """

    submitters: list[dict[str, Any]]
    created_at: str = ""


def read_gradescope_export(path: Path) -> dict[str, ExportedSubmission]:
    """Read Gradescope's ``submission_metadata.yml`` (PyYAML's ``safe_load``): folder name to its submission.

    Raises:
        GraderError: If the file cannot be read or is not YAML.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        raise GraderError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise GraderError(f"{path} is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        return {}
    return {str(folder): _exported(info) for folder, info in data.items() if isinstance(info, dict)}


def _exported(info: dict[Any, Any]) -> ExportedSubmission:
    """A folder's entry, its keys read without Ruby's symbol colon (``:submitters:`` as ``submitters``)."""
    fields = _without_colons(info)
    submitters = fields.get("submitters")
    listed = [_without_colons(s) for s in submitters if isinstance(s, dict)] if isinstance(submitters, list) else []
    created = fields.get("created_at")
    return ExportedSubmission(listed, "" if created is None else str(created))  # YAML's own time, printed, parses


def _without_colons(mapping: dict[Any, Any]) -> dict[str, Any]:
    return {str(key).lstrip(":"): value for key, value in mapping.items()}


def read_gradescope_metadata(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Each folder's submitters (``name``, ``sid``, ``email``) from Gradescope's ``submission_metadata.yml``.

    Raises:
        GraderError: If the file cannot be read or is not YAML.
    """
    return {folder: entry.submitters for folder, entry in read_gradescope_export(path).items()}


def _classroom_ids(candidates: list[Path], assignment_name: str) -> list[tuple[str, Path]]:
    names = [_stem(p) for p in candidates]
    prefix = classroom_prefix(names, assignment_name)
    return [(name[len(prefix):] if name.startswith(prefix) and len(name) > len(prefix) else name, path)
            for name, path in zip(names, candidates, strict=True)]


def classroom_prefix(names: list[str], assignment_name: str) -> str:
    """The ``<assignment>-`` prefix GitHub Classroom put before every username.

    It is ``<assignment_name>-`` when every folder starts with it, else the longest common prefix of all
    folder names cut after its last ``-`` (for a single folder: up to its first ``-``).
    """
    if not names:
        return ""
    if all(n.startswith(f"{assignment_name}-") for n in names):
        return f"{assignment_name}-"
    if len(names) == 1:
        head, dash, _ = names[0].partition("-")
        return head + dash
    common = os.path.commonprefix(names)
    return common[: common.rfind("-") + 1]
