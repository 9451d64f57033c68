"""Phrases that several surfaces say about the same thing, worded once (a tensor's differing entries)."""

from __future__ import annotations


def entries_differ(count: int | str, total: int | str) -> str:
    """How many entries of an output differ from the expected ones: ``4 of 16 entries differ``.

    Grading's comparison (``judge/compare.py``) and ``grader check``'s condensed failures
    (``public/condense.py``) both say it, so a student reads one word for one thing in both.
    """
    return f"{count} of {total} entries differ"
