"""`grader audit`: grade every known mistake and correct variant of an assignment."""

from __future__ import annotations

import sys

import click

from autograder.cli.base import assignment_named, friendly_errors


@click.command()
@click.argument("assignment")
@click.option("--jobs", "-j", default=2, show_default=True, type=click.IntRange(min=1),
              help="Graders working in parallel.")
@friendly_errors
def audit(assignment: str, jobs: int) -> None:
    """Grade every known mistake (must lose points, in its task only) and correct variant (must keep full marks)."""
    from autograder.authoring.audit import audit_and_render

    ok, table = audit_and_render(assignment_named(assignment), jobs)
    click.echo(table, nl=False)
    if not ok:
        click.echo("audit failed: a mistake escaped, cost another task points, or a variant lost points", err=True)
        sys.exit(1)
