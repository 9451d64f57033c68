"""`grader grade-all`: grade a class into the gradebook."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autograder.cli.base import assignment_named, friendly_errors, warn_left_out_mistakes


@click.command("grade-all")
@click.argument("assignment")
@click.argument("submissions", type=click.Path(path_type=Path))
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel grading workers [default: one per CPU].")
@click.option("--gradebook", default="gradebook.db", show_default=True,
              help="SQLite gradebook file to record into (created if missing), or a postgresql:// URL.")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Also write the class CSV here.")
@click.option("--feedback", type=click.Path(path_type=Path), help="Also write one markdown file per student here.")
@click.option("--figures", is_flag=True, help="With --feedback: also draw each student's `grader show` figures into "
              "DIR/<student>-figures/ (in the grading workers' sandbox, after grading); the feedback links and shows "
              "them. A figure that cannot be drawn never costs the grade.")
@click.option("--force", is_flag=True, help="Re-grade every submission, even unchanged ones.")
@click.option("--retry-errors", is_flag=True, help="Re-grade unchanged submissions that could not be graded.")
@click.option("--shard", metavar="K/N|auto", help="Grade only the K-th of N slices of the class (1 <= K <= N); "
              "auto: from a Kubernetes Indexed Job, a Slurm array or $GRADER_SHARD (docs/BATCH.md).")
@click.option("--shard-count", type=click.IntRange(min=1), metavar="N",
              help="With --shard auto: N, the number of shards (else $GRADER_SHARD_COUNT; a Kubernetes Job or a "
                   "Slurm array gives only the task's index).")
@click.option("--queue", is_flag=True, help="With a postgresql:// gradebook: claim the class's submissions one at a "
              "time from it, beside any number of other grade-all --queue processes on any machines (docs/BATCH.md).")
@click.option("--lease", type=click.FloatRange(min=1), metavar="SECONDS",
              help="With --queue: how long a claim lasts unless its process renews it (a dead worker's submission is "
                   "taken over after it) [default: 600].")
@click.option("--layout", type=click.Choice(["auto", "plain", "gradescope", "classroom", "nbgrader"]),
              default="auto", show_default=True, help="How student ids are derived from SUBMISSIONS (see docs/BATCH.md).")
@click.option("--due", metavar="ISO8601", help="The deadline, e.g. 2026-12-01T23:59:00+01:00 (overrides the "
              "manifest's [assignment] due).")
@click.option("--late-penalty", metavar="RATE", help="Penalty per started day or hour late, e.g. 10%/day or 2%/hour "
              "(overrides the manifest's [late] penalty; its grace, cap and last_accepted still apply).")
@click.option("--extensions", type=click.Path(path_type=Path, dir_okay=False),
              help="CSV of per-student deadlines: student,due (ISO 8601) or student,extra_days.")
@click.option("--timestamps", type=click.Path(path_type=Path, dir_okay=False),
              help="CSV of submission times: student,submitted_at (ISO 8601); overrides the layout's times.")
@friendly_errors
def grade_all(assignment: str, submissions: Path, jobs: int | None, gradebook: str, csv_path: Path | None,
              feedback: Path | None, figures: bool, force: bool, retry_errors: bool, shard: str | None,
              shard_count: int | None, queue: bool, lease: float | None, layout: str, due: str | None,
              late_penalty: str | None, extensions: Path | None,
              timestamps: Path | None) -> None:
    """Grade every student's submission in SUBMISSIONS (a folder or .zip each) into a resumable gradebook."""
    import dataclasses

    from autograder.batch.run import BatchOptions, default_jobs
    from autograder.batch.run import grade_all as run_batch
    from autograder.batch.shard import resolve_shard
    from autograder.batch.summary import render_summary
    from autograder.errors import GraderError
    from autograder.spec.late import parse_penalty, parse_when

    if shard_count is not None and shard is None:
        raise GraderError("--shard-count goes with --shard auto")
    if lease is not None and not queue:
        raise GraderError("--lease goes with --queue")
    if figures and feedback is None:
        raise click.UsageError("--figures goes with --feedback DIR (the figures are drawn beside the feedback)")

    spec = assignment_named(assignment)
    _check_targets(submissions, gradebook, csv_path, feedback, layout)
    try:
        deadline = parse_when(due, "--due") if due else None
        policy = None
        if late_penalty:
            rate, period = parse_penalty(late_penalty, "--late-penalty")
            policy = dataclasses.replace(spec.late, rate=rate, period_seconds=period)
    except ValueError as exc:
        raise GraderError(str(exc)) from None
    if policy is not None and policy.rate and not (deadline or spec.due):
        raise GraderError("--late-penalty needs a deadline: give --due or set [assignment] due in the manifest")
    options = BatchOptions(jobs=jobs or default_jobs(), gradebook=gradebook, force=force, retry_errors=retry_errors,
                           shard=resolve_shard(shard, shard_count) if shard else None, layout=layout, csv=csv_path,
                           feedback=feedback, figures=figures, due=deadline, late=policy, extensions=extensions,
                           timestamps=timestamps, queue=queue, **({"lease": lease} if lease is not None else {}))
    from autograder.spec.mutation import diagnosable_mistakes

    stale = diagnosable_mistakes(spec)[1]
    warn_left_out_mistakes(spec, stale)  # the workers' graders and figures leave them out alike, unsaid
    summary = run_batch(spec, submissions, options, sys.stderr)
    click.echo(render_summary(summary), nl=False)
    # what the workers' judges and figures' diagnoses found, once each (a stale one was said above)
    warn_left_out_mistakes(spec, [line for line in summary.left_out_mistakes if line not in stale])
    if layout == "nbgrader":  # SUBMISSIONS is the course folder: the scores go to its nbgrader gradebook too
        from autograder.batch.nbgrader_course import render_write_back, write_back

        click.echo(render_write_back(write_back(submissions, spec, gradebook)), nl=False)


def _check_targets(submissions: Path, gradebook: str, csv_path: Path | None, feedback: Path | None,
                   layout: str) -> None:
    """Every output of the batch, checked before the first submission is graded.

    Raises:
        GraderError: If one cannot be written.
    """
    from autograder.cli.gradebook import check_gradebook_target
    from autograder.util.targets import output_file, output_folder

    check_gradebook_target(gradebook, "--gradebook")
    if csv_path is not None:
        output_file(csv_path, "--csv", "class.csv")
    if feedback is not None:
        output_folder(feedback, "--feedback")
    if layout == "nbgrader" and submissions.is_dir():  # the scores go into the course's own gradebook too
        from autograder.batch.nbgrader_course import NBGRADER_DB

        output_file(submissions / NBGRADER_DB, "the nbgrader gradebook")
