"""`grader grade-all`: grade a class into the gradebook."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autograder.cli.base import assignment_named, friendly_errors


@click.command("grade-all")
@click.argument("assignment")
@click.argument("submissions", type=click.Path(path_type=Path))
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel grading workers [default: one per CPU].")
@click.option("--gradebook", default="gradebook.db", show_default=True,
              help="SQLite gradebook file to record into (created if missing), or a postgresql:// URL.")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Also write the class CSV here.")
@click.option("--feedback", type=click.Path(path_type=Path), help="Also write one markdown file per student here.")
@click.option("--force", is_flag=True, help="Re-grade every submission, even unchanged ones.")
@click.option("--retry-errors", is_flag=True, help="Re-grade unchanged submissions that could not be graded.")
@click.option("--shard", metavar="K/N|auto", help="Grade only the K-th of N slices of the class (1 <= K <= N); "
              "auto: from a Kubernetes Indexed Job, a Slurm array or $GRADER_SHARD (docs/BATCH.md).")
@click.option("--shard-count", type=click.IntRange(min=1), metavar="N",
              help="With --shard auto: the number of shards where the scheduler gives only an index (Kubernetes).")
@click.option("--layout", type=click.Choice(["auto", "plain", "gradescope", "classroom"]), default="auto",
              show_default=True, help="How student ids are derived from SUBMISSIONS (see docs/BATCH.md).")
@friendly_errors
def grade_all(assignment: str, submissions: Path, jobs: int | None, gradebook: str, csv_path: Path | None,
              feedback: Path | None, force: bool, retry_errors: bool, shard: str | None, shard_count: int | None,
              layout: str) -> None:
    """Grade every student's submission in SUBMISSIONS (a folder or .zip each) into a resumable gradebook."""
    from autograder.batch.run import BatchOptions, default_jobs, render_summary
    from autograder.batch.run import grade_all as run_batch
    from autograder.batch.shard import resolve_shard
    from autograder.errors import GraderError

    if shard_count is not None and shard is None:
        raise GraderError("--shard-count goes with --shard auto")

    options = BatchOptions(jobs=jobs or default_jobs(), gradebook=gradebook, force=force, retry_errors=retry_errors,
                           shard=resolve_shard(shard, shard_count) if shard else None, layout=layout, csv=csv_path,
                           feedback=feedback)
    click.echo(render_summary(run_batch(assignment_named(assignment), submissions, options, sys.stderr)), nl=False)
