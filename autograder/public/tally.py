"""The events of a ``grader check`` turned into its outcome: import problems, the collection, test results."""

from __future__ import annotations

from typing import Any, Callable

from autograder.public.outcome import CheckOutcome, ImportProblem, MissingName, TestResult
from autograder.public.shown import ShownPaths

Listener = Callable[[str, CheckOutcome, Any], None]


class Tally:
    """Adds what a check's sessions and jobs report to its outcome, and tells the listener of each task done
    and, once, of the import problems.

    Args:
        outcome: The check's outcome.
        places: How the check's own paths are said to the student.
        selected: The task ids checked (with ``untagged`` when all are).
        notify: The listener.
    """

    def __init__(self, outcome: CheckOutcome, places: ShownPaths, selected: list[str], notify: Listener) -> None:
        self.outcome = outcome
        self.places = places
        self.selected = selected
        self.notify = notify
        self.names: dict[str, str] = {}  # node id -> test name, from the collection
        self.imports_reported = False

    def import_failed(self, module: str, error: dict[str, Any]) -> None:
        if any(p.module == module for p in self.outcome.imports):
            return
        self.outcome.imports.append(ImportProblem(module=module, kind=str(error.get("kind", "")),
                                                  message=self.places.shown(str(error.get("message", ""))),
                                                  file=str(error.get("file", "")), line=int(error.get("line") or 0),
                                                  text=str(error.get("text", "")), cause=str(error.get("cause", ""))))

    def root_module(self, module: str) -> str:
        """The module whose own error blocks ``module`` (following 'imports a broken module' links)."""
        seen = set()
        problems = {p.module: p for p in self.outcome.imports}
        while module in problems and problems[module].cause and module not in seen:
            seen.add(module)
            module = problems[module].cause
        return module

    def collected(self, summary: dict[str, Any]) -> None:
        """What the first session collected: the test files it could not import, each selected task's tests, the
        tests of no task; the import problems are then said, and the tasks without a test to run are done."""
        for error in summary.get("collect_errors", []):
            self._collect_error(error)
        tests = summary.get("tests", {})
        for task_id, found in tests.items():
            self._expect(task_id, found)
        for record in summary.get("results", []):
            self.result(record)
        if summary.get("problem"):
            self.outcome.crashed = f"the public tests stopped: {summary['problem']}"
        self.report_imports()
        for task in self.outcome.tasks:
            if task.task not in tests:  # blocked, or no public test
                self.task_done(task.task)

    def _expect(self, task_id: str, tests: list[dict[str, Any]]) -> None:
        """A task's collected tests: how many its line counts, and their names."""
        if task_id in self.selected or task_id == "untagged":
            self.outcome.task(task_id).expected = len(tests)
        self.names.update({str(t.get("nodeid")): str(t.get("test")) for t in tests if isinstance(t, dict)})

    def _collect_error(self, event: dict[str, Any]) -> None:
        for task_id in event.get("tasks", []):
            if task_id not in self.selected:
                continue
            task = self.outcome.task(task_id)
            if event.get("blocked_by"):
                task.blocked_by = self.root_module(str(event["blocked_by"][0]))
                continue
            task.missing = self._missing(event.get("missing"))
            task.problem = task.missing.sentence() if task.missing else (
                f"the public test file {event.get('file')} could not be imported: "
                f"{self.places.shown(str(event.get('message')))}")
            task.tests.append(TestResult(str(event.get("file")), "failed", [task.problem],
                                         self.places.shown(str(event.get("detail", "")))))

    def _missing(self, missing: Any) -> MissingName | None:
        """The name a test file imports that the student's file lacks, from the session's ``missing`` (plain data)."""
        if not isinstance(missing, dict) or not all(isinstance(missing.get(k), str) for k in ("file", "name")):
            return None
        return MissingName(self.outcome.shown_file(missing["file"]), missing["name"])

    def report_imports(self) -> None:
        if self.imports_reported:
            return
        self.imports_reported = True
        for problem in self.outcome.imports:
            root = self.root_module(problem.module)
            problem.blocks = [t.task for t in self.outcome.tasks if t.blocked_by == root and root == problem.module]
        self.notify("imports", self.outcome, None)

    def result(self, record: dict[str, Any]) -> None:
        task = self.outcome.task(str(record.get("task", "untagged")))
        task.tests.append(TestResult(str(record.get("test", record.get("nodeid", ""))),
                                     str(record.get("status", "failed")),
                                     [self.places.shown(str(s)) for s in record.get("summary", [])],
                                     self.places.shown(str(record.get("detail", ""))),
                                     [str(f) for f in record.get("frames", [])]))

    def task_done(self, task_id: str) -> None:
        task = self.outcome.task(task_id)
        if not task.done:
            task.done = True
            self.notify("task", self.outcome, task)
