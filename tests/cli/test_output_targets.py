"""Every command that writes refuses a bad output target before any work, in one line on stderr with exit 2: a
folder where a file is expected, a file where a folder is expected, a parent that cannot be created (under a
file) and a folder that takes no new file.

The tests run as root, which permission bits do not stop; the folder that takes no file is ``/proc`` (no one, root
included, can create a file there), and the grader's check is honest: it creates a nameless file in the folder
(autograder/util/targets.py). Each invocation would otherwise grade, draw or export (``grade-all`` is given an
empty class, refused for that later), so a target checked too late shows up as exit 0 or another message.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import main
from autograder.errors import GraderError
from autograder.util.targets import output_file, output_folder
from test_no_traceback import every_command  # beside these tests

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "reference_solutions" / "assignment3"
READ_ONLY = Path("/proc")  # a folder that refuses new files, also to root (tmpfs mounts need privileges CI lacks)
NOT_WRITING = {"verify", "audit", "gradebook diff"}  # they print their findings and write no file


def bad_files(tmp_path: Path, name: str) -> list[Path]:
    """Where a file ``name`` cannot go: an existing folder, below a file, in a folder that takes no file."""
    folder = tmp_path / f"{name}-folder"
    folder.mkdir()
    return [folder, tmp_path / "a-file" / "sub" / name, READ_ONLY / "grader-test" / name]


def bad_folders(tmp_path: Path, name: str) -> list[Path]:
    """Where a folder ``name`` cannot go: an existing file, below a file, in a folder that takes no file, and that
    folder itself."""
    file = tmp_path / f"{name}.txt"
    file.write_text("a file\n")
    return [file, tmp_path / "a-file" / name, READ_ONLY / name, READ_ONLY]


def writing_invocations(tmp_path: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """For each writing command: (the option named in the error, the arguments), one per bad target."""
    (tmp_path / "a-file").write_text("a file, not a folder\n")
    empty_class = tmp_path / "class"
    empty_class.mkdir()
    course = tmp_path / "course"
    (course / "submitted" / "ada" / "assignment3").mkdir(parents=True)
    (course / "gradebook.db").mkdir()  # a folder where nbgrader's gradebook file goes
    book, book_out = str(tmp_path / "gradebook.db"), str(tmp_path / "out.db")
    ref = str(REFERENCE)
    cases: dict[str, list[tuple[str, list[str]]]] = {
        "grade": [("--output", ["assignment3", ref, "-o", str(p)]) for p in bad_files(tmp_path, "report.json")],
        "grade-all": [("--csv", ["assignment3", str(empty_class), "--gradebook", book_out, "--csv", str(p)])
                      for p in bad_files(tmp_path, "class.csv")]
        + [("--feedback", ["assignment3", str(empty_class), "--gradebook", book_out, "--feedback", str(p)])
           for p in bad_folders(tmp_path, "feedback")]
        + [("--gradebook", ["assignment3", str(empty_class), "--gradebook", str(p)])
           for p in bad_files(tmp_path, "grades.db")]
        + [("the nbgrader gradebook", ["assignment3", str(folder), "--layout", "nbgrader", "--gradebook", book_out])
           for folder in (course, READ_ONLY)],
        "gradebook export": [("--csv", [book, "--csv", str(p)]) for p in bad_files(tmp_path, "export.csv")]
        + [("--feedback", [book, "--feedback", str(p)]) for p in bad_folders(tmp_path, "export-feedback")],
        "gradebook merge": [("OUTPUT", [str(p), book]) for p in bad_files(tmp_path, "merged.db")],
        "report": [("--out", [book, "--out", str(p)]) for p in bad_folders(tmp_path, "class-report")]
        + [("--similarity-export", [book, "--similarity-export", str(p)]) for p in bad_folders(tmp_path, "sim")],
        "show": [("--out", ["assignment3", ref, "--out", str(p)]) for p in bad_folders(tmp_path, "figures")]
        + [("--out", ["assignment3", "--reference", "--out", str(p)]) for p in bad_folders(tmp_path, "expected")],
        "check": [("--show-extracted", ["assignment3", ref, "--show-extracted", str(p)])
                  for p in bad_folders(tmp_path, "extracted")],
        "release": [("--out", ["assignment3", "--out", str(p)]) for p in bad_folders(tmp_path, "release")],
    }
    _graded_book(Path(book))
    return cases


def _graded_book(path: Path) -> None:
    """A gradebook holding one graded student, so that the export and report commands have something to write."""
    from autograder.gradebook.store import Gradebook, Outcome

    task = {"id": "causal_mask", "title": "Causal mask", "score": 4.0, "max_score": 4.0, "status": "passed"}
    with Gradebook(path) as book:
        book.record("assignment3", "fp", "ada", "d-ada", "ada", Outcome("graded", 4.0, 4.0, report={"tasks": [task]}))


def assert_refused(result, option: str, args: list[str]) -> None:  # noqa: ANN001 - click's Result
    """Exit 2, one line on stderr naming the option, nothing on stdout, no traceback."""
    assert not (result.exception and not isinstance(result.exception, SystemExit)), (args, repr(result.exception))
    assert result.exit_code == 2, (args, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option} "), (args, result.stderr)
    assert result.stdout == "" and "Traceback" not in result.output, (args, result.output)


def test_every_writing_command_refuses_each_bad_target_before_working(tmp_path: Path) -> None:
    cases = writing_invocations(tmp_path)
    assert sorted([*cases, "template", "new", *NOT_WRITING]) == sorted(every_command()), \
        "a command that writes has no bad-target cases here (or one that does not write is not listed)"
    for command, invocations in cases.items():
        for option, extra in invocations:
            args = [*command.split(), *extra]
            assert_refused(CliRunner().invoke(main, args), option, args)
    assert not any(tmp_path.glob("**/.*.tmp")), "an atomic write was started"


def test_template_refuses_a_bad_template_folder(tmp_path: Path) -> None:
    """The template's folder comes from the manifest (`template`), so the bad targets come from a copied one."""
    manifest = (REPO / "assignments" / "assignment3" / "assignment.toml").read_text()
    targets = bad_folders(tmp_path, "assignment3")
    (tmp_path / "a-file").write_text("a file, not a folder\n")
    for number, target in enumerate(targets):
        root = tmp_path / f"assignments{number}"
        (root / "assignment3").mkdir(parents=True)
        for entry in (REPO / "assignments" / "assignment3").iterdir():
            if entry.name != "assignment.toml":
                (root / "assignment3" / entry.name).symlink_to(entry)
        (root / "assignment3" / "assignment.toml").write_text(manifest.replace(
            "[assignment]\n", f'[assignment]\nreference = "{REFERENCE}"\ntemplate = "{target}"\n', 1))
        result = CliRunner().invoke(main, ["template", "assignment3"], env={"GRADER_ASSIGNMENTS": str(root)})
        assert_refused(result, "the template folder", ["template", str(target)])


def test_show_reference_refuses_a_bad_expected_folder(tmp_path: Path) -> None:
    """Without --out the expected PNGs go to the manifest's `[figures] expected`: a bad one is refused before
    drawing."""
    manifest = (REPO / "assignments" / "assignment3" / "assignment.toml").read_text()
    (tmp_path / "a-file").write_text("a file, not a folder\n")
    for number, target in enumerate(bad_folders(tmp_path, "expected")):
        root = tmp_path / f"assignments{number}"
        (root / "assignment3").mkdir(parents=True)
        for entry in (REPO / "assignments" / "assignment3").iterdir():
            if entry.name == "figures":  # figure files must lie inside the assignment: copied, not linked
                shutil.copytree(entry, root / "assignment3" / entry.name)
            elif entry.name != "assignment.toml":
                (root / "assignment3" / entry.name).symlink_to(entry)
        (root / "assignment3" / "assignment.toml").write_text(manifest.replace(
            "[assignment]\n", f'[assignment]\nreference = "{REFERENCE}"\n', 1).replace(
            "[figures]\n", f'[figures]\nexpected = "{target}"\n', 1))
        result = CliRunner().invoke(main, ["show", "assignment3", "--reference"], env={"GRADER_ASSIGNMENTS": str(root)})
        assert_refused(result, "the expected figures' folder", ["show", "--reference", str(target)])


def test_new_refuses_a_bad_assignments_folder(tmp_path: Path) -> None:
    """`grader new` writes beside ``$GRADER_ASSIGNMENTS``: every bad place for it is refused before a file is written."""
    (tmp_path / "a-file").write_text("a file, not a folder\n")
    for target in bad_folders(tmp_path, "assignments"):
        before = sorted(tmp_path.rglob("*"))
        result = CliRunner().invoke(main, ["new", "demo"], env={"GRADER_ASSIGNMENTS": str(target)})
        assert_refused(result, "the assignment's folder", ["new", str(target)])
        assert sorted(tmp_path.rglob("*")) == before, "a file was written before the refusal"


def test_show_refuses_its_default_folder_when_it_is_a_file(tmp_path: Path) -> None:
    """Without --out the page goes beside the work (``<package>-figures/``); a file of that name is refused first."""
    import shutil

    work = tmp_path / "work" / "assignment3"
    shutil.copytree(REFERENCE, work, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "work" / "assignment3-figures").write_text("a file where the figures' folder goes\n")
    result = CliRunner().invoke(main, ["show", "assignment3", str(work)])
    assert_refused(result, "the figures' folder", ["show", str(work)])
    assert result.stderr.rstrip().endswith("is a file; give a folder (it is created if missing); choose another "
                                           "with --out"), result.stderr


def test_the_check_creates_nothing_and_accepts_a_missing_folder(tmp_path: Path) -> None:
    missing = tmp_path / "new" / "deeper"
    assert output_file(missing / "report.json", "-o") == missing / "report.json"
    assert output_folder(missing, "--out") == missing
    assert list(tmp_path.iterdir()) == []  # the writer creates it, after the work
    with pytest.raises(GraderError, match=r"is not a regular file"):
        output_file(Path(os.devnull), "-o")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(GraderError, match=r"^--out .*loop/figures cannot be reached \(too many levels of symbolic"):
        output_folder(loop / "figures", "--out")


def test_a_report_that_cannot_be_written_after_grading_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """The target passed the check but went bad while grading: the computed report is printed, not lost."""
    from autograder.cli.grade import _write_report

    with pytest.raises(GraderError, match=r"could not be written to /proc/gone/report.json .* printed above"):
        _write_report(READ_ONLY / "gone" / "report.json", "the report\n")
    assert capsys.readouterr().out == "the report\n"
