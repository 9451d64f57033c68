"""``grader show --watch``: on each save, redraw the figures whose probes reach the changed code, on kept workers.

The files are watched as ``grader check --watch`` watches them (:mod:`autograder.public.watch`); each save renders
the page again with the same sandboxed workers, which stay started between saves, and the figure cache
(``show/cache.py``) finds every figure whose probe's code did not change, so only the others run and are drawn.
"""

from __future__ import annotations

import shutil
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from autograder.errors import GraderError
from autograder.public.watch import POLL_SECONDS, describe_watched, file_stamps, saves, watched_files
from autograder.sandbox.host import Zygote, new_scratch
from autograder.spec.assignment import Assignment
from autograder.submission.intake import default_work, prepare_submission

from .notebook import render_work
from .render import Rendered
from .run import start_workers, stop_workers

Write = Callable[[str], None]


def watch_and_show(assignment: Assignment, path: Path | None, out: Path | None, write: Write,
                   expected: bool | None = None, poll: float = POLL_SECONDS,
                   on_page: Callable[[Path], object] | None = None,
                   warn: Callable[[list[str]], object] | None = None) -> None:
    """Render the page once, then again on each save of the student's files, until Ctrl-C.

    Args:
        assignment: The assignment.
        path: The student's work as ``grader show`` takes it (None: the current folder).
        out: The page's folder (None: the default beside the work).
        write: Writes text (a redraw says the intake's choice of what is drawn only when it changed).
        expected: Place the expected figures beside the student's (None: as the assignment says).
        poll: Seconds between two looks at the files.
        on_page: Called with the page once the first render wrote it (``--open``).
        warn: Called with the instructor's lines of each render (``Rendered.left_out``) not said before in this
            session.
    """
    workers = start_workers(assignment)  # kept between saves: a re-run pays no interpreter or torch start
    warned: set[str] = set()
    main = threading.current_thread() is threading.main_thread()  # where Python lets a handler be set
    previous = signal.signal(signal.SIGINT, lambda *_: _stop(workers)) if main else None

    def warn_once(rendered: Rendered) -> None:
        new = [line for line in rendered.left_out if line not in warned]
        warned.update(new)
        if new and warn is not None:
            warn(new)

    try:
        files = _watched(assignment, path)
        stamps = file_stamps(files)  # before the first render: a save while it runs is a save
        rendered = render_work(assignment, path, out, expected=expected, zygotes=workers)
        write(rendered.terminal_lines(f"{assignment.name}: {rendered.summary()}"))
        said = rendered.choice  # said once per session, and again only when it changes (as grader check --watch)
        warn_once(rendered)
        if on_page is not None:
            on_page(rendered.page)
        write(f"\nwatching {describe_watched(files)} for saves (Ctrl-C to stop)\n")
        for changed in saves(files, stamps, poll):
            saved = ", ".join(file.name for file in changed)
            write(f"\n{saved} saved: redrawing\n")
            try:
                rendered = render_work(assignment, path, out, expected=expected, zygotes=workers)
            except GraderError as exc:  # e.g. a notebook caught half-written: say so, keep watching
                write(f"{exc}\n")
                continue
            write(rendered.terminal_lines(redrawn_line(rendered), choice=rendered.choice != said))
            said = rendered.choice
            warn_once(rendered)
    except KeyboardInterrupt:
        write("\nstopped watching\n")
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
        stop_workers(workers)


def _stop(workers: list[Zygote]) -> None:
    """Ctrl-C: the workers stop for good first, so that a redraw under way ends at once (its jobs killed, the rest
    not run) instead of running to its end before the interrupt is heard."""
    for worker in workers:
        worker.retire()
    raise KeyboardInterrupt


def redrawn_line(rendered: Rendered) -> str:
    """What a re-render did: the figures it drew again (the others came from the cache), and the page's summary."""
    names = ", ".join(rendered.redrawn) if rendered.redrawn else "none (no code a figure runs changed)"
    return f"redrawn: {names}; {rendered.summary()}"


def _watched(assignment: Assignment, path: Path | None) -> list[Path]:
    """The student's files to watch, as the intake resolves the work (its scratch copy is removed at once)."""
    given = default_work(path)
    scratch = new_scratch(prefix="grader-show-watch-")
    try:
        return watched_files(assignment, prepare_submission(path, assignment, scratch), given)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
