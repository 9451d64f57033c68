"""Run an assignment's figure probes on a student's code in the sandbox; the only module of show that uses it.

The probes are checks of pseudo-tasks (one per figure file and timeout, ``compare_reference=False``) run by the
grader's own job machinery (:class:`autograder.grading.Grader`): the same worker, isolation, limits and per-check
wall clock as grading, outputs decoded in the parent as untrusted bytes. A verifier captures the decoded outputs;
nothing else crosses back. No reference code is sent to the worker and none is loaded.
"""

from __future__ import annotations

import itertools
import queue
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..assignment import Assignment, Task
from ..grading import Grader
from ..probe import derive_seed
from ..results import ERROR, FAILED, NOT_IMPLEMENTED, PASSED, TIMEOUT
from ..sandbox import WorkerDied, Zygote, describe_isolation, new_scratch, start_zygotes
from ..submission import prepare_submission
from .catalog import API_MODULE, API_SOURCE, Catalog, FigureFile
from .figures import Probe

OK, NOT_RUN = "ok", "not run"
_STATUS = {PASSED: OK, FAILED: OK, NOT_IMPLEMENTED: "not implemented", ERROR: "error", TIMEOUT: "timeout"}


@dataclass
class ProbeResult:
    """How one probe went.

    Attributes:
        status: ``ok``, ``not implemented``, ``error``, ``timeout`` or ``not run``.
        message: Why it did not give outputs (the student's exception, the time limit), else ``""``.
        outputs: The decoded plain outputs (empty unless ``ok``).
        seconds: Time the probe took in the worker.
    """

    status: str
    message: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class RunOutcome:
    """Every probe's result for one submission, and what the page should say about the run.

    Attributes:
        probes: Probe name to its result.
        notes: Missing files, modules that could not be imported.
        printed: What the student's code printed (truncated).
        isolation: The sandbox tier the code ran under.
        seconds: Wall time of the whole run.
    """

    probes: dict[str, ProbeResult]
    notes: list[str] = field(default_factory=list)
    printed: str = ""
    isolation: str = ""
    seconds: float = 0.0


class _FigureJobs(Grader):
    """The grader's job machinery, serving the figure probes as checks of pseudo-tasks.

    ``Grader.__init__`` is not called: it loads the hidden checks and the reference, which figures never use (and
    a student's copy of the grader does not have). Only what the job methods read is set here.
    """

    def __init__(self, assignment: Assignment, catalog: Catalog, zygotes: list[Zygote], scratch: Path) -> None:
        self.assignment = assignment
        self.scratch = scratch
        self.zygotes = zygotes
        self.reference = None
        self.assets: dict[str, bytes] = {}
        self.mistakes = []
        self._mistake_packages, self._wrong, self._expected = {}, {}, {}
        self._jobs = itertools.count(1)
        self.checks, self.check_sources, self.helper_sources, self.pruned = {}, {}, {}, {}
        self.captured: dict[str, dict[str, Any]] = {}
        self.tasks: list[Task] = []
        for file in catalog.files:
            for timeout, probes in itertools.groupby(sorted(file.probes, key=lambda p: -p.timeout),
                                                     key=lambda p: p.timeout):
                self._add_task(file, timeout, list(probes))

    def _add_task(self, file: FigureFile, timeout: float, probes: list[Probe]) -> None:
        task = Task(id=f"figures:{file.path.stem}:{timeout:g}", title=f"figures of {file.path.name}", points=0.0,
                    checks=file.path, timeout=timeout)
        self.checks[task.id] = [replace(p.__check__, verify=self._capture(p.name)) for p in probes]
        self.check_sources[task.id] = file.source
        # The declaration API travels with the file like a checks helper: the worker cannot import the grader.
        self.helper_sources[task.id] = {API_MODULE: API_SOURCE, **file.helpers}
        self.pruned[task.id] = {}  # no reference in the worker: figures draw the student's code alone
        self.tasks.append(task)

    def _capture(self, name: str) -> Any:
        def verify(actual: dict[str, Any], _reference: Any, _context: Any) -> list[str]:
            self.captured[name] = dict(actual)
            return []

        return verify

    def run_task(self, task: Task, prepared: Any, broken: dict[str, str], printed: list[str], zygote: Zygote,
                 on_result: Callable[[str, ProbeResult], None] | None = None) -> dict[str, ProbeResult]:
        """Run a pseudo-task's probes; a probe that hangs or crashes costs itself only (the rest get a fresh job).
        ``on_result(name, result)`` hears of each probe as soon as its job ends (the parent draws meanwhile)."""
        pending = [(check, derive_seed(self.assignment.seed, check.name)) for check in self.checks[task.id]]
        results: dict[str, ProbeResult] = {}
        while pending:
            done = self._run_checks(task, pending, prepared, broken, printed, zygote)
            for (check, _), result in zip(pending, done):
                name = check.name.split(".", 1)[1]
                status = _STATUS.get(result.status, "error")
                outputs = self.captured.pop(name, {}) if status == OK else {}
                results[name] = ProbeResult(status, "" if status == OK else result.message, outputs, result.seconds)
                if on_result is not None:
                    on_result(name, results[name])
            pending = pending[len(done):]
        return results


def run_probes(assignment: Assignment, catalog: Catalog, submission: Path, workers: int = 2,
               on_result: Callable[[str, ProbeResult], None] | None = None,
               zygotes: list[Zygote] | None = None) -> RunOutcome:
    """Run every probe of ``catalog`` on ``submission`` in the sandbox.

    Args:
        assignment: The assignment.
        catalog: Its figures.
        submission: The student's package folder (or a folder holding it, or a zip).
        workers: Sandboxed workers running probes in parallel (the longest probe starts first).
        on_result: Called (from a worker thread) with each probe's name and result as soon as it is known.
        zygotes: Workers already started (e.g. by ``grade-all``) to use instead of starting ``workers`` new ones;
            they are left running.

    Returns:
        The outcome of every probe.

    Raises:
        SubmissionError: If the submission cannot be found or read.
    """
    started = time.monotonic()
    scratch = new_scratch(prefix="grader-show-")
    borrowed = zygotes is not None
    if zygotes is None:
        zygotes = start_zygotes(workers, scratch, eager=1, warm_up=False,
                                protect=[assignment.root, assignment.reference])
    jobs = _FigureJobs(assignment, catalog, zygotes, scratch)
    try:
        prepared = prepare_submission(Path(submission), assignment, new_scratch(prefix="grader-show-work-"))
        try:
            printed: list[str] = []
            broken = jobs._probe_imports(prepared, printed)
            probes = _serve(jobs, prepared, broken, printed, on_result)
            notes = [f"missing file: {name}" for name in prepared.missing]
            notes += [f"{module}.py could not be imported: {reason}" for module, reason in broken.items()
                      if f"{module}.py" not in prepared.missing]
            isolation = describe_isolation(zygotes)["tier"]
        finally:
            shutil.rmtree(prepared.workdir, ignore_errors=True)
    finally:
        if borrowed:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            jobs.close()
    limit = assignment.max_output_bytes
    text = "\n".join(printed)
    return RunOutcome(probes=probes, notes=notes, printed=text[:limit] + ("\n[truncated]" if len(text) > limit else ""),
                      isolation=isolation, seconds=round(time.monotonic() - started, 2))


def _serve(jobs: _FigureJobs, prepared: Any, broken: dict[str, str], printed: list[str],
           on_result: Callable[[str, ProbeResult], None] | None) -> dict[str, ProbeResult]:
    """Run the pseudo-tasks on every zygote, longest timeout first (the started zygote takes the first)."""
    pending: queue.SimpleQueue[Task] = queue.SimpleQueue()
    for task in sorted(jobs.tasks, key=lambda t: -t.timeout):
        pending.put(task)
    results: dict[str, ProbeResult] = {}

    def serve(zygote: Zygote) -> None:
        while True:
            try:
                task = pending.get_nowait()
            except queue.Empty:
                return
            try:
                results.update(jobs.run_task(task, prepared, broken, printed, zygote, on_result))
            except WorkerDied:
                pending.put(task)  # this worker is gone; another one runs it
                return

    first = jobs._started_zygote()
    order = [first] + [z for z in jobs.zygotes if z is not first]
    with ThreadPoolExecutor(len(order)) as pool:
        for future in [pool.submit(serve, zygote) for zygote in order]:
            future.result()
    return results
