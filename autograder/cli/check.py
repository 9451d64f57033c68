"""`grader check`: the student's public tests on their work."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autograder.cli.base import assignment_named, friendly_errors


@click.command()
@click.argument("assignment")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--task", "tasks", multiple=True, metavar="ID",
              help="Run only this task's public tests (repeatable); the quiz's format is always checked.")
@click.option("--verbose", "-v", is_flag=True, help="Also show pytest's full output of each failing test.")
@friendly_errors
def check(assignment: str, path: Path | None, tasks: tuple[str, ...], verbose: bool) -> None:
    """Run the public tests on your work (default: ./ASSIGNMENT) and check answers.toml's format."""
    from autograder.public.render import Printer
    from autograder.public.runner import CheckOutcome, locate_work, run_public_tests, select_tasks

    spec = assignment_named(assignment)
    selected = select_tasks(spec, tasks)
    package = locate_work(spec, path)
    printer = Printer(spec, lambda text: click.echo(text, nl=False), verbose=verbose)
    printer.header(CheckOutcome(package=package))
    outcome = run_public_tests(spec, package, selected=selected, listener=printer)
    sys.exit(0 if outcome.ok else 1)
