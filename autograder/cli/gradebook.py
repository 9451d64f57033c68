"""`grader gradebook`: merge, export and compare gradebooks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from autograder.cli.base import friendly_errors
from autograder.errors import GraderError
from autograder.util.targets import output_file, output_folder

if TYPE_CHECKING:
    from autograder.gradebook.export import LmsExport


@click.group("gradebook")
def gradebook_group() -> None:
    """Combine and export gradebooks written by `grader grade-all`."""


@gradebook_group.command("merge")
@click.argument("output")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--allow-partial", is_flag=True, help="Merge even when the shards' gradebooks miss a shard or a student "
              "of the class they recorded (each missing one is listed as a warning).")
@friendly_errors
def gradebook_merge(output: str, inputs: tuple[str, ...], allow_partial: bool) -> None:
    """Merge gradebooks INPUTS (e.g. one per shard) into OUTPUT (SQLite files or postgresql:// URLs).

    Shard gradebooks (`grade-all --shard`) record their class: a set missing a shard or a student is refused.
    """
    from autograder.gradebook.backend import display
    from autograder.gradebook.merge import merge_gradebooks

    check_gradebook_target(output, "OUTPUT")
    done = merge_gradebooks(output, inputs, allow_partial)
    for problem in done.incomplete:
        click.echo(f"warning: incomplete class: {problem}", err=True)
    click.echo(f"{display(output)}: {done.students} students; {done.added} submissions added, {done.replaced} replaced "
               f"by a newer grade, {done.kept} already there")


@gradebook_group.command("export")
@click.argument("gradebook")
@click.option("--assignment", help="The assignment (needed when the gradebook holds several).")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Write the class CSV here.")
@click.option("--format", "fmt", type=click.Choice(["plain", "canvas", "moodle"]), default="plain", show_default=True,
              help="The CSV's format: the grader's own (plain), or an LMS grade import file.")
@click.option("--roster", type=click.Path(path_type=Path, dir_okay=False),
              help="CSV mapping student ids to LMS identities (e.g. Canvas's gradebook export; see "
                   "docs/INSTRUCTORS.md). Required for canvas.")
@click.option("--column", help="The grade column's header in the LMS file [default: the assignment's name].")
@click.option("--feedback", type=click.Path(path_type=Path), help="Write one markdown and one HTML file per "
              "student here.")
@friendly_errors
def gradebook_export(gradebook: str, assignment: str | None, csv_path: Path | None, fmt: str, roster: Path | None,
                     column: str | None, feedback: Path | None) -> None:
    """Write the class CSV (or an LMS import file) and/or per-student feedback from GRADEBOOK."""
    from autograder.gradebook.export import export_feedback, export_lms, feedback_written
    from autograder.gradebook.store import Gradebook
    from autograder.reports.classreport import choose_assignment

    if not csv_path and not feedback:
        raise GraderError("nothing to export: give --csv FILE and/or --feedback DIR")
    if (fmt != "plain" or roster) and not csv_path:
        raise GraderError("--format and --roster describe the CSV file: give --csv FILE too")
    if fmt == "plain" and (roster or column):
        raise GraderError("--roster and --column are for LMS files: add --format canvas or --format moodle")
    if csv_path:
        output_file(csv_path, "--csv", "class.csv")
    if feedback:
        output_folder(feedback, "--feedback")
    with Gradebook(gradebook, readonly=True) as book:
        name = choose_assignment(book, assignment)
        if csv_path:
            done = export_lms(book, name, csv_path, fmt, roster, column)
            click.echo(f"{csv_path}: {done.students} students ({fmt})")
            _report_unmatched(done)
        if feedback:
            click.echo(f"{feedback}: feedback for {feedback_written(export_feedback(book, name, feedback))}")


def _report_unmatched(done: LmsExport) -> None:
    """Who the LMS file leaves out, on stderr (never dropped silently)."""
    for line in done.warnings():
        click.echo(f"warning: {line}", err=True)


def check_gradebook_target(location: str, option: str) -> None:
    """A gradebook the command will write (here and in grade-all): an SQLite file must be one the grader can create
    or replace, checked before any work (a PostgreSQL server answers for itself when the command connects).

    Raises:
        GraderError: If the file cannot be written (autograder.util.targets).
    """
    from autograder.gradebook.backend import parse_location

    parsed = parse_location(location)
    if isinstance(parsed, Path):
        output_file(parsed, option, "gradebook.db")


@gradebook_group.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--assignment", help="The assignment (needed when the gradebooks hold several).")
@click.option("--all", "show_all", is_flag=True, help="Also list students whose score did not change.")
@friendly_errors
def gradebook_diff(old: Path, new: Path, assignment: str | None, show_all: bool) -> None:
    """List who gained or lost points, per task, between gradebook OLD and NEW (e.g. after a regrade)."""
    from autograder.gradebook.diff import diff_gradebooks, render_diff

    click.echo(render_diff(diff_gradebooks(old, new, assignment), show_all), nl=False)
