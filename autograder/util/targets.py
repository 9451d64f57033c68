"""Output targets checked before any work starts: the right kind (file or folder), a parent that exists or can be
created, and a folder the grader may write in.

Every command that writes calls :func:`output_file` or :func:`output_folder` on each of its outputs before it
grades, draws or exports anything, so a bad target costs a second and a one-line error, never a computed result.
A missing folder is not created here: the writer creates it (``write_atomic`` makes a file's parents), once this
check has shown that it can be.
"""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

from autograder.errors import GraderError
from autograder.util.paths import display_path


def output_file(path: Path | str, option: str, example: str = "report.txt") -> Path:
    """Check that ``path`` can be written as a file (replaced atomically if it exists).

    Args:
        path: The file to write.
        option: How the user named it, for the message (e.g. ``--csv``).
        example: A file name to suggest when ``path`` is a folder.

    Returns:
        The path, unchanged.

    Raises:
        GraderError: If it is a folder or some other non-file, or its folder cannot be created or written.
    """
    path = Path(path)
    kind = _kind(path, option)
    if kind == "folder":
        raise GraderError(f"{option} {display_path(path)} is a folder; give a file's name, e.g. "
                          f"{display_path(path / example)}")
    if kind == "other":
        raise GraderError(f"{option} {display_path(path)} is not a regular file (a device or a pipe); give a file's "
                          f"name")
    _check_parent(path, option)
    return path


def output_folder(path: Path | str, option: str) -> Path:
    """Check that ``path`` is a folder the grader can write in, or can be created as one.

    Args:
        path: The folder to write into.
        option: How the user named it, for the message (e.g. ``--feedback``).

    Returns:
        The path, unchanged.

    Raises:
        GraderError: If it is a file, or it (or the folder that would hold it) cannot be created or written.
    """
    path = Path(path)
    kind = _kind(path, option)
    if kind == "folder":
        _check_writable(path, path, option)
    elif kind is not None:
        raise GraderError(f"{option} {display_path(path)} is a file; give a folder (it is created if missing)")
    else:
        _check_parent(path, option)
    return path


def _kind(path: Path, option: str) -> str | None:
    """``folder``, ``file``, ``other`` (a device, a pipe), or None when nothing is there (a dangling link neither).

    Raises:
        GraderError: If the path cannot be looked at (a folder on the way that the user may not enter, a loop).
    """
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise GraderError(f"{option} {display_path(path)} cannot be reached ({_reason(exc)})") from None
    return "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _check_parent(path: Path, option: str) -> None:
    """The nearest existing folder above ``path`` must be a folder the grader can write in (it makes the rest)."""
    ancestor = path.absolute().parent
    while _kind(ancestor, option) is None and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if _kind(ancestor, option) != "folder":
        raise GraderError(f"{option} {display_path(path)} cannot be created: {display_path(ancestor)} is a file, "
                          f"not a folder")
    _check_writable(ancestor, path, option)


def _check_writable(folder: Path, path: Path, option: str) -> None:
    """Create (and at once delete) a nameless file in ``folder``: the honest test, which also holds for root on a
    read-only mount or in /proc, where permission bits say nothing (root ignores them)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise GraderError(f"{option} {display_path(path)} cannot be written: {display_path(folder)} does not accept "
                          f"new files ({_reason(exc)})") from None


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()
