"""Merge gradebooks (e.g. one per shard) into one, keeping each student's newest grade."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import Connection, Table, delete, func, insert, select

from autograder.errors import GraderError
from autograder.gradebook.backend import display, parse_location
from autograder.gradebook.schema import check_results, current, sources, students, submissions, task_scores
from autograder.gradebook.shards import coverage_problems, graded_students, read_shards
from autograder.gradebook.store import (
    SUBMISSION_COLUMNS,
    Gradebook,
    insert_sources,
    insert_submission,
    same_submission,
    set_current,
    upsert,
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
            with Gradebook(path, readonly=True) as source, source.engine.connect() as reading:
                with book.transaction() as writing:
                    _merge_one(writing, reading, summary)
        with book.engine.connect() as reading:
            summary.students = reading.execute(select(func.count()).select_from(students)).scalar_one()
    return summary


def _incomplete(inputs: list[Path | str]) -> list[str]:
    """What the inputs miss of the classes their shards recorded (empty when complete or not sharded)."""
    records = []
    graded: dict[str, set[str]] = {}
    for path in inputs:
        with Gradebook(path, readonly=True) as source:
            records += read_shards(source)
            for assignment, names in graded_students(source).items():
                graded.setdefault(assignment, set()).update(names)
    return coverage_problems(records, graded)


def _merge_one(out: Connection, source: Connection, summary: MergeSummary) -> None:
    for student in source.execute(select(students)):
        mine = out.execute(select(students).where(students.c.id == student.id)).first()
        seen = (student.first_seen, student.last_seen) if mine is None else (
            min(student.first_seen, mine.first_seen), max(student.last_seen, mine.last_seen))
        upsert(out, students, {"id": student.id}, {"first_seen": seen[0], "last_seen": seen[1]})
    mapping: dict[int, int] = {}
    for row in source.execute(select(submissions).order_by(submissions.c.id)):
        mapping[row.id] = _merge_submission(out, source, row, summary)
    for pointer in source.execute(select(current)):
        mine = out.execute(select(current.c.seen_at).where(current.c.assignment == pointer.assignment,
                                                           current.c.student == pointer.student)).scalar()
        if mine is None or mine < pointer.seen_at:
            set_current(out, pointer.assignment, pointer.student, mapping[pointer.submission], pointer.seen_at)


def _merge_submission(out: Connection, source: Connection, row: Any, summary: MergeSummary) -> int:
    existing = out.execute(select(submissions.c.id, submissions.c.graded_at).where(
        *same_submission(row.assignment, row.student, row.digest, row.fingerprint))).first()
    if existing is not None and existing.graded_at >= row.graded_at:
        summary.kept += 1
        return existing.id
    pointers = []
    if existing is not None:
        pointers = out.execute(select(current.c.assignment, current.c.student, current.c.seen_at)
                               .where(current.c.submission == existing.id)).all()
        out.execute(delete(submissions).where(submissions.c.id == existing.id))
        summary.replaced += 1
    else:
        summary.added += 1
    new_id = insert_submission(out, {column: row._mapping[column] for column in SUBMISSION_COLUMNS})
    insert_sources(out, new_id, {f.file: f.text for f in source.execute(
        select(sources.c.file, sources.c.text).where(sources.c.submission == row.id))})
    _copy(out, source, task_scores, select(task_scores).where(task_scores.c.submission == row.id), new_id)
    _copy(out, source, check_results, select(*[c for c in check_results.columns if c.name != "id"])
          .where(check_results.c.submission == row.id).order_by(check_results.c.id), new_id)
    for assignment, student, seen_at in pointers:  # pointers to the replaced copy follow it
        set_current(out, assignment, student, new_id, seen_at)
    return new_id


def _copy(out: Connection, source: Connection, table: Table, statement: Any, submission_id: int) -> None:
    """Insert the rows ``statement`` reads from ``table`` of the source into ``table`` of ``out``, each now belonging
    to the submission ``submission_id``."""
    rows = [{**row._mapping, "submission": submission_id} for row in source.execute(statement)]
    if rows:
        out.execute(insert(table), rows)
