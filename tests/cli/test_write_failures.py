"""A write that fails midway (a full disk) ends every command that writes a file the user asked for in one line and
exit 2, never a traceback; the gradebook and the files written before the failure are intact, and the file being
written is as it was (``autograder/util/atomic.py:write_atomic``).

The disk is a real one where the tests may mount: a tmpfs of a few pages, filled up to the room a test leaves.
Where mounting is not allowed (an unprivileged CI runner), the same room is enforced by ``os.fsync`` (where a full
disk also shows on some file systems, NFS) and ``Path.write_text``/``write_bytes`` failing with ENOSPC once the
folder's files would exceed it.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import main
from autograder.gradebook.store import Gradebook, Outcome

PAGE = 4096
DISK_BYTES = 64 * PAGE
ASSIGNMENT = "assignment3"
STUDENTS = ("ada", "bob", "cyd", "dan", "eve", "fay")


def _mount(folder: Path) -> bool:
    """Mount a small tmpfs on ``folder``; False where this process may not."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES},mode=0777", "tmpfs", str(folder)],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], Path]]:
    """``small_disk(room)``: a folder on a disk that has ``room`` bytes left (rounded to pages)."""
    folder = tmp_path / f"disk-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    mounted = _mount(folder)

    def leave(room: int) -> Path:
        if mounted:
            filler = max(0, DISK_BYTES - -(-room // PAGE) * PAGE)
            with open(folder / "filler", "wb") as handle:
                handle.write(b"\0" * filler)
            return folder
        real_fsync, real_write_bytes = os.fsync, Path.write_bytes

        def used() -> int:
            return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())

        def fsync(fd: int) -> None:
            path = Path(os.readlink(f"/proc/self/fd/{fd}"))
            if folder in path.parents and used() > room:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            real_fsync(fd)

        def write_bytes(path: Path, data: bytes) -> int:  # what Path.write_text ends in, for writers without fsync
            if folder in path.absolute().parents and used() + len(data) > room:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            return real_write_bytes(path, data)

        def write_text(path: Path, text: str, encoding: str | None = None, errors: str | None = None,
                       newline: str | None = None) -> int:
            return write_bytes(path, text.encode(encoding or "utf-8", errors or "strict"))

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(Path, "write_bytes", write_bytes)
        monkeypatch.setattr(Path, "write_text", write_text)
        return folder

    try:
        yield leave
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], check=False)


def _gradebook(path: Path) -> Path:
    """A gradebook of six graded students, each with a task report (so that each has feedback to write)."""
    checks = [{"name": f"causal_mask.check{i}", "description": f"check {i} " + "x" * 400, "weight": 1.0,
               "status": "failed", "message": "wrong values " * 40, "hint": ""} for i in range(8)]
    task = {"id": "causal_mask", "title": "Causal mask", "score": 0.0, "max_score": 4.0, "status": "failed",
            "feedback": "0 of 8 checks passed", "checks": checks}
    with Gradebook(path) as book:
        for student in STUDENTS:
            book.record(ASSIGNMENT, "fp", student, f"d-{student}", student,
                        Outcome("graded", 0.0, 4.0, report={"assignment": ASSIGNMENT, "tasks": [task]}))
    return path


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(f.relative_to(path)): f.read_bytes() for f in sorted(path.rglob("*")) if f.is_file()}


def assert_one_line(result, target: Path, progress: bool = False) -> None:  # noqa: ANN001 - click's Result
    """Exit 2, one line on stderr naming the file that could not be written and why (after grade-all's progress
    lines, ``progress``), no traceback."""
    assert not (result.exception and not isinstance(result.exception, SystemExit)), repr(result.exception)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert (lines if progress else lines[:1]) and (len(lines) == 1 or progress), result.stderr
    assert lines[-1].startswith("error: could not write ") and not any(line.startswith("error") for line in
                                                                        lines[:-1]), result.stderr
    assert str(target.name) in lines[-1] and "no space left on device" in lines[-1], lines[-1]
    assert "Traceback" not in result.output


def test_gradebook_export_on_a_full_disk_leaves_the_csv_and_the_earlier_feedback_whole(
        tmp_path: Path, small_disk: Callable[[int], Path]) -> None:
    book = _gradebook(tmp_path / "gradebook.db")
    before = book.read_bytes()
    roomy = tmp_path / "roomy"
    done = CliRunner().invoke(main, ["gradebook", "export", str(book), "--feedback", str(roomy)])
    assert done.exit_code == 0, done.output
    whole = _snapshot(roomy)
    disk = small_disk(sum(len(data) for data in whole.values()) // 2)

    csv = disk / "class.csv"
    csv.write_text("the class CSV of last week\n")
    feedback = disk / "feedback"
    result = CliRunner().invoke(main, ["gradebook", "export", str(book), "--feedback", str(feedback)])
    assert_one_line(result, feedback)
    written = _snapshot(feedback)
    assert written and len(written) < len(whole), sorted(written)  # it failed midway
    assert {name: whole[name] for name in written} == written  # every file written before the failure is whole
    assert not list(disk.rglob(".*.tmp")), "a temporary file was left"
    assert book.read_bytes() == before

    _fill(disk)
    result = CliRunner().invoke(main, ["gradebook", "export", str(book), "--csv", str(csv)])
    assert_one_line(result, csv)
    assert csv.read_text() == "the class CSV of last week\n"
    assert not list(disk.rglob(".*.tmp"))


def _fill(folder: Path) -> None:
    """Take the room that is left (a full disk)."""
    try:
        with open(folder / "more-filler", "wb") as handle:
            while True:
                handle.write(b"\0" * PAGE)
                handle.flush()
                os.fsync(handle.fileno())
    except OSError as exc:
        assert exc.errno == errno.ENOSPC


def test_report_on_a_full_disk_is_one_line(tmp_path: Path, small_disk: Callable[[int], Path]) -> None:
    book = _gradebook(tmp_path / "gradebook.db")
    out = small_disk(0) / "class-report"
    result = CliRunner().invoke(main, ["report", str(book), "--out", str(out), "--no-figure"])
    assert_one_line(result, out / "class_report.md")
    assert not list(out.parent.rglob(".*.tmp"))


def test_grade_all_on_a_full_disk_keeps_every_grade_in_the_gradebook(tmp_path: Path,
                                                                     small_disk: Callable[[int], Path]) -> None:
    """The class (two submissions with no package: recorded without a worker) is in the gradebook before the CSV
    and the feedback are written; a disk that fills up then costs those files only, and the rerun that the
    message asks for finds nothing to grade again."""
    subs = tmp_path / "class"
    for student in ("ada", "bob"):
        (subs / student).mkdir(parents=True)
    book = tmp_path / "gradebook.db"
    disk = small_disk(0)
    for option, target in (("--csv", disk / "class.csv"), ("--feedback", disk / "feedback")):
        result = CliRunner().invoke(main, ["grade-all", ASSIGNMENT, str(subs), "--gradebook", str(book), option,
                                           str(target)])
        shown = target if option == "--csv" else target / "ada.md"
        assert_one_line(result, shown, progress=True)
        with Gradebook(book, readonly=True) as opened:
            assert sorted(row.student for row in opened.current(ASSIGNMENT, with_reports=False)) == ["ada", "bob"]
        assert not list(disk.rglob(".*.tmp"))


def test_a_writer_that_copies_files_on_a_full_disk_is_one_line_too(tmp_path: Path,
                                                                   small_disk: Callable[[int], Path]) -> None:
    """`grader new` writes its files one by one (not through write_atomic, as `release` copies trees and `show` draws
    PNGs): the CLI's one handler says a disk that filled up in one line."""
    folder = small_disk(PAGE) / "assignments"
    result = CliRunner().invoke(main, ["new", "demo"], env={"GRADER_ASSIGNMENTS": str(folder)})
    assert not (result.exception and not isinstance(result.exception, SystemExit)), repr(result.exception)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: could not write ") and "no space left on device; make room" in line, line
