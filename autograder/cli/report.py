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
@friendly_errors
def report(gradebook: str, out: Path, assignment: str | None, figure: bool) -> None:
    """Class report from GRADEBOOK: pass rates, score histogram, frequent mistakes, slowest submissions."""
    from autograder.reports.classreport import write_class_report

    for path in write_class_report(gradebook, out, assignment, figure):
        click.echo(f"wrote {path}")
