"""Errors a user can meet, each carrying a one-line message meant to be printed as is."""


class GraderError(Exception):
    """An expected failure (bad input, missing file, broken archive) reported as one line, exit code 2."""


class SubmissionError(GraderError):
    """The submission cannot be found, unpacked or read."""


class AssignmentError(GraderError):
    """The assignment is unknown or its declaration is inconsistent."""


class OutputTooLarge(Exception):
    """A probe's outputs exceed what the worker may write back."""


class WorkerDied(Exception):
    """The zygote itself stopped answering (killed from inside a job, or crashed)."""


class IsolationError(GraderError):
    """The sandbox available here is weaker than the isolation level the caller requires."""


class CheckFailed(Exception):
    """Raised by a verifier to fail a check with a message meant for the student."""
