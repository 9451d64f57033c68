"""An assignment whose manifest moves its reference (or itself) outside the repository is still hidden from jobs."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from autograder.errors import IsolationError
from autograder.grading.grader import Grader
from autograder.sandbox.host import new_scratch, start_zygotes
from autograder.spec.assignment import load_assignment

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# The student's scale() answers right only while the reference's source stays unreadable: reading it is a leak.
PEEKING_OPS = '''
import torch


def scale(x, factor):
    try:
        with open({secret!r}) as handle:
            handle.read()
    except OSError:
        return x * factor
    return x * 0


def row_sums(x):
    return x.sum(dim=-1)
'''


@pytest.fixture
def moved_course():
    """The mini assignment with its reference in a folder the sandbox does not hide by itself (under /opt)."""
    try:
        root = Path(tempfile.mkdtemp(prefix="grader-moved-", dir="/opt"))
    except OSError as exc:
        pytest.skip(f"cannot create a folder outside the sandbox's private places: {exc}")
    try:
        shutil.copytree(FIXTURES / "assignments" / "mini", root / "assignments" / "mini")
        shutil.copytree(FIXTURES / "reference_solutions" / "mini", root / "elsewhere" / "mini")
        manifest = root / "assignments" / "mini" / "assignment.toml"
        manifest.write_text(manifest.read_text().replace(
            '[assignment]\n', f'[assignment]\nreference = "{root / "elsewhere" / "mini"}"\n', 1))
        yield load_assignment("mini", root=root / "assignments")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _submission(folder: Path, secret: Path) -> Path:
    package = folder / "mini"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "ops.py").write_text(PEEKING_OPS.format(secret=str(secret)))
    return folder


def test_the_manifest_moves_the_reference_outside_the_repository(moved_course):
    assert moved_course.reference.parent.name == "elsewhere"
    assert moved_course.reference in moved_course.private_folders


@pytest.mark.slow
def test_a_moved_reference_is_hidden_from_jobs(moved_course, tmp_path):
    scratch = new_scratch()
    zygotes = start_zygotes(1, scratch, eager=1, protect=moved_course.private_folders)
    with Grader(moved_course, scratch=scratch, zygotes=zygotes) as grader:
        tier = grader.environment()["isolation"]
        if tier in ("none", "rlimits"):
            pytest.skip(f"the sandbox here hides no files (tier {tier})")
        report = grader.grade(_submission(tmp_path / "work", moved_course.reference / "ops.py"), only={"scale"})
    assert report.tasks[0].score == report.tasks[0].max_score, report.tasks[0]


def test_a_started_worker_that_does_not_hide_the_reference_is_refused(moved_course):
    scratch = new_scratch()
    zygotes = start_zygotes(1, scratch, eager=1)
    try:
        with pytest.raises(IsolationError, match="without hiding"):
            Grader(moved_course, scratch=scratch, zygotes=zygotes)
    finally:
        for zygote in zygotes:
            zygote.close()
        shutil.rmtree(scratch, ignore_errors=True)
