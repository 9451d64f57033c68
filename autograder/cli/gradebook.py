"""`grader gradebook`: merge and export gradebooks."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli.base import friendly_errors
from autograder.errors import GraderError
from autograder.reports.classreport import choose_assignment


@click.group("gradebook")
def gradebook_group() -> None:
    """Combine and export gradebooks written by `grader grade-all`."""


@gradebook_group.command("merge")
@click.argument("output")
@click.argument("inputs", nargs=-1, required=True)
@friendly_errors
def gradebook_merge(output: str, inputs: tuple[str, ...]) -> None:
    """Merge gradebooks INPUTS (e.g. one per shard) into OUTPUT (SQLite files or postgresql:// URLs)."""
    from autograder.gradebook.backend import display
    from autograder.gradebook.merge import merge_gradebooks

    done = merge_gradebooks(output, inputs)
    click.echo(f"{display(output)}: {done.students} students; {done.added} submissions added, {done.replaced} replaced "
               f"by a newer grade, {done.kept} already there")


@gradebook_group.command("export")
@click.argument("gradebook")
@click.option("--assignment", help="The assignment (needed when the gradebook holds several).")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Write the class CSV here.")
@click.option("--feedback", type=click.Path(path_type=Path), help="Write one markdown file per student here.")
@friendly_errors
def gradebook_export(gradebook: str, assignment: str | None, csv_path: Path | None, feedback: Path | None) -> None:
    """Write the class CSV and/or per-student feedback from GRADEBOOK."""
    from autograder.gradebook.export import export_csv, export_feedback
    from autograder.gradebook.store import Gradebook

    if not csv_path and not feedback:
        raise GraderError("nothing to export: give --csv FILE and/or --feedback DIR")
    with Gradebook(gradebook, readonly=True) as book:
        name = choose_assignment(book, assignment)
        if csv_path:
            click.echo(f"{csv_path}: {export_csv(book, name, csv_path)} students")
        if feedback:
            click.echo(f"{feedback}: {export_feedback(book, name, feedback)} feedback files")
