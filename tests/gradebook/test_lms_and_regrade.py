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
from autograder.gradebook.export import (
    CANVAS_HEADER,
    MOODLE_IDENTITIES,
    ROSTER_KEYS,
    gradebook_csv,
    lms_csv,
    read_roster,
    roster_columns,
)
from autograder.gradebook.store import Gradebook, Outcome
from autograder.spec.late import Lateness
from autograder.util.safety import csv_safe

REPO = Path(__file__).resolve().parents[2]


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
    """Only graded roster students are rows: a student the file does not list keeps their Canvas grade, whereas a
    blank cell over an existing grade is a change to no grade (Canvas's gradebook_importer.rb,
    no_change_to_value?)."""
    (tmp_path / "roster.csv").write_text(ROSTER)
    with Gradebook(_class(tmp_path), readonly=True) as book:
        export = lms_csv(book.current("mini"), "canvas", "Mini (4242)", read_roster(tmp_path / "roster.csv"))
    table = list(csv.reader(io.StringIO(export.text)))
    assert tuple(table[0][:5]) == CANVAS_HEADER == ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
    assert table[0][5] == "Mini (4242)" and table[1] == ["Points Possible", "", "", "", "", "5"]
    assert table[2:] == [["Doe, Jane", "101", "s1", "jdoe", "A", "5"], ["Roe, Rick", "102", "s2", "rroe", "B", "2.4"]]
    assert (export.students, export.missing, export.extra, export.ungraded) == (2, ["s3"], ["s4"], ["s5"])


def test_a_canvas_column_cannot_start_a_formula(tmp_path: Path) -> None:
    """BATCH.md: no cell of any CSV the grader writes can start a formula; the header's included."""
    (tmp_path / "roster.csv").write_text(ROSTER)
    with Gradebook(_class(tmp_path), readonly=True) as book:
        for fmt in ("canvas", "moodle"):
            export = lms_csv(book.current("mini"), fmt, '=HYPERLINK("http://x.example","Mini")',
                             read_roster(tmp_path / "roster.csv"))
            header = next(csv.reader(io.StringIO(export.text)))
            assert header[-1] == csv_safe(header[-1]) == "'=HYPERLINK(\"http://x.example\",\"Mini\")", header


def test_moodle_import_file_and_the_command(tmp_path: Path) -> None:
    """Moodle reads an empty grade cell as "no grade" (load_data.php: '' -> null), so a student without a grade
    is left out, as in Canvas; a student who could not be graded is said as such, not as "graded but not on the
    roster"."""
    roster = tmp_path / "roster.csv"
    roster.write_text("grader_id,ID number,Email address\ns1,1001,jane@example.edu\ns2,1002,rick@example.edu\n"
                      "s3,1003,pat@example.edu\n")
    result = CliRunner().invoke(main, [
        "gradebook", "export", str(_class(tmp_path)), "--csv", str(tmp_path / "moodle.csv"), "--format", "moodle",
        "--roster", str(roster), "--column", "Mini"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "moodle.csv").read_text().splitlines() == [
        "ID number,Email address,Mini", "1001,jane@example.edu,5", "1002,rick@example.edu,2.4"]
    assert "2 students (moodle)" in result.stdout
    assert result.stderr.splitlines() == [
        "warning: 1 on the roster without a submission (not in the file: the LMS keeps their grade): s3",
        "warning: 1 graded but not on the roster (not in the file): s4",
        "warning: 1 could not be graded (not in the file: the LMS keeps their grade): s5"]


def test_moodle_matches_by_the_field_the_roster_has(tmp_path: Path) -> None:
    """A roster of ``username,name`` gave rows ``,,100`` that Moodle cannot match (and may give the student of the
    row before); the file now gives the username, and a row without the field the others have is left out."""
    roster = tmp_path / "roster.csv"
    roster.write_text("username,name\ns1,Jane Doe\ns2,Rick Roe\n")
    with Gradebook(_class(tmp_path), readonly=True) as book:
        export = lms_csv(book.current("mini"), "moodle", "Mini", read_roster(roster))
        assert export.text.splitlines() == ["Username,Mini", "s1,5", "s2,2.4"]
        mixed = [{"grader_id": "s1", "email": "jane@example.edu"}, {"grader_id": "s2", "username": "rroe"},
                 {"grader_id": "s4", "email": "lou@example.edu"}]
        export = lms_csv(book.current("mini"), "moodle", "Mini", mixed)
        assert export.text.splitlines() == ["Email address,Mini", "jane@example.edu,5", "lou@example.edu,0"]
        assert export.unmatched == ["s2"] and "1 graded, with no ID the LMS can match on the roster" in \
            export.warnings()[-1]
        with pytest.raises(GraderError, match="gives Moodle nothing to match students by"):
            lms_csv(book.current("mini"), "moodle", "Mini", [{"grader_id": "s1", "name": "Jane Doe"}])


def test_the_plain_csv_leaves_the_score_of_an_ungradable_submission_empty(tmp_path: Path) -> None:
    with Gradebook(_class(tmp_path), readonly=True) as book:
        table = {row["student"]: row for row in csv.DictReader(io.StringIO(gradebook_csv(book.current("mini"))))}
    assert (table["s5"]["raw_score"], table["s5"]["total"], table["s5"]["status"]) == ("", "", "error")
    assert (table["s4"]["raw_score"], table["s4"]["total"]) == ("0", "0")  # graded, with no point: a 0


def test_the_roster_columns_are_named_alike_in_the_error_and_the_docs(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("name,grade\nx,1\n")
    with pytest.raises(GraderError, match=re.escape(f"one of {roster_columns()} (any case)")):
        read_roster(tmp_path / "r.csv")
    assert "username" in roster_columns()
    doc = " ".join((REPO / "docs" / "INSTRUCTORS.md").read_text().split())
    for _, shown in ROSTER_KEYS:
        assert f"`{shown}`" in doc, shown
    for label, _ in MOODLE_IDENTITIES:
        assert f"`{label}`" in doc, label


def test_every_canvas_export_the_docs_show_names_its_column() -> None:
    """Without --column the grade column is the assignment's name, which Canvas takes for a new assignment."""
    for doc in (REPO / "README.md", REPO / "docs" / "INSTRUCTORS.md"):
        lines = doc.read_text().replace("\\\n", " ").splitlines()  # a command continued on the next line is one
        commands = [line for line in lines if "--format canvas" in line and "grader" in line]
        assert commands, doc
        assert all("--column" in line for line in commands), (doc, commands)


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
