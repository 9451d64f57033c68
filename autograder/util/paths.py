"""Where the grader lives on disk, and how paths are shown in one-line messages."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the autograder package
PACKAGE_ROOT = PACKAGE_DIR.parent  # the folder holding it (and, in a checkout, assignments/ and the reference)


def display_path(path: Path) -> str:
    """A path relative to the current folder when it lies below it, for one-line messages."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, RuntimeError, OSError):  # outside it, a symbolic link loop, a folder one may not enter
        return str(path)
