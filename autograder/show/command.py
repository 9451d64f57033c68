"""The ``grader show`` click command (registered in autograder/cli.py with one line)."""

from __future__ import annotations

import functools
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..errors import GraderError


def _one_line_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Expected failures as one line on stderr, exit code 2 (as autograder.cli.friendly_errors, without the
    import cycle of using it from here)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GraderError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper


@click.command("show")
@click.argument("assignment")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="Output folder for index.html and the PNGs [default: beside the work, <package>-figures/].")
@click.option("--open", "open_page", is_flag=True, help="Open the page in a web browser.")
@click.option("--expected/--no-expected", default=None,
              help="Place the expected figures beside yours [default: as the assignment says].")
@click.option("--reference", is_flag=True,
              help="Instructors: render the reference solution's figures as the expected PNGs (into the "
                   "assignment's figures/expected/, or --out).")
@_one_line_errors
def show_command(assignment: str, path: Path | None, out: Path | None, open_page: bool, expected: bool | None,
                 reference: bool) -> None:
    """Draw the course's figures from your own code (run in the grader's sandbox) into an HTML page."""
    try:
        from ..assignment import load_assignment
        from .render import render_expected, render_figures
    except ImportError as exc:
        raise GraderError(f"`grader show` is not part of this copy of the grader ({exc})") from None
    spec = load_assignment(assignment)
    if reference:
        if path is not None:
            raise GraderError("--reference renders the reference solution; give no PATH")
        written = render_expected(spec, out)
        click.echo(f"{spec.name}: {len(written)} expected figures written to {written[0].parent if written else out}")
        return
    rendered = render_figures(spec, path, out, expected=expected)
    click.echo(f"{spec.name}: {rendered.summary()}")
    click.echo(f"page: {rendered.page}")
    if open_page:
        webbrowser.open(rendered.page.as_uri())
