"""What every command shares: one-line errors instead of tracebacks, and the fast exit after grading."""

from __future__ import annotations

import errno
import functools
import os
import sys
from typing import Any, Callable

import click

from autograder.errors import GraderError
from autograder.spec.assignment import Assignment, load_assignment
from autograder.util.atomic import write_failed_message

_exit_without_teardown = False  # set by a command once its output is written and its workers are stopped
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)  # a write the disk refuses: never the input's fault


def friendly_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Report expected failures as one line on stderr with exit code 2, never as a traceback: a GraderError, and a
    write the disk refused (full, over quota, read-only)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GraderError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except OSError as exc:
            if exc.errno not in _DISK_FULL:
                raise
            # a writer that does not go through write_atomic (a copied tree, a drawn PNG) on a disk that filled up
            click.echo(f"error: {write_failed_message(exc.filename, exc)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper


class InstructorOption(click.Option):
    """An instructors' option of a command the student release ships too (``grader show --reference``).

    Where the release leaves the instructors' commands out (``autograder/cli/__init__.py``: ``in_student_release``),
    the group hides it from ``--help`` once the commands are registered; the command refuses it there in one line,
    since what it needs (the reference, ...) is not part of the release.
    """


def assignment_named(name: str) -> Assignment:
    """The assignment called ``name`` (a one-line error if there is none)."""
    return load_assignment(name)


def exit_without_teardown() -> None:
    """Let :func:`autograder.cli.run` end the process at once: the command's output is written."""
    global _exit_without_teardown
    _exit_without_teardown = True


def run_then_exit(main: Callable[[], Any]) -> None:
    """Run the click group; after a command called :func:`exit_without_teardown`, skip the interpreter's teardown.

    With torch loaded the teardown takes about a second, a tenth of grading one submission; by then ``grade``
    has written its report, stopped its workers and removed its scratch folder, so nothing is lost.
    """
    try:
        main()
    except SystemExit as exc:
        if not _exit_without_teardown or not isinstance(exc.code, (int, type(None))):
            raise
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exc.code or 0)


def warn_left_out_mistakes(spec: Assignment, left_out: list[str]) -> None:
    """Say once, on stderr, each known mistake grading leaves out because it went stale (the lines of
    :func:`autograder.spec.mutation.diagnosable_mistakes`) or does not import (``Grader.unimportable_mistakes``):
    the instructor's problem, never in a report."""
    for line in left_out:
        click.echo(f"warning: {line}; until then no student is told this mistake's hint (`grader verify "
                   f"{spec.name}` refuses it)", err=True)
