"""Figure probes as sandboxed jobs: the grader's job machinery, with a capture in place of the judge."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from autograder.grading.jobs import CheckBatch, Jobs, read_outputs
from autograder.grading.records import read_tensor_file
from autograder.probe import derive_seed
from autograder.probe.checks import Check
from autograder.reports.results import PASSED, CheckResult
from autograder.sandbox.host import JobResult, Zygote
from autograder.sandbox.memory import current_plan
from autograder.spec.assignment import Assignment, Task
from autograder.submission.notebook.places import CellMap
from autograder.submission.package import PreparedSubmission

from .catalog import API_MODULE, API_SOURCE, Catalog, FigureFile
from .figures import Probe
from .outcome import OK, STATUS, ProbeResult


class FigureJobs:
    """Runs an assignment's figure probes as the checks of pseudo-tasks (one per figure file and timeout).

    No hidden check, reference or mistake is loaded: a student's copy of the grader has none, and figures draw
    the code they are given alone (the student's; on the instructor's side ``diagnose.py`` also gives it the
    reference and the known mistakes, as submissions). The decoded outputs of each probe are captured as plain data.

    Args:
        assignment: The assignment.
        catalog: Its figures.
        zygotes: The sandboxed workers.
    """

    def __init__(self, assignment: Assignment, catalog: Catalog, zygotes: list[Zygote]) -> None:
        self.assignment = assignment
        self.zygotes = zygotes
        self.jobs = Jobs(assignment, zygotes, current_plan(assignment.memory_mb, len(zygotes)))
        self.tasks: list[Task] = []
        self.probes: dict[str, list[Check]] = {}
        self.declared: list[Probe] = []  # every probe, in declaration order
        self.batches: dict[str, CheckBatch] = {}
        for file in catalog.files:
            for timeout, probes in itertools.groupby(sorted(file.probes, key=lambda p: -p.timeout),
                                                     key=lambda p: p.timeout):
                self._add_task(file, timeout, list(probes))

    def _add_task(self, file: FigureFile, timeout: float, probes: list[Probe]) -> None:
        task = Task(id=f"figures:{file.path.stem}:{timeout:g}", title=f"figures of {file.path.name}", points=0.0,
                    checks=file.path, timeout=timeout)
        self.probes[task.id] = [p.__check__ for p in probes]
        self.declared += probes
        # The declaration API travels with the file like a checks helper: the worker cannot import the grader.
        self.batches[task.id] = CheckBatch(label=task.id, timeout=timeout, checks_source=file.source,
                                           helper_sources={API_MODULE: API_SOURCE, **file.helpers})
        self.tasks.append(task)

    def probe_imports(self, prepared: PreparedSubmission, printed: list[str]) -> dict[str, str]:
        """The student modules that cannot be imported (see :meth:`Jobs.probe_imports`)."""
        return self.jobs.probe_imports(prepared, printed)

    def run_task(self, task: Task, prepared: PreparedSubmission, broken: dict[str, str], printed: list[str],
                 zygote: Zygote, on_result: Callable[[str, ProbeResult], None] | None = None,
                 only: set[str] | None = None) -> dict[str, ProbeResult]:
        """Run a pseudo-task's probes (or those named in ``only``); a probe that hangs or crashes costs itself only
        (the rest get a fresh job). ``on_result(name, result)`` hears of each probe as soon as its job ends (the
        parent draws meanwhile). Safe to call from several threads at once, on different zygotes."""
        pending = [(check, derive_seed(self.assignment.seed, check.name)) for check in self.probes[task.id]
                   if only is None or probe_name(check) in only]
        captured: dict[str, tuple[dict[str, Any], tuple[Any, bytes | None]]] = {}
        results: dict[str, ProbeResult] = {}
        while pending:
            done = self.jobs.run_checks(self.batches[task.id], pending, prepared, broken, printed,
                                        partial(_capture, captured), zygote)
            for (check, _), result in zip(pending, done):
                status = STATUS.get(result.status, "error")
                outputs, transport = captured.pop(check.name, ({}, None)) if status == OK else ({}, None)
                results[probe_name(check)] = ProbeResult(status, "" if status == OK else result.message, outputs,
                                                         result.seconds, transport)
                if on_result is not None:
                    on_result(probe_name(check), results[probe_name(check)])
            pending = pending[len(done):]
        return results


def probe_name(check: Check) -> str:
    """The probe's name from its check's (``figures.<probe>``)."""
    return check.name.split(".", 1)[1]


def _capture(captured: dict[str, tuple[dict[str, Any], tuple[Any, bytes | None]]], check: Check, seed: int,
             record: dict[str, Any], result: JobResult, base: CheckResult, cells: CellMap | None) -> CheckResult:
    """Capture a probe's decoded outputs (untrusted bytes, decoded here as for grading), with the bytes as
    received (what the figure cache keeps); nothing is judged."""
    outputs = read_outputs(record, result, base, cells)
    if outputs is None:
        return base
    received = (record.get("values"), read_tensor_file(result.job_dir, record.get("tensors")))
    captured[check.name] = (dict(outputs), received)
    return replace(base, status=PASSED)
