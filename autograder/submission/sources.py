"""The Python source files of a prepared submission, kept for the similarity review."""

from __future__ import annotations

from autograder.submission.package import PreparedSubmission


def declared_sources(prepared: PreparedSubmission) -> dict[str, str]:
    """The text of the declared ``.py`` files the intake copied (``__init__.py`` aside), read as data."""
    return {name: (prepared.package_dir / name).read_text(encoding="utf-8", errors="replace")
            for name in prepared.copied if name.endswith(".py") and name != "__init__.py"}
