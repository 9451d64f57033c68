"""Finding and copying a student's package: folders, zips, unsafe archives, ignored files."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from autograder.errors import SubmissionError
from autograder.submission.archive import unpack_zip
from autograder.submission.intake import prepare_submission
from autograder.submission.package import MAX_STUDENT_FILE_BYTES, find_package


def unpack_all(archive: Path, destination: Path):
    """Unpack every entry of ``archive`` (each within the graded file's bound)."""
    return unpack_zip(archive, destination, archive.name, lambda name: MAX_STUDENT_FILE_BYTES)


@pytest.fixture
def reference_copy(tmp_path, assignment3) -> Path:
    destination = tmp_path / "repo" / "assignment3"
    shutil.copytree(assignment3.reference, destination, ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def test_the_package_folder_itself(reference_copy, assignment3):
    assert find_package(reference_copy, assignment3) == reference_copy


def test_a_repository_root_holding_the_package(reference_copy, assignment3):
    assert find_package(reference_copy.parent, assignment3) == reference_copy


def test_a_zip_of_the_repository(reference_copy, assignment3, tmp_path):
    archive = shutil.make_archive(str(tmp_path / "sub"), "zip", reference_copy.parent)
    prepared = prepare_submission(Path(archive), assignment3, tmp_path / "scratch")
    assert "attention.py" in prepared.copied and prepared.missing == []


def test_only_declared_files_are_copied_and_others_are_reported(reference_copy, assignment3, tmp_path):
    (reference_copy / "conftest.py").write_text("import os; os._exit(0)\n")
    (reference_copy / "torch.py").write_text("raise SystemExit\n")
    (reference_copy / "evil.pth").write_text("import os\n")
    prepared = prepare_submission(reference_copy, assignment3, tmp_path / "scratch")
    copied = sorted(p.name for p in prepared.package_dir.iterdir())
    assert copied == sorted(assignment3.student_files)
    joined = " ".join(prepared.ignored)
    assert "conftest.py (would run code before grading" in joined
    assert "torch.py (not a file of this assignment" in joined and "evil.pth" in joined


def test_the_digest_depends_only_on_declared_files(reference_copy, assignment3, tmp_path):
    first = prepare_submission(reference_copy, assignment3, tmp_path / "a").digest
    (reference_copy / "notes.txt").write_text("hello")
    assert prepare_submission(reference_copy, assignment3, tmp_path / "b").digest == first
    (reference_copy / "attention.py").write_text("# changed\n")
    assert prepare_submission(reference_copy, assignment3, tmp_path / "c").digest != first


def test_a_package_digest_is_its_declared_files_alone(reference_copy, assignment3, tmp_path):
    """A package's digest is SHA-256 over its declared files' names and bytes, the value grade-all has always
    stored: a gradebook's rows keep matching their unchanged packages (no class regraded for nothing)."""
    expected = hashlib.sha256()
    for name in assignment3.student_files:
        if (reference_copy / name).is_file():
            expected.update(name.encode() + b"\0" + (reference_copy / name).read_bytes() + b"\0")
    assert prepare_submission(reference_copy, assignment3, tmp_path / "s").digest == expected.hexdigest()


def test_missing_path_is_a_clear_error(assignment3, tmp_path):
    with pytest.raises(SubmissionError, match="nope does not exist$"):
        prepare_submission(tmp_path / "nope", assignment3, tmp_path / "s")


def test_an_empty_folder_is_a_clear_error(assignment3, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionError, match="no assignment3/ package found"):
        prepare_submission(tmp_path / "empty", assignment3, tmp_path / "s")


def test_a_file_that_is_not_a_zip_is_a_clear_error(assignment3, tmp_path):
    bogus = tmp_path / "sub.zip"
    bogus.write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(SubmissionError):
        prepare_submission(bogus, assignment3, tmp_path / "s")


def test_two_candidate_packages_are_ambiguous(reference_copy, assignment3, tmp_path):
    shutil.copytree(reference_copy, tmp_path / "repo" / "copy" / "assignment3")
    with pytest.raises(SubmissionError, match="several candidate"):
        find_package(tmp_path / "repo", assignment3)


def _course(tmp_path: Path) -> Path:
    """A student release's ``assignments/``: two assignments whose figures are files named like assignment3's
    modules (as the course's are), and no student work."""
    for name in ("assignment2", "assignment3"):
        (tmp_path / "assignments" / name / "figures").mkdir(parents=True)
        (tmp_path / "assignments" / name / "assignment.toml").write_text("")
        (tmp_path / "assignments" / name / "figures" / "attention.py").write_text("")
    return tmp_path / "assignments"


def test_an_assignments_own_folders_are_never_the_students_work(assignment3, tmp_path):
    """A student who runs ``grader check`` inside the checker's ``assignments/`` (near the public tests the README
    names) is told there is no package, not graded on the course's figure scripts."""
    course = _course(tmp_path)
    assert find_package(course, assignment3) is None
    assert find_package(course / "assignment3", assignment3) is None
    with pytest.raises(SubmissionError, match="^no assignment3/ package found in assignments "):
        prepare_submission(course, assignment3, tmp_path / "scratch")


def test_work_kept_inside_an_assignments_folder_is_found(reference_copy, assignment3, tmp_path):
    """A manifest above the folder searched does not count: an instructor may keep submissions beside it."""
    alice = _course(tmp_path) / "assignment3" / "submissions" / "alice"
    shutil.copytree(reference_copy, alice / "assignment3")
    assert find_package(alice, assignment3) == alice / "assignment3"


def test_zip_slip_is_rejected(tmp_path):
    archive = tmp_path / "slip.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("../../evil.py", "print('pwned')")
    with pytest.raises(SubmissionError, match="unsafe path"):
        unpack_all(archive, tmp_path / "out")
    assert not (tmp_path / "evil.py").exists()


def test_links_in_archives_are_rejected(tmp_path):
    archive = tmp_path / "link.zip"
    info = zipfile.ZipInfo("assignment3/attention.py")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(info, "/etc/passwd")
    with pytest.raises(SubmissionError, match="symbolic link"):
        unpack_all(archive, tmp_path / "out")


def test_a_zip_bomb_in_a_graded_entry_is_read_no_further_than_the_limit(assignment3, tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("assignment3/attention.py", b"0" * (60 * 1024 * 1024))
        bundle.writestr("assignment3/positions.py", b"x = 1\n")
    prepared = prepare_submission(archive, assignment3, tmp_path / "s")
    assert prepared.refused == {"attention.py": "attention.py is 62.9 MB; the limit for a graded file is 2 MiB"}
    assert "attention.py" not in prepared.missing and prepared.copied == ["positions.py"]
    unpacked = max(p.stat().st_size for p in (tmp_path / "s").rglob("attention.py"))
    assert unpacked == MAX_STUDENT_FILE_BYTES + 1


def test_many_graded_entries_are_bounded_together(tmp_path, monkeypatch):
    import autograder.submission.archive as archive_module

    monkeypatch.setattr(archive_module, "MAX_UNPACKED_BYTES", 3 * 1024 * 1024)
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for n in range(3):
            bundle.writestr(f"copy{n}/attention.py", b"0" * (2 * 1024 * 1024))
    with pytest.raises(SubmissionError, match=r"^many\.zip: the files the grader reads in it are more than 3 MiB"):
        unpack_all(archive, tmp_path / "out")


def test_symlinked_student_files_are_not_followed(reference_copy, assignment3, tmp_path):
    target = reference_copy / "attention.py"
    target.unlink()
    os.symlink("/etc/passwd", target)
    prepared = prepare_submission(reference_copy, assignment3, tmp_path / "s")
    assert "attention.py" in prepared.missing


def test_a_symlinked_package_folder_is_refused(reference_copy, assignment3, tmp_path):
    link = tmp_path / "student" / "assignment3"
    link.parent.mkdir()
    os.symlink(reference_copy, link)  # e.g. a repository whose assignment3 points at a copy of the reference
    with pytest.raises(SubmissionError, match="symbolic link"):
        prepare_submission(link, assignment3, tmp_path / "s")


def test_the_original_init_is_graded_and_a_changed_one_is_reported(reference_copy, assignment3, tmp_path):
    (reference_copy / "__init__.py").write_text("from . import attention, positions\nimport sys; sys.exit(3)\n")
    prepared = prepare_submission(reference_copy, assignment3, tmp_path / "s")
    assert (prepared.package_dir / "__init__.py").read_bytes() == (assignment3.template / "__init__.py").read_bytes()
    assert any(note.startswith("__init__.py (changed") for note in prepared.ignored)


def test_an_init_with_only_a_docstring_is_not_reported(reference_copy, assignment3, tmp_path):
    (reference_copy / "__init__.py").write_text('"""My own docstring."""\n# a comment\n')
    prepared = prepare_submission(reference_copy, assignment3, tmp_path / "s")
    assert not any(note.startswith("__init__.py") for note in prepared.ignored)
