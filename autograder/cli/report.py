"""`grader report`: the class report from a gradebook."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli.base import friendly_errors


@click.command("report")
@click.argument("gradebook")
@click.option("--out", type=click.Path(path_type=Path), default=Path("class-report"), show_default=True,
              help="Folder for class_report.md and class_report.png.")
@click.option("--assignment", help="The assignment (needed when the gradebook holds several).")
@click.option("--figure/--no-figure", default=True, show_default=True, help="Draw the PNG (needs matplotlib).")
@click.option("--similarity-export", type=click.Path(path_type=Path),
              help="Also write one folder per student's sources here, for JPlag, Dolos or MOSS.")
@friendly_errors
def report(gradebook: str, out: Path, assignment: str | None, figure: bool, similarity_export: Path | None) -> None:
    """Class report from GRADEBOOK: pass rates, score histogram, frequent mistakes, slowest submissions, lateness
    and submissions similar enough to review."""
    from autograder.errors import AssignmentError
    from autograder.gradebook.store import Gradebook
    from autograder.reports.classreport import choose_assignment, write_class_report
    from autograder.spec.assignment import load_assignment
    from autograder.util.targets import output_folder

    output_folder(out, "--out")
    if similarity_export is not None:
        output_folder(similarity_export, "--similarity-export")
    with Gradebook(gradebook, readonly=True) as book:
        name = choose_assignment(book, assignment)
    try:
        spec = load_assignment(name)
    except AssignmentError:  # the report still works; its similarity section says what it needs
        spec = None
    for path in write_class_report(gradebook, out, name, figure, spec, similarity_export):
        click.echo(f"wrote {path}")
