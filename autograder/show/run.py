"""Run an assignment's figure probes on a student's code in the sandbox (with ``_jobs``: show's only sandbox users).

The probes are checks of pseudo-tasks (one per figure file and timeout, ``compare_reference=False``) run by the
grader's own job machinery (:class:`autograder.grading.jobs.Jobs`): the same worker, isolation, limits and
per-check wall clock as grading, outputs decoded in the parent as untrusted bytes and captured as plain data;
nothing else crosses back. No reference code is sent to the worker and none is loaded.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.sandbox.host import Zygote, describe_isolation, new_scratch, start_zygotes
from autograder.spec.assignment import Assignment, Task
from autograder.submission.intake import prepare_submission
from autograder.submission.package import PreparedSubmission

from .outcome import ProbeResult, RunOutcome

if TYPE_CHECKING:
    from ._jobs import FigureJobs
    from .catalog import Catalog

# Importing this module does not import torch (grading, the probe API and the catalog do): the workers can be
# started first, so their torch import overlaps the parent's (see start_workers).


def run_probes(assignment: Assignment, catalog: Catalog, submission: Path | PreparedSubmission, workers: int = 2,
               on_result: Callable[[str, ProbeResult], None] | None = None,
               zygotes: list[Zygote] | None = None) -> RunOutcome:
    """Run every probe of ``catalog`` on ``submission`` in the sandbox.

    Args:
        assignment: The assignment.
        catalog: Its figures.
        submission: What the user gave (see :func:`prepare_submission`), or what the intake made of it.
        workers: Sandboxed workers running probes in parallel (the longest probe starts first).
        on_result: Called (from a worker thread) with each probe's name and result as soon as it is known.
        zygotes: Workers already started (e.g. by ``grade-all``) to use instead of starting ``workers`` new ones;
            they are left running.

    Returns:
        The outcome of every probe.

    Raises:
        SubmissionError: If the submission cannot be found or read.
    """
    from ._jobs import FigureJobs

    started = time.monotonic()
    borrowed = zygotes is not None
    if zygotes is None:
        zygotes = start_workers(assignment, workers)
    jobs = FigureJobs(assignment, catalog, zygotes)
    work = new_scratch(prefix="grader-show-work-")
    try:
        prepared = (submission if isinstance(submission, PreparedSubmission)
                    else prepare_submission(Path(submission), assignment, work))
        printed: list[str] = []
        broken = jobs.probe_imports(prepared, printed)
        probes = _serve(jobs, prepared, broken, printed, on_result)
        notes = prepared.notes(ignored=False)
        notes += [f"{module}.py could not be imported: {reason}" for module, reason in broken.items()
                  if f"{module}.py" not in prepared.missing and f"{module}.py" not in prepared.refused]
        isolation = describe_isolation(zygotes)["tier"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not borrowed:
            stop_workers(zygotes)
    limit = assignment.max_output_bytes
    text = "\n".join(printed)
    return RunOutcome(probes=probes, notes=notes, printed=text[:limit] + ("\n[truncated]" if len(text) > limit else ""),
                      isolation=isolation, seconds=round(time.monotonic() - started, 2))


def start_workers(assignment: Assignment, workers: int = 2) -> list[Zygote]:
    """Start the sandboxed workers for :func:`run_probes` (the first now, the others on their first job).

    Call it before importing anything heavy (the page, the catalog): the worker imports torch meanwhile.
    """
    return start_zygotes(workers, new_scratch(prefix="grader-show-workers-"), eager=1, warm_up=False,
                         protect=[assignment.root, assignment.reference])


def stop_workers(zygotes: list[Zygote]) -> None:
    """Stop workers from :func:`start_workers` and remove their folder."""
    for zygote in zygotes:
        zygote.close()
    for folder in {zygote.scratch.parent for zygote in zygotes}:
        shutil.rmtree(folder, ignore_errors=True)


def _serve(jobs: FigureJobs, prepared: Any, broken: dict[str, str], printed: list[str],
           on_result: Callable[[str, ProbeResult], None] | None) -> dict[str, ProbeResult]:
    """Run the pseudo-tasks on every zygote, longest timeout first, by the grader's own scheduler."""
    results: dict[str, ProbeResult] = {}

    def run(task: Task, zygote: Zygote) -> None:
        results.update(jobs.run_task(task, prepared, broken, printed, zygote, on_result))

    jobs.jobs.serve(sorted(jobs.tasks, key=lambda t: -t.timeout), run)  # what no worker ran is drawn as "not run"
    return results
