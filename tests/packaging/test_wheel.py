"""The grader as a package: its sdist and wheel build (``python -m build``, once per test run) and pass ``twine
check``; the wheel carries every file of ``autograder/``; installed non-editable in a fresh venv, it grades and
checks from a course folder, as only an editable install did before."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import autograder
from venvs import clean_env, fake_distribution, fresh_venv, pip, planned_installs, site_packages  # beside these

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding the sdist and the wheel, built from a copy of the project once for the whole run: the
    workers of pytest-xdist share it under a lock (the pattern its documentation gives)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "dist"
    with open(shared / "dist.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "built").exists():
            source = shared / "dist-source"
            shutil.rmtree(source, ignore_errors=True)
            source.mkdir()
            for name in ("pyproject.toml", "README.md"):
                shutil.copy2(REPO / name, source / name)
            shutil.copytree(REPO / "autograder", source / "autograder",
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)],
                                   capture_output=True, text=True, timeout=900, env=clean_env())
            assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
            (out / "built").touch()
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def test_the_sdist_and_the_wheel_pass_twine_check(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir() if p.suffix in (".whl", ".gz"))
    assert sorted(Path(f).suffix for f in files) == [".gz", ".whl"], files
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True,
                             text=True, env=clean_env())
    assert checked.returncode == 0 and checked.stdout.count("PASSED") == 2, checked.stdout + checked.stderr


def test_the_wheel_carries_every_file_of_the_package_and_no_bytecode(dist: Path) -> None:
    """A rule takes every file under autograder/ (the release's templates, the constraints file, whatever data a
    module reads beside itself), so no list has to keep in step with the folders."""
    tracked = subprocess.run(["git", "ls-files", "autograder"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        names = set(wheel.namelist())
    assert set(tracked) - names == set()
    assert {"autograder/templates/constraints.txt", "autograder/templates/setup.sh"} <= names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The wheel installed non-editable in a fresh venv (beside the system's torch), and a course folder of its own
    (the mini fixture course, assignment3's manifest and public tests); returns the venv's Python and the course."""
    root = tmp_path_factory.mktemp("wheel")
    python = fresh_venv(root / "venv")
    pip(python, "install", "--quiet", "--no-deps", "--ignore-installed", str(_wheel(dist)), cwd=root)
    course = root / "course"
    for name in ("mini", "assignment3"):
        base = FIXTURES if name == "mini" else REPO
        for folder in ("assignments", "reference_solutions"):
            shutil.copytree(base / folder / name, course / folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    return python, course


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    grader = python.parent / "grader"  # the console script pip wrote
    return subprocess.run([str(grader), *args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=600)


def test_the_installed_wheel_is_the_grader_that_runs(installed: tuple[Path, Path]) -> None:
    python, course = installed
    where = subprocess.run([str(python), "-c", "import autograder; print(autograder.__file__)"], cwd=course,
                           env=clean_env(), capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where) == site_packages(python) / "autograder" / "__init__.py"


def test_the_installed_wheel_grades_from_a_course_folder(installed: tuple[Path, Path]) -> None:
    """From a folder inside the course, the wheel finds the course's assignment and reference; a library installed
    beside the grader stays importable by the student's code (the sandbox hides the course, not site-packages)."""
    python, course = installed
    (site_packages(python) / "beside_the_grader.py").write_text("FACTOR = 1\n")
    work = course / "submissions" / "alice" / "mini"
    shutil.copytree(course / "reference_solutions" / "mini", work)
    ops = work / "ops.py"
    ops.write_text("import beside_the_grader  # a library of this venv no job had imported\n" + ops.read_text())
    report = course / "alice.json"
    result = _run(python, "grade", "mini", "alice/mini", "--format", "json", "--output", str(report),
                  cwd=course / "submissions")
    assert result.returncode == 0, result.stdout + result.stderr
    graded = json.loads(report.read_text())
    assert graded["score"] == graded["max_score"] == 5, graded


def test_the_installed_wheel_checks_from_a_course_folder(installed: tuple[Path, Path]) -> None:
    python, course = installed
    work = course / "work" / "assignment3"
    shutil.copytree(course / "reference_solutions" / "assignment3", work)
    result = _run(python, "check", "assignment3", "--task", "causal_mask", cwd=work.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Public tests of assignment3 on {work}" in result.stdout and "causal_mask" in result.stdout


def test_the_installed_wheel_outside_any_course_says_so_in_one_line(installed: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    python, _ = installed
    result = _run(python, "grade", "mini", "alice", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == "", result.stdout + result.stderr
    assert result.stderr == (f"error: no course found: neither {tmp_path} nor a folder above it holds "
                             f"assignments/<name>/assignment.toml, and GRADER_ASSIGNMENTS is not set; cd into the "
                             f"course folder (the one holding assignments/) or set GRADER_ASSIGNMENTS=/path/to/"
                             f"assignments\n")
    released = _run(python, "release", "mini", cwd=installed[1])  # made from the source tree's project file
    assert released.returncode == 2 and released.stderr.startswith("error: grader release needs the grader's source "
                                                                   "tree (its pyproject.toml)"), released.stderr


def test_the_wheel_leaves_the_torch_of_the_environment_as_it_is(dist: Path, tmp_path: Path) -> None:
    python = fresh_venv(tmp_path / "venv")
    fake_distribution(python, "torch", "2.5.1")  # a student's Colab or conda torch, not the course's build
    planned = planned_installs(python, str(_wheel(dist)), tmp_path)
    assert f"transformer-autograder=={autograder.__version__}" in planned
    assert not [name for name in planned if name.startswith("torch==")], planned
