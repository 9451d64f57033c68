"""Grade a whole class: find every student's submission, grade in parallel workers, record each in the gradebook."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TextIO

from autograder.batch.discover import GRADESCOPE_METADATA, Entry, discover
from autograder.batch.failure import one_line
from autograder.batch.figures import FigureResult, needs_drawing
from autograder.batch.fingerprint import raw_digest
from autograder.batch.intake import BatchIntake
from autograder.batch.pool import GraderFactory, WorkerPool, WorkItem
from autograder.batch.progress import Progress
from autograder.batch.queue import LEASE_SECONDS, ClaimQueue
from autograder.batch.shard import select_shard
from autograder.batch.summary import BatchSummary
from autograder.batch.timestamps import (
    layout_time,
    read_extensions_csv,
    read_gradescope_export_times,
    read_timestamps_csv,
)
from autograder.errors import GraderError, SubmissionError
from autograder.gradebook.backend import display, parse_location
from autograder.gradebook.export import export_csv, export_feedback, figures_folder
from autograder.gradebook.shards import ShardRecord, record_shard
from autograder.gradebook.store import ERROR, Gradebook, Outcome
from autograder.show.render import declares_figures
from autograder.spec.assignment import Assignment
from autograder.spec.fingerprint import assignment_fingerprint
from autograder.spec.late import NO_TIME, Lateness, LatePolicy, lateness
from autograder.submission.sources import declared_sources
from autograder.util.safety import printable


def default_jobs() -> int:
    """One worker per usable CPU."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class BatchOptions:
    """How to run a batch.

    Attributes:
        jobs: Parallel grading workers.
        gradebook: The SQLite gradebook file, or a PostgreSQL URL (autograder.gradebook.backend).
        force: Re-grade every submission, changed or not.
        retry_errors: Re-grade unchanged submissions whose last attempt could not be graded.
        shard: ``(K, N)`` to grade only the K-th of N slices of the class.
        layout: How student ids are derived (see discover()).
        csv: Write the class CSV here afterwards.
        feedback: Write one markdown feedback file per student into this folder afterwards.
        figures: Also draw each student's ``grader show`` figures into ``<feedback>/<stem>-figures/`` (in the
            grading workers, after grading; needs ``feedback``); their feedback links and shows them.
        submission_timeout: Seconds one submission may take before its worker is stopped (default: derived
            from the task timeouts).
        grader_factory: Builds the grader in each worker (default: ``Grader``); must be picklable. What it builds
            has ``grade(path, prepared=None)`` (``prepared``: the batch intake's copy, graded as it is).
        due: The deadline, overriding the manifest's ``[assignment] due``.
        late: The late policy, overriding the manifest's ``[late]``.
        extensions: CSV of per-student deadlines (``student,due`` or ``student,extra_days``).
        timestamps: CSV of submission times (``student,submitted_at``), overriding what the layout records.
        queue: Share the class with other ``grade-all --queue`` processes through the PostgreSQL gradebook:
            each claims the next ungraded submission (batch/queue.py) instead of grading a fixed shard.
        lease: With ``queue``: seconds a claim lasts unless its process renews it (a dead worker's expires).
    """

    jobs: int = field(default_factory=default_jobs)
    gradebook: Path | str = Path("gradebook.db")
    force: bool = False
    retry_errors: bool = False
    shard: tuple[int, int] | None = None
    layout: str = "auto"
    csv: Path | None = None
    feedback: Path | None = None
    submission_timeout: float | None = None
    grader_factory: GraderFactory | None = None
    due: datetime | None = None
    late: LatePolicy | None = None
    extensions: Path | None = None
    timestamps: Path | None = None
    figures: bool = False
    queue: bool = False
    lease: float = LEASE_SECONDS


def submission_timeout(assignment: Assignment) -> float:
    """A generous bound on one submission's grading time: the import probe plus four times every task's timeout."""
    return 120.0 + 4.0 * sum(t.timeout for t in assignment.tasks)


def grade_all(assignment: Assignment, submissions: Path, options: BatchOptions | None = None,
              progress: TextIO | None = None) -> BatchSummary:
    """Grade every student's submission in ``submissions`` into the gradebook; resumable and parallel.

    Unchanged submissions already graded with the same setup are skipped (unless ``force``); each graded
    submission is committed on its own, so a killed batch loses nothing finished and a rerun does the rest.

    Args:
        assignment: The assignment (may be a subset of a manifest's tasks, e.g. via dataclasses.replace).
        submissions: Folder holding one submission per student.
        options: How to run (defaults: all CPUs, ``gradebook.db``).
        progress: Where progress goes, e.g. ``sys.stderr`` (default: nowhere).

    Returns:
        The summary.

    Raises:
        GraderError: If the folder, layout, shard or gradebook is unusable, or no grader can be built.
    """
    options = options or BatchOptions()
    if options.jobs < 1:
        raise GraderError("--jobs must be at least 1")
    if options.figures and options.feedback is None:
        raise GraderError("--figures goes with --feedback DIR: the figures are drawn beside the feedback files")
    _check_queue(options)
    started = time.monotonic()
    entries, ignored = discover(Path(submissions), options.layout, assignment.name)
    shard = None
    if options.shard:
        shard = ShardRecord(assignment.name, *options.shard, tuple(sorted(e.student for e in entries)))
        entries = select_shard(entries, *options.shard)
        if progress is not None:  # which slice this task took, so a scheduler's log can be checked against it
            progress.write(f"shard {shard.shard} of {shard.count}: {len(entries)} submission"
                           f"{'s' * (len(entries) != 1)} (of {len(shard.students)} in the class)\n")
    location = parse_location(options.gradebook)
    summary = BatchSummary(assignment.name, Path(submissions), location if isinstance(location, Path)
                           else display(location), options.jobs,
                           selected=[e.student for e in entries], ignored=ignored)
    fingerprint = assignment_fingerprint(assignment)
    summary.late = _lateness(assignment, Path(submissions), entries, options, summary)
    figures = _figures_folder(assignment, options, summary)
    files: dict[str, dict[str, str]] = {}
    with Gradebook(location) as book, BatchIntake(assignment) as intake:
        if shard is not None:  # `grader gradebook merge` checks the shards against this class listing
            record_shard(book, shard)
        jobs = _plan(book, intake, fingerprint, entries, options, summary, files, figures)
        to_grade = sum(job.grade for job in jobs)
        bar = Progress(to_grade, progress, options.jobs)
        summary.jobs = min(options.jobs, len(jobs))  # the workers that actually grade, for the summary
        if progress is not None:
            progress.write(_plan_line(to_grade, len(entries), len(summary.skipped), summary.jobs,
                                      len(jobs) - to_grade) + "\n")

        source = _claim_queue(book, assignment, fingerprint, jobs, summary, options, progress)
        if source is not None:  # the workers share the class: each one's progress counts the class
            bar.follow_class(source.__len__)

        def store(job: WorkItem, outcome: Outcome, late: Lateness | None) -> Outcome:
            try:
                book.record(assignment.name, fingerprint, job.student, job.digest, printable(job.path), outcome,
                            late, files.get(job.student))
            except Exception as exc:  # noqa: BLE001 - a report the gradebook cannot store must not end the batch
                outcome = Outcome(ERROR, max_score=assignment.max_score, seconds=outcome.seconds,
                                  message=f"the gradebook could not store this report ({one_line(exc)})")
                book.record(assignment.name, fingerprint, job.student, job.digest, printable(job.path), outcome,
                            late)
            return outcome

        def record(job: WorkItem, outcome: Outcome) -> None:
            if job.figures is None:  # graded (or given up on): its copy is no longer needed; else after drawing
                intake.discard(job.student)
            late = summary.late.get(job.student)
            if source is None:
                outcome = store(job, outcome, late)
            else:  # recorded only while this process holds the claim: no other worker records it again
                with source.recording(job.student) as held:
                    if not held:
                        _discarded(progress, job.student)
                        return
                    outcome = store(job, outcome, late)
            summary.graded.append((job.student, outcome))
            bar.update(job.student, outcome, late.final(outcome.score) if late is not None else None)

        def tick() -> None:
            bar.draw()

        def drawn(job: WorkItem, result: FigureResult) -> None:
            intake.discard(job.student)  # drawn from the graded copy (or given up on): no longer needed
            summary.figure_pages = (summary.figure_pages or 0) + result.drawn
            if not result.drawn:
                summary.figure_failures.append((job.student, result.note))

        if source if source is not None else jobs:
            timeout = options.submission_timeout or submission_timeout(assignment)
            pool = WorkerPool(assignment, options.jobs, timeout, options.grader_factory)
            try:
                pool.run(source if source is not None else jobs, record, tick, drawn)
            finally:
                summary.left_out_mistakes = list(pool.left_out)
                bar.finish()
                if source is not None:
                    source.close()
        summary.wall_seconds = round(time.monotonic() - started, 2)
        selected = set(summary.selected)
        summary.rows = [r for r in book.current(assignment.name, with_reports=False) if r.student in selected]
        if options.csv:
            summary.csv_rows = export_csv(book, assignment.name, options.csv)
        if options.feedback:
            summary.feedback_files = export_feedback(book, assignment.name, options.feedback)
    return summary


def _check_queue(options: BatchOptions) -> None:
    """Refuse ``queue`` without a PostgreSQL gradebook, or beside a shard or figures.

    Raises:
        GraderError: With the reason.
    """
    if not options.queue:
        return
    if isinstance(parse_location(options.gradebook), Path):
        raise GraderError("--queue needs a PostgreSQL gradebook (--gradebook postgresql://...): the workers claim "
                          "the class's submissions from it")
    if options.shard:
        raise GraderError("--queue and --shard exclude each other: the queue shares out the whole class")
    if options.figures:
        raise GraderError("--figures is not available with --queue: draw them afterwards with grade-all --figures")
    if options.lease < 1:
        raise GraderError("--lease must be at least 1 second")


def _claim_queue(book: Gradebook, assignment: Assignment, fingerprint: str, jobs: list[WorkItem],
                 summary: BatchSummary, options: BatchOptions, progress: TextIO | None) -> ClaimQueue | None:
    """With ``queue``: this process's plan put into the shared queue, which the worker pool then pops."""
    if not options.queue:
        return None
    skipped = set(summary.skipped)
    graded = {r.student: r.digest for r in book.current(assignment.name, with_reports=False) if r.student in skipped}
    source = ClaimQueue(str(parse_location(options.gradebook)), assignment.name, fingerprint,
                        {job.student: job for job in jobs}, graded, options.lease,
                        log=progress.write if progress is not None else None)
    if progress is not None:
        progress.write(f"queue: {len(source)} submissions left to grade, shared with every grade-all --queue "
                       f"({source.name})\n")
    return source


def _discarded(progress: TextIO | None, student: str) -> None:
    """Say that a grade was discarded: another worker holds the submission now, or it went back to the queue."""
    if progress is not None:
        progress.write(f"queue: {student}: discarded this grade: this process no longer holds the claim (its lease "
                       f"ran out and another worker took the submission over, or the submission changed since)\n")


def _lateness(assignment: Assignment, root: Path, entries: list[Entry], options: BatchOptions,
              summary: BatchSummary) -> dict[str, Lateness]:
    """Each student's lateness: their deadline (with any extension) against their submission time.

    Students of the extensions or timestamps file who are not in this batch are listed in the summary.

    Raises:
        GraderError: If the extensions or timestamps file cannot be read.
    """
    due = options.due or assignment.due
    policy = options.late or assignment.late
    extended = read_extensions_csv(options.extensions, due) if options.extensions else {}
    given = read_timestamps_csv(options.timestamps) if options.timestamps else {}
    if due is not None:
        summary.deadline = f"{due.isoformat()}, {policy.describe()}" + (f", {len(extended)} extensions"
                                                                       if extended else "")
    if not options.shard:  # a shard holds part of the class: the others are not unknown
        known = {e.student for e in entries}
        summary.unknown = sorted((set(extended) | set(given)) - known)
    layout = options.layout
    if layout == "auto":
        layout = "gradescope" if (root / GRADESCOPE_METADATA).is_file() else "plain"
    export_times = read_gradescope_export_times(root / GRADESCOPE_METADATA) \
        if layout == "gradescope" and (root / GRADESCOPE_METADATA).is_file() else {}
    late: dict[str, Lateness] = {}
    for entry in entries:
        deadline = extended.get(entry.student, due)
        if deadline is None:
            continue
        try:
            submitted = given.get(entry.student) or layout_time(layout, entry.path, export_times)
        except GraderError as exc:  # one unreadable record costs that student's time, not the batch
            late[entry.student] = Lateness(None, deadline, 0.0, 0.0, f"{NO_TIME} ({one_line(exc)})")
            continue
        late[entry.student] = lateness(submitted, deadline, policy)
    return late


def _figures_folder(assignment: Assignment, options: BatchOptions, summary: BatchSummary) -> Path | None:
    """The feedback folder the figures are drawn into, or None when there are none to draw (said in the summary)."""
    if not options.figures:
        return None
    summary.figure_pages = 0
    if not declares_figures(assignment):
        summary.figures_note = f"{assignment.name} declares no figures (no [figures] table in its manifest)"
        return None
    return Path(options.feedback)  # type: ignore[arg-type] - grade_all checked it is given


def _plan(book: Gradebook, intake: BatchIntake, fingerprint: str, entries: list[Entry],
          options: BatchOptions, summary: BatchSummary, files: dict[str, dict[str, str]],
          figures: Path | None = None) -> list[WorkItem]:
    """Prepare each submission (once: its worker grades this copy); skip what is already graded, record what
    cannot be read, queue the rest.

    With ``figures`` (the feedback folder), every queued submission also gets its figures drawn, and so does an
    unchanged one whose figures are missing or were drawn for another submission (drawn, not re-graded).
    """
    assignment = intake.assignment
    jobs = []
    for entry in entries:
        prepared = None
        try:
            prepared = intake.prepare(entry.student, entry.path)
            digest, files[entry.student], problem = prepared.digest, declared_sources(prepared), None
        except Exception as exc:  # noqa: BLE001 - an unreadable submission is that student's error, not the batch's
            intake.discard(entry.student)
            digest = raw_digest(entry.path)
            problem = printable(str(exc) if isinstance(exc, SubmissionError) else
                                f"cannot read this submission ({one_line(exc)})")
        found = None if options.force else book.find(assignment.name, entry.student, digest, fingerprint)
        late = summary.late.get(entry.student)
        if found is not None and not (options.retry_errors and found.status == ERROR):
            drawing = figures is not None and needs_drawing(figures, entry.student, digest)
            if not drawing:
                intake.discard(entry.student)  # not graded again, nor drawn: its copy is not needed
            if late is None and (found.late_note or found.penalty):  # the deadline was dropped since
                late = Lateness(None, None, 0.0, 0.0, "")
            if book.current_id(assignment.name, entry.student) != found.id:
                book.mark_current(assignment.name, entry.student, found.id, late)
            elif late is not None:
                book.set_lateness(found.id, late)
            summary.skipped.append(entry.student)
            if drawing:
                jobs.append(WorkItem(len(jobs), entry.student, entry.path, digest, grade=False,
                                     figures=figures_folder(figures, entry.student), prepared=prepared))
        elif problem is not None:
            outcome = Outcome(ERROR, max_score=assignment.max_score, message=problem)
            book.record(assignment.name, fingerprint, entry.student, digest, printable(entry.path), outcome, late)
            summary.graded.append((entry.student, outcome))
        else:
            jobs.append(WorkItem(len(jobs), entry.student, entry.path, digest,
                                 figures=figures_folder(figures, entry.student) if figures is not None else None,
                                 prepared=prepared))
    return jobs


def _plan_line(to_grade: int, found: int, unchanged: int, workers: int, to_draw: int = 0) -> str:
    """What grade-all is about to do, e.g. ``grading 1 of 5 submissions (4 unchanged, skipped) with 1 worker``."""
    skipped = f" ({unchanged} unchanged, skipped)" if unchanged else ""
    draw = f"; drawing the figures of {to_draw} unchanged submission{'s' * (to_draw != 1)}" if to_draw else ""
    if not to_grade:
        return f"nothing to grade: {found} submission{'s' * (found != 1)} found{skipped}{draw}"
    return (f"grading {to_grade} of {found} submission{'s' * (found != 1)}{skipped} with {workers} "
            f"worker{'s' * (workers != 1)}{draw}")
