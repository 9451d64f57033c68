"""Errors a user can meet, each carrying a one-line message meant to be printed as is."""


class GraderError(Exception):
    """An expected failure (bad input, missing file, broken archive) reported as one line, exit code 2."""


class SubmissionError(GraderError):
    """The submission cannot be found, unpacked or read."""


class AssignmentError(GraderError):
    """The assignment is unknown or its declaration is inconsistent."""


class OutputTooLarge(GraderError):
    """A probe's outputs exceed what the worker may write back."""


class WorkerDied(GraderError):
    """The zygote itself stopped answering (killed from inside a job, or crashed)."""


class IsolationError(GraderError):
    """The sandbox available here is weaker than the isolation level the caller requires."""


class CheckFailed(GraderError):
    """Raised by a verifier to fail a check with a message meant for the student."""


class TrialFailed(GraderError):
    """A trial job found that an isolation feature does not protect what it should (never raised past the trial)."""


class BrokenModuleError(GraderError, ImportError):
    """Raised by the stand-in of a student module that could not be imported."""


class ReleaseError(GraderError):
    """The release cannot be built, or what was built fails a check."""


class TemplateError(GraderError):
    """The reference's solution markers are malformed, or the generated template is not valid Python."""


class Unusable(GraderError):
    """Raised (by :class:`Data`) when an output cannot be drawn; the message says why, for the student."""


class WriteFailed(GraderError):
    """A file the user asked for could not be written (a full disk, a folder gone read-only): it is left as it was."""


class TransportError(GraderError):
    """The worker's results are malformed (never the student's fault alone: report as an error)."""


class NotebookError(SubmissionError):
    """The notebook cannot be read (not JSON, not a notebook, too large)."""
