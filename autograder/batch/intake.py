"""The batch's intake: each submission prepared once, its copy kept for its worker until its outcome is recorded."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from autograder.spec.assignment import Assignment
from autograder.submission.intake import prepare_submission
from autograder.submission.package import PreparedSubmission


class BatchIntake:
    """Prepares each student's submission once (the digest, the similarity sources and the worker's grading all
    read the same copy), each in a folder of its own laid out as ``Grader.grade`` lays out its own.

    The copies share one folder that others may traverse but not list (as ``sandbox/layout.py`` leaves a
    submission's folder for the sandbox user), each under an unguessable name: a batch killed outright leaves one
    folder behind, not one per submission.

    Args:
        assignment: The assignment.
    """

    def __init__(self, assignment: Assignment) -> None:
        self.assignment = assignment
        self.root = Path(tempfile.mkdtemp(prefix="grader-intake-"))
        os.chmod(self.root, 0o711)
        self.folders: dict[str, Path] = {}

    def prepare(self, student: str, path: Path) -> PreparedSubmission:
        """The one intake of a student's submission (``prepare_submission``), kept until :meth:`discard`.

        Raises:
            SubmissionError: If nothing gradable is there (the folder is removed at once).
        """
        self.discard(student)
        folder = Path(tempfile.mkdtemp(dir=self.root))
        self.folders[student] = folder
        try:
            return prepare_submission(path, self.assignment, folder)
        except BaseException:
            self.discard(student)
            raise

    def discard(self, student: str) -> None:
        """Remove a student's copy (its outcome is recorded, or it is not graded)."""
        folder = self.folders.pop(student, None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        """Remove every copy left (the batch ends, or was stopped)."""
        self.folders.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "BatchIntake":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
