"""``grade-all --figures``: draw each student's ``grader show`` figures beside their feedback, in the batch worker."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.batch.failure import one_line
from autograder.gradebook.export import FIGURE_STAMP, figures_folder, read_figure_stamp
from autograder.reports.feedback import without_paths
from autograder.spec.assignment import Assignment
from autograder.submission.package import PreparedSubmission

# Text between two tags of the figures page (tags and attributes are left alone: the page names only relative
# files in them); the page's one script and its style hold no paths, so scrubbing them changes nothing.
_TEXT_NODE = re.compile(r">([^<]+)<")


@dataclass(frozen=True)
class FigureResult:
    """How drawing one student's figures went (sent from the batch worker to the parent, so picklable).

    Attributes:
        drawn: Whether the page was written.
        note: One line: the page's summary (e.g. ``3 of 4 figures drawn``), or why there is no page.
        left_out: The diagnosis's lines for the known mistakes it left out (``Rendered.left_out``), for the
            instructor: the batch says each once (``cli/grade_all.py``), never in a student's feedback.
    """

    drawn: bool
    note: str
    left_out: tuple[str, ...] = ()


def needs_drawing(feedback: Path, student: str, digest: str) -> bool:
    """Whether the student's figures folder is missing, or was drawn for another submission (another digest)."""
    stamp = read_figure_stamp(figures_folder(feedback, student))
    return stamp is None or stamp.get("digest") != digest


def draw_figures(grader: Any, assignment: Assignment, path: Path, folder: Path, digest: str,
                 prepared: PreparedSubmission | None = None) -> FigureResult:
    """Draw a submission's figures into ``folder`` with the grader's own sandboxed workers; never raises.

    Args:
        grader: The batch worker's grader (its ``zygotes`` run the probes; new workers if it has none).
        assignment: The assignment.
        path: The submission (folder or zip).
        folder: ``<feedback>/<stem>-figures``.
        digest: The submission's digest, stamped into the folder so a resumed batch knows what it shows.
        prepared: The batch intake's copy (the one graded and digested), drawn as it is; None reads ``path``.

    Returns:
        Whether the page was written, a one-line note, and the known mistakes the diagnosis left out.
    """
    try:
        (folder / FIGURE_STAMP).unlink(missing_ok=True)  # a half-redrawn folder must not pass for the old one
        from autograder.show.render import render_figures

        rendered = render_figures(assignment, path, out=folder, expected=None,  # handed out: no figure cache
                                  zygotes=getattr(grader, "zygotes", None) or None, cache=False, prepared=prepared)
        _scrub_page(rendered.page)
        panels = [{"name": p.figure.name, "title": p.figure.title, "image": p.image, "status": p.status}
                  for p in rendered.panels]
        summary = rendered.summary()
        (folder / FIGURE_STAMP).write_text(json.dumps({"digest": digest, "summary": summary, "panels": panels},
                                                      indent=1) + "\n", encoding="utf-8")
        _share(folder)
        return FigureResult(True, summary, tuple(rendered.left_out))
    except Exception as exc:  # noqa: BLE001 - figures are extra: a failure costs the page, never the grade
        shutil.rmtree(folder, ignore_errors=True)  # no stale page of an older submission is left to link to
        return FigureResult(False, without_paths(one_line(exc)))


def _scrub_page(page: Path) -> None:
    """Cut the grading machine's absolute paths (the submission's location, tracebacks) from the page's text."""
    text = page.read_text(encoding="utf-8")
    page.write_text(_TEXT_NODE.sub(lambda m: ">" + without_paths(m.group(1)) + "<", text), encoding="utf-8")


def _share(folder: Path) -> None:
    """Files 0644 and folders 0755, like the other feedback files (they are handed out)."""
    for root, folders, files in os.walk(folder):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(Path(root) / name, 0o644)
