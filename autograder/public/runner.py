"""``grader check``: run the public tests on a student's work as jobs of the sandbox's runtime, and check the quiz.

A check opens a session in a zygote of the check's runtime (:mod:`autograder.public.session`: the student's
modules imported and the public tests collected once), then runs each task's tests as a job of it, on a few such
session zygotes side by side (:mod:`autograder.public.lanes`). A hang or a crash costs one test (or one module,
when it happens at import time: the session is opened again with that module standing in as broken), never the
run. A test (or an import) that runs for more than PROGRESS_SECONDS is said to be still running, so a loop that the
wall clock will stop is never a silence.
"""

from __future__ import annotations

import queue
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

from autograder.errors import GraderError, WorkerDied
from autograder.public.condense import stack_frames, stopped_in
from autograder.public.hints import add_dependency_hints, stub_tasks, upstream_tasks
from autograder.public.jobresults import describe_exit
from autograder.public.lanes import Lanes
from autograder.public.outcome import CheckOutcome, PublicTaskResult, StillRunning
from autograder.public.shown import ShownPaths
from autograder.public.tally import Tally
from autograder.sandbox.capacity import usable_cpus
from autograder.sandbox.host import Zygote
from autograder.sandbox.memory import current_plan
from autograder.sandbox.results import Step
from autograder.sandbox.runtime import Runtime
from autograder.spec.assignment import Assignment
from autograder.spec.quiz import NO_ANSWER, check_format, load_questions, read_answers
from autograder.submission.notebook.places import CellMap
from autograder.util.paths import display_path

PROGRESS_SECONDS = 2.0  # a test (or an import) running this long is said to be still running
PRELOAD = "autograder.public.session:preload"  # what a check's template imports once (pytest, torch's first calls)
SESSION_MODULE = "autograder.public.session"
STOP_SECONDS = 10.0  # how long a stopped check waits for its lanes to end (their zygotes are killed)


def check_runtime() -> Runtime:
    """A runtime for checks (one per ``grader check``, ``--watch`` or kernel), its template started now so that
    its imports (seconds) overlap the caller's own work until the first check."""
    runtime = Runtime(preload=PRELOAD, prefix="grader-check-runtime-")
    runtime.start()
    return runtime


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
    """How many tasks run at once: the CPUs this process may use, at most four."""
    return min(4, usable_cpus())


Listener = Callable[[str, CheckOutcome, Any], None]


def run_public_tests(assignment: Assignment, package: Path, selected: list[str] | None = None,
                     listener: Listener | None = None, jobs: int | None = None, shown: Path | None = None,
                     refused: dict[str, str] | None = None, runtime: Runtime | None = None,
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
        jobs: Tasks run at once (default: default_jobs()).
        shown: How the student's work is named to them (default: ``package``).
        refused: Files the intake refused (a graded file over the size limit), with its message: their modules are
            never imported, and count as modules that cannot be imported, for that reason.
        runtime: The runtime to run the check on and keep (default: one started and closed for this check,
            :func:`check_runtime`).
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
        own = runtime is None
        runtime = runtime or check_runtime()
        try:
            with tempfile.TemporaryDirectory(prefix="grader-check-") as tmp:
                ids = [t.id for t in chosen] + ([] if selected is not None else ["untagged"])
                run = CheckRun(assignment, package, Path(tmp), ids, jobs or default_jobs(), outcome, notify, runtime)
                for name, message in (refused or {}).items():
                    if name.removesuffix(".py") in assignment.modules:
                        run.refuse(name.removesuffix(".py"), message)
                run.execute()
        finally:
            if own:
                runtime.close()
    else:
        notify("imports", outcome, None)
    add_dependency_hints(assignment, outcome)
    notify("end", outcome, None)
    return outcome


class CheckRun:
    """One ``grader check`` run: opens its sessions (again after an import hangs or ends one), runs the tasks on
    them, and turns what they report into the outcome, told to the listener from this thread alone."""

    def __init__(self, assignment: Assignment, package: Path, tmp: Path, selected: list[str], jobs: int,
                 outcome: CheckOutcome, notify: Listener, runtime: Runtime) -> None:
        self.assignment = assignment
        self.tmp = tmp
        self.selected = selected
        self.jobs = jobs
        self.outcome = outcome
        self.notify = notify
        self.runtime = runtime
        self.import_root = _importable_root(assignment, package, tmp)
        self.package_dir = self.import_root / assignment.package
        places = ShownPaths({assignment.public_tests: display_path(assignment.public_tests),
                             package: display_path(outcome.package), self.package_dir: display_path(outcome.package)},
                            session_folder=tmp, cell_map=outcome.cell_map, package=(package, self.package_dir))
        self.tally = Tally(outcome, places, selected, notify)
        self.broken: dict[str, str] = {}  # module -> why a session does not import it (refused, hung, ended)
        self.events: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.clocks: dict[int, tuple[StillRunning, float]] = {}  # per lane: what runs there, since when
        self.announced: list[StillRunning] = []  # what the listener was last told is still running
        self.lanes: Lanes | None = None
        self.threads: list[threading.Thread] = []
        self.opening: Zygote | None = None
        self.aborted = False
        self.restarted = False  # whether the runtime's template was started again for this check
        self.log = tmp / "session.log"

    def refuse(self, module: str, message: str) -> None:
        """Never import ``module``: it stands in as a module that cannot be imported, for ``message``."""
        self.broken[module] = message
        self.tally.import_failed(module, {"kind": "", "message": message, "file": f"{module}.py"})

    def execute(self) -> None:
        """Run the check to its end (stopped at once, with everything it started, by an exception here)."""
        threads = [threading.Thread(target=self._open_and_start, daemon=True)]
        threads[0].start()
        try:
            self._follow(active=1)
        except BaseException:  # Ctrl-C or an error here: nothing of this check may outlive it
            self._abort()
            raise
        finally:
            deadline = time.monotonic() + STOP_SECONDS
            for thread in threads + self.threads:
                thread.join(max(0.0, deadline - time.monotonic()))
        self.tally.report_imports()
        for task in self.outcome.tasks:
            self.tally.task_done(task.task)

    def post(self, *event: Any) -> None:
        """Queue an event for this run's thread (lanes post from theirs)."""
        self.events.put(event)

    # -- the thread that opens the first session --------------------------------------------------------

    def _open_and_start(self) -> None:
        try:
            zygote = self._open_first()
            summary = zygote.session_summary if zygote is not None else None
            if zygote is None or summary is None:
                return
            self.post("collected", summary)
            tasks = self._tasks(summary)
            if not tasks:
                zygote.close()
                return
            count = max(1, min(self.jobs, len(tasks)))
            self.lanes = Lanes(self._open_more, tasks, current_plan(self.assignment.memory_mb, count).job_bytes,
                               self.tmp, {task: upstream_tasks(self.assignment, task) for task in self.selected},
                               self._hung_before(), self._stack_lines, self.post)
            self.threads = self.lanes.start(zygote, count)
        except BaseException as exc:  # noqa: BLE001 - never leave the run waiting for this thread
            self.post("crashed", f"the public tests could not start: {type(exc).__name__}: {exc}")
        finally:
            self.post("lane_done")

    def _open_first(self) -> Zygote | None:
        """The first session, opened again without each module whose import hangs or ends it (and once more on a
        new template when the runtime's, kept since an earlier check, died meanwhile)."""
        for _ in range(len(self.assignment.modules) + 3):
            zygote = self._session()
            self.opening = zygote
            try:
                self._wait_open(zygote)
            except WorkerDied:
                self._post_heard(zygote)
                module, ended = zygote.importing, zygote.ended
                zygote.close()
                if not module and not self.aborted and not self.runtime.template.alive() and not self.restarted:
                    self.restarted = True
                    self.runtime.start()
                    continue
                if not module or self.aborted:
                    why = f"the worker {describe_exit(ended, verb=True)}"
                    self.post("crashed", f"the public tests could not start ({why}): {self._log_tail()}")
                    return None
                self.broken[module] = self._import_reason(module, ended)
                self.post("import_failed", module, self.broken[module])
                continue
            finally:
                self.opening = None
                self.post("importing", 0, None)
            self._post_heard(zygote)
            return zygote
        self.post("crashed", "the public tests kept stopping; see the lines above")
        return None

    def _wait_open(self, zygote: Zygote) -> None:
        """Wait until the session is ready, posting the module it imports as it changes."""
        said = ""
        while not zygote.wait_ready(0.2):
            if zygote.importing != said:
                said = zygote.importing
                self.post("importing", 0, Step(said, self.assignment.public_timeout) if said else None)
            if self.aborted:
                raise WorkerDied("the check was stopped")

    def _open_more(self, lane: int) -> Zygote | None:
        """Another lane's session (what it says of the imports was said by the first)."""
        zygote = self._session()
        try:
            while not zygote.wait_ready(0.2):
                if self.aborted:
                    raise WorkerDied("the check was stopped")
        except WorkerDied:
            zygote.close()
            return None
        return zygote

    def _session(self) -> Zygote:
        return self.runtime.zygote(max_isolation="rlimits", warm_up=False, same_kernels=False,
                                   session={"module": SESSION_MODULE, "settings": self._settings()})

    def _settings(self) -> dict[str, Any]:
        limits = {"default": self.assignment.public_timeout,
                  "tasks": {t.id: t.public_timeout for t in self.assignment.tasks if t.public_timeout}}
        return {"package": self.assignment.package, "package_dir": str(self.package_dir.absolute()),
                "import_root": str(self.import_root.absolute()), "modules": list(self.assignment.modules),
                "tests": str(self.assignment.public_tests), "broken": dict(self.broken), "selected": self.selected,
                "task_order": [t.id for t in self.assignment.tasks], "limits": limits, "cwd": str(self.tmp),
                "log": str(self.log), "pycache": str(self.runtime.scratch / "pycache"),
                "cell_map": self.outcome.cell_map.to_data() if self.outcome.cell_map is not None else None}

    def _post_heard(self, zygote: Zygote) -> None:
        for message in zygote.heard:
            if message.get("imported") and isinstance(message.get("error"), dict):
                self.post("import_error", str(message["imported"]), message["error"])

    def _import_reason(self, module: str, ended: dict[str, Any] | None) -> str:
        if ended and ended.get("overran"):
            return (f"importing it did not finish within {self.assignment.public_timeout:g} s — an endless loop at "
                    f"the top level of {module}.py?")
        return f"importing it stopped the test process (which {describe_exit(ended, verb=True)})"

    def _tasks(self, summary: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
        """The collected tasks' tests, the one allowed the most time first (training: it does not finish last,
        alone on one CPU); ``grader check`` still prints the tasks in the README's order."""
        order = [t.id for t in self.assignment.tasks]
        tests = {task: [t for t in found if isinstance(t, dict)] for task, found in summary.get("tests", {}).items()}
        ordered = sorted((pair for pair in tests.items() if pair[1]),
                         key=lambda pair: order.index(pair[0]) if pair[0] in order else len(order))
        return sorted(ordered, key=lambda pair: -max(float(t.get("limit", 0)) for t in pair[1]))

    def _hung_before(self) -> set[str]:
        return {result.task for result in self.outcome.latest if result.count("timeout")}

    def _stack_lines(self, stack: str) -> dict[str, list[str]]:
        return {"summary": stopped_in(stack, self.package_dir, self.outcome.cell_map),
                "frames": stack_frames(stack, self.package_dir)}

    def _log_tail(self) -> str:
        return log_tail(self.log) or log_tail(self.runtime.template_log)

    def _abort(self) -> None:
        self.aborted = True
        if self.opening is not None:
            self.opening.kill()
        if self.lanes is not None:
            self.lanes.abort()

    # -- this run's thread: events -----------------------------------------------------------------------

    def _follow(self, active: int) -> None:
        """Handle the lanes' events until every lane has ended, saying meanwhile what runs for a while."""
        while active:
            now = time.monotonic()
            self._announce(now)
            try:
                event = self.events.get(timeout=max(0.0, self._next_change(now) - now))
            except queue.Empty:
                continue
            kind, args = event[0], event[1:]
            if kind == "lanes":
                active += args[0]
            elif kind == "lane_done":
                active -= 1
            else:
                self._handle(kind, *args)

    def _handle(self, kind: str, *args: Any) -> None:
        handlers: dict[str, Callable[..., None]] = {
            "importing": lambda lane, step: self._clock(lane, "", step),
            "step": self._clock,
            "job_end": lambda lane: self.clocks.pop(lane, None),
            "results": lambda records: [self.tally.result(record) for record in records],
            "task_done": self.tally.task_done,
            "import_error": self.tally.import_failed,
            "import_failed": lambda module, why: self.tally.import_failed(
                module, {"kind": "", "message": why, "file": f"{module}.py"}),
            "collected": self.tally.collected,
            "crashed": self._crashed,
        }
        handlers[kind](*args)

    def _clock(self, lane: int, task: str, step: Step | None) -> None:
        """What runs on ``lane`` now (None: nothing), since now."""
        if step is None:
            self.clocks.pop(lane, None)
        else:
            self.clocks[lane] = (StillRunning(task, self.tally.names.get(step.name, step.name), step.seconds),
                                 time.monotonic())

    def _crashed(self, why: str) -> None:
        self.outcome.crashed = self.outcome.crashed or why

    def _announce(self, now: float) -> None:
        """Tell the listener when the tests and imports running for PROGRESS_SECONDS or more are others than before."""
        still = [what for what, started in self._clocks() if PROGRESS_SECONDS <= now - started < what.limit]
        if still != self.announced:
            self.announced = still
            self.notify("running", self.outcome, still)

    def _clocks(self) -> list[tuple[StillRunning, float]]:
        """What runs now, imports first, each with when it started."""
        return sorted(self.clocks.values(), key=lambda clock: clock[0].task != "")

    def _next_change(self, now: float) -> float:
        """When what is said to run changes without an event: a test reaches PROGRESS_SECONDS or its limit."""
        times = [started + offset for what, started in self._clocks() for offset in (PROGRESS_SECONDS, what.limit)]
        return min([moment for moment in times if moment > now], default=now + 1.0)

def log_tail(log: Path) -> str:
    """The last three non-empty lines of a log, on one line (at most 400 characters)."""
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-3:])[:400]

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
