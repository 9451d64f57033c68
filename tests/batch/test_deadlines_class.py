"""Late work on a small class: on time, late, extended, no timestamp; where times come from; what is stored."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.batch.run import BatchOptions, grade_all
from autograder.batch.summary import render_summary
from autograder.batch.timestamps import (
    git_commit_time,
    parse_loose_time,
    read_extensions_csv,
    read_gradescope_export_times,
    read_gradescope_submission_metadata,
    read_nbgrader_timestamp,
    read_timestamps_csv,
)
from autograder.errors import GraderError
from autograder.gradebook.migrate import head
from autograder.gradebook.store import Gradebook
from autograder.reports.results import CheckResult, GradeReport, TaskResult
from autograder.spec.assignment import Assignment, load_assignment
from autograder.spec.late import LatePolicy

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ROOT / "tests" / "fixtures" / "assignments"
REFERENCE = ROOT / "tests" / "fixtures" / "reference_solutions" / "mini"
DUE = datetime(2026, 12, 1, 23, 59, tzinfo=timezone(timedelta(hours=1)))


class HundredGrader:
    """Every submission earns 100 of 100 (the batch's lateness, not grading, is under test)."""

    def __init__(self, assignment: Assignment) -> None:
        self.assignment = assignment

    def grade(self, path: Path, prepared: object = None) -> GradeReport:
        task = TaskResult("scale", "Scale", 100.0, 100.0, "passed", "well done",
                          [CheckResult("scale.values", "scale values", 1.0, "passed")])
        return GradeReport(self.assignment.name, str(path), 100.0, 100.0, [task], seconds=0.01)

    def close(self) -> None:
        pass


def hundred_factory(assignment: Assignment) -> HundredGrader:
    return HundredGrader(assignment)


def write_student(folder: Path) -> None:
    package = folder / "mini"
    package.mkdir(parents=True)
    for file in REFERENCE.glob("*.py"):
        shutil.copy(file, package / file.name)


def small_class(tmp_path: Path) -> tuple[Path, Path, Path]:
    subs = tmp_path / "subs"
    for name in ("ontime", "late", "extended", "untimed"):
        write_student(subs / name)
    stamps = tmp_path / "stamps.csv"
    stamps.write_text("student,submitted_at\n"
                      "ontime,2026-12-01T22:00:00Z\n"
                      "late,2026-12-03T20:00:00+01:00\n"
                      "extended,2026-12-03T20:00:00+01:00\n")
    extensions = tmp_path / "ext.csv"
    extensions.write_text("student,extra_days\nextended,3\nghost,1\n")
    return subs, stamps, extensions


def test_a_small_class_with_a_deadline(tmp_path: Path) -> None:
    subs, stamps, extensions = small_class(tmp_path)
    db = tmp_path / "g.db"
    options = BatchOptions(jobs=1, gradebook=db, grader_factory=hundred_factory, due=DUE,
                           late=LatePolicy(rate=0.1), timestamps=stamps, extensions=extensions,
                           csv=tmp_path / "class.csv")
    summary = grade_all(load_assignment("mini", root=ASSIGNMENTS), subs, options)
    final = {r.student: (r.raw, r.score, r.late_note) for r in summary.rows}
    assert final["ontime"] == (100.0, 100.0, "on time")
    assert final["late"][:2] == (100.0, 80.0) and "2 days counted" in final["late"][2]
    assert final["extended"] == (100.0, 100.0, "on time")
    assert final["untimed"] == (100.0, 100.0, "no time recorded")
    assert "lateness         2 on time or within grace, 1 late (penalised), 1 no time recorded" \
        in render_summary(summary)
    assert "deadline         2026-12-01T23:59:00+01:00, 10%/day, 2 extensions" in render_summary(summary)
    assert "not in this class: 1 students of the extensions or timestamps file (ghost)" in render_summary(summary)
    lines = (tmp_path / "class.csv").read_text().splitlines()
    assert lines[0] == "student,scale,raw_score,submitted_at,lateness,penalty,total,max_score,status"
    late_line = next(line for line in lines if line.startswith("late,"))
    assert late_line.startswith("late,100,100,2026-12-03T19:00:00+00:00,") and late_line.endswith(",20%,80,100,graded")

    with Gradebook(db, readonly=True) as book:  # kept for the similarity review
        assert sorted(book.sources("mini")) == ["extended", "late", "ontime", "untimed"]
        assert "def scale" in book.sources("mini")["late"]["ops.py"]

    # An unchanged rerun without the deadline restores the raw score; the grading itself is not repeated.
    again = grade_all(load_assignment("mini", root=ASSIGNMENTS), subs,
                      BatchOptions(jobs=1, gradebook=db, grader_factory=hundred_factory))
    assert again.graded == [] and {r.student: r.score for r in again.rows}["late"] == 100.0


def test_grade_all_cli_options(tmp_path: Path) -> None:
    from autograder.cli import main

    subs, stamps, _ = small_class(tmp_path)
    runner = CliRunner()
    bad = runner.invoke(main, ["grade-all", "assignment3", str(subs), "--due", "tomorrow"])
    assert bad.exit_code == 2 and "--due 'tomorrow' is not an ISO 8601 time" in bad.output
    bad = runner.invoke(main, ["grade-all", "assignment3", str(subs), "--due", "2026-12-01T23:59:00+01:00",
                               "--late-penalty", "lots"])
    assert bad.exit_code == 2 and "is not a penalty per day or hour" in bad.output
    stamps.write_text("student,submitted_at\nontime,2026-12-01 22:00\n")
    bad = runner.invoke(main, ["grade-all", "assignment3", str(subs), "--due", "2026-12-01T23:59:00+01:00",
                               "--timestamps", str(stamps), "--gradebook", str(tmp_path / "x.db")])
    assert bad.exit_code == 2 and "line 2: submitted_at" in bad.output and "no UTC offset" in bad.output


def test_nbgrader_timestamps() -> None:
    assert parse_loose_time("2026-11-30 23:59:01.123456 UTC") == datetime(2026, 11, 30, 23, 59, 1, 123456,
                                                                          tzinfo=timezone.utc)
    assert parse_loose_time("2026-11-30 23:59:01.123456789 Z").microsecond == 123456
    assert parse_loose_time("2026-11-30T23:59:01+0100") == datetime(2026, 11, 30, 22, 59, 1, tzinfo=timezone.utc)
    assert parse_loose_time("2026-11-30 23:59:01").tzinfo == timezone.utc  # nbgrader's default zone


def test_read_nbgrader_timestamp_file(tmp_path: Path) -> None:
    folder = tmp_path / "submitted" / "alice" / "ps1"
    folder.mkdir(parents=True)
    assert read_nbgrader_timestamp(folder) is None
    (folder / "timestamp.txt").write_text("2026-11-30 23:59:01.123456 UTC\n")
    assert read_nbgrader_timestamp(folder / "timestamp.txt").day == 30
    (folder / "timestamp.txt").write_text("yesterday")
    with pytest.raises(GraderError, match="timestamp.txt: 'yesterday' is not a time"):
        read_nbgrader_timestamp(folder)


def test_gradescope_metadata(tmp_path: Path) -> None:
    metadata = tmp_path / "submission_metadata.json"
    metadata.write_text(json.dumps({
        "created_at": "2026-12-02T10:00:00.365935-07:00",
        "assignment": {"due_date": "2026-12-01T23:00:00.000000-07:00", "late_due_date": None},
        "users": [{"email": "a@example.com", "id": 1, "name": "A",
                   "assignment": {"due_date": "2026-12-03T23:00:00.000000-07:00"}}]}))
    submitted, due = read_gradescope_submission_metadata(metadata)
    assert submitted.hour == 10 and submitted.astimezone(timezone.utc).hour == 17
    assert due == datetime(2026, 12, 4, 6, 0, tzinfo=timezone.utc)  # the student's extension wins
    export = tmp_path / "submission_metadata.yml"
    export.write_text("---\nsubmission_11:\n  :submitters:\n  - :name: A\n    :sid: '1'\n"
                      "  :created_at: 2026-12-01 22:31:39.937640000 Z\n  :score: 1.0\nsubmission_12:\n"
                      "  :submitters:\n  - :name: B\n")
    assert read_gradescope_export_times(export) == {
        "submission_11": datetime(2026, 12, 1, 22, 31, 39, 937640, tzinfo=timezone.utc)}


def test_gradescope_export_times_are_each_folders_own(tmp_path: Path) -> None:
    """The time of the submission itself, not a time nested below it (the hand parser took the last
    ``:created_at:`` line of a folder's block, here an earlier attempt's: the late submission read as on time)."""
    export = tmp_path / "submission_metadata.yml"
    export.write_text("submission_11:\n  :submitters:\n  - :name: A\n  :created_at: 2026-12-02 10:00:00 Z\n"
                      "  :history:\n  - :score: 0.0\n    :created_at: 2026-11-20 10:00:00 Z\n"
                      "'submission_12':\n  :created_at: '2026-12-01 09:00:00 +01:00'  # quoted, with a comment\n")
    assert read_gradescope_export_times(export) == {
        "submission_11": datetime(2026, 12, 2, 10, tzinfo=timezone.utc),
        "submission_12": datetime(2026, 12, 1, 8, tzinfo=timezone.utc)}
    export.write_text("submission_11:\n  :created_at: [unclosed\n")
    with pytest.raises(GraderError, match="is not valid YAML"):
        read_gradescope_export_times(export)


def test_classroom_commit_time_and_no_git(tmp_path: Path) -> None:
    repo = tmp_path / "assignment-alice"
    repo.mkdir()
    assert git_commit_time(repo) is None
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
           "GIT_COMMITTER_DATE": "2026-12-01T23:30:00+01:00", "GIT_AUTHOR_DATE": "2026-12-01T23:30:00+01:00"}
    git = ["git", "-c", "user.name=A", "-c", "user.email=a@example.com", "-C", str(repo)]
    subprocess.run(git + ["init", "-q"], check=True, env=env)
    assert git_commit_time(repo) is None  # a repository without commits records no time
    (repo / "f.txt").write_text("x")
    subprocess.run(git + ["add", "f.txt"], check=True, env=env)
    subprocess.run(git + ["commit", "-q", "-m", "work"], check=True, env=env)
    hook = repo / ".git" / "hooks" / "post-checkout"  # hooks never run: git log is all that runs
    hook.write_text("#!/bin/sh\ntouch ../../hooked\n")
    hook.chmod(0o755)
    with open(repo / ".git" / "config", "a") as handle:
        handle.write(f"[core]\n\tfsmonitor = touch {tmp_path / 'fsmonitor-ran'}\n\tpager = touch {tmp_path / 'p'}\n")
    assert git_commit_time(repo) == DUE - timedelta(minutes=29)
    assert not (tmp_path / "fsmonitor-ran").exists() and not (tmp_path / "p").exists()


def test_csv_files(tmp_path: Path) -> None:
    ext = tmp_path / "e.csv"
    ext.write_text("student,due\nalice,2026-12-05T12:00:00+01:00\n")
    assert read_extensions_csv(ext, None)["alice"].day == 5
    ext.write_text("student,extra_days\nalice,1.5\n")
    assert read_extensions_csv(ext, DUE)["alice"] == DUE + timedelta(days=1.5)
    with pytest.raises(GraderError, match="extra_days needs the assignment's deadline"):
        read_extensions_csv(ext, None)
    ext.write_text("name,days\nalice,1\n")
    with pytest.raises(GraderError, match="expected the columns student,due or student,extra_days"):
        read_extensions_csv(ext, DUE)
    stamps = tmp_path / "t.csv"
    stamps.write_text("student,submitted_at\nbob,2026-12-01T10:00:00Z\nbob,2026-12-01T11:00:00Z\n")
    with pytest.raises(GraderError, match="line 3: student 'bob' appears twice"):
        read_timestamps_csv(stamps)


def test_a_schema_1_gradebook_is_upgraded_in_place_when_opened(tmp_path: Path) -> None:
    """A gradebook written by grader 0.1.0 (schema 1) is brought to the newest schema when opened, even to be read."""
    db = tmp_path / "old.db"
    fixture = Path(__file__).with_name("schema1_gradebook.sql")
    with sqlite3.connect(db) as connection:
        connection.executescript(fixture.read_text())
    with Gradebook(db, readonly=True) as book:
        (row,) = book.current("mini")
        assert (row.student, row.score, row.raw, row.late_note) == ("alice", 3.0, 3.0, "")
        assert (row.raw_score, [t["task"] for t in row.tasks]) == (3.0, ["scale", "row_sums"])
        assert book.sources("mini") == {}
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT version_num FROM gradebook_revision").fetchall() == [(head(),)]
    with Gradebook(db) as book:
        assert book.current("mini")[0].raw_score == 3.0


def test_a_schema_1_gradebook_merges_into_a_new_one(tmp_path: Path) -> None:
    from autograder.gradebook.merge import merge_gradebooks

    old = tmp_path / "old.db"
    with sqlite3.connect(old) as connection:
        connection.executescript(Path(__file__).with_name("schema1_gradebook.sql").read_text())
    summary = merge_gradebooks(tmp_path / "new.db", [old])
    assert (summary.added, summary.students) == (1, 1)
    with Gradebook(tmp_path / "new.db", readonly=True) as book:
        (row,) = book.current("mini")
        assert (row.raw_score, row.score, len(row.tasks)) == (3.0, 3.0, 2)
