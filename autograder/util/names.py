"""The known name nearest to a misspelt one: every "did you mean …?" of the grader asks here."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches


def nearest(name: object, known: Iterable[str]) -> str | None:
    """The name of ``known`` closest to ``name`` (difflib's ratio, its default cut-off of 0.6), or None if none is.

    Each caller words its own sentence around it (an instructor's lint and a student's line differ); which name
    is meant is decided here only, so two surfaces never suggest different names for the same slip.
    """
    close = get_close_matches(str(name), list(known), n=1)
    return close[0] if close else None
