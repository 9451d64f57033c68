"""Which torch: a range where the grader is installed, one build (``autograder/templates/constraints.txt``) where a
grade is computed, and ``grader check`` saying in one line when the local torch is not that one."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import autograder.util.pins as pins
from autograder.cli import main
from autograder.spec.assignment import Assignment
from autograder.util.tomlio import load_toml

from venvs import fake_distribution, fresh_venv, planned_installs  # beside these tests

REPO = Path(__file__).resolve().parents[2]
# Where a grade is computed, each install of the grader or of torch reads the constraints file.
GRADING_INSTALLS = (".ci/run", "deploy/kubernetes/Containerfile", "autograder/templates/setup.sh",
                    "autograder/templates/grade.yml", "docs/BATCH.md")


def _torch_requirement() -> str:
    return next(r for r in load_toml(REPO / "pyproject.toml")["project"]["dependencies"] if r.startswith("torch"))


def test_the_project_asks_for_a_range_that_the_docs_state_and_the_course_build_meets() -> None:
    requirement = _torch_requirement()
    floor = re.fullmatch(r"torch>=(\d+)\.(\d+)\.(\d+),<3", requirement)
    assert floor, requirement  # never one version: a student's torch is left as it is
    course = tuple(int(part) for part in pins.pinned_version("torch").split("."))
    assert tuple(map(int, floor.groups())) <= course < (3,)
    assert f"`{requirement}`" in (REPO / "docs" / "INSTRUCTORS.md").read_text()  # the floor and its reasons


def test_the_build_grades_are_computed_with_is_named_once() -> None:
    """Every grading install reads the constraints file; no other file of the project names a torch version (but
    the student notebooks, generated from it: `grader verify` refuses one that is stale)."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    naming = [name for name in tracked if (REPO / name).is_file() and not name.endswith((".png", ".ipynb"))
              and re.search(r"torch==\d", (REPO / name).read_text(encoding="utf-8", errors="replace"))]
    assert naming == ["autograder/templates/constraints.txt"]
    for name in GRADING_INSTALLS:
        installs = [line for line in (REPO / name).read_text().splitlines() if re.search(
            r"pip install .*(torch|-e |\"\.\[|\$SOURCE)", line)]
        assert installs, name
        for line in installs:
            assert re.search(r"-c \S*constraints", line, re.I), f"{name}: {line.strip()}"


def test_the_note_names_a_local_torch_that_is_not_the_courses(monkeypatch: pytest.MonkeyPatch) -> None:
    course = pins.pinned_version("torch")
    for here, note in ((f"{course}+cpu", None), (course, None), (None, None),
                       ("2.5.1", f"torch 2.5.1 here; the course grades with {course}: results may differ in the last "
                                 f"digits")):
        monkeypatch.setattr(pins, "installed_version", lambda name, version=here: version)
        assert pins.torch_note() == note, here


def test_grader_check_says_in_one_line_that_the_local_torch_differs(tmp_path: Path, assignment3: Assignment,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "assignment3"
    shutil.copytree(assignment3.reference, work, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(pins, "installed_version", lambda name: "2.5.1" if name == "torch" else None)
    result = CliRunner().invoke(main, ["check", "assignment3", str(work), "--task", "causal_mask"])
    course = pins.pinned_version("torch")
    assert result.output.splitlines()[0] == (f"note: torch 2.5.1 here; the course grades with {course}: results may "
                                             f"differ in the last digits"), result.output
    assert result.output.count("torch 2.5.1") == 1 and re.search(r"^causal_mask\s+\d+/\d+\s+passed$", result.output,
                                                                 re.M), result.output


@pytest.fixture
def venv_with_another_torch(tmp_path: Path) -> Path:
    """A fresh venv where pip sees torch 2.5.1 installed (a student's Colab or conda torch, not the course's)."""
    python = fresh_venv(tmp_path / "venv")
    fake_distribution(python, "torch", "2.5.1")
    return python


@pytest.mark.slow
def test_installing_the_student_release_leaves_the_torch_of_the_environment_as_it_is(
        tmp_path: Path, venv_with_another_torch: Path) -> None:
    """A student's Colab, JupyterHub or conda environment keeps its torch: pip plans no torch for the release's
    project (with torch pinned to the course's build, it planned that build, a multi-GB download)."""
    import autograder
    from autograder.authoring.release import write_student_grader

    release = tmp_path / "assignment3-student"
    write_student_grader(release)  # the student release's project: its pyproject.toml and minimal autograder/
    (release / "README.md").write_text("# assignment3\n")  # the project file names it
    planned = planned_installs(venv_with_another_torch, str(release), tmp_path)
    assert f"transformer-autograder=={autograder.__version__}" in planned
    assert not [name for name in planned if name.startswith("torch==")], planned
