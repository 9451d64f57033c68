"""The grader's job machinery serving figure probes (used by autograder.show.run only, imported when it runs)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from autograder.grading.grader import Grader
from autograder.judge.verdict import Judge
from autograder.probe import derive_seed
from autograder.sandbox.host import Zygote
from autograder.sandbox.memory import current_plan
from autograder.spec.assignment import Assignment, Task

from .catalog import API_MODULE, API_SOURCE, Catalog, FigureFile
from .figures import Probe
from .run import _STATUS, OK, ProbeResult


class FigureJobs(Grader):
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
        # No reference, no mistakes: the judge only runs each probe's capturing verifier.
        self.judge = Judge(assignment, None, self.assets, [], scratch / "mistakes")
        self.memory = current_plan(assignment.memory_mb, len(zygotes))
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
