"""The fingerprint of an assignment's grading material: a stored grade made under another one is re-graded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from autograder import __version__
from autograder.spec.assignment import Assignment


def assignment_fingerprint(assignment: Assignment) -> str:
    """A hash of everything that decides a grade besides the submission: tasks, points, checks, reference, key.

    A rerun re-grades a submission whose stored grade was computed with a different fingerprint (e.g. after
    a hidden check was fixed).
    """
    digest = hashlib.sha256()
    quiz = assignment.quiz
    header = {
        "grader": __version__, "name": assignment.name, "package": assignment.package, "seed": assignment.seed,
        "student_files": list(assignment.student_files), "memory_mb": assignment.memory_mb,
        "tasks": [[t.id, t.points, list(t.functions), list(t.uses), t.timeout] for t in assignment.tasks],
        "quiz": [quiz.task_id, quiz.points, quiz.answers_file, quiz.feedback] if quiz else None,
    }
    digest.update(json.dumps(header, sort_keys=True).encode())
    files = [(f"checks/{t.id}", t.checks) for t in assignment.tasks if t.checks is not None]
    files += _tree("hidden", assignment.root / "hidden") + _tree("reference", assignment.reference)
    if quiz:
        files += [("quiz/questions", quiz.questions_file), ("quiz/key", quiz.key_file)]
    for label, path in files:
        digest.update(label.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def _tree(label: str, folder: Path) -> list[tuple[str, Path]]:
    if not folder.is_dir():
        return []
    return [(f"{label}/{p.relative_to(folder).as_posix()}", p) for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts]
