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
@click.option("--show-extracted", type=click.Path(path_type=Path), metavar="DIR",
              help="For a notebook: also write the package files the grader extracts from it into DIR.")
@friendly_errors
def check(assignment: str, path: Path | None, tasks: tuple[str, ...], verbose: bool,
          show_extracted: Path | None) -> None:
    """Run the public tests on your work (default: ./ASSIGNMENT; a package, a zip or a .ipynb notebook) and check
    the quiz answers' format."""
    from autograder.public.invocation import Invocation
    from autograder.public.notebook import checked_work
    from autograder.public.outcome import CheckOutcome
    from autograder.public.render import Printer
    from autograder.public.runner import run_public_tests, select_tasks

    spec = assignment_named(assignment)
    selected = select_tasks(spec, tasks)
    with checked_work(spec, path, show_extracted) as (package, notebook, notes):
        click.echo("".join(f"note: {note}\n" for note in notes), nl=False)
        invocation = Invocation.of(spec, None if path is None else str(path), notebook=notebook is not None, tasks=tasks)
        printer = Printer(spec, lambda text: click.echo(text, nl=False), verbose=verbose, invocation=invocation)
        printer.header(CheckOutcome(package=notebook or package))
        outcome = run_public_tests(spec, package, selected=selected, listener=printer)
    if show_extracted is not None and notebook is not None:
        click.echo(f"extracted package written to {show_extracted}")
    sys.exit(0 if outcome.ok else 1)
