"""Where the grader lives on disk, and how paths are shown in one-line messages."""

from __future__ import annotations

from pathlib import Path

from autograder.errors import GraderError

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the autograder package
PACKAGE_ROOT = PACKAGE_DIR.parent  # the folder holding it: a source tree, or an installation's site-packages
# The grader's own source tree (a repository, a student release, the Gradescope bundle: pyproject.toml beside the
# package), or None when it was installed from a wheel: PACKAGE_ROOT is then the site-packages that every other
# library shares, which holds no course material and which a job must still be able to import from.
CHECKOUT = PACKAGE_ROOT if (PACKAGE_ROOT / "pyproject.toml").is_file() else None


def project_file(needed_by: str) -> Path:
    """The grader's own ``pyproject.toml``, which the release and the notebook's setup cell are made from.

    Args:
        needed_by: What needs it, for the message (``"grader release"``).

    Raises:
        GraderError: Where the grader was installed from a wheel, which carries no project file (one line).
    """
    if CHECKOUT is None:
        raise GraderError(f"{needed_by} needs the grader's source tree (its pyproject.toml), and this grader was "
                          f"installed from a wheel into {PACKAGE_ROOT}: install it from its repository with "
                          f"pip install -e, and run it from your course folder")
    return CHECKOUT / "pyproject.toml"


def display_path(path: Path) -> str:
    """A path relative to the current folder when it lies below it, for one-line messages."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, RuntimeError, OSError):  # outside it, a symbolic link loop, a folder one may not enter
        return str(path)
