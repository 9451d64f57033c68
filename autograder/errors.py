"""Errors a user can meet, each carrying a one-line message meant to be printed as is."""


class GraderError(Exception):
    """An expected failure (bad input, missing file, broken archive) reported as one line, exit code 2."""


class SubmissionError(GraderError):
    """The submission cannot be found, unpacked or read."""


class AssignmentError(GraderError):
    """The assignment is unknown or its declaration is inconsistent."""
