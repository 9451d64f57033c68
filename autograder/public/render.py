"""What ``grader check`` prints: one line per task as it finishes (in the README's order), then what to do next;
meanwhile, once, that a test running for a while is still running."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from typing import Callable, TextIO

from autograder.public.hints import join_names, note_upstream, upstream_tasks
from autograder.public.invocation import Invocation
from autograder.public.outcome import (
    CheckOutcome,
    ImportProblem,
    MissingName,
    PublicTaskResult,
    StillRunning,
    TestResult,
)
from autograder.spec.assignment import Assignment, short_names
from autograder.submission.notebook.collect import ANSWERS_NAME
from autograder.submission.notebook.places import CellMap, module_words
from autograder.util.safety import printable

INDENT = "    "
HIDDEN_TESTS_REMINDER = ("These are the public tests only. Hidden tests run at grading time: they compare your "
                         "functions",
                         "with a reference solution on random inputs of several shapes, so passing here does not",
                         "guarantee full marks.")
_STATUS_WORDS = {"timeout": "timed out", "crashed": "crashed", "failed": "failed"}
_ALSO_WORDS = {"timeout": "timed out", "crashed": "crashed"}  # the later failures' "also ...: a, b"; else failing


def rewritable(stream: TextIO) -> bool:
    """Whether a line written to ``stream`` can be taken back with a carriage return: a terminal's, not a pipe's, a
    file's or a notebook cell's (where a carriage return leaves its text behind)."""
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Printer:
    """Prints a check's results while it runs: the header, import errors once, each task's line in order.

    A task's line waits for the tasks before it (the README's order) and for the tasks its code runs (so its line
    can say whether a failure may come from them, or that one of them hung).

    A test (or an import) that runs for a while is said to be still running, once, and when it will be stopped: on
    a terminal (``live``) as a status line that the next line written replaces, so the lines left are those of a
    check that said nothing of it; elsewhere as a line of its own, starting with "…".

    Args:
        assignment: The assignment.
        write: Writes text (e.g. ``click.echo`` without a newline).
        verbose: Also print pytest's full output of each failing test.
        invocation: How the student ran the check (the words of the next step); ``grader check`` without a
            path when None.
        remind: Whether the footer says that hidden tests grade the work too (:data:`HIDDEN_TESTS_REMINDER`): a
            check the student repeats (a watch's re-run, a kernel's later check cells) leaves it to the first.
        live: ``write`` goes to a terminal (:func:`rewritable`): what still runs is said on a status line that is
            taken back.
    """

    def __init__(self, assignment: Assignment, write: Callable[[str], None], verbose: bool = False,
                 invocation: Invocation | None = None, remind: bool = True, live: bool = False) -> None:
        self.assignment = assignment
        self.write = write
        self.verbose = verbose
        self.invocation = invocation or Invocation.of(assignment)
        self.remind = remind
        self.live = live
        self.printed: set[str] = set()
        self.imports_printed = False
        self.announced: set[StillRunning] = set()
        self.status = ""  # the status line on the terminal now (live)
        self.width = max([len(t.id) for t in assignment.tasks] + [8])

    def header(self, outcome: CheckOutcome, quiz_only: bool | None = None) -> None:
        """The first line: what is checked, and where (``quiz_only``: the quiz's answers alone, no public test;
        by default when the quiz alone was asked for)."""
        if quiz_only is None:
            quiz_only = bool(self.invocation.quiz_task) and self.invocation.tasks == (self.invocation.quiz_task,)
        if quiz_only:
            self.remind = False  # the reminder speaks of the functions' hidden tests
            self._out([f"Quiz answers of {self.assignment.name} in {outcome.package}"])
        else:
            self._out([f"Public tests of {self.assignment.name} on {outcome.package}", ""])

    def __call__(self, kind: str, outcome: CheckOutcome, value: object) -> None:
        """The runner's listener: print what became known."""
        if kind == "imports" and not self.imports_printed:
            self.imports_printed = True
            lines = [line for problem in outcome.imports if not problem.cause for line in
                     import_lines(outcome, problem)]
            lines += missing_name_lines(outcome)
            self._out(lines + ([""] if lines else []))
        if kind == "running" and isinstance(value, list):
            self._still_running(outcome, value)
        if kind in ("task", "end"):
            self._flush(outcome, final=kind == "end")
        if kind == "end":
            self._out(footer(self.assignment, self._with_earlier(outcome), self.invocation, self.remind))

    def _still_running(self, outcome: CheckOutcome, running: list[StillRunning]) -> None:
        """Say what has run for a while: each once on a line of its own, or (live) all on the status line."""
        if not self.live:
            new = [what for what in running if what not in self.announced]
            self.announced.update(new)
            self._out([still_running_line(what, outcome.cell_map) for what in new])
            return
        self._take_back_status()
        if running:
            text = printable("; ".join(still_running_line(what, outcome.cell_map) for what in running), one_line=True)
            self.status = text[:max(10, shutil.get_terminal_size().columns - 1)]
            self.write(self.status)

    def _take_back_status(self) -> None:
        if self.status:
            self.write("\r" + " " * len(self.status) + "\r")
            self.status = ""

    def _with_earlier(self, outcome: CheckOutcome) -> CheckOutcome:
        """The outcome with a ``--watch`` re-run's earlier results of the tasks it did not check
        (:attr:`CheckOutcome.earlier`), all in the README's order: the next step then names the first unfinished
        task of all (a re-run of multi_head_attention must not call it the first one not done while head_split is
        not)."""
        if not outcome.earlier:
            return outcome
        order = self.assignment.task_ids
        tasks = sorted(outcome.latest, key=lambda r: order.index(r.task) if r.task in order else len(order))
        return dataclasses.replace(outcome, tasks=tasks)

    def _flush(self, outcome: CheckOutcome, final: bool) -> None:
        done = {t.task for t in outcome.tasks if t.done}
        for result in outcome.tasks:
            if result.task in self.printed:
                continue
            waiting = [result.task, *[u for u in upstream_tasks(self.assignment, result.task)
                                      if u in {t.task for t in outcome.tasks}]]
            if not final and not all(t in done for t in waiting):
                return
            note_upstream(self.assignment, outcome, result)
            self._out(task_lines(result, self.width, self.verbose, outcome.cell_map, self._unrun(outcome, result)))
            self.printed.add(result.task)

    def _unrun(self, outcome: CheckOutcome, result: PublicTaskResult) -> list[str]:
        """A kernel's check: the functions of the task that no cell it ran defines (see :func:`never_run`)."""
        return never_run(self.assignment, outcome.cell_map, result) if self.invocation.kernel else []

    def _out(self, lines: list[str]) -> None:
        if lines:
            self._take_back_status()
            self.write(printable("\n".join(lines)) + "\n")


def still_running_line(what: StillRunning, cells: CellMap | None = None) -> str:
    """``… test_x in attention is still running (up to 5 s)``, or the same of an import."""
    running = f"{what.test} in {what.task}" if what.task else f"importing {module_words(what.test, cells)}"
    return f"… {running} is still running (up to {what.limit:g} s)"


def import_lines(outcome: CheckOutcome, problem: ImportProblem) -> list[str]:
    """A student module that cannot be imported: its file, line and text, said once, and what it blocks."""
    where = outcome.shown_place(problem.file or f"{problem.module}.py", problem.line)
    error = f"{problem.kind}: {problem.message}" if problem.kind else problem.message
    lines = [f"error: {where}: {error}"]
    if problem.text:
        lines.append(f"{INDENT}{problem.text}")
    if problem.blocks:
        lines.append(f"{INDENT}this blocks {', '.join(problem.blocks)}: fix it first")
    return lines


def missing_name_lines(outcome: CheckOutcome) -> list[str]:
    """Each name the public tests import that the student's file lacks, said once with the tasks it blocks (as a
    module that cannot be imported is), not on every task whose test file imports it."""
    blocked: dict[MissingName, list[str]] = {}
    for result in outcome.tasks:
        if result.missing is not None and not result.blocked_by:
            blocked.setdefault(result.missing, []).append(result.task)
    return [line for missing, tasks in blocked.items() for line in
            (f"error: {missing.sentence()}", f"{INDENT}this blocks {', '.join(tasks)}: fix it first")]


def never_run(assignment: Assignment, cells: CellMap | None, result: PublicTaskResult) -> list[str]:
    """For a kernel's check: the functions of a task not implemented that no cell the kernel ran defines (the
    grader's stubs stand in): their cells may be written, but were not run."""
    if cells is None or result.status != "not implemented":
        return []
    return cells.stubbed(_function_names(assignment, result.task))


def _function_names(assignment: Assignment, task_id: str) -> list[str]:
    """A task's functions by their names in the student's files (none for an id that is no task: ``untagged``)."""
    task = next((t for t in assignment.tasks if t.id == task_id), None)
    return [q.split(".", 1)[1] for q in task.functions] if task is not None else []


def task_lines(result: PublicTaskResult, width: int, verbose: bool = False, cells: CellMap | None = None,
               unrun: list[str] | None = None) -> list[str]:
    """One task's line and, when it fails, at most about six lines on its first failure (``cells``: a notebook's
    map, to name a module by its cells; ``unrun``: the task's functions no cell a kernel ran defines)."""
    total = max(result.expected, len(result.tests))
    count = f"{result.passed:>2}/{total:<2}" if result.status not in ("blocked", "not checked") else " -/- "
    if result.status == "not checked":  # what its tests did depends on when the hang was seen: none of it is said
        those = "that" if len(result.held_by) == 1 else "those"
        return [f"{result.task.ljust(width)}  {count} not checked: it uses {join_names(result.held_by)}, which hung: "
                f"fix {those} first"]
    lines = [f"{result.task.ljust(width)}  {count} {_status_words(result, cells, unrun or [])}"]
    if result.status == "blocked":
        return lines
    lines += _failure_lines(result.failures)
    lines += [f"{INDENT}{hint}" for hint in result.hints]
    if verbose:
        for failure in result.failures:
            if failure.detail:
                lines += ["", f"{INDENT}--- pytest's output of {failure.test} ---"]
                lines += [f"{INDENT}{line}" for line in failure.detail.splitlines()]
                lines.append("")
    return lines


def _status_words(result: PublicTaskResult, cells: CellMap | None, unrun: list[str]) -> str:
    """What a task's line says after its count."""
    if result.blocked_by:
        return f"blocked: {module_words(result.blocked_by, cells)} cannot be imported (see above)"
    if result.missing is not None:
        return f"blocked: no {result.missing.name} in {result.missing.file} (see above)"
    if unrun:
        verb = "defines" if len(unrun) == 1 else "define"
        return (f"not implemented: no cell this kernel has run {verb} {join_names(unrun)} (write {join_names(unrun)} "
                f"in {'its cell' if len(unrun) == 1 else 'their cells'} and run it)")
    return result.status


def _failure_lines(failures: list[TestResult]) -> list[str]:
    """The first failure in a few lines, then the others by name, grouped by how each failed (``also timed out:
    ...``)."""
    if not failures:
        return []
    first = failures[0]
    label = _STATUS_WORDS.get(first.status, first.status)
    lines = [f"{INDENT}{first.test} {label}:" if len(first.summary) != 1 else
             f"{INDENT}{first.test} {label}: {first.summary[0]}"]
    if len(first.summary) != 1:
        lines += [f"{INDENT}  {line}" for line in first.summary]
    later: dict[str, list[str]] = {}
    for failure in failures[1:]:
        later.setdefault(_ALSO_WORDS.get(failure.status, "failing"), []).append(failure.test)
    return lines + [f"{INDENT}also {label}: {', '.join(tests)}" for label, tests in later.items()]


def footer(assignment: Assignment, outcome: CheckOutcome, invocation: Invocation | None = None,
           remind: bool = True) -> list[str]:
    """The quiz's format check, the reminder about hidden tests (``remind``), and what to do next."""
    invocation = invocation or Invocation.of(assignment)
    lines: list[str] = []
    if outcome.crashed:
        lines += ["", f"error: {outcome.crashed}"]
    if assignment.quiz is not None and outcome.quiz_checked and invocation.shows_quiz:
        lines += [""] + quiz_lines(outcome, invocation)
    if remind:
        lines += ["", *HIDDEN_TESTS_REMINDER]
    return lines + ["", next_step(assignment, outcome, invocation)]


def quiz_lines(outcome: CheckOutcome, invocation: Invocation) -> list[str]:
    """The quiz's format: how many answers are well-formed, the unanswered questions in one line, each other
    problem on its own line."""
    lines = [(f"quiz: {outcome.quiz_answered} of {outcome.quiz_questions} answers well-formed "
              "(format only; answers are graded at grading time)")]
    if outcome.quiz_missing and invocation.notebook:
        ran = "run yet" if invocation.cell and not invocation.path else "found in the notebook"
        return lines + [f"  - no `{ANSWERS_NAME}` cell {ran}: fill it in and run it"]
    if outcome.quiz_unanswered:
        lines.append(f"  - {len(outcome.quiz_unanswered)} of {outcome.quiz_questions} questions not answered yet: "
                     f"{id_ranges(outcome.quiz_unanswered)}")
    return lines + [f"  - {problem}" for problem in outcome.quiz_problems[:20]]


def id_ranges(ids: list[str]) -> str:
    """Question ids in as few words as possible: runs of consecutive numbers joined (``q1–q5, q7, q9–q16``)."""
    parts: list[list[str]] = []
    previous: tuple[str, int] | None = None
    for qid in ids:
        match = re.fullmatch(r"(.*?)(\d+)", qid)
        key = (match.group(1), int(match.group(2))) if match else None
        if key and previous and key[0] == previous[0] and key[1] == previous[1] + 1 and parts:
            parts[-1][1:] = [qid]
        else:
            parts.append([qid])
        previous = key
    return ", ".join(part[0] if len(part) == 1 else f"{part[0]}–{part[1]}" for part in parts)


def task_words(assignment: Assignment, task_id: str) -> str:
    """A task as the student finds it in their files: its id, followed by its functions when the id is none of their
    names (``head_split (split_heads and merge_heads)``, but ``causal_mask``): the README and the stubs name the
    functions, only the check's table names the tasks."""
    task = next((t for t in assignment.tasks if t.id == task_id), None)
    if task is None or not task.functions or task_id in {q.split(".", 1)[1] for q in task.functions}:
        return task_id
    return f"{task_id} ({short_names(task.functions)})"


def _not_implemented_step(assignment: Assignment, outcome: CheckOutcome, result: PublicTaskResult,
                          invocation: Invocation) -> str:
    """The first task not done: implement it, or, when a notebook cell meant to define it has a syntax error (its
    stubs stood in), fix that cell: the student did write it; in a kernel, write it in its cell and run that cell
    (a check cell tests the cells the kernel has run: one filled in but never run counts as not implemented)."""
    cells, task_id = outcome.cell_map, result.task
    unreadable = cells.unreadable if cells is not None else []
    fix = _unreadable_step(assignment, cells, task_id, invocation)
    if fix is not None:
        return fix
    if invocation.kernel and never_run(assignment, cells, result):
        return (f"Next: implement {task_words(assignment, task_id)} in its cell and run that cell (a check cell tests "
                f"the cells this kernel has run), then {invocation.rerun(task_id)}.")
    step = (f"Next: implement {task_words(assignment, task_id)}, the first task in the README's order not done yet, "
            f"then {invocation.rerun(task_id)}.")
    if unreadable:  # the cells' def lines name none of the task's functions, but the student may have meant them
        step += f" If you did write it, fix {join_names([c.error_words() for c in unreadable[:3]])} first."
    return step


def _unreadable_step(assignment: Assignment, cells: CellMap | None, task_id: str, invocation: Invocation) -> str | None:
    """Fix the notebook cell with a syntax error that meant to define the task's functions (the last one wins in the
    kernel, and in the extraction), or None when there is none."""
    names = _function_names(assignment, task_id)
    culprits = cells.unreadable_defining(names) if cells is not None else []
    if not culprits:
        return None
    written = [name for name in names if name in culprits[-1].defines]
    verb = "counts" if len(written) == 1 else "count"
    return (f"Next: fix {culprits[-1].error_words()}: until it parses, {join_names(written)} {verb} as not "
            f"implemented; then {invocation.rerun(task_id)}.")


def next_step(assignment: Assignment, outcome: CheckOutcome, invocation: Invocation | None = None) -> str:
    """The one thing to do next: the first problem in the README's order, worded for where the student works.

    What blocks tasks comes first (a module that cannot be imported, a name the public tests import that a file
    lacks), also when this run did not check those tasks (a ``--watch`` re-run of the quiz); then each task's
    status, in the README's order (:data:`_TASK_STEPS`); then the quiz, and what the run leaves unknown.
    """
    invocation = invocation or Invocation.of(assignment)
    known = [r for r in outcome.tasks if r.task in (*assignment.task_ids, "untagged")]
    return (_blocking_step(outcome, invocation) or _task_step(assignment, outcome, known, invocation)
            or _untagged_step(assignment, outcome) or _final_step(assignment, outcome, invocation))


def _blocking_step(outcome: CheckOutcome, invocation: Invocation) -> str | None:
    """Fix what keeps tasks from running: this run's import error (its place), else a blocked task's cause."""
    for problem in outcome.imports:
        if not problem.cause:
            where = outcome.shown_place(problem.file or f"{problem.module}.py", problem.line, path=False)
            why = (f"{module_words(problem.module, outcome.cell_map)} cannot be imported"
                   if outcome.cell_map is not None else "it cannot be imported")
            return f"Next: fix {where} ({why}), then {invocation.again()}."
    for result in outcome.tasks:
        if result.missing is not None and not result.blocked_by:
            return (f"Next: give {result.missing.name} its name back in {result.missing.file} (the public tests "
                    f"import it by that name), then {invocation.again()}.")
        if result.blocked_by:  # an earlier check's result (this one checked no task of that module)
            return (f"Next: fix {module_words(result.blocked_by, outcome.cell_map)}: it cannot be imported (the "
                    f"error is above, in the check that ran its tasks), then {invocation.again()}.")
    return None


def _failed_step(assignment: Assignment, outcome: CheckOutcome, result: PublicTaskResult,
                 invocation: Invocation) -> str:
    words = f"Next: fix {task_words(assignment, result.task)}, the first failing task in the README's order"
    if invocation.verbose:  # sending them to --verbose again would be a loop
        return f"{words} (pytest's full output is above), then {invocation.rerun(result.task, verbose=True)}."
    if invocation.watch:
        return (f"{words}, then {invocation.again()} (`{invocation.command((result.task,), verbose=True)}` shows "
                f"pytest's full output).")
    return f"{words}, then {invocation.rerun(result.task, verbose=True)}: it shows pytest's full output."


# A task's status to its next step, in the README's order; "passed" and "no tests" have none, and "not checked" (a
# task it uses hung) none of its own: that task comes first, failing.
_TASK_STEPS: dict[str, Callable[[Assignment, CheckOutcome, PublicTaskResult, Invocation], str]] = {
    "failed": _failed_step, "not implemented": _not_implemented_step,
    "did not run": lambda _, __, result, invocation: f"Next: {invocation.restart()}: the tests of {result.task} did "
                                                     f"not run."}


def _task_step(assignment: Assignment, outcome: CheckOutcome, known: list[PublicTaskResult],
               invocation: Invocation) -> str | None:
    """The step of the first task, in the README's order, whose status has one (a public test tagged with no task
    of the manifest is the instructor's to fix: said last)."""
    for result in known:
        step = _TASK_STEPS.get(result.status)
        if step is not None:
            return step(assignment, outcome, result, invocation)
    return None


def _untagged_step(assignment: Assignment, outcome: CheckOutcome) -> str | None:
    """A public test tagged with no task of the manifest: the instructor's to fix, said once the tasks are done."""
    unknown_ids = [r.task for r in outcome.tasks if r.task not in (*assignment.task_ids, "untagged")]
    if not unknown_ids:
        return None
    return (f"Next: tell your instructor that a public test names no task of the assignment "
            f"({', '.join(unknown_ids)}, above); it says nothing about your code.")


def _final_step(assignment: Assignment, outcome: CheckOutcome, invocation: Invocation) -> str:
    """Every task this run knows of is done: the quiz, an error, or what is left."""
    code_tasks = [task.id for task in assignment.tasks]  # the quiz has no public tests: never among those run
    ran = [result.task for result in outcome.tasks if result.task in code_tasks]
    # --task or a --watch re-run checked some tasks only (a notebook's check cell checks one by design)
    quiz_only = invocation.tasks == (invocation.quiz_task,)
    unknown = len(ran) < len(code_tasks) and not invocation.cell and not quiz_only
    quiz = _quiz_step(outcome, invocation, bool(ran), unknown)
    if quiz is not None:
        return quiz
    if outcome.crashed:
        return f"Next: read the error above, then {invocation.restart()}."
    return _all_done_step(ran, quiz_only, unknown, invocation)


def _quiz_step(outcome: CheckOutcome, invocation: Invocation, ran: bool, unknown: bool) -> str | None:
    """Answer the quiz, when answers are missing or malformed; it comes after the tasks in the README's order, so
    not before tasks this run did not check (``unknown``) unless it checked none or the quiz was asked for."""
    if not invocation.shows_quiz or not (outcome.quiz_problems or outcome.quiz_unanswered):
        return None
    if unknown and ran and invocation.quiz_task not in invocation.tasks:
        return None
    return (f"Next: answer the quiz in {invocation.answers_place} (the lines above say what is missing), then "
            f"{invocation.rerun(invocation.quiz_task)}.")


def _all_done_step(ran: list[str], quiz_only: bool, unknown: bool, invocation: Invocation) -> str:
    if quiz_only:
        return "Next: every answer is well-formed; the quiz is graded at grading time."
    if unknown:  # what the other tasks need is not known from this run
        done = f"the public tests of {', '.join(ran)} pass" if ran else "every answer is well-formed"
        return (f"Next: {done}; the {'other ' if ran else ''}tasks were not run this time: run "
                f"`{invocation.command()}` to check them all.")
    if invocation.tasks:
        return f"Next: the public tests of {', '.join(invocation.tasks)} pass; go on with the next task."
    return "Next: every public test passes; submit when you are ready."
