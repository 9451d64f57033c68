"""The ``grader`` command line: one click group, one subcommand per job."""

from __future__ import annotations

import functools
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
@friendly_errors
def grade(assignment: str, submission: Path, fmt: str, output: Path | None, tasks: tuple[str, ...]) -> None:
    """Grade SUBMISSION (a package folder, a folder containing it, or a .zip) with the hidden tests."""
    from .grading import Grader
    from .reports import RENDERERS, write_atomic

    spec = _assignment(assignment)
    for task_id in tasks:
        if task_id not in spec.task_ids:
            raise GraderError(f"no task {task_id!r} in {spec.name} (tasks: {', '.join(spec.task_ids)})")
    if not submission.exists():
        raise GraderError(f"submission not found: {submission}")
    with Grader(spec) as grader:
        report = grader.grade(submission, only=set(tasks) or None)
    text = RENDERERS[fmt](report)
    if output:
        write_atomic(output, text)
        click.echo(f"{report.assignment}: {report.score:g} / {report.max_score:g}; report written to {output}")
    else:
        click.echo(text, nl=False)


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


# Further commands live in their own modules and register here, one line each.


if __name__ == "__main__":
    main()
