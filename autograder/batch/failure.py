"""One line saying why a batch worker failed, for the gradebook and the figures note alike."""

from __future__ import annotations

from autograder.errors import GraderError


def one_line(exc: BaseException) -> str:
    """The exception on one line: the message alone for a grader error, else prefixed by the exception's type.

    Args:
        exc: What the worker caught.

    Returns:
        The message with its whitespace runs collapsed to single spaces.
    """
    text = " ".join(str(exc).split())
    return text if isinstance(exc, GraderError) else f"{type(exc).__name__}: {text}"
