"""LMS import files (Canvas, Moodle) with a roster that has missing and extra students; regrade diffs."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import main
from autograder.errors import GraderError
from autograder.gradebook.diff import diff_gradebooks, render_diff
from autograder.gradebook.export import CANVAS_HEADER, lms_csv, read_roster
from autograder.gradebook.store import Gradebook, Outcome
from autograder.spec.late import Lateness


def _report(scale: float, rows: float) -> dict:
    return {"tasks": [{"id": "scale", "title": "Scale", "score": scale, "max_score": 2.0, "status": "passed"},
                      {"id": "row_sums", "title": "Row sums", "score": rows, "max_score": 3.0, "status": "failed"}]}


def _book(path: Path, scores: dict[str, tuple[float, float]], fingerprint: str = "fp1") -> Path:
    with Gradebook(path) as book:
        for student, (scale, rows) in scores.items():
            book.record("mini", fingerprint, student, "d-" + student, student,
                        Outcome("graded", scale + rows, 5.0, report=_report(scale, rows)))
    return path


def _class(tmp_path: Path) -> Path:
    db = _book(tmp_path / "g.db", {"s1": (2, 3), "s2": (2, 1), "s4": (0, 0)})
    with Gradebook(db) as book:
        book.record("mini", "fp1", "s5", "d-s5", "s5", Outcome("error", 0, 5.0, message="no package"))
        from datetime import datetime, timezone
        due = datetime(2026, 12, 1, tzinfo=timezone.utc)
        book.set_lateness(book.current_id("mini", "s2"), Lateness(due.replace(day=3), due, 1.0, 0.2, "late"))
    return db


ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section,Email address\n"
          "Points Possible,,,,,\n"
          "\"Doe, Jane\",101,s1,jdoe,A,jane@example.edu\n"
          "\"Roe, Rick\",102,s2,rroe,B,rick@example.edu\n"
          "\"Poe, Pat\",103,s3,ppoe,A,pat@example.edu\n"
          "\"Moe, Mo\",105,s5,mmoe,A,mo@example.edu\n")


def test_canvas_import_file(tmp_path: Path) -> None:
    (tmp_path / "roster.csv").write_text(ROSTER)
    with Gradebook(_class(tmp_path), readonly=True) as book:
        export = lms_csv(book.current("mini"), "canvas", "Mini (4242)", read_roster(tmp_path / "roster.csv"))
    table = list(csv.reader(io.StringIO(export.text)))
    assert tuple(table[0][:5]) == CANVAS_HEADER == ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
    assert table[0][5] == "Mini (4242)" and table[1] == ["Points Possible", "", "", "", "", "5"]
    assert table[2:] == [["Doe, Jane", "101", "s1", "jdoe", "A", "5"], ["Roe, Rick", "102", "s2", "rroe", "B", "2.4"],
                         ["Poe, Pat", "103", "s3", "ppoe", "A", ""], ["Moe, Mo", "105", "s5", "mmoe", "A", ""]]
    assert (export.missing, export.extra, export.ungraded) == (["s3"], ["s4"], ["s5"])


def test_moodle_import_file_and_the_command(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("grader_id,ID number,Email address\ns1,1001,jane@example.edu\ns2,1002,rick@example.edu\n"
                      "s3,1003,pat@example.edu\n")
    result = CliRunner().invoke(main, [
        "gradebook", "export", str(_class(tmp_path)), "--csv", str(tmp_path / "moodle.csv"), "--format", "moodle",
        "--roster", str(roster), "--column", "Mini"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "moodle.csv").read_text().splitlines() == [
        "ID number,Email address,Mini", "1001,jane@example.edu,5", "1002,rick@example.edu,2.4",
        "1003,pat@example.edu,"]
    assert "3 students (moodle)" in result.stdout
    assert "warning: 1 on the roster without a graded submission (grade left empty): s3" in result.stderr
    assert "warning: 2 graded but not on the roster (not in the file): s4, s5" in result.stderr


def test_canvas_needs_a_roster_and_a_usable_one(tmp_path: Path) -> None:
    db = _class(tmp_path)
    result = CliRunner().invoke(main, ["gradebook", "export", str(db), "--csv", str(tmp_path / "c.csv"),
                                       "--format", "canvas"])
    assert result.exit_code == 2 and "give --roster" in result.output
    (tmp_path / "r.csv").write_text("name,grade\nx,1\n")
    with pytest.raises(GraderError, match="no column to match student ids against"):
        read_roster(tmp_path / "r.csv")


def test_an_export_that_would_be_empty_is_refused(tmp_path: Path) -> None:
    """Not a roster (notes, a binary file, a header without students) or a roster matching no graded student:
    one line, exit 2, and no file written."""
    db = _class(tmp_path)
    files = {"notes.txt": b"hello world\nsee you\n", "binary.csv": b"\xff\xfe\x00\x01",
             "header.csv": b"SIS User ID,Student\n", "others.csv": b"grader_id,Student\nzed,Zed\n"}
    expected = {"notes.txt": "has no column to match student ids against", "binary.csv": "not a readable UTF-8 CSV",
                "header.csv": "lists no student", "others.csv": "no student of the roster has a submission"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        result = CliRunner().invoke(main, ["gradebook", "export", str(db), "--csv", str(tmp_path / "out.csv"),
                                           "--format", "canvas", "--roster", str(tmp_path / name)])
        assert result.exit_code == 2 and expected[name] in result.stderr, (name, result.output)
        assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "out.csv").exists(), name


def test_regrade_diff_per_task(tmp_path: Path) -> None:
    old = _book(tmp_path / "old.db", {"ada": (2, 1), "bob": (2, 3), "cy": (1, 1), "dee": (0, 0)})
    new = _book(tmp_path / "new.db", {"ada": (2, 3), "bob": (2, 2), "cy": (2, 0), "eve": (1, 0)}, "fp2")
    diff = diff_gradebooks(old, new)
    text = render_diff(diff)
    assert "1 gained points, 1 lost points, 1 same total with task changes, 2 in one gradebook only" in text
    groups = {block.splitlines()[0]: [re.split(r" {2,}", line.strip()) for line in block.splitlines()[3:]]
              for block in text.split("\n\n")[1:]}  # each group's table: its title, header, rule, then one row each
    assert groups == {"gained:": [["ada", "3", "5", "+2", "row_sums 1 -> 3"]],
                      "lost:": [["bob", "5", "4", "-1", "row_sums 3 -> 2"]],
                      "same total, tasks changed:": [["cy", "2", "2", "scale 1 -> 2; row_sums 1 -> 0"]],
                      "in one gradebook only:": [["dee", "0", "-", "scale 0 -> -; row_sums 0 -> -"],
                                                 ["eve", "-", "1", "scale - -> 1; row_sums - -> 0"]]}
    result = CliRunner().invoke(main, ["gradebook", "diff", str(old), str(new)])
    assert result.exit_code == 0 and re.search(r"\n  ada +3 +5 +\+2 +row_sums 1 -> 3\n", result.output)
    missing = CliRunner().invoke(main, ["gradebook", "diff", str(old), str(tmp_path / "none.db")])
    assert missing.exit_code == 2 and "gradebook not found" in missing.output
