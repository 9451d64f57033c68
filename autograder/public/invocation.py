"""How the student ran a check (a terminal command with the path they typed, or a notebook cell): the one place
that words the commands and places ``grader check``'s messages suggest, in the form the student can use."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from autograder.spec.assignment import Assignment
from autograder.submission.notebook.collect import ANSWERS_NAME

SAVE_UNDER_WATCH = "save it: this watch checks it again"  # the next step's "then ..." under --watch


@dataclass(frozen=True)
class Invocation:
    """The context of one check, as the student started it.

    Attributes:
        assignment: The assignment's name, as typed.
        path: The path the student gave (``../work2``, ``work.ipynb``), exactly as typed; None when they gave none.
        cell: True for ``check_notebook(...)`` (a notebook cell), False for the ``grader check`` command.
        notebook: The work is a notebook (the quiz's answers are its ``ANSWERS`` cell, not a file).
        tasks: The tasks asked for (empty: every task).
        answers_file: The package's answers file (``answers.toml``), for work that is a package.
        quiz_task: The quiz's task id (``quiz``), or "" without a quiz.
        verbose: pytest's full output of each failing test is printed (``--verbose``, ``verbose=True``).
        watch: ``grader check --watch``: a save checks again what it changed, no command is needed.
    """

    assignment: str
    path: str | None = None
    cell: bool = False
    notebook: bool = False
    tasks: tuple[str, ...] = ()
    answers_file: str = ""
    quiz_task: str = ""
    verbose: bool = False
    watch: bool = False

    @classmethod
    def of(cls, assignment: Assignment, path: str | None = None, cell: bool = False, notebook: bool = False,
           tasks: tuple[str, ...] = (), verbose: bool = False, watch: bool = False) -> Invocation:
        """The context of one check of ``assignment`` (``grader check`` when ``cell`` is False)."""
        quiz = assignment.quiz
        return cls(assignment.name, path=path, cell=cell, notebook=notebook or cell, tasks=tasks,
                   answers_file=quiz.answers_file if quiz else "", quiz_task=quiz.task_id if quiz else "",
                   verbose=verbose, watch=watch)

    def command(self, tasks: tuple[str, ...] = (), verbose: bool = False) -> str:
        """The check to run next, in the student's own form: the same path, a cell's call in a notebook.

        Args:
            tasks: The tasks to check (empty: every task; a notebook cell checks one).
            verbose: Ask for pytest's full output of each failing test.
        """
        if self.cell:
            args = [json.dumps(self.assignment)]
            args += [f"task={json.dumps(tasks[0])}"] if tasks else []
            args += [f"path={json.dumps(self.path)}"] if self.path else []
            args += ["verbose=True"] if verbose else []
            return f"check_notebook({', '.join(args)})"
        words = ["grader", "check", self.assignment] + ([self.path] if self.path else [])
        words += [word for task in tasks for word in ("--task", task)]
        words += ["--verbose"] if verbose else []
        return " ".join(shlex.quote(word) for word in words)

    def rerun(self, task: str, verbose: bool = False) -> str:
        """How to check one task again after an edit: re-run its check cell in a notebook, run the command in a
        terminal, save the file under ``--watch``."""
        if self.watch:
            return SAVE_UNDER_WATCH
        call = f"`{self.command((task,), verbose)}`"
        return f"re-run its check cell ({call})" if self.cell else f"run {call}"

    def again(self) -> str:
        """How to run this very check again after an edit: this cell, or the command as typed (under ``--watch``:
        save the file)."""
        if self.watch:
            return SAVE_UNDER_WATCH
        return self.restart()

    def restart(self) -> str:
        """How to run this very check again when no edit is to be made (under ``--watch`` a save that changes
        nothing checks nothing): this cell, or the command as typed."""
        call = f"`{self.command(self.tasks[:1] if self.cell else self.tasks)}`"
        if self.watch:
            return f"stop this watch (Ctrl-C) and run {call}"
        return f"re-run this cell ({call})" if self.cell else f"run {call} again"

    @property
    def kernel(self) -> bool:
        """A notebook cell that checks the cells its kernel has run (no saved file named): a cell filled in but
        never run is not among them."""
        return self.cell and not self.path

    @property
    def answers_place(self) -> str:
        """Where the quiz's answers are written: the notebook's ``ANSWERS`` cell, or the package's answers file."""
        return f"the `{ANSWERS_NAME}` cell" if self.notebook else self.answers_file

    @property
    def shows_quiz(self) -> bool:
        """Whether this check reports the quiz: always in a terminal; in a notebook, only the quiz's own check
        cell and the final one (a per-task cell run before the quiz was reached has nothing to say about it)."""
        return not self.cell or not self.tasks or self.quiz_task in self.tasks
