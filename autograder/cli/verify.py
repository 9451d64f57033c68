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

    outcome = verify_assignment(assignment_named(assignment))
    click.echo(render_verification(outcome), nl=False)
    sys.exit(0 if outcome.ok else 1)
