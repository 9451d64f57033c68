"""`grader verify`: check an assignment before it ships."""

from __future__ import annotations

import sys

import click

from autograder.cli.base import assignment_named, friendly_errors


@click.command()
@click.argument("assignment")
@friendly_errors
def verify(assignment: str) -> None:
    """Check before shipping: reference full marks, template 0 and up to date, quiz key sound."""
    from autograder.authoring.verify import render_verification, verify_assignment
    from autograder.spec.assignment import ManifestErrors

    try:
        spec = assignment_named(assignment)
    except ManifestErrors as exc:  # nothing else can be checked before they are fixed: list them all
        problems = exc.problems
        click.echo("\n".join([*problems, f"{assignment}: {len(problems)} problem"
                                f"{'s' if len(problems) > 1 else ''} in the manifest; fix them and run "
                                f"`grader verify {assignment}` again"]))
        sys.exit(1)
    outcome = verify_assignment(spec)
    click.echo(render_verification(outcome), nl=False)
    sys.exit(0 if outcome.ok else 1)
