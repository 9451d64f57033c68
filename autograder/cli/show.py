"""`grader show`: the course's figures, drawn from the student's own code in the sandbox."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from autograder.cli.base import (
    InstructorOption,
    assignment_named,
    exit_without_teardown,
    friendly_errors,
    warn_left_out_mistakes,
)
from autograder.errors import GraderError
from autograder.util.targets import output_folder


@click.command("show")
@click.argument("assignment")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="Output folder for index.html and the PNGs [default: beside the work, <package>-figures/].")
@click.option("--open", "open_page", is_flag=True, help="Open the page in a web browser.")
@click.option("--expected/--no-expected", default=None,
              help="Place the expected figures beside yours [default: as the assignment says].")
@click.option("--watch", is_flag=True,
              help="Keep drawing: after each save, redraw the figures whose code changed, in a fraction of a second "
                   "once the first page is drawn (Ctrl-C to stop).")
@click.option("--reference", is_flag=True, cls=InstructorOption,
              help="Instructors: render the reference solution's figures as the expected PNGs (into the "
                   "assignment's figures/expected/, or --out).")
@friendly_errors
def show(assignment: str, path: Path | None, out: Path | None, open_page: bool, expected: bool | None,
         watch: bool, reference: bool) -> None:
    """Draw the course's figures from your own code (run in the grader's sandbox) into an HTML page."""
    from autograder.show.notebook import render_work
    from autograder.show.render import render_expected

    spec = assignment_named(assignment)
    if out is not None:
        output_folder(out, "--out")
    if reference:
        from autograder.cli import in_student_release  # initialised before any command runs

        if in_student_release():
            raise GraderError(f"`grader show --reference` is an instructor's option and is not part of this release "
                              f"(it renders the reference solution); run `grader show {assignment}`")
        if path is not None or watch:
            raise GraderError("--reference renders the reference solution once; give no PATH and no --watch")
        written = render_expected(spec, out)
        click.echo(f"{spec.name}: {len(written)} expected figures written to {written[0].parent if written else out}")
        return
    if watch:
        from autograder.show.watch import watch_and_show

        # --open opens the first page once; a reload in the browser shows each redraw
        watch_and_show(spec, path, out, lambda text: click.echo(text, nl=False), expected=expected,
                       on_page=_open if open_page else None, warn=lambda lines: warn_left_out_mistakes(spec, lines))
        return
    rendered = render_work(spec, path, out, expected=expected)  # a notebook's extraction notes are printed
    click.echo(rendered.terminal_lines(f"{spec.name}: {rendered.summary()}"), nl=False)
    warn_left_out_mistakes(spec, rendered.left_out)  # the instructor's copy only: the release names no mistake
    if open_page:
        _open(rendered.page)
    exit_without_teardown()  # the page is written, the workers stopped, the intake's copy removed


def _open(page: Path) -> None:
    """Open the page in a web browser, or say that none could be (a server, a container: --open did nothing)."""
    if not webbrowser.open(page.as_uri()):
        click.echo("note: no web browser could be opened here (--open); open the page above in one yourself")
