"""A failed check's message: its first problem, and how many more there are, in words a student reads."""

from __future__ import annotations

from autograder.judge.verdict import failure_message


def test_one_problem_is_said_alone_and_more_are_counted_in_singular_or_plural() -> None:
    assert failure_message(["out differs"]) == "out differs"
    assert failure_message(["out differs", "weights differ"]) == "out differs (and 1 more problem)"
    assert failure_message(["out differs", "a", "b"]) == "out differs (and 2 more problems)"
