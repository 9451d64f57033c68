"""``grader check``: the student's view of the public tests and the quiz format."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def run_check(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "check", "assignment3", *args],
                          capture_output=True, text=True, timeout=600, cwd=cwd)


def test_the_reference_passes_every_public_test(repo):
    result = run_check(str(repo / "reference_solutions" / "assignment3"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "failed" not in result.stdout and "not implemented" not in result.stdout
    assert "quiz: 16 of 16 answers well-formed" in result.stdout
    assert "Hidden tests run at grading time" in result.stdout


def test_the_template_shows_not_implemented_for_every_task(repo, assignment3):
    result = run_check(str(repo / "student_template" / "assignment3"))
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    for task in assignment3.tasks:
        line = next(line for line in result.stdout.splitlines() if line.startswith(task.id + " "))
        assert line.endswith("not implemented"), line
    assert "16 of 16 questions not answered yet: q1–q16" in result.stdout and "no answer" not in result.stdout


def test_default_path_is_assignment3_in_the_current_folder(repo, tmp_path):
    shutil.copytree(repo / "reference_solutions" / "assignment3", tmp_path / "assignment3")
    result = run_check(cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_syntax_error_fails_the_tasks_of_that_module_only(repo, tmp_path):
    package = tmp_path / "work" / "assignment3"
    shutil.copytree(repo / "reference_solutions" / "assignment3", package)
    with open(package / "positions.py", "a") as handle:
        handle.write("\ndef broken(:\n")
    (package / "answers.toml").write_text('q1 = "a, b"\n')
    result = run_check(str(package))
    assert result.returncode == 1
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line[:1].isalpha() and "/" in line}
    assert lines["sinusoidal_positions"].endswith("blocked: positions.py cannot be imported (see above)")
    assert lines["attention"].endswith("passed")
    assert result.stdout.count("SyntaxError") == 1  # said once, for the student's file, not per task
    assert "q1: answer must be one letter" in result.stdout


def test_a_missing_path_is_one_line(tmp_path):
    result = run_check(str(tmp_path / "nope"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {tmp_path / 'nope'} does not exist"]
