"""`grader check`: the student's public tests on their work."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autograder.cli.base import assignment_named, friendly_errors


@click.command()
@click.argument("assignment")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@friendly_errors
def check(assignment: str, path: Path | None) -> None:
    """Run the public tests on your work (default: ./ASSIGNMENT) and check answers.toml's format."""
    from autograder.public.runner import locate_work, render_check, run_public_tests

    spec = assignment_named(assignment)
    package = locate_work(spec, path)
    outcome = run_public_tests(spec, package)
    click.echo(render_check(spec, outcome), nl=False)
    sys.exit(0 if outcome.ok else 1)
