"""`grader audit`: grade every known mistake and correct variant of an assignment."""

from __future__ import annotations

import sys

import click

from autograder.cli.base import assignment_named, friendly_errors


@click.command()
@click.argument("assignment")
@click.option("--jobs", "-j", default=2, show_default=True, type=click.IntRange(min=1),
              help="Graders working in parallel.")
@click.option("--families", type=click.Choice(["all", "mutations", "blind"]), default="all", show_default=True,
              help="Grade the known mistakes and variants, the blind submissions, or both.")
@friendly_errors
def audit(assignment: str, jobs: int, families: str) -> None:
    """Grade every known mistake (must lose points, in its task only), correct variant (must keep full marks)
    and blind submission (raise, zeros, ones, uniform, random, echo, convert: must score 0 on every task); fail also
    when the counts fall below the manifest's [audit] minimums."""
    from autograder.authoring.audit import audit_and_render

    ok, table, missed = audit_and_render(assignment_named(assignment), jobs, families)
    click.echo(table, nl=False)
    for line in missed:
        click.echo(f"below the minimum: {line}", err=True)
    if not ok:
        click.echo("audit failed: a mistake escaped or cost another task points, a variant lost points, a mutation "
                   "went stale or does not import, or a blind submission earned points", err=True)
    elif missed:
        click.echo(f"audit failed: {len(missed)} [audit] minimum{'s' if len(missed) > 1 else ''} not met",
                   err=True)
    if not ok or missed:
        sys.exit(1)
