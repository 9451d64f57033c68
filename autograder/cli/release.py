"""`grader release`: build the student, Gradescope and GitHub Classroom releases."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autograder.cli.base import assignment_named, friendly_errors
from autograder.util.targets import output_folder


@click.command()
@click.argument("assignment")
@click.option("--out", "out", type=click.Path(path_type=Path), default=Path("release"), show_default=True,
              help="Output folder.")
@click.option("--verify/--no-verify", "run_verify", default=True, show_default=True,
              help="Run `grader verify` (grades the reference and the template) before building.")
@friendly_errors
def release(assignment: str, out: Path, run_verify: bool) -> None:
    """Build the student release, the Gradescope autograder and a GitHub Classroom starter repository."""
    from autograder.authoring.release import build_release, render_release
    from autograder.authoring.verify import render_verification, verify_assignment
    from autograder.util.paths import project_file

    spec = assignment_named(assignment)
    output_folder(out, "--out")  # before `grader verify` grades anything
    project_file("grader release")  # the releases' project files are made from it: a wheel has none
    if run_verify:
        outcome = verify_assignment(spec)
        click.echo(render_verification(outcome), nl=False)
        if not outcome.ok:
            click.echo("release not built: fix the problems above (or pass --no-verify)", err=True)
            sys.exit(1)
    click.echo(render_release(build_release(spec, out)), nl=False)
