"""`grader template`: regenerate the student template from the reference."""

from __future__ import annotations

import click

from autograder.cli.base import assignment_named, friendly_errors


@click.command()
@click.argument("assignment")
@friendly_errors
def template(assignment: str) -> None:
    """Regenerate student_template/ASSIGNMENT/ from the reference (solution regions become stubs)."""
    from autograder.authoring.template import generate_template
    from autograder.util.paths import display_path

    folder = generate_template(assignment_named(assignment))
    click.echo(f"student template written to {display_path(folder)} and {display_path(folder.parent)}/"
               f"{assignment}.ipynb")
