"""The work a command finds when no path is given: the working folder itself, its ``<package>/`` and its notebooks,
never the folders below it (issue 41: a shared temporary folder holds other people's work there); else one line
saying where it looked and what to do."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import main
from autograder.errors import SubmissionError
from autograder.spec.assignment import Assignment
from autograder.submission.intake import prepare_submission


def _nothing_here(folder: Path) -> str:
    return (f"no assignment3/ package nor notebook here: looked in {folder} (the folder itself, assignment3/ in it and "
            f"its .ipynb files, not the folders below); cd into your work, or give its path after the assignment's "
            f"name")


@pytest.fixture
def shared(tmp_path: Path, assignment3: Assignment) -> Path:
    """A shared folder (``/tmp``) holding two other people's work a few levels down, and nothing of one's own."""
    for someone in ("pytest-of-alice/pytest-3/test_x0", "bob/scratch"):
        shutil.copytree(assignment3.reference, tmp_path / someone / "assignment3",
                        ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_a_shared_folder_is_not_searched_for_other_peoples_work(shared: Path, assignment3: Assignment,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(shared)
    with pytest.raises(SubmissionError) as caught:
        prepare_submission(None, assignment3, shared / "scratch")
    assert str(caught.value) == _nothing_here(shared)
    given = prepare_submission(shared / "bob", assignment3, shared / "scratch")  # a path given is searched below
    assert given.source == shared / "bob" / "scratch" / "assignment3"


def test_the_working_folder_its_package_and_its_notebook_are_found(tmp_path: Path, assignment3: Assignment,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    shutil.copytree(assignment3.reference, work / "assignment3", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(assignment3.reference, work / "old" / "attempt" / "assignment3",
                    ignore=shutil.ignore_patterns("__pycache__"))  # deeper: never looked at, so never ambiguous
    monkeypatch.chdir(work)
    assert prepare_submission(None, assignment3, tmp_path / "a").source == work / "assignment3"
    monkeypatch.chdir(work / "assignment3")
    assert prepare_submission(None, assignment3, tmp_path / "b").source == work / "assignment3"
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(assignment3.template.parent / "assignment3.ipynb", notebooks / "assignment3.ipynb")
    monkeypatch.chdir(notebooks)
    assert prepare_submission(None, assignment3, tmp_path / "c").source == notebooks / "assignment3.ipynb"


@pytest.mark.parametrize("command", ["check", "show"])
def test_check_and_show_from_the_wrong_folder_say_what_to_do_in_one_line(shared: Path, command: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(shared)
    result = CliRunner().invoke(main, [command, "assignment3"])
    assert result.exit_code == 2 and result.output == f"error: {_nothing_here(shared)}\n", result.output
