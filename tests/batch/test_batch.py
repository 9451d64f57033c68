"""Batch grading: layouts, sharding, resumable gradebook, hostile submissions, merge, CSV, feedback and report."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the tests run from a checkout, installed or not
    sys.path.insert(0, str(ROOT))

from autograder.batch.discover import (
    Entry,
    classroom_prefix,
    discover,
    read_gradescope_metadata,
)
from autograder.batch.progress import Progress
from autograder.batch.run import BatchOptions, grade_all
from autograder.batch.shard import parse_shard, select_shard
from autograder.batch.summary import render_summary
from autograder.errors import GraderError  # noqa: E402
from autograder.gradebook.merge import merge_gradebooks  # noqa: E402
from autograder.gradebook.store import ERROR, GRADED, Gradebook, Outcome
from autograder.reports.classreport import write_class_report  # noqa: E402
from autograder.reports.results import CheckResult, GradeReport, TaskResult  # noqa: E402
from autograder.spec.assignment import Assignment, load_assignment  # noqa: E402
from autograder.submission.intake import prepare_submission, submission_digest  # noqa: E402
from autograder.submission.notebook.places import place
from autograder.util.safety import csv_safe

FIXTURES = ROOT / "tests" / "fixtures"
ASSIGNMENTS = FIXTURES / "assignments"
REFERENCE = FIXTURES / "reference_solutions" / "mini"
HOSTILE_IDS = ["=HYPERLINK(1)", "+plus", "-minus", "@at"]


def mini() -> Assignment:
    """The two-task fixture assignment (tests/fixtures/assignments/mini)."""
    return load_assignment("mini", root=ASSIGNMENTS)


def write_submission(folder: Path, ops: str | None = None, *, as_zip: bool = False) -> Path:
    """A student folder (or zip) holding mini/ with the reference's files, ``ops.py`` replaced if given."""
    package = folder / "mini"
    package.mkdir(parents=True)
    for file in REFERENCE.glob("*.py"):
        (package / file.name).write_text(file.read_text())
    if ops is not None:
        (package / "ops.py").write_text(ops)
    if not as_zip:
        return folder
    archive = folder.with_name(folder.name + ".zip")
    with zipfile.ZipFile(archive, "w") as bundle:
        for file in sorted(package.iterdir()):
            bundle.write(file, f"mini/{file.name}")
    shutil.rmtree(folder)
    return archive


def reference_ops(old: str = "", new: str = "") -> str:
    text = (REFERENCE / "ops.py").read_text()
    return text.replace(old, new) if old else text


def rows(db: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return connection.execute(sql, args).fetchall()


# -- a fake grader: the batch machinery without torch, fast and able to misbehave on demand -------------------

class FakeGrader:
    """Scores ``mini`` submissions by a marker in ops.py; CRASH kills the worker, HANG hangs, RAISE raises."""

    def __init__(self, assignment: Assignment) -> None:
        self.assignment = assignment

    def grade(self, path: Path, prepared: object = None) -> GradeReport:
        text = next(Path(path).rglob("ops.py")).read_text() if Path(path).is_dir() else ""
        if "CRASH" in text:
            os._exit(3)
        if "HANG" in text:
            time.sleep(120)
        if "RAISE" in text:
            raise RuntimeError("boom")
        if "ENVIRONMENT" in text:  # what the worker sees of its environment, as the outcome's message
            raise RuntimeError(f"mark={os.environ.get('GRADER_TEST_MARK')} tmp={tempfile.gettempdir()}")
        score = 1.0 if "GOOD" in text else 0.0
        checks = [CheckResult("scale.values", "scale values", 1.0, "passed" if score else "failed",
                              "" if score else "wrong values", "" if score else "multiply, do not add")]
        task = TaskResult("scale", "Scale", score, 1.0, "passed" if score else "failed", "feedback", checks)
        return GradeReport(self.assignment.name, str(path), score, 1.0, [task], seconds=0.01)

    def close(self) -> None:
        pass


def fake_factory(assignment: Assignment) -> FakeGrader:
    return FakeGrader(assignment)


def broken_factory(assignment: Assignment) -> FakeGrader:
    raise GraderError("hidden checks for task 'x' are not part of this installation")


def fake_options(db: Path, **extra: object) -> BatchOptions:
    return BatchOptions(jobs=2, gradebook=db, grader_factory=fake_factory, **extra)  # type: ignore[arg-type]


# -- discovery, sharding, digests -----------------------------------------------------------------------------

def test_plain_layout_uses_folder_and_zip_names(tmp_path: Path) -> None:
    write_submission(tmp_path / "alice")
    write_submission(tmp_path / "bob", as_zip=True)
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".DS_Store").write_text("x")
    entries, ignored = discover(tmp_path, "plain", "mini")
    assert [e.student for e in entries] == ["alice", "bob"]
    assert entries[1].path.name == "bob.zip"
    assert ignored == ["notes.txt (neither a folder nor a .zip)"]


def test_duplicate_student_is_an_error(tmp_path: Path) -> None:
    write_submission(tmp_path / "alice")
    write_submission(tmp_path / "alice_copy", as_zip=True).rename(tmp_path / "alice.zip")
    with pytest.raises(GraderError, match="two submissions for student 'alice'"):
        discover(tmp_path, "plain", "mini")


def test_latin1_folder_names_stay_two_readable_students(tmp_path: Path) -> None:
    """Folders named in Latin-1 (``j\\xf6rg``, ``j\\xfcrg``: not UTF-8) keep each such byte as its escape."""
    subs = tmp_path / "subs"
    for raw, marker in ((b"j\xf6rg", "# GOOD\n"), (b"j\xfcrg", "# bad\n")):
        write_submission(subs / os.fsdecode(raw), marker)
    options = fake_options(tmp_path / "g.db", csv=tmp_path / "class.csv", feedback=tmp_path / "feedback")
    summary = grade_all(mini(), subs, options)
    assert sorted((s, o.score) for s, o in summary.graded) == [("j\\xf6rg", 1.0), ("j\\xfcrg", 0.0)]
    ids = [row["student"] for row in csv.DictReader(io.StringIO((tmp_path / "class.csv").read_text()))]
    assert ids == ["j\\xf6rg", "j\\xfcrg"]
    assert sorted(p.name for p in (tmp_path / "feedback").glob("*.md")) == ["j_xf6rg.md", "j_xfcrg.md"]
    written = len(list((tmp_path / "feedback").iterdir()))  # the summary counts students, not the files: 2 each
    assert written == 4 and "feedback: 2 students, a .md and a .html each" in render_summary(summary).splitlines()


def test_an_empty_class_folder_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(GraderError, match=r"^no submissions to grade: expected one folder, .zip or .ipynb per "
                                          r"student in .*; found only notes.txt"):
        discover(tmp_path, "plain", "mini")


GRADESCOPE_YAML = """\
submission_101:
  :submitters:
  - :name: Ada Lovelace
    :sid: '12345'
    :email: ada@example.edu
  :created_at: 2026-11-30 10:00:00.000000000 -08:00
  :score: 0.0
submission_102:
  :submitters:
  - :name: Alan Turing
    :sid: ''
    :email: alan@example.edu
  - :name: Grace Hopper
    :sid: '777'
    :email: grace@example.edu
  :created_at: 2026-11-30 11:00:00.000000000 -08:00
"""


def test_gradescope_export_ids(tmp_path: Path) -> None:
    (tmp_path / "submission_metadata.yml").write_text(GRADESCOPE_YAML)
    write_submission(tmp_path / "submission_101")
    write_submission(tmp_path / "submission_102")
    write_submission(tmp_path / "submission_103")  # not in the metadata: keeps its folder name
    entries, _ = discover(tmp_path, "auto", "mini")
    assert [e.student for e in entries] == ["12345", "777+alan@example.edu", "submission_103"]
    assert read_gradescope_metadata(tmp_path / "submission_metadata.yml")["submission_102"] == [
        {"name": "Alan Turing", "sid": "", "email": "alan@example.edu"},
        {"name": "Grace Hopper", "sid": "777", "email": "grace@example.edu"}]


def test_auto_refuses_an_nbgrader_course(tmp_path: Path) -> None:
    """Without --layout nbgrader, a course folder would be one student named "submitted" (graded from the one
    package it holds, under that id, or not at all): auto names the layout to choose instead."""
    write_submission(tmp_path / "submitted" / "ada")
    with pytest.raises(GraderError) as caught:
        discover(tmp_path, "auto", "mini")
    assert str(caught.value) == (f"{tmp_path} is an nbgrader course (submitted/<student>/mini/): grade it with "
                                 f"--layout nbgrader, or --layout plain to take each entry of {tmp_path} as a student")
    assert [e.student for e in discover(tmp_path, "nbgrader", "mini")[0]] == ["ada"]
    assert [e.student for e in discover(tmp_path, "plain", "mini")[0]] == ["submitted"]


def test_classroom_export_ids(tmp_path: Path) -> None:
    for user in ("octocat", "mona-lisa", "hubot"):
        write_submission(tmp_path / f"transformers-hw3-{user}")
    entries, _ = discover(tmp_path, "classroom", "assignment3")
    assert [e.student for e in entries] == ["hubot", "mona-lisa", "octocat"]
    assert classroom_prefix(["mini-ann", "mini-bo"], "mini") == "mini-"
    assert classroom_prefix(["hw-x-anna", "hw-x-ann"], "mini") == "hw-x-"


def test_shards_partition_the_class() -> None:
    entries = [Entry(f"student{i:02d}", Path(f"s{i}")) for i in range(23)]
    shards = [select_shard(entries, k, 4) for k in range(1, 5)]
    students = [e.student for shard in shards for e in shard]
    assert sorted(students) == sorted(e.student for e in entries)
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    assert select_shard(list(reversed(entries)), 2, 4) == shards[1]
    assert parse_shard("3/4") == (3, 4)
    for bad in ("0/2", "3/2", "1-2", "x"):
        with pytest.raises(GraderError):
            parse_shard(bad)


def test_digest_matches_prepare_submission(tmp_path: Path) -> None:
    folder = write_submission(tmp_path / "alice")
    archive = write_submission(tmp_path / "bob", as_zip=True)
    for path in (folder, archive):
        expected = prepare_submission(path, mini(), tmp_path / f"scratch-{path.name}").digest
        assert submission_digest(path, mini()) == expected
    assert submission_digest(folder, mini()) == submission_digest(archive, mini())


def test_csv_safe() -> None:
    assert [csv_safe(v) for v in ("=1+1", "+A1", "-A1", "@SUM(A1)", "\tx", "\rx", "alice", 3.5, None)] == \
        ["'=1+1", "'+A1", "'-A1", "'@SUM(A1)", "'\tx", "'\rx", "alice", "3.5", ""]


def test_progress_prints_plain_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream, jobs=1, tty=False)
    progress.update("alice", Outcome(GRADED, score=1, max_score=2, seconds=3.0))
    progress.update("bob", Outcome(ERROR, message="no package"))
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[1/2] alice: 1 / 2 in 3.0 s (0 could not be graded so far, ETA 0:03)"
    assert lines[1].startswith("[2/2] bob: could not be graded: no package (1 could not be graded so far")


def test_progress_bar_on_a_terminal_counts_submissions_that_could_not_be_graded() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream, jobs=1, tty=True)
    progress.update("alice", Outcome(GRADED, score=1, max_score=2, seconds=3.0))
    progress.update("bob", Outcome(ERROR, message="no package"))
    progress.finish()
    assert "2/2" in stream.getvalue() and "could not be graded: 1" in stream.getvalue()
    assert "alice" not in stream.getvalue()  # a bar, not a log


def test_a_queue_worker_s_progress_counts_the_class_and_what_it_graded() -> None:
    """Three grade-all --queue workers share a class of 6: each worker's log said [1/6], [2/6] for its own two
    submissions; a TA reading any one log now sees how far the class is, and what that worker graded."""
    left = [6]
    streams = [io.StringIO() for _ in range(3)]
    workers = [Progress(6, stream, jobs=1, tty=False) for stream in streams]
    for worker in workers:
        worker.follow_class(lambda: left[0])
    for number, student in enumerate(["ada", "bob", "cyd", "dan", "eve", "fay"]):
        left[0] -= 1
        workers[number % 3].update(student, Outcome(GRADED, score=1, max_score=2, seconds=3.0))
    lines = [stream.getvalue().splitlines() for stream in streams]
    assert [line.split("]")[0] + "]" for line in lines[0]] == ["[1/6]", "[4/6]"]
    assert lines[2][-1].startswith("[6/6] fay: 1 / 2 in 3.0 s (graded by this worker: 2, 0 could not be graded so "
                                   "far, ETA 0:00)"), lines[2]
    bar_stream = io.StringIO()
    bar = Progress(6, bar_stream, jobs=1, tty=True)
    bar.follow_class(lambda: 2)
    bar.update("ada", Outcome(GRADED, score=1, max_score=2, seconds=3.0))
    bar.finish()
    assert "4/6" in bar_stream.getvalue() and "this worker: 1" in bar_stream.getvalue()


def test_plan_line_counts_what_it_says() -> None:
    from autograder.batch.run import _plan_line

    assert _plan_line(1, 5, 4, 1) == "grading 1 of 5 submissions (4 unchanged, skipped) with 1 worker"
    assert _plan_line(3, 3, 0, 2) == "grading 3 of 3 submissions with 2 workers"
    assert _plan_line(0, 5, 5, 0) == "nothing to grade: 5 submissions found (5 unchanged, skipped)"


# -- the batch with the fake grader: resumability rules, misbehaving workers, shards -------------------------

def test_unchanged_skipped_changed_regraded_force_regrades_all(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    for name in ("a", "b", "c"):
        write_submission(subs / name, "# GOOD\ndef scale(x, f): return x * f\n")
    db = tmp_path / "g.db"
    first = grade_all(mini(), subs, fake_options(db), progress=None)
    assert len(first.graded) == 3 and not first.skipped

    again = grade_all(mini(), subs, fake_options(db), progress=None)
    assert again.graded == [] and again.skipped == ["a", "b", "c"]

    (subs / "b" / "mini" / "ops.py").write_text("# now wrong\n")
    changed = grade_all(mini(), subs, fake_options(db), progress=None)
    assert [s for s, _ in changed.graded] == ["b"] and changed.skipped == ["a", "c"]
    assert {r.student: r.score for r in changed.rows} == {"a": 1.0, "b": 0.0, "c": 1.0}

    forced = grade_all(mini(), subs, fake_options(db, force=True), progress=None)
    assert sorted(s for s, _ in forced.graded) == ["a", "b", "c"]
    assert rows(db, "SELECT COUNT(*) FROM submissions") == [(4,)]  # b's first version is kept as history
    assert rows(db, "SELECT student, digest FROM submissions GROUP BY student, digest HAVING COUNT(*) > 1") == []
    assert rows(db, "SELECT COUNT(*) FROM current") == [(3,)]

    (subs / "b" / "mini" / "ops.py").write_text("# GOOD\ndef scale(x, f): return x * f\n")  # back to v1
    reverted = grade_all(mini(), subs, fake_options(db), progress=None)
    assert reverted.graded == [] and {r.student: r.score for r in reverted.rows}["b"] == 1.0


class LocatingGrader(FakeGrader):
    """Says where ops.py raises as the real feedback does (``place``): for a notebook, its cell and line."""

    def grade(self, path: Path, prepared: object = None) -> GradeReport:
        lines = (prepared.package_dir / "ops.py").read_text().split("\n")  # type: ignore[attr-defined]
        line = next(number for number, text in enumerate(lines, 1) if "raise ValueError" in text)
        where = place("ops.py", line, prepared.cell_map)  # type: ignore[attr-defined]
        check = CheckResult("scale.values", "scale values", 1.0, "error", f"ValueError: broken ({where})")
        task = TaskResult("scale", "Scale", 0.0, 1.0, "failed", "feedback", [check])
        return GradeReport(self.assignment.name, str(path), 0.0, 1.0, [task], seconds=0.01)


def locating_factory(assignment: Assignment) -> LocatingGrader:
    return LocatingGrader(assignment)


def write_mini_notebook(path: Path, *cells: str) -> Path:
    """A notebook for ``mini``: a markdown title, then one code cell per text."""
    made = [{"cell_type": "markdown", "metadata": {}, "source": "# Mini"}] + [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": text}
        for text in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": made}))
    return path


def test_a_notebook_whose_lines_moved_is_regraded_and_its_feedback_names_the_new_place(tmp_path: Path) -> None:
    """A line added above a definition in its cell leaves the extracted files byte-identical, but the stored
    feedback's "cell 3, line 2" would no longer be the line the student has: the submission is not unchanged."""
    scale = "def scale(x, factor):\n    raise ValueError('broken')"
    sums = "def row_sums(x):\n    return x.sum(dim=-1)"
    notebook = write_mini_notebook(tmp_path / "subs" / "alice" / "mini.ipynb", "import torch", scale, sums)
    options = BatchOptions(jobs=1, gradebook=tmp_path / "g.db", feedback=tmp_path / "fb",
                           grader_factory=locating_factory)
    feedback = tmp_path / "fb" / "alice.md"
    assert [s for s, _ in grade_all(mini(), tmp_path / "subs", options, progress=None).graded] == ["alice"]
    assert "(cell 3, line 2)" in feedback.read_text()
    assert grade_all(mini(), tmp_path / "subs", options, progress=None).graded == [], "the same notebook: skipped"

    write_mini_notebook(notebook, "import torch", "# my first try\n" + scale, sums)
    shifted = grade_all(mini(), tmp_path / "subs", options, progress=None)
    assert [s for s, _ in shifted.graded] == ["alice"] and shifted.skipped == []
    assert "(cell 3, line 3)" in feedback.read_text() and "(cell 3, line 2)" not in feedback.read_text()
    assert grade_all(mini(), tmp_path / "subs", options, progress=None).graded == []


class PreparedOnlyGrader(FakeGrader):
    """Grades only the copy the batch's intake prepared: running the intake again in the worker is an error."""

    def grade(self, path: Path, prepared: object = None) -> GradeReport:
        if prepared is None:
            raise RuntimeError("the worker was left to run the intake itself")
        return super().grade(prepared.package_dir.parent)  # type: ignore[attr-defined]


def prepared_only_factory(assignment: Assignment) -> PreparedOnlyGrader:
    return PreparedOnlyGrader(assignment)


def test_grade_all_prepares_each_submission_once_and_removes_the_copies(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    import autograder.batch.intake as batch_intake

    calls: list[str] = []

    def counted(path: Path, assignment: Assignment, scratch: Path) -> object:
        calls.append(Path(path).name)
        return prepare_submission(path, assignment, scratch)

    monkeypatch.setattr(batch_intake, "prepare_submission", counted)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    subs = tmp_path / "subs"
    for name, marker in (("a", "GOOD"), ("b", "bad"), ("c", "GOOD")):
        write_submission(subs / name, f"# {marker}\n")
    options = BatchOptions(jobs=2, gradebook=tmp_path / "g.db", grader_factory=prepared_only_factory)
    summary = grade_all(mini(), subs, options, progress=None)
    assert {s: (o.status, o.score) for s, o in summary.graded} == {"a": (GRADED, 1.0), "b": (GRADED, 0.0),
                                                                   "c": (GRADED, 1.0)}
    assert sorted(calls) == ["a", "b", "c"]  # once each, in this process: the workers graded that copy
    assert list((tmp_path / "tmp").glob("grader-intake-*")) == []


def test_grading_setup_change_regrades(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    write_submission(subs / "a", "# GOOD\n")
    db = tmp_path / "g.db"
    grade_all(mini(), subs, fake_options(db), progress=None)
    fewer_tasks = dataclasses.replace(mini(), tasks=mini().tasks[:1])
    assert [s for s, _ in grade_all(fewer_tasks, subs, fake_options(db), progress=None).graded] == ["a"]


def test_misbehaving_submissions_never_stop_the_batch(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    markers = {"a_ok": "GOOD", "b_crash": "CRASH", "c_hang": "HANG", "d_raise": "RAISE", "e_ok": "GOOD",
               "f_ok": "GOOD"}
    for name, marker in markers.items():
        write_submission(subs / name, f"# {marker}\n")
    (subs / "g_empty").mkdir()
    (subs / "h_badzip.zip").write_bytes(b"not a zip")
    db = tmp_path / "g.db"
    summary = grade_all(mini(), subs, fake_options(db, submission_timeout=3.0), progress=None)
    outcome = dict(summary.graded)
    assert {s for s, o in outcome.items() if o.status == GRADED} == {"a_ok", "e_ok", "f_ok"}
    assert "stopped unexpectedly (exit code 3)" in outcome["b_crash"].message
    assert "longer than 3 s" in outcome["c_hang"].message
    assert outcome["d_raise"].message == "the grader failed on this submission (RuntimeError: boom)"
    assert "no mini/ package found" in outcome["g_empty"].message
    assert "h_badzip.zip is a damaged zip archive" in outcome["h_badzip"].message
    assert rows(db, "SELECT COUNT(*) FROM current") == [(8,)]
    assert "could not grade  5" in render_summary(summary)

    again = grade_all(mini(), subs, fake_options(db), progress=None)
    assert again.graded == [] and len(again.skipped) == 8
    (subs / "c_hang" / "mini" / "ops.py").write_text("# GOOD\n")
    retried = grade_all(mini(), subs, fake_options(db, retry_errors=True, submission_timeout=3.0), progress=None)
    assert sorted(s for s, _ in retried.graded) == ["b_crash", "c_hang", "d_raise", "g_empty", "h_badzip"]


def test_workers_take_the_batch_s_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker sees the environment of the batch that starts it, even after an earlier batch in the same process
    (a process that starts workers once and forks them later, like multiprocessing's fork server, would not)."""
    write_submission(tmp_path / "subs" / "a", "# ENVIRONMENT\n")
    grade_all(mini(), tmp_path / "subs", fake_options(tmp_path / "first.db"), progress=None)
    (tmp_path / "later").mkdir()
    monkeypatch.setenv("GRADER_TEST_MARK", "set-after-the-first-batch")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "later"))
    summary = grade_all(mini(), tmp_path / "subs", fake_options(tmp_path / "second.db"), progress=None)
    assert f"mark=set-after-the-first-batch tmp={tmp_path / 'later'}" in dict(summary.graded)["a"].message


def test_a_grader_that_cannot_start_is_one_error(tmp_path: Path) -> None:
    write_submission(tmp_path / "subs" / "a")
    options = BatchOptions(jobs=1, gradebook=tmp_path / "g.db", grader_factory=broken_factory)
    with pytest.raises(GraderError, match="cannot start: hidden checks for task 'x'"):
        grade_all(mini(), tmp_path / "subs", options, progress=None)


def test_shards_merge_into_the_whole_class(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    for index in range(7):
        write_submission(subs / f"s{index}", "# GOOD\n" if index % 2 else "# bad\n")
    shard_dbs = [tmp_path / f"shard{k}.db" for k in (1, 2)]
    for k, db in enumerate(shard_dbs, start=1):
        grade_all(mini(), subs, fake_options(db, shard=(k, 2)), progress=None)
    graded = [set(r[0] for r in rows(db, "SELECT student FROM current")) for db in shard_dbs]
    assert graded[0].isdisjoint(graded[1]) and graded[0] | graded[1] == {f"s{i}" for i in range(7)}

    merged = tmp_path / "class.db"
    summary = merge_gradebooks(merged, shard_dbs)
    assert (summary.added, summary.students) == (7, 7)
    assert merge_gradebooks(merged, shard_dbs).kept == 7  # idempotent
    with Gradebook(merged, readonly=True) as book:
        current = book.current("mini")
    assert [r.student for r in current] == [f"s{i}" for i in range(7)]
    assert [r.score for r in current] == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    assert all(r.tasks and r.report for r in current)
    with pytest.raises(GraderError, match="both an input and the output"):
        merge_gradebooks(merged, [merged])
    (tmp_path / "junk.db").write_text("not sqlite")
    with pytest.raises(GraderError, match="not a"):
        merge_gradebooks(merged, [tmp_path / "junk.db"])


def test_merge_refuses_a_class_missing_a_shard_unless_partial_is_allowed(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from autograder.cli import main

    subs = tmp_path / "subs"
    for index in range(6):
        write_submission(subs / f"s{index}", "# GOOD\n")
    books = {k: tmp_path / f"gradebook-{k}.db" for k in (1, 2, 3)}
    logs = {}
    for k, db in books.items():
        logs[k] = io.StringIO()
        grade_all(mini(), subs, BatchOptions(jobs=1, gradebook=db, grader_factory=fake_factory, shard=(k, 3)),
                  progress=logs[k])
    assert "shard 2 of 3: 2 submissions (of 6 in the class)\n" in logs[2].getvalue()
    lost = sorted(e.student for e in select_shard(discover(subs, "plain", "mini")[0], 2, 3))
    runner = CliRunner()
    merge = ["gradebook", "merge", str(tmp_path / "class.db"), str(books[1]), str(books[3])]
    refused = runner.invoke(main, merge)
    assert refused.exit_code == 2 and not (tmp_path / "class.db").exists()
    assert refused.output == (f"error: incomplete class, nothing merged: mini: no gradebook holds shard 2 of 3; "
                              f"2 of 6 students have no grade: {', '.join(lost)}; merge every shard's gradebook, "
                              f"or pass --allow-partial\n")
    partial = runner.invoke(main, [*merge, "--allow-partial"])
    assert partial.exit_code == 0 and "warning: incomplete class: mini: no gradebook holds shard 2" in partial.output
    assert "4 students" in partial.output
    complete = runner.invoke(main, [*merge, str(books[2])])
    assert complete.exit_code == 0 and "6 students" in complete.output and "warning" not in complete.output

    write_submission(subs / "late", "# GOOD\n")  # a late arrival re-cuts the class; only its new shard is re-run
    entries = discover(subs, "plain", "mini")[0]
    placed = next(k for k in (1, 2, 3) if "late" in {e.student for e in select_shard(entries, k, 3)})
    other = 1 if placed != 1 else 2
    grade_all(mini(), subs, BatchOptions(jobs=1, gradebook=books[other], grader_factory=fake_factory,
                                         shard=(other, 3)), progress=None)
    stale = runner.invoke(main, ["gradebook", "merge", str(tmp_path / "again.db"), *map(str, books.values())])
    assert stale.exit_code == 2 and "1 of 7 students have no grade: late" in stale.output
    assert "the shards saw different classes (6 and 7 students)" in stale.output


def test_gradebook_and_report_commands(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from autograder.cli import main

    subs = tmp_path / "subs"
    for name in ("=cmd", "bob"):
        write_submission(subs / name, "# GOOD\n" if name == "bob" else "# bad\n")
    for k in (1, 2):
        grade_all(mini(), subs, fake_options(tmp_path / f"s{k}.db", shard=(k, 2)), progress=None)
    runner = CliRunner()
    merged = runner.invoke(main, ["gradebook", "merge", str(tmp_path / "all.db"), str(tmp_path / "s1.db"),
                                  str(tmp_path / "s2.db")])
    assert merged.exit_code == 0 and "2 students; 2 submissions added" in merged.output
    exported = runner.invoke(main, ["gradebook", "export", str(tmp_path / "all.db"), "--csv", str(tmp_path / "g.csv"),
                                    "--feedback", str(tmp_path / "fb")])
    assert exported.exit_code == 0, exported.output
    assert (tmp_path / "g.csv").read_text().splitlines() == [
        "student,scale,raw_score,submitted_at,lateness,penalty,total,max_score,status",
        "'=cmd,0,0,,,0%,0,1,graded", "bob,1,1,,,0%,1,1,graded"]
    assert "Hint: multiply, do not add" in (tmp_path / "fb" / "_cmd.md").read_text()
    reported = runner.invoke(main, ["report", str(tmp_path / "all.db"), "--out", str(tmp_path / "r"), "--no-figure"])
    assert reported.exit_code == 0 and (tmp_path / "r" / "class_report.md").is_file()
    missing = runner.invoke(main, ["report", str(tmp_path / "nope.db")])
    assert missing.exit_code == 2 and "gradebook not found" in missing.output


def test_gradescope_export_end_to_end(tmp_path: Path) -> None:
    subs = tmp_path / "export"
    subs.mkdir()
    (subs / "submission_metadata.yml").write_text(GRADESCOPE_YAML)
    write_submission(subs / "submission_101", "# GOOD\n")
    write_submission(subs / "submission_102", "# bad\n")
    summary = grade_all(mini(), subs, fake_options(tmp_path / "g.db"), progress=None)
    assert {s: o.score for s, o in summary.graded} == {"12345": 1.0, "777+alan@example.edu": 0.0}


# -- the real grader (sandboxed workers, torch): hostile submissions, exports, report, kill -9 ---------------

@pytest.fixture(scope="module")
def graded_class(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object]:
    """A class of eight graded with the real grader: correct, a known mistake, hostile ones, formula ids."""
    base = tmp_path_factory.mktemp("class")
    subs = base / "subs"
    write_submission(subs / "alice")
    write_submission(subs / "bob", reference_ops("x.sum(dim=-1)", "x.sum(dim=0)"))
    write_submission(subs / "carol", "import os\nos._exit(1)\n")
    write_submission(subs / "dave", "def scale(x, factor):\n    return x * factor\n\ndef row_sums(x:\n")
    write_submission(subs / HOSTILE_IDS[0], reference_ops("x * factor", "x + factor"), as_zip=True)
    for student in HOSTILE_IDS[1:]:
        write_submission(subs / student)
    db = base / "gradebook.db"
    stream = io.StringIO()
    options = BatchOptions(jobs=2, gradebook=db, csv=base / "class.csv", feedback=base / "feedback")
    summary = grade_all(mini(), subs, options, progress=stream)
    return base, db, summary


@pytest.mark.slow
def test_real_batch_with_hostile_submissions(graded_class: tuple[Path, Path, object]) -> None:
    base, db, summary = graded_class
    scores = {r.student: (r.status, r.score) for r in summary.rows}  # type: ignore[attr-defined]
    assert scores == {
        "alice": (GRADED, 5.0), "bob": (GRADED, 2.0), "carol": (GRADED, 0.0), "dave": (GRADED, 0.0),
        "=HYPERLINK(1)": (GRADED, 3.0), "+plus": (GRADED, 5.0), "-minus": (GRADED, 5.0), "@at": (GRADED, 5.0),
    }
    environments = [o.report["environment"] for _, o in summary.graded]  # type: ignore[attr-defined]
    assert environments and all(type(e["torch"]) is str for e in environments)  # unpickled without importing torch
    hints = rows(db, "SELECT DISTINCT c.student, r.hint FROM check_results r JOIN current c "
                     "ON c.submission = r.submission WHERE r.hint != ''")
    assert hints == [("bob", "You summed each column; a row sum reduces over the last dimension.")]
    rss = rows(db, "SELECT MAX(worker_rss_mb) FROM submissions")[0][0]
    assert rss is not None and rss > 50


@pytest.mark.slow
def test_csv_is_formula_safe_and_feedback_written(graded_class: tuple[Path, Path, object]) -> None:
    base, _, _ = graded_class
    table = list(csv.reader((base / "class.csv").read_text().splitlines()))
    assert table[0] == ["student", "scale", "row_sums", "raw_score", "submitted_at", "lateness", "penalty", "total",
                        "max_score", "status"]
    assert sorted(row[0] for row in table[1:]) == sorted(["'+plus", "'-minus", "'=HYPERLINK(1)", "'@at", "alice",
                                                          "bob", "carol", "dave"])
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in table for cell in row)
    assert ["bob", "2", "0", "2", "", "", "0%", "2", "5", "graded"] in table
    feedback = (base / "feedback" / "bob.md").read_text()
    assert "**Score: 2 / 5**" in feedback and "Hint: You summed each column" in feedback
    assert "could not be imported" in (base / "feedback" / "carol.md").read_text()
    assert (base / "feedback" / "_HYPERLINK_1_.md").is_file()


@pytest.mark.slow
def test_class_report(graded_class: tuple[Path, Path, object]) -> None:
    pytest.importorskip("matplotlib")
    base, db, _ = graded_class
    written = write_class_report(db, base / "report")
    assert [p.name for p in written] == ["class_report.png", "class_report.md"]
    assert (base / "report" / "class_report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (base / "report" / "class_report.md").read_text()
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|")]  # each markdown table row's cells
    assert ["Row sums (`row_sums`)", "3"] in [row[:2] for row in rows]
    assert ["row_sums", "You summed each column; a row sum reduces over the last dimension.", "1"] in rows
    assert "## Slowest submissions" in text


@pytest.mark.slow
def test_resume_after_kill(tmp_path: Path, path_sockets: Callable[[int], list[str]]) -> None:
    subs = tmp_path / "subs"
    total = 8
    for index in range(total):  # s1, graded when the batch is killed, sleeps in each job: it is still in flight
        write_submission(subs / f"s{index}", "import time\ntime.sleep(3)\n" + reference_ops() if index == 1
                         else None if index % 2 else reference_ops("x * factor", "x - factor"))
    db = tmp_path / "gradebook.db"
    command = [sys.executable, "-m", "autograder.cli", "grade-all", "mini", str(subs), "--jobs", "1",
               "--gradebook", str(db)]
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(ASSIGNMENTS), "PYTHONPATH": str(ROOT),
           "TMPDIR": str(tmp_path)}  # what the killed batch leaves stays in the test's folder
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while _recorded(db) < 1:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "no submission was recorded in time"
        time.sleep(0.02)
    # While it runs, nothing of the batch listens on a socket with a path: in the weaker isolation tiers a job runs
    # as the grader's user and could connect to it (multiprocessing's fork server, for one, runs what it is sent).
    assert not path_sockets(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    done_before = _recorded(db)
    assert 1 <= done_before < total
    # Nothing of the killed batch outlives it, not even the worker grading s1: its workers, the zygote template
    # and the zygotes all carry the test's TMPDIR (the zygotes a folder below it).
    deadline = time.monotonic() + 5
    while _left_behind(tmp_path):
        assert time.monotonic() < deadline, f"processes outlived the killed batch: {_left_behind(tmp_path)}"
        time.sleep(0.1)

    rerun = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"unchanged        {done_before} " in rerun.stdout
    assert rows(db, "SELECT COUNT(*), COUNT(DISTINCT student) FROM submissions") == [(total, total)]
    assert rows(db, "SELECT COUNT(*) FROM current") == [(total,)]
    assert rows(db, "SELECT DISTINCT status FROM submissions") == [(GRADED,)]


def _left_behind(tmp_path: Path) -> dict[int, str]:
    """The command lines of running processes whose TMPDIR is ``tmp_path`` or a folder below it, by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z" and any(v == f"TMPDIR={tmp_path}".encode() or v.startswith(f"TMPDIR={tmp_path}/".encode())
                                for v in environ):
            found[int(entry.name)] = command[:120]
    return found


def _recorded(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return rows(db, "SELECT COUNT(*) FROM submissions")[0][0]
    except sqlite3.OperationalError:
        return 0
