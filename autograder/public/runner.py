"""``grader check``: run the public tests on a student's work in a worker process, and check the quiz's format.

A session of the warm worker (autograder.public.warm, autograder.public.worker) imports the student's modules
once and runs each task's tests in a fork with a wall clock per test; this side only reads its events, so a hang
or a crash costs one test (or one module, when it happens at import time), never the run: a session that stops
answering is killed with its worker, and a new one runs without what the first already did. A test (or an import)
that runs for more than PROGRESS_SECONDS is said to be still running, so a loop that the wall clock will stop is
never a silence.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import tempfile
import time
from dataclasses import dataclass, field
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

from autograder.errors import GraderError
from autograder.public.forks import split_events
from autograder.public.hints import add_dependency_hints, stub_tasks, upstream_tasks
from autograder.public.outcome import (
    CheckOutcome,
    ImportProblem,
    MissingName,
    PublicTaskResult,
    StillRunning,
    TestResult,
)
from autograder.public.warm import WarmWorker, log_tail
from autograder.spec.assignment import Assignment
from autograder.spec.quiz import NO_ANSWER, check_format, load_questions, read_answers
from autograder.submission.notebook.places import CellMap, place
from autograder.util.paths import display_path

STARTUP_SECONDS = 120.0  # importing torch on a busy laptop
SILENCE_SECONDS = 15.0  # the worker sends a heartbeat every second while tests run
GRACE_SECONDS = 3.0  # the worker kills an overrunning test itself; this side steps in only if it does not
PROGRESS_SECONDS = 2.0  # a test (or an import) running this long is said to be still running


def select_tasks(assignment: Assignment, requested: tuple[str, ...] | list[str]) -> list[str] | None:
    """The task ids ``--task`` asks for, in the manifest's order (None: every task; [] with only the quiz).

    Raises:
        GraderError: If a requested task is not one of the assignment's.
    """
    if not requested:
        return None
    known = assignment.task_ids
    unknown = [t for t in requested if t not in known]
    if unknown:
        raise GraderError(f"assignment {assignment.name!r} has no task {unknown[0]!r}; tasks: {', '.join(known)}")
    return [t.id for t in assignment.tasks if t.id in requested]


def default_jobs() -> int:
    """How many task processes run at once: the CPUs this process may use, at most four."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


Listener = Callable[[str, CheckOutcome, Any], None]


def run_public_tests(assignment: Assignment, package: Path, selected: list[str] | None = None,
                     listener: Listener | None = None, jobs: int | None = None, shown: Path | None = None,
                     refused: dict[str, str] | None = None, worker: WarmWorker | None = None,
                     cell_map: CellMap | None = None,
                     earlier: Mapping[str, PublicTaskResult] | None = None) -> CheckOutcome:
    """Run the public tests against ``package`` and check the quiz's format.

    Args:
        assignment: The assignment.
        package: The student's package folder (the intake's copy).
        selected: Task ids to run (None: all; the quiz is always checked).
        listener: Called as ``listener(kind, outcome, value)`` on ``imports`` (the import problems are known),
            ``running`` (the tests and imports running for PROGRESS_SECONDS or more changed; value: a list of
            StillRunning, empty when none is left), ``task`` (a task finished; value: its result) and ``end``.
        jobs: Task processes at once (default: default_jobs()).
        shown: How the student's work is named to them (default: ``package``).
        refused: Files the intake refused (a graded file over the size limit), with its message: their modules are
            never imported, and count as modules that cannot be imported, for that reason.
        worker: A warm worker to run the session on and keep (default: one started and closed for this check).
        cell_map: For a notebook, where each line of the extracted files comes from: every location in them is
            then said as a cell and its line (None: files and lines, as for a package).
        earlier: A ``--watch`` re-run's last results, by task: those of the tasks not checked now are kept
            (:attr:`CheckOutcome.earlier`), so a task that uses one that hung is held back at once, with the line a
            cold check gives it, and the next step counts them.

    Returns:
        Per-task outcomes, import problems and the quiz format check.
    """
    notify = listener or (lambda kind, outcome, value: None)
    outcome = CheckOutcome(package=shown or package, cell_map=cell_map)
    chosen = [t for t in assignment.tasks if selected is None or t.id in selected]
    stubs = stub_tasks(assignment, package)
    outcome.tasks = [PublicTaskResult(t.id, stub=t.id in stubs) for t in chosen]
    outcome.earlier = [result for task, result in (earlier or {}).items() if task not in {t.id for t in chosen}]
    _check_quiz(assignment, package, outcome)
    if chosen:
        own = worker is None
        worker = worker or WarmWorker()
        try:
            with tempfile.TemporaryDirectory(prefix="grader-check-") as tmp:
                ids = [t.id for t in chosen] + ([] if selected is not None else ["untagged"])
                run = _Run(assignment, package, Path(tmp), ids, jobs or default_jobs(), outcome, notify, worker)
                for name, message in (refused or {}).items():
                    if name.removesuffix(".py") in assignment.modules:
                        run.refuse(name.removesuffix(".py"), message)
                run.execute()
        finally:
            if own:
                worker.close()
    else:
        notify("imports", outcome, None)
    add_dependency_hints(assignment, outcome)
    notify("end", outcome, None)
    return outcome


class _Run:
    """One ``grader check`` run: runs sessions (again after a hang or crash) and turns their events into results."""

    def __init__(self, assignment: Assignment, package: Path, tmp: Path, selected: list[str], jobs: int,
                 outcome: CheckOutcome, notify: Listener, worker: WarmWorker) -> None:
        self.assignment = assignment
        self.tmp = tmp
        self.selected = selected
        self.jobs = jobs
        self.outcome = outcome
        self.notify = notify
        self.worker = worker
        self.import_root = _importable_root(assignment, package, tmp)
        self.places = ShownPaths({assignment.public_tests: display_path(assignment.public_tests),
                                  package: display_path(outcome.package),
                                  self.import_root / assignment.package: display_path(outcome.package)},
                                 session_folder=tmp, cell_map=outcome.cell_map,
                                 package=(package, self.import_root / assignment.package))
        self.broken: dict[str, str] = {}  # module -> why a worker could not import it (hang, crash)
        self.done: set[str] = set()  # node ids with a result
        self.collected = False
        self.imports_reported = False
        self.log = tmp / "worker.log"

    def refuse(self, module: str, message: str) -> None:
        """Never import ``module``: it stands in as a module that cannot be imported, for ``message``."""
        self.broken[module] = message
        self._import_failed(module, {"kind": "", "message": message, "file": f"{module}.py"})

    def execute(self) -> None:
        for _ in range(len(self.assignment.modules) + 1 + max(8, 2 * len(self.selected))):
            if self._attempt():
                break
        else:
            self.outcome.crashed = self.outcome.crashed or "the public tests kept stopping; see the lines above"
        self._report_imports()
        for task in self.outcome.tasks:
            if not task.done:
                task.done = True
                self.notify("task", self.outcome, task)

    # -- one worker --------------------------------------------------------------------------------------

    def _settings(self) -> dict[str, Any]:
        limits = {"default": self.assignment.public_timeout,
                  "tasks": {t.id: t.public_timeout for t in self.assignment.tasks if t.public_timeout}}
        return {"package": self.assignment.package, "package_dir": str(self.import_root / self.assignment.package),
                "modules": list(self.assignment.modules), "tests": str(self.assignment.public_tests),
                "broken": self.broken, "selected": self.selected, "skip": sorted(self.done),
                "task_order": [t.id for t in self.assignment.tasks], "limits": limits, "jobs": self.jobs,
                "upstream": {task: upstream_tasks(self.assignment, task) for task in self.selected},
                "hung": sorted(result.task for result in self.outcome.latest if result.count("timeout")),
                "cell_map": self.outcome.cell_map.to_data() if self.outcome.cell_map is not None else None}

    def _attempt(self) -> bool:
        """Run one session until it is done (True) or stops early (False: run another without what it did)."""
        state = _WorkerState(started=time.monotonic(), import_limit=self.assignment.public_timeout)
        channel = self.worker.open(self._settings(), self.tmp, self.import_root)
        try:
            finished = self._follow(channel, state)
        except BaseException:  # Ctrl-C or an error here: nothing of this session may outlive the check
            self.worker.abandon(state.forks)
            raise
        if finished:
            self.worker.finished()
            return True
        return self._recover(self.worker.abandon(state.forks), state)

    def _follow(self, channel: int, state: _WorkerState) -> bool:
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(channel, selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if state.deadline() <= now:
                    state.overrun = True
                    return False
                self._announce(state, now)
                wake = min(state.deadline(), state.next_change(now), now + 1.0)
                if not selector.select(timeout=max(0.0, wake - now)):
                    continue
                chunk = os.read(channel, 1 << 16)
                if not chunk:
                    return False
                events, buffer = split_events(buffer + chunk)
                for event in events:
                    state.last = time.monotonic()
                    if self._handle(event, state):
                        return True

    def _handle(self, event: dict[str, Any], state: _WorkerState) -> bool:
        kind = event.get("event")
        if kind == "ready":
            state.ready = True
            if event.get("pid"):  # the session leads a process group of its own, killed whole if it overruns
                state.forks.append(int(event["pid"]))
        elif kind == "importing":
            state.importing = str(event["module"])
            state.import_started = time.monotonic()
        elif kind == "imported":
            state.importing = ""
            if event.get("error"):
                self._import_failed(str(event["module"]), event["error"])
        elif kind == "collect_error":
            self._collect_error(event)
        elif kind == "collected":
            self._collected(event.get("tests", {}))
        elif kind == "fork":
            state.forks.append(int(event["pid"]))
        elif kind == "start":
            state.running[str(event["nodeid"])] = (str(event["task"]), str(event["test"]), float(event["limit"]),
                                                   time.monotonic())
        elif kind == "result":
            state.running.pop(str(event.get("nodeid")), None)
            self._result(event)
        elif kind == "task_done":
            self._task_done(str(event["task"]))
        elif kind == "worker_error":
            self.outcome.crashed = f"the public tests stopped: {event.get('message', '')}"
        elif kind == "done":
            return True
        return False

    def _announce(self, state: _WorkerState, now: float) -> None:
        """Tell the listener when the tests and imports running for PROGRESS_SECONDS or more are others than before."""
        still = state.still_running(now)
        if still != state.announced:
            state.announced = still
            self.notify("running", self.outcome, still)

    # -- events ------------------------------------------------------------------------------------------

    def _import_failed(self, module: str, error: dict[str, Any]) -> None:
        if any(p.module == module for p in self.outcome.imports):
            return
        self.outcome.imports.append(ImportProblem(module=module, kind=str(error.get("kind", "")),
                                                  message=self.places.shown(str(error.get("message", ""))),
                                                  file=str(error.get("file", "")), line=int(error.get("line") or 0),
                                                  text=str(error.get("text", "")), cause=str(error.get("cause", ""))))

    def _root_module(self, module: str) -> str:
        """The module whose own error blocks ``module`` (following 'imports a broken module' links)."""
        seen = set()
        problems = {p.module: p for p in self.outcome.imports}
        while module in problems and problems[module].cause and module not in seen:
            seen.add(module)
            module = problems[module].cause
        return module

    def _collect_error(self, event: dict[str, Any]) -> None:
        for task_id in event.get("tasks", []):
            if task_id not in self.selected:
                continue
            task = self.outcome.task(task_id)
            if event.get("blocked_by"):
                task.blocked_by = self._root_module(str(event["blocked_by"][0]))
                continue
            task.missing = self._missing(event.get("missing"))
            task.problem = task.missing.sentence() if task.missing else (
                f"the public test file {event.get('file')} could not be imported: "
                f"{self.places.shown(str(event.get('message')))}")
            task.tests.append(TestResult(str(event.get("file")), "failed", [task.problem],
                                         self.places.shown(str(event.get("detail", "")))))

    def _missing(self, missing: Any) -> MissingName | None:
        """The name a test file imports that the student's file lacks, from the worker's ``missing`` (plain data)."""
        if not isinstance(missing, dict) or not all(isinstance(missing.get(k), str) for k in ("file", "name")):
            return None
        return MissingName(self.outcome.shown_file(missing["file"]), missing["name"])

    def _collected(self, tests: dict[str, list[str]]) -> None:
        if not self.collected:
            for task_id, names in tests.items():
                if task_id in self.selected or task_id == "untagged":
                    self.outcome.task(task_id).expected = len(names)
            self.collected = True
        self._report_imports()
        for task in self.outcome.tasks:
            if task.task not in tests and not task.done:  # blocked, or no public test
                task.done = True
                self.notify("task", self.outcome, task)

    def _report_imports(self) -> None:
        if self.imports_reported:
            return
        self.imports_reported = True
        for problem in self.outcome.imports:
            root = self._root_module(problem.module)
            problem.blocks = [t.task for t in self.outcome.tasks if t.blocked_by == root and root == problem.module]
        self.notify("imports", self.outcome, None)

    def _result(self, event: dict[str, Any]) -> None:
        nodeid = str(event.get("nodeid", ""))
        if nodeid in self.done:
            return
        self.done.add(nodeid)
        task = self.outcome.task(str(event.get("task", "untagged")))
        task.tests.append(TestResult(str(event.get("test", nodeid)), str(event.get("status", "failed")),
                                     [self.places.shown(str(s)) for s in event.get("summary", [])],
                                     self.places.shown(str(event.get("detail", ""))),
                                     [str(f) for f in event.get("frames", [])]))

    def _task_done(self, task_id: str) -> None:
        task = self.outcome.task(task_id)
        if not task.done:
            task.done = True
            self.notify("task", self.outcome, task)

    # -- a worker that stopped ---------------------------------------------------------------------------

    def _recover(self, code: int | None, state: _WorkerState) -> bool:
        """Record what the stopped session was doing; True when nothing is left that another session could do."""
        how = "did not answer" if state.overrun else _exit_words(code)
        if not state.ready and not self.worker.fresh:
            return False  # a kept worker that died since the last check: a new one starts the session again
        if not state.ready:
            self.outcome.crashed = (f"the public tests could not start (the worker {how}): "
                                    + (log_tail(self.log) or self.worker.log_tail()))
            return True
        if state.importing:
            module = state.importing
            seconds = self.assignment.public_timeout
            reason = (f"importing it did not finish within {seconds:g} s — an endless loop at the top level of "
                      f"{module}.py?" if state.overrun else f"importing it stopped the test process (which {how})")
            self.broken[module] = reason
            self._import_failed(module, {"kind": "", "message": reason, "file": f"{module}.py"})
            return False
        if state.running:
            for nodeid, (task, test, limit, _) in state.running.items():
                overran = time.monotonic() - state.running[nodeid][3] >= limit
                summary = (f"did not finish within {limit:g} s — an endless loop?" if overran
                           else f"the test run stopped while this test ran ({how})")
                self._result({"nodeid": nodeid, "task": task, "test": test,
                              "status": "timeout" if overran else "crashed", "summary": [summary]})
            return False
        if not self.collected:
            self.outcome.crashed = f"the public tests stopped before they started (the worker {how}): " + log_tail(
                self.log)
            return True
        self.outcome.crashed = f"the public tests stopped (the worker {how}): " + log_tail(self.log)
        return True


@dataclass
class _WorkerState:
    """What ``grader check`` knows of one session of the worker."""

    started: float
    last: float = 0.0
    ready: bool = False
    importing: str = ""
    import_started: float = 0.0
    overrun: bool = False
    forks: list[int] = field(default_factory=list)
    running: dict[str, tuple[str, str, float, float]] = field(default_factory=dict)
    import_limit: float = 5.0
    announced: list[StillRunning] = field(default_factory=list)  # what the listener was last told is still running

    def deadline(self) -> float:
        """When to give up on the worker: start-up, an import or a test overran, or it fell silent."""
        if not self.ready:
            return self.started + STARTUP_SECONDS
        limits = [self.last + SILENCE_SECONDS]
        if self.importing:
            limits.append(self.import_started + self.import_limit)
        limits += [started + limit + GRACE_SECONDS for _, _, limit, started in self.running.values()]
        return min(limits)

    def _clocks(self) -> list[tuple[StillRunning, float]]:
        """What runs now (each test, and the import), with when it started."""
        clocks = [(StillRunning(task, test, limit), started) for task, test, limit, started in self.running.values()]
        if self.importing:
            clocks.insert(0, (StillRunning("", self.importing, self.import_limit), self.import_started))
        return clocks

    def still_running(self, now: float) -> list[StillRunning]:
        """The tests and the import that have run for PROGRESS_SECONDS and are not yet over their wall clock."""
        return [what for what, started in self._clocks() if PROGRESS_SECONDS <= now - started < what.limit]

    def next_change(self, now: float) -> float:
        """When :meth:`still_running` changes next without an event: a test reaches PROGRESS_SECONDS or its limit."""
        times = [started + offset for what, started in self._clocks() for offset in (PROGRESS_SECONDS, what.limit)]
        return min([moment for moment in times if moment > now], default=now + 1.0)


class ShownPaths:
    """Paths of the check's own folders, in the words pytest and Python print them, said as the student sees them.

    pytest names a file relative to the session's working folder (a temporary one) when that is shorter than its
    absolute path, and the session imports an intake's copy of the student's work: neither resolves from the folder
    the student ran ``grader check`` in, nor exists once the check ends.

    A notebook's extracted files are no files of the student's: with ``cell_map``, a line of one of them
    (``.../attention.py:42``, ``File ".../attention.py", line 42``) is said as its cell and line instead.

    Args:
        folders: Each folder of the check (the public tests, the copy of the student's package), with how the
            student sees it (a path relative to their current folder, or absolute).
        session_folder: The session's working folder (pytest's relative paths start there).
        cell_map: A notebook's map of its extracted files (None for a package).
        package: The folders holding the extracted files (with ``cell_map``).
    """

    def __init__(self, folders: dict[Path, str], session_folder: Path, cell_map: CellMap | None = None,
                 package: tuple[Path, ...] = ()) -> None:
        self.names = self._forms(folders, session_folder)
        self.pattern = self._pattern(self.names, r"(?=[/\\])")
        self.cell_map = cell_map
        self.lines = None
        if cell_map is not None and package:
            extracted = self._forms({folder: "" for folder in package}, session_folder)
            self.lines = self._pattern(extracted, r"""[/\\](?P<file>\w+\.py)(?:"?, line (?P<a>\d+)|:(?P<b>\d+))""",
                                       quote=True)

    @staticmethod
    def _forms(folders: dict[Path, str], session_folder: Path) -> dict[str, str]:
        names: dict[str, str] = {}
        for folder, shown in folders.items():
            for form in (folder, folder.resolve()):
                names.setdefault(str(form), shown)
                for start in (session_folder, session_folder.resolve()):
                    try:
                        names.setdefault(os.path.relpath(form, start), shown)
                    except ValueError:  # another drive (Windows): pytest prints the absolute path then
                        pass
        return {form: shown for form, shown in names.items() if form not in (".", "")}

    @staticmethod
    def _pattern(names: dict[str, str], after: str, quote: bool = False) -> re.Pattern[str]:
        forms = sorted(names, key=len, reverse=True)  # the longest first: a relative form is part of others
        return re.compile(r"(?<![\w.~/-])" + ('"?' if quote else "") + "(" + "|".join(map(re.escape, forms)) + ")"
                          + after)

    def shown(self, text: str) -> str:
        """``text`` with every path below one of the folders starting as the student sees that folder, and a
        notebook's extracted line said as its cell's."""
        if self.lines is not None:
            text = self.lines.sub(lambda match: place(match["file"], int(match["a"] or match["b"]), self.cell_map),
                                  text)
        return self.pattern.sub(lambda match: self.names[match.group(1)], text) if self.names else text


def _exit_words(code: int | None) -> str:
    if code is None:
        return "did not answer"
    if code < 0:
        try:
            return f"was killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"ended with exit code {code}"


def _importable_root(assignment: Assignment, package: Path, tmp: Path) -> Path:
    """A folder from which ``import <package>`` finds the student's files (a copy if the folder is named otherwise)."""
    if package.name == assignment.package:
        return package.parent
    copy = tmp / "import" / assignment.package
    copy.mkdir(parents=True)
    for name in assignment.student_files:
        if (package / name).is_file():
            (copy / name).write_bytes((package / name).read_bytes())
    return copy.parent


def _check_quiz(assignment: Assignment, package: Path, outcome: CheckOutcome) -> None:
    if assignment.quiz is None:
        return
    questions = load_questions(assignment.quiz)
    answers, problem = read_answers(package / assignment.quiz.answers_file)
    outcome.quiz_questions = len(questions)
    outcome.quiz_checked = True
    if problem:
        outcome.quiz_missing = not (package / assignment.quiz.answers_file).is_file()
        outcome.quiz_problems.append(problem)
        return
    for verdict in check_format(questions, answers):
        if verdict.valid:
            outcome.quiz_answered += 1
        elif verdict.message == NO_ANSWER:  # said in one line for all of them (see render.quiz_lines)
            outcome.quiz_unanswered.append(verdict.question)
        else:
            outcome.quiz_problems.append(f"{verdict.question}: {verdict.message}")
