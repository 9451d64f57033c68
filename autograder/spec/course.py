"""Where the course is: the folder of assignments every command reads, found by one rule (as git finds ``.git``)."""

from __future__ import annotations

import os
from pathlib import Path

from autograder.errors import AssignmentError
from autograder.util.paths import CHECKOUT, display_path

MANIFEST = "assignment.toml"
ASSIGNMENTS = "assignments"  # the folder of assignments in a course folder; the reference and template lie beside it
ASSIGNMENTS_ENV = "GRADER_ASSIGNMENTS"


def find_assignments_root(bundled: bool = True) -> Path | None:
    """The folder of assignments every command reads, or None where there is none.

    The rule, in order: ``$GRADER_ASSIGNMENTS`` when it is set (an explicit setting beats discovery, as ``GIT_DIR``
    does for git); else the nearest ``assignments/`` holding at least one ``<name>/assignment.toml``, from the
    working folder up to the root of the file system; else the grader's own source tree's (a repository or a
    student release the grader runs from), unless ``bundled`` is False.
    """
    configured = os.environ.get(ASSIGNMENTS_ENV)
    if configured:
        return Path(configured).resolve()
    return course_above() or (bundled_assignments() if bundled else None)


def course_above() -> Path | None:
    """The nearest ``assignments/`` holding an assignment, from the working folder up (None: none, or the working
    folder no longer exists)."""
    try:
        here = Path.cwd().resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        if holds_assignments(folder / ASSIGNMENTS):
            return folder / ASSIGNMENTS
    return None


def bundled_assignments() -> Path | None:
    """The ``assignments/`` of the grader's own source tree, when it has one with an assignment."""
    own = CHECKOUT / ASSIGNMENTS if CHECKOUT is not None else None
    return own if own is not None and holds_assignments(own) else None


def holds_assignments(folder: Path) -> bool:
    """Whether ``folder`` holds at least one assignment (``<name>/assignment.toml``)."""
    try:
        return any((child / MANIFEST).is_file() for child in folder.iterdir())
    except OSError:  # not there, not a folder, or one this user may not list
        return False


def assignments_root() -> Path:
    """The folder of assignments every command reads (:func:`find_assignments_root`).

    Raises:
        AssignmentError: Where the rule finds none: one line saying where it looked and what to do.
    """
    found = find_assignments_root()
    if found is None:
        raise AssignmentError(f"no course found: neither {_working_folder()} nor a folder above it holds "
                              f"{ASSIGNMENTS}/<name>/{MANIFEST}, and {ASSIGNMENTS_ENV} is not set; cd into the course "
                              f"folder (the one holding {ASSIGNMENTS}/) or set "
                              f"{ASSIGNMENTS_ENV}=/path/to/{ASSIGNMENTS}")
    return found


def _working_folder() -> str:
    try:
        return str(Path.cwd())
    except OSError:
        return "the working folder (removed)"


def available_assignments(root: Path | None = None) -> list[str]:
    """Names of the assignments that have a manifest (in ``root``, default the course's; none where there is no
    course)."""
    root = root or find_assignments_root()
    if root is None or not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / MANIFEST).is_file())


def elsewhere(name: str, root: Path) -> str:
    """What to do when ``name`` is not an assignment of ``root``: the course of the working folder holds it while
    ``$GRADER_ASSIGNMENTS`` names another, or ``root`` is the grader's own course, not the user's (empty when
    neither)."""
    if os.environ.get(ASSIGNMENTS_ENV):
        nearby = course_above()
        if nearby is not None and nearby.resolve() != root.resolve() and (nearby / name / MANIFEST).is_file():
            return (f"; {display_path(nearby / name)} is one, in the course of this folder: unset {ASSIGNMENTS_ENV} "
                    f"to use that course")
        return ""
    if course_above() is None and root == bundled_assignments():
        return (f"; these are the grader's own assignments: cd into your course folder (the one holding "
                f"{ASSIGNMENTS}/) or set {ASSIGNMENTS_ENV}=/path/to/{ASSIGNMENTS}")
    return ""
