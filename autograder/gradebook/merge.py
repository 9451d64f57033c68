"""Merge gradebooks (e.g. one per shard) into one, keeping each student's newest grade."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from autograder.errors import GraderError
from autograder.gradebook.backend import display, parse_location
from autograder.gradebook.shards import coverage_problems, graded_students, read_shards
from autograder.gradebook.store import (
    Gradebook,
    insert_sources,
    insert_submission,
    set_current,
    submission_values,
)


@dataclass
class MergeSummary:
    """What a merge did: submissions added, replaced by a newer copy, or kept because OUT's copy was newer."""

    added: int = 0
    replaced: int = 0
    kept: int = 0
    students: int = 0
    incomplete: list[str] = field(default_factory=list)  # what is missing, when merged with allow_partial


def merge_gradebooks(output: Path | str, inputs: Iterable[Path | str], allow_partial: bool = False) -> MergeSummary:
    """Combine gradebooks (e.g. one per shard) into ``output``, one transaction per input.

    The same submission (student, content, grading setup) in several inputs is kept once, the most recently
    graded copy winning; a student's current submission is the most recently seen one. Gradebooks written by
    ``grade-all --shard`` record their class; unless ``allow_partial``, a set of them that misses a shard or a
    student of that class is refused before ``output`` is touched.

    Args:
        output: The gradebook to merge into (created if missing).
        inputs: The gradebooks to merge.
        allow_partial: Merge an incomplete set anyway (what is missing is listed in the summary).

    Raises:
        GraderError: If an input is missing, is not a gradebook, or is the output itself, or the set is
            incomplete and ``allow_partial`` is not given.
    """
    inputs = [parse_location(p) for p in inputs]
    output = parse_location(output)
    if not inputs:
        raise GraderError("name at least one gradebook to merge")
    for path in inputs:
        if path == output or (isinstance(path, Path) and isinstance(output, Path) and path.exists()
                              and output.exists() and path.resolve() == output.resolve()):
            raise GraderError(f"{display(path)} is both an input and the output of the merge")
    summary = MergeSummary(incomplete=_incomplete(inputs))
    if summary.incomplete and not allow_partial:
        raise GraderError("incomplete class, nothing merged: " + " | ".join(summary.incomplete)
                          + "; merge every shard's gradebook, or pass --allow-partial")
    with Gradebook(output) as book:
        for path in inputs:
            with Gradebook(path, readonly=True) as source:
                with book.transaction():
                    _merge_one(book.db, source.db, summary, has_sources=source.version != "1")
        summary.students = book.db.execute("SELECT COUNT(*) FROM students").fetchone()[0]
    return summary


def _incomplete(inputs: list[Path | str]) -> list[str]:
    """What the inputs miss of the classes their shards recorded (empty when complete or not sharded)."""
    records = []
    graded: dict[str, set[str]] = {}
    for path in inputs:
        with Gradebook(path, readonly=True) as source:
            records += read_shards(source)
            for assignment, students in graded_students(source).items():
                graded.setdefault(assignment, set()).update(students)
    return coverage_problems(records, graded)


def _merge_one(out: sqlite3.Connection, source: sqlite3.Connection, summary: MergeSummary,
               has_sources: bool = True) -> None:
    for student in source.execute("SELECT * FROM students"):
        out.execute("INSERT INTO students(id, first_seen, last_seen) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                    "first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)",
                    (student["id"], student["first_seen"], student["last_seen"]))
    mapping: dict[int, int] = {}
    for row in source.execute("SELECT * FROM submissions ORDER BY id"):
        mapping[row["id"]] = _merge_submission(out, source, row, summary, has_sources)
    for pointer in source.execute("SELECT * FROM current"):
        mine = out.execute("SELECT seen_at FROM current WHERE assignment = ? AND student = ?",
                           (pointer["assignment"], pointer["student"])).fetchone()
        if mine is None or mine["seen_at"] < pointer["seen_at"]:
            set_current(out, pointer["assignment"], pointer["student"], mapping[pointer["submission"]],
                         pointer["seen_at"])


def _merge_submission(out: sqlite3.Connection, source: sqlite3.Connection, row: sqlite3.Row,
                      summary: MergeSummary, has_sources: bool) -> int:
    key = (row["assignment"], row["student"], row["digest"], row["fingerprint"])
    existing = out.execute("SELECT id, graded_at FROM submissions WHERE assignment = ? AND student = ? AND "
                           "digest = ? AND fingerprint = ?", key).fetchone()
    if existing is not None and existing["graded_at"] >= row["graded_at"]:
        summary.kept += 1
        return existing["id"]
    pointers = []
    if existing is not None:
        pointers = [tuple(p) for p in out.execute("SELECT assignment, student, seen_at FROM current "
                                                  "WHERE submission = ?", (existing["id"],))]
        out.execute("DELETE FROM submissions WHERE id = ?", (existing["id"],))
        summary.replaced += 1
    else:
        summary.added += 1
    new_id = insert_submission(out, submission_values(row))
    if has_sources:
        insert_sources(out, new_id, {f["file"]: f["text"] for f in source.execute(
            "SELECT file, text FROM sources WHERE submission = ?", (row["id"],))})
    for task in source.execute("SELECT * FROM task_scores WHERE submission = ?", (row["id"],)):
        out.execute("INSERT INTO task_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (new_id, *tuple(task)[1:]))
    for check in source.execute("SELECT * FROM check_results WHERE submission = ? ORDER BY id", (row["id"],)):
        out.execute("INSERT INTO check_results(submission, task, name, description, weight, status, message, hint, "
                    "seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (new_id, *tuple(check)[2:]))
    for assignment, student, seen_at in pointers:  # pointers to the replaced copy follow it
        set_current(out, assignment, student, new_id, seen_at)
    return new_id
