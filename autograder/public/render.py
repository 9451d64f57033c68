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
from autograder.public.outcome import CheckOutcome, ImportProblem, PublicTaskResult, StillRunning
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

    def header(self, outcome: CheckOutcome) -> None:
        self._out([f"Public tests of {self.assignment.name} on {outcome.package}", ""])

    def __call__(self, kind: str, outcome: CheckOutcome, value: object) -> None:
        """The runner's listener: print what became known."""
        if kind == "imports" and not self.imports_printed:
            self.imports_printed = True
            lines = [line for problem in outcome.imports if not problem.cause for line in
                     import_lines(outcome, problem)]
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
            self._out(task_lines(result, self.width, self.verbose, outcome.cell_map))
            self.printed.add(result.task)

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


def task_lines(result: PublicTaskResult, width: int, verbose: bool = False, cells: CellMap | None = None) -> list[str]:
    """One task's line and, when it fails, at most about six lines on its first failure (``cells``: a notebook's
    map, to name a module by its cells)."""
    total = max(result.expected, len(result.tests))
    count = f"{result.passed:>2}/{total:<2}" if not (result.blocked_by or result.held_by) else " -/- "
    status = result.status
    if status == "blocked":
        status = f"blocked: {module_words(result.blocked_by, cells)} cannot be imported (see above)"
    if status == "not checked":  # what its tests did depends on when the hang was seen: none of it is said
        those = "that" if len(result.held_by) == 1 else "those"
        return [f"{result.task.ljust(width)}  {count} not checked: it uses {join_names(result.held_by)}, which hung: "
                f"fix {those} first"]
    lines = [f"{result.task.ljust(width)}  {count} {status}"]
    failures = result.failures
    if failures:
        first = failures[0]
        label = _STATUS_WORDS.get(first.status, first.status)
        lines.append(f"{INDENT}{first.test} {label}:" if len(first.summary) != 1 else
                     f"{INDENT}{first.test} {label}: {first.summary[0]}")
        if len(first.summary) != 1:
            lines += [f"{INDENT}  {line}" for line in first.summary]
        if len(failures) > 1:
            lines.append(f"{INDENT}also failing: " + ", ".join(f.test for f in failures[1:]))
    lines += [f"{INDENT}{hint}" for hint in result.hints]
    if verbose:
        for failure in failures:
            if failure.detail:
                lines += ["", f"{INDENT}--- pytest's output of {failure.test} ---"]
                lines += [f"{INDENT}{line}" for line in failure.detail.splitlines()]
                lines.append("")
    return lines


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


def _not_implemented_step(assignment: Assignment, cells: CellMap | None, task_id: str, invocation: Invocation) -> str:
    """The first task not done: implement it, or, when a notebook cell meant to define it has a syntax error (its
    stubs stood in), fix that cell: the student did write it."""
    unreadable = cells.unreadable if cells is not None else []
    task = next((t for t in assignment.tasks if t.id == task_id), None)
    names = [q.split(".", 1)[1] for q in task.functions] if task is not None else []
    culprits = cells.unreadable_defining(names) if cells is not None else []
    if culprits:
        cell = culprits[-1]  # the last wins in the kernel, and in the extraction
        written = [name for name in names if name in cell.defines]
        verb = "counts" if len(written) == 1 else "count"
        return (f"Next: fix {cell.error_words()}: until it parses, {join_names(written)} {verb} as not implemented; "
                f"then {invocation.rerun(task_id)}.")
    step = (f"Next: implement {task_words(assignment, task_id)}, the first task in the README's order not done yet, "
            f"then {invocation.rerun(task_id)}.")
    if unreadable:  # the cells' def lines name none of the task's functions, but the student may have meant them
        step += f" If you did write it, fix {join_names([c.error_words() for c in unreadable[:3]])} first."
    return step


def next_step(assignment: Assignment, outcome: CheckOutcome, invocation: Invocation | None = None) -> str:
    """The one thing to do next: the first problem in the README's order, worded for where the student works."""
    invocation = invocation or Invocation.of(assignment)
    for problem in outcome.imports:
        if not problem.cause:
            where = outcome.shown_place(problem.file or f"{problem.module}.py", problem.line, path=False)
            why = (f"{module_words(problem.module, outcome.cell_map)} cannot be imported"
                   if outcome.cell_map is not None else "it cannot be imported")
            return f"Next: fix {where} ({why}), then {invocation.again()}."
    unknown_ids = [r.task for r in outcome.tasks if r.task not in (*assignment.task_ids, "untagged")]
    for result in outcome.tasks:
        if result.task in unknown_ids:
            continue  # a public test tagged with no task of the manifest: the instructor's to fix (said last)
        if result.status == "failed" and result.missing:
            return (f"Next: give {result.missing.name} its name back in {result.missing.file} (the public tests "
                    f"import it by that name), then {invocation.again()}.")
        if result.status == "failed" and invocation.verbose:  # sending them to --verbose again would be a loop
            return (f"Next: fix {task_words(assignment, result.task)}, the first failing task in the README's order "
                    f"(pytest's full output is above), then {invocation.rerun(result.task, verbose=True)}.")
        if result.status == "failed":
            return (f"Next: fix {task_words(assignment, result.task)}, the first failing task in the README's order, "
                    f"then {invocation.rerun(result.task, verbose=True)}: it shows pytest's full output.")
        if result.status == "not implemented":
            return _not_implemented_step(assignment, outcome.cell_map, result.task, invocation)
        if result.status == "did not run":
            return f"Next: {invocation.again()}: the tests of {result.task} did not run."
        # "not checked": a task it uses hung, and that task's line comes up in this loop (failing) or came before it
    if unknown_ids:
        return (f"Next: tell your instructor that a public test names no task of the assignment "
                f"({', '.join(unknown_ids)}, above); it says nothing about your code.")
    code_tasks = [task.id for task in assignment.tasks]  # the quiz has no public tests: never among those run
    ran = [result.task for result in outcome.tasks if result.task in code_tasks]
    # --task or a --watch re-run checked some tasks only (a notebook's check cell checks one by design)
    quiz_only = invocation.tasks == (invocation.quiz_task,)
    unknown = len(ran) < len(code_tasks) and not invocation.cell and not quiz_only
    quiz_open = invocation.shows_quiz and (outcome.quiz_problems or outcome.quiz_unanswered)
    # the quiz comes after the tasks in the README's order: not before tasks this run did not check
    if quiz_open and (not unknown or not ran or invocation.quiz_task in invocation.tasks):
        return (f"Next: answer the quiz in {invocation.answers_place} (the lines above say what is missing), then "
                f"{invocation.rerun(invocation.quiz_task)}.")
    if outcome.crashed:
        return f"Next: read the error above, then {invocation.again()}."
    if quiz_only:
        return "Next: every answer is well-formed; the quiz is graded at grading time."
    if unknown:  # what the other tasks need is not known from this run
        done = f"the public tests of {', '.join(ran)} pass" if ran else "every answer is well-formed"
        return (f"Next: {done}; the {'other ' if ran else ''}tasks were not run this time: run "
                f"`{invocation.command()}` to check them all.")
    if invocation.tasks:
        return f"Next: the public tests of {', '.join(invocation.tasks)} pass; go on with the next task."
    return "Next: every public test passes; submit when you are ready."
