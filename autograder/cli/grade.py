"""`grader grade`: grade one submission with the hidden tests."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import click

from autograder.cli.base import assignment_named, exit_without_teardown, friendly_errors, warn_left_out_mistakes
from autograder.errors import GraderError
from autograder.reports.registry import RENDERERS, REPORT_FILES
from autograder.spec.assignment import Assignment
from autograder.spec.late import Lateness
from autograder.util.targets import output_file

if TYPE_CHECKING:
    from autograder.reports.results import GradeReport

@click.command()
@click.argument("assignment")
@click.argument("submission", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(list(RENDERERS)), default="text",
              show_default=True, help="Report format.")
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report here (atomically).")
@click.option("--task", "tasks", multiple=True, metavar="ID", help="Grade only this task (repeatable).")
@click.option("--require-isolation", type=click.Choice(["rlimits", "landlock", "namespaces", "uid"]),
              help="Fail (exit 2) instead of grading if the sandbox here is weaker than this tier (docs/SECURITY.md).")
@click.option("--submission-metadata", type=click.Path(path_type=Path, dir_okay=False),
              help="Gradescope's submission_metadata.json: with a [late] policy in the manifest, the gradescope "
                   "report's score is the late-penalised one (the submission time and any extension come from it).")
@friendly_errors
def grade(assignment: str, submission: Path, fmt: str, output: Path | None, tasks: tuple[str, ...],
          require_isolation: str | None, submission_metadata: Path | None) -> None:
    """Grade SUBMISSION (a package folder, a folder or repository holding it, a .ipynb notebook or a .zip) with the
    hidden tests."""
    from autograder.sandbox.capacity import zygotes_for_one_submission
    from autograder.sandbox.host import new_scratch, start_zygotes
    from autograder.submission.intake import prepare_submission

    spec = assignment_named(assignment)
    for task_id in tasks:
        if task_id not in spec.task_ids:
            raise GraderError(f"no task {task_id!r} in {spec.name} (tasks: {', '.join(spec.task_ids)})")
    late = _gradescope_lateness(spec, submission_metadata) if submission_metadata else None
    if output is not None:  # refused now, not after grading (a missing folder is created when the report is written)
        output_file(output, "--output", REPORT_FILES[fmt])
    scratch = new_scratch()
    try:  # the intake first: a submission that cannot be graded is refused before any worker starts
        prepared = prepare_submission(submission, spec, scratch / "intake")
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    # One imports torch meanwhile, the second starts with the second task: three torch imports at once would
    # slow the first on two CPUs; and one submission does not repay warming them up (autograder.sandbox.Zygote).
    # On one usable CPU, or in a small container, one zygote serves every task (autograder.sandbox.capacity).
    zygotes = start_zygotes(zygotes_for_one_submission(), scratch, eager=1, required=require_isolation, warm_up=False,
                            protect=spec.private_folders)
    try:
        from autograder.grading.grader import Grader
        from autograder.reports.registry import RENDERERS

        grader = Grader(spec, scratch=scratch, zygotes=zygotes)
    except BaseException:
        for zygote in zygotes:
            zygote.close()
        raise
    with grader:
        report = grader.grade(submission, only=set(tasks) or None, prepared=prepared)
    if fmt == "gradescope":
        from autograder.reports.gradescope import render_gradescope

        text = render_gradescope(report, spec, late)
    else:
        text = RENDERERS[fmt](report)
    if output:
        _write_report(output, text)
        click.echo(f"{score_line(report, late if fmt == 'gradescope' else None)}; report written to {output}")
    else:
        click.echo(text, nl=False)
    if fmt != "gradescope" or spec.stdout_visibility == "hidden":  # students may see a Gradescope run's output
        warn_left_out_mistakes(spec, grader.stale_mistakes + grader.unimportable_mistakes)
    exit_without_teardown()


def score_line(report: GradeReport, late: Lateness | None = None) -> str:
    """``assignment3: 75 / 100``, and the score the report holds when a late penalty changed it (the log of a
    Gradescope run would otherwise say another score than the student sees)."""
    line = f"{report.assignment}: {report.score:g} / {report.max_score:g}"
    if late is not None and late.penalty:
        line += f" ({late.final(report.score):g} after the late penalty: {late.note})"
    return line


def _write_report(output: Path, text: str) -> None:
    """Write the report; if the target went bad while grading, print the report instead, so it is not lost.

    Raises:
        GraderError: After printing the report, when it could not be written.
    """
    from autograder.errors import WriteFailed
    from autograder.util.atomic import write_atomic

    try:
        write_atomic(output, text)
    except WriteFailed as exc:
        click.echo(text, nl=False)
        cause = exc.__cause__
        reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else cause
        raise GraderError(f"the report could not be written to {output} ({reason}); it is printed above "
                          f"instead") from None


def _gradescope_lateness(spec: Assignment, metadata: Path) -> Lateness | None:
    """The lateness Gradescope's metadata records, when the manifest has a late policy (else Gradescope's own
    late settings apply and the score is left as it is).

    Raises:
        GraderError: If the metadata file cannot be read.
    """
    from autograder.batch.timestamps import read_gradescope_submission_metadata
    from autograder.spec.late import lateness

    if not spec.late.rate and spec.late.last_accepted is None:
        return None
    if not metadata.is_file():
        raise GraderError(f"submission metadata not found: {metadata}")
    submitted, due = read_gradescope_submission_metadata(metadata)
    return lateness(submitted, due or spec.due, spec.late)
