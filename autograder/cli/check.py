"""`grader check`: the student's public tests on their work."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from autograder.cli.base import assignment_named, exit_without_teardown, friendly_errors
from autograder.spec.assignment import Assignment

if TYPE_CHECKING:
    from autograder.public.outcome import CheckOutcome
    from autograder.sandbox.runtime import Runtime


@click.command()
@click.argument("assignment")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--task", "tasks", multiple=True, metavar="ID",
              help="Run only this task's public tests (its id is the first column of the check's table; "
                   "repeatable); the quiz's format is always checked.")
@click.option("--verbose", "-v", is_flag=True, help="Also show pytest's full output of each failing test, and what it printed.")
@click.option("--watch", is_flag=True,
              help="Keep checking: after each save, re-run the tasks whose functions changed and those that use "
                   "them (Ctrl-C to stop).")
@click.option("--show-extracted", type=click.Path(path_type=Path), metavar="DIR",
              help="For a notebook: also write the package files the grader extracts from it into DIR.")
@friendly_errors
def check(assignment: str, path: Path | None, tasks: tuple[str, ...], verbose: bool, watch: bool,
          show_extracted: Path | None) -> None:
    """Run the public tests on your work (default: this folder, its package folder or a .ipynb notebook in it; or a
    package, a folder or repository holding it, a zip or a notebook, found as grading finds it) and check the quiz
    answers' format."""
    from autograder.public.runner import check_runtime, select_tasks

    spec = assignment_named(assignment)
    selected = select_tasks(spec, tasks)
    # started first: its imports (torch's take seconds) overlap all this process does until then
    runtime = check_runtime() if selected != [] else None
    try:
        outcome = _check(spec, path, selected, tasks, verbose, watch, show_extracted, runtime)
    finally:
        if runtime is not None:
            runtime.close()
    if outcome is not None:
        exit_without_teardown()  # everything is written and removed, the runtime stopped
        sys.exit(0 if outcome.ok else 1)


def _check(spec: Assignment, path: Path | None, selected: list[str] | None, tasks: tuple[str, ...], verbose: bool,
           watch: bool, show_extracted: Path | None, runtime: Runtime | None) -> CheckOutcome | None:
    """The check on ``runtime``, printed; its outcome (None after ``--watch``, stopped with Ctrl-C)."""
    from autograder.public.invocation import Invocation
    from autograder.public.notebook import checked_work
    from autograder.public.render import rewritable
    from autograder.public.watch import check_and_print, watch_and_check
    from autograder.submission.notebook.read import is_notebook
    from autograder.util.pins import torch_note
    from autograder.util.targets import output_folder

    if show_extracted is not None:
        output_folder(show_extracted, "--show-extracted")

    def write(text: str) -> None:
        click.echo(text, nl=False)

    live = rewritable(sys.stdout)  # a status line says what still runs, taken back by the next line
    note = torch_note()  # the student's own torch may differ from the one grades are computed with
    if note:
        write(f"note: {note}\n")
    if watch:
        watch_and_check(spec, path, selected, write, verbose=verbose, show_extracted=show_extracted,
                        typed_tasks=tasks, runtime=runtime, live=live)
        return None
    with checked_work(spec, path, show_extracted) as prepared:  # what grading would take, said as grade says it
        invocation = Invocation.of(spec, None if path is None else str(path), notebook=is_notebook(prepared.source),
                                   tasks=tasks, verbose=verbose)
        outcome = check_and_print(spec, prepared, selected, write, verbose=verbose, runtime=runtime,
                                  invocation=invocation, live=live)
    if show_extracted is not None and is_notebook(prepared.source):
        click.echo(f"extracted package written to {show_extracted}")
    return outcome
