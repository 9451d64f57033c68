"""The builds grades are computed with, named once in ``autograder/templates/constraints.txt``, and how the local
ones compare."""

from __future__ import annotations

import re
from importlib import metadata

from autograder.errors import GraderError
from autograder.util.paths import PACKAGE_DIR

CONSTRAINTS = PACKAGE_DIR / "templates" / "constraints.txt"  # shipped in the wheel and in every release
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s*==\s*([^\s;#]+)")


def pinned_versions() -> dict[str, str]:
    """Each distribution the constraints file pins (lower-case name) and its version; empty without the file."""
    try:
        lines = CONSTRAINTS.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return {m.group(1).lower(): m.group(2) for m in map(_PIN.match, lines) if m}


def pinned_version(name: str) -> str:
    """The version grades are computed with of ``name`` (``"2.13.0"`` for torch).

    Raises:
        GraderError: If the constraints file pins none (one line).
    """
    version = pinned_versions().get(name.lower())
    if version is None:
        raise GraderError(f"{CONSTRAINTS} pins no {name} ({name}==X.Y.Z): it names the build grades are computed with")
    return version


def installed_version(name: str) -> str | None:
    """The version of the distribution ``name`` installed here (read from its metadata, never imported), or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def torch_note() -> str | None:
    """One line when the torch installed here is not the course's (results may then differ in the last digits),
    else None; a local build label (``2.13.0+cpu``) is the same release."""
    course, here = pinned_versions().get("torch"), installed_version("torch")
    if course is None or here is None or here.split("+")[0] == course:
        return None
    return f"torch {here} here; the course grades with {course}: results may differ in the last digits"
