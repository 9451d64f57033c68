"""`grader check`: the student's public tests on their work."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autograder.cli.base import assignment_named, friendly_errors
from autograder.errors import GraderError


@click.command()
@click.argument("assignment")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--task", "tasks", multiple=True, metavar="ID", help="Run only this task's public tests (repeatable).")
@click.option("--show-extracted", type=click.Path(path_type=Path), metavar="DIR",
              help="For a notebook: also write the package files the grader extracts from it into DIR.")
@friendly_errors
def check(assignment: str, path: Path | None, tasks: tuple[str, ...], show_extracted: Path | None) -> None:
    """Run the public tests on your work (default: ./ASSIGNMENT; a package, a zip or a .ipynb notebook) and check
    the quiz answers' format."""
    from autograder.public.notebook import checked_work
    from autograder.public.runner import render_check, run_public_tests

    spec = assignment_named(assignment)
    for task_id in tasks:
        if task_id not in spec.task_ids:
            raise GraderError(f"no task {task_id!r} in {spec.name} (tasks: {', '.join(spec.task_ids)})")
    with checked_work(spec, path, show_extracted) as (package, notebook, notes):
        outcome = run_public_tests(spec, package, tasks=list(tasks) or None)
    if notebook is not None:
        outcome.package = notebook
    if tasks:
        outcome.tasks = [t for t in outcome.tasks if t.task in tasks]
    click.echo("".join(f"note: {note}\n" for note in notes) + render_check(spec, outcome), nl=False)
    if show_extracted is not None and notebook is not None:
        click.echo(f"extracted package written to {show_extracted}")
    sys.exit(0 if outcome.ok else 1)
