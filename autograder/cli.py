"""The ``grader`` command line: one click group, one subcommand per job."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from .assignment import Assignment, load_assignment
from .errors import GraderError


def friendly_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Report expected failures as one line on stderr with exit code 2, never as a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GraderError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper


def _assignment(name: str) -> Assignment:
    return load_assignment(name)


_EXIT_WITHOUT_TEARDOWN = False  # set by a command once its output is written and its workers are stopped


def run() -> None:
    """The ``grader`` console script: :func:`main`, then, after ``grade``, an immediate process exit.

    With torch loaded the interpreter's teardown takes about a second, a tenth of grading one submission; by then
    ``grade`` has written its report, stopped its workers and removed its scratch folder, so nothing is lost.
    """
    try:
        main()
    except SystemExit as exc:
        if not _EXIT_WITHOUT_TEARDOWN or not isinstance(exc.code, (int, type(None))):
            raise
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exc.code or 0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="transformer-autograder")
def main() -> None:
    """Auto-grader for the transformers course: check your work, grade submissions, release assignments."""


@main.command()
@click.argument("assignment")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@friendly_errors
def check(assignment: str, path: Path | None) -> None:
    """Run the public tests on your work (default: ./ASSIGNMENT) and check answers.toml's format."""
    from .check import locate_work, render_check, run_public_tests

    spec = _assignment(assignment)
    package = locate_work(spec, path)
    outcome = run_public_tests(spec, package)
    click.echo(render_check(spec, outcome), nl=False)
    sys.exit(0 if outcome.ok else 1)


@main.command()
@click.argument("assignment")
@click.argument("submission", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "gradescope", "junit"]), default="text",
              show_default=True, help="Report format.")
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report here (atomically).")
@click.option("--task", "tasks", multiple=True, metavar="ID", help="Grade only this task (repeatable).")
@click.option("--require-isolation", type=click.Choice(["rlimits", "landlock", "namespaces", "uid"]),
              help="Fail (exit 2) instead of grading if the sandbox here is weaker than this tier (docs/SECURITY.md).")
@friendly_errors
def grade(assignment: str, submission: Path, fmt: str, output: Path | None, tasks: tuple[str, ...],
          require_isolation: str | None) -> None:
    """Grade SUBMISSION (a package folder, a folder containing it, or a .zip) with the hidden tests."""
    from .sandbox import new_scratch, start_zygotes

    spec = _assignment(assignment)
    for task_id in tasks:
        if task_id not in spec.task_ids:
            raise GraderError(f"no task {task_id!r} in {spec.name} (tasks: {', '.join(spec.task_ids)})")
    if not submission.exists():
        raise GraderError(f"submission not found: {submission}")
    scratch = new_scratch()
    # One imports torch meanwhile, the second starts with the second task: three torch imports at once would
    # slow the first on two CPUs; and one submission does not repay warming them up (autograder.sandbox.Zygote).
    zygotes = start_zygotes(2, scratch, eager=1, required=require_isolation, warm_up=False)
    try:
        from .grading import Grader
        from .reports import RENDERERS, write_atomic

        grader = Grader(spec, scratch=scratch, zygotes=zygotes)
    except BaseException:
        for zygote in zygotes:
            zygote.close()
        raise
    with grader:
        report = grader.grade(submission, only=set(tasks) or None)
    text = RENDERERS[fmt](report)
    if output:
        write_atomic(output, text)
        click.echo(f"{report.assignment}: {report.score:g} / {report.max_score:g}; report written to {output}")
    else:
        click.echo(text, nl=False)
    global _EXIT_WITHOUT_TEARDOWN
    _EXIT_WITHOUT_TEARDOWN = True


@main.command()
@click.argument("assignment")
@click.option("--jobs", "-j", default=2, show_default=True, help="Graders working in parallel.")
@friendly_errors
def audit(assignment: str, jobs: int) -> None:
    """Grade every known mistake (must lose points, in its task only) and correct variant (must keep full marks)."""
    from .audit import audit_and_render

    ok, table = audit_and_render(_assignment(assignment), jobs)
    click.echo(table, nl=False)
    if not ok:
        click.echo("audit failed: a mistake escaped, cost another task points, or a variant lost points", err=True)
        sys.exit(1)


@main.command()
@click.argument("assignment")
@friendly_errors
def template(assignment: str) -> None:
    """Regenerate student_template/ASSIGNMENT/ from the reference (solution regions become stubs)."""
    from .template import display_path, generate_template

    folder = generate_template(_assignment(assignment))
    click.echo(f"student template written to {display_path(folder)}")


@main.command()
@click.argument("assignment")
@friendly_errors
def verify(assignment: str) -> None:
    """Check before shipping: reference full marks, template 0 and up to date, quiz key sound."""
    from .verify import render_verification, verify_assignment

    outcome = verify_assignment(_assignment(assignment))
    click.echo(render_verification(outcome), nl=False)
    sys.exit(0 if outcome.ok else 1)


@main.command()
@click.argument("assignment")
@click.option("--out", "out", type=click.Path(path_type=Path), default=Path("release"), show_default=True,
              help="Output folder.")
@click.option("--verify/--no-verify", "run_verify", default=True, show_default=True,
              help="Run `grader verify` (grades the reference and the template) before building.")
@friendly_errors
def release(assignment: str, out: Path, run_verify: bool) -> None:
    """Build the student release, the Gradescope autograder and a GitHub Classroom starter repository."""
    from .release import build_release, render_release
    from .verify import render_verification, verify_assignment

    spec = _assignment(assignment)
    if run_verify:
        outcome = verify_assignment(spec)
        click.echo(render_verification(outcome), nl=False)
        if not outcome.ok:
            click.echo("release not built: fix the problems above (or pass --no-verify)", err=True)
            sys.exit(1)
    click.echo(render_release(build_release(spec, out)), nl=False)


@main.command("grade-all")
@click.argument("assignment")
@click.argument("submissions", type=click.Path(path_type=Path))
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel grading workers [default: one per CPU].")
@click.option("--gradebook", type=click.Path(path_type=Path), default=Path("gradebook.db"), show_default=True,
              help="SQLite gradebook to record into (created if missing).")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Also write the class CSV here.")
@click.option("--feedback", type=click.Path(path_type=Path), help="Also write one markdown file per student here.")
@click.option("--force", is_flag=True, help="Re-grade every submission, even unchanged ones.")
@click.option("--retry-errors", is_flag=True, help="Re-grade unchanged submissions that could not be graded.")
@click.option("--shard", metavar="K/N", help="Grade only the K-th of N slices of the class (1 <= K <= N).")
@click.option("--layout", type=click.Choice(["auto", "plain", "gradescope", "classroom"]), default="auto",
              show_default=True, help="How student ids are derived from SUBMISSIONS (see docs/BATCH.md).")
@friendly_errors
def grade_all(assignment: str, submissions: Path, jobs: int | None, gradebook: Path, csv_path: Path | None,
              feedback: Path | None, force: bool, retry_errors: bool, shard: str | None, layout: str) -> None:
    """Grade every student's submission in SUBMISSIONS (a folder or .zip each) into a resumable gradebook."""
    from .batch import BatchOptions, default_jobs, grade_all as run_batch, parse_shard, render_summary

    options = BatchOptions(jobs=jobs or default_jobs(), gradebook=gradebook, force=force, retry_errors=retry_errors,
                           shard=parse_shard(shard) if shard else None, layout=layout, csv=csv_path,
                           feedback=feedback)
    click.echo(render_summary(run_batch(_assignment(assignment), submissions, options, sys.stderr)), nl=False)


@main.group("gradebook")
def gradebook_group() -> None:
    """Combine and export gradebooks written by `grader grade-all`."""


@gradebook_group.command("merge")
@click.argument("output", type=click.Path(path_type=Path))
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@friendly_errors
def gradebook_merge(output: Path, inputs: tuple[Path, ...]) -> None:
    """Merge gradebooks INPUTS (e.g. one per shard) into OUTPUT."""
    from .gradebook import merge_gradebooks

    done = merge_gradebooks(output, inputs)
    click.echo(f"{output}: {done.students} students; {done.added} submissions added, {done.replaced} replaced "
               f"by a newer grade, {done.kept} already there")


@gradebook_group.command("export")
@click.argument("gradebook", type=click.Path(path_type=Path))
@click.option("--assignment", help="The assignment (needed when the gradebook holds several).")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Write the class CSV here.")
@click.option("--feedback", type=click.Path(path_type=Path), help="Write one markdown file per student here.")
@friendly_errors
def gradebook_export(gradebook: Path, assignment: str | None, csv_path: Path | None, feedback: Path | None) -> None:
    """Write the class CSV and/or per-student feedback from GRADEBOOK."""
    from .classreport import choose_assignment
    from .gradebook import Gradebook, export_csv, export_feedback

    if not csv_path and not feedback:
        raise GraderError("nothing to export: give --csv FILE and/or --feedback DIR")
    with Gradebook(gradebook, readonly=True) as book:
        name = choose_assignment(book, assignment)
        if csv_path:
            click.echo(f"{csv_path}: {export_csv(book, name, csv_path)} students")
        if feedback:
            click.echo(f"{feedback}: {export_feedback(book, name, feedback)} feedback files")


@main.command("report")
@click.argument("gradebook", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=Path("class-report"), show_default=True,
              help="Folder for class_report.md and class_report.png.")
@click.option("--assignment", help="The assignment (needed when the gradebook holds several).")
@click.option("--figure/--no-figure", default=True, show_default=True, help="Draw the PNG (needs matplotlib).")
@friendly_errors
def report(gradebook: Path, out: Path, assignment: str | None, figure: bool) -> None:
    """Class report from GRADEBOOK: pass rates, score histogram, frequent mistakes, slowest submissions."""
    from .classreport import write_class_report

    for path in write_class_report(gradebook, out, assignment, figure):
        click.echo(f"wrote {path}")


# Further commands live in their own modules and register here, one line each.
from .show.command import show_command; main.add_command(show_command)  # noqa: E402,E702


if __name__ == "__main__":
    run()
