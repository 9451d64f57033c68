"""Finding and copying a student's package: folders, zips, unsafe archives, ignored files."""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from autograder.errors import SubmissionError
from autograder.submission.package import find_package, prepare_submission, unpack_zip


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


def test_missing_path_is_a_clear_error(assignment3, tmp_path):
    with pytest.raises(SubmissionError, match="submission not found"):
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


def test_zip_slip_is_rejected(tmp_path):
    archive = tmp_path / "slip.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("../../evil.py", "print('pwned')")
    with pytest.raises(SubmissionError, match="unsafe path"):
        unpack_zip(archive, tmp_path / "out")
    assert not (tmp_path / "evil.py").exists()


def test_links_in_archives_are_rejected(tmp_path):
    archive = tmp_path / "link.zip"
    info = zipfile.ZipInfo("assignment3/attention.py")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(info, "/etc/passwd")
    with pytest.raises(SubmissionError, match="symbolic link"):
        unpack_zip(archive, tmp_path / "out")


def test_zip_bombs_are_rejected(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("assignment3/attention.py", b"0" * (60 * 1024 * 1024))
    with pytest.raises(SubmissionError, match="uncompressed size"):
        unpack_zip(archive, tmp_path / "out")


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


def test_a_zip_entry_name_that_is_not_utf8_is_a_clear_error(tmp_path):
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("assignment3/attention.py", "x = 1\n")
    data = bytearray(archive.read_bytes())
    for start in range(len(data)):  # mark both headers UTF-8 and put an invalid byte in the name
        if data[start:start + 4] in (b"PK\x03\x04", b"PK\x01\x02"):
            flags = start + (6 if data[start + 2] == 3 else 8)
            data[flags + 1] |= 0x08
    data = data.replace(b"assignment3/attention.py", b"assignment3/\xff\xfeention.py")
    archive.write_bytes(bytes(data))
    with pytest.raises(SubmissionError, match="not a readable zip archive"):
        unpack_zip(archive, tmp_path / "out")


def test_the_original_init_is_graded_and_a_changed_one_is_reported(reference_copy, assignment3, tmp_path):
    (reference_copy / "__init__.py").write_text("from . import attention, positions\nimport sys; sys.exit(3)\n")
    prepared = prepare_submission(reference_copy, assignment3, tmp_path / "s")
    assert (prepared.package_dir / "__init__.py").read_bytes() == (assignment3.template / "__init__.py").read_bytes()
    assert any(note.startswith("__init__.py (changed") for note in prepared.ignored)


def test_an_init_with_only_a_docstring_is_not_reported(reference_copy, assignment3, tmp_path):
    (reference_copy / "__init__.py").write_text('"""My own docstring."""\n# a comment\n')
    prepared = prepare_submission(reference_copy, assignment3, tmp_path / "s")
    assert not any(note.startswith("__init__.py") for note in prepared.ignored)
