"""Read a submission's digest and its Python source files in one pass (for the similarity review)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from autograder.spec.assignment import Assignment
from autograder.submission.intake import prepare_submission


def digest_and_sources(path: Path, assignment: Assignment) -> tuple[str, dict[str, str]]:
    """The digest ``submission_digest`` gives ``path``, and the text of the student's declared ``.py`` files.

    The files are read as data (decoded leniently); nothing in them runs.

    Raises:
        SubmissionError: If the path is missing or holds no recognisable submission.
    """
    with tempfile.TemporaryDirectory(prefix="sources-") as scratch:
        prepared = prepare_submission(path, assignment, Path(scratch))
        files = {name: (prepared.package_dir / name).read_text(encoding="utf-8", errors="replace")
                 for name in prepared.copied if name.endswith(".py") and name != "__init__.py"}
        return prepared.digest, files
