"""`grader template`: regenerate the student template from the reference."""

from __future__ import annotations

import sys

import click

from autograder.cli.base import assignment_named, friendly_errors


@click.command()
@click.argument("assignment")
@friendly_errors
def template(assignment: str) -> None:
    """Regenerate student_template/ASSIGNMENT/ from the reference (solution regions become stubs)."""
    from autograder.authoring.lint import reference_name_problems
    from autograder.authoring.notebook_template import notebook_path
    from autograder.authoring.template import generate_template
    from autograder.util.paths import display_path
    from autograder.util.targets import output_file, output_folder

    spec = assignment_named(assignment)
    output_folder(spec.template, "the template folder")  # as the manifest's `template` key names it
    output_file(notebook_path(spec), "the template notebook")
    folder = generate_template(spec)
    click.echo(f"student template written to {display_path(folder)} and {display_path(notebook_path(spec))}")
    problems = reference_name_problems(spec)  # a name the template cannot stub: say so now, not at grading time
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    sys.exit(1 if problems else 0)
