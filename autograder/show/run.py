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
    from .cache import FigureCache
    from .catalog import Catalog

# Importing this module does not import torch (grading, the probe API and the catalog do): the workers can be
# started first, so their torch import overlaps the parent's (see start_workers).


def run_probes(assignment: Assignment, catalog: Catalog, submission: Path | PreparedSubmission,
               workers: int | None = None,
               on_result: Callable[[str, ProbeResult], None] | None = None,
               zygotes: list[Zygote] | None = None, cache: FigureCache | None = None) -> RunOutcome:
    """Run every probe of ``catalog`` on ``submission`` in the sandbox.

    Args:
        assignment: The assignment.
        catalog: Its figures.
        submission: What the user gave (see :func:`prepare_submission`), or what the intake made of it.
        workers: Sandboxed workers running probes in parallel (the longest probe starts first; default: as many
            as grading one submission starts here, :func:`autograder.sandbox.capacity.zygotes_for_one_submission`).
        on_result: Called (from a worker thread) with each probe's name and result as soon as it is known.
        zygotes: Workers already started (e.g. by ``grade-all``) to use instead of starting ``workers`` new ones;
            they are left running.
        cache: Results kept by the digest of the code they ran (see ``show/cache.py``): a probe found there is not
            run, a good new result is kept; no worker starts when every probe and the import check are found.

    Returns:
        The outcome of every probe.

    Raises:
        SubmissionError: If the submission cannot be found or read.
    """
    from ._jobs import FigureJobs

    started = time.monotonic()
    borrowed = zygotes is not None
    if zygotes is None:
        zygotes = start_workers(assignment, workers)  # the first starts now, the others on their first job
    jobs = FigureJobs(assignment, catalog, zygotes)
    work = new_scratch(prefix="grader-show-work-")
    try:
        prepared = (submission if isinstance(submission, PreparedSubmission)
                    else prepare_submission(Path(submission), assignment, work))
        printed: list[str] = []
        broken = _imports(jobs, prepared, printed, cache)
        probes = _serve(jobs, prepared, broken, printed, on_result, cache)
        imports = prepared.import_notes(broken)
        notes = prepared.notes(ignored=False) + imports
        isolation = describe_isolation(zygotes)["tier"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not borrowed:
            stop_workers(zygotes)
    limit = assignment.max_output_bytes
    text = "\n".join(printed)
    return RunOutcome(probes=probes, notes=notes,
                      printed=text[:limit] + ("\n[truncated]" if len(text) > limit else ""),
                      isolation=isolation, seconds=round(time.monotonic() - started, 2))


def start_workers(assignment: Assignment, workers: int | None = None) -> list[Zygote]:
    """Start the sandboxed workers for :func:`run_probes` (the first now, the others on their first job).

    Call it before importing anything heavy (the page, the catalog): the worker imports torch meanwhile.

    Args:
        assignment: The assignment (its folders are hidden from the workers).
        workers: How many (default: as many as grading one submission starts on this machine or container: two on
            two CPUs with room for both, else one).
    """
    from autograder.sandbox.capacity import zygotes_for_one_submission

    count = zygotes_for_one_submission() if workers is None else workers
    return start_zygotes(count, new_scratch(prefix="grader-show-workers-"), eager=1, warm_up=False,
                         protect=[assignment.root, assignment.reference])


def stop_workers(zygotes: list[Zygote]) -> None:
    """Stop workers from :func:`start_workers` and remove their folder."""
    for zygote in zygotes:
        zygote.close()
    for folder in {zygote.scratch.parent for zygote in zygotes}:
        shutil.rmtree(folder, ignore_errors=True)


def _imports(jobs: FigureJobs, prepared: PreparedSubmission, printed: list[str],
             cache: FigureCache | None) -> dict[str, str]:
    """The modules that cannot be imported: none if the cache knows this code imports cleanly, else checked in
    the sandbox."""
    if cache is not None and cache.lookup_imports():
        return {}
    said: list[str] = []
    broken = jobs.probe_imports(prepared, said)
    printed += said
    if cache is not None:
        cache.keep_imports(broken, bool(said))
    return broken


def _serve(jobs: FigureJobs, prepared: Any, broken: dict[str, str], printed: list[str],
           on_result: Callable[[str, ProbeResult], None] | None,
           cache: FigureCache | None = None) -> dict[str, ProbeResult]:
    """Run the pseudo-tasks on every zygote, longest timeout first, by the grader's own scheduler; a probe the
    cache holds is reported at once and not run."""
    from ._jobs import probe_name

    results: dict[str, ProbeResult] = {}
    probes = {probe.name: probe for probe in jobs.declared}
    if cache is not None:
        for name, probe in probes.items():
            kept = cache.lookup(probe, broken)
            if kept is not None:
                results[name] = kept
                if on_result is not None:
                    on_result(name, kept)
        cache.prune({cache.key(probe, broken) for probe in probes.values()} | {cache.imports_key()})
    stale = {task.id: {probe_name(check) for check in jobs.probes[task.id]} - results.keys() for task in jobs.tasks}

    def run(task: Task, zygote: Zygote) -> None:
        said: list[str] = []

        def heard(name: str, result: ProbeResult) -> None:
            if cache is not None:  # kept before it is drawn, so its figures are kept too
                cache.keep(probes[name], broken, result, bool(said))
            if on_result is not None:
                on_result(name, result)

        results.update(jobs.run_task(task, prepared, broken, said, zygote, heard, only=stale[task.id]))
        printed.extend(said)

    todo = sorted((task for task in jobs.tasks if stale[task.id]), key=lambda t: -t.timeout)
    jobs.jobs.serve(todo, run)  # what no worker ran is drawn as "not run"
    return results
