"""``grader check --watch``: re-run, on each save, the tasks whose functions changed and the tasks that use them.

The student's files are polled (their modification times and sizes; no file-system events library) and, when one
changed, its functions are compared by the digest of their syntax tree, so a comment or a blank line re-runs
nothing. A change outside every task's functions (a helper, an import, a constant) re-runs every task. One warm
runtime (autograder.public.runner.check_runtime: a template that imported torch and pytest once) answers every
re-run.
"""

from __future__ import annotations

import ast
import hashlib
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

from autograder.public.invocation import Invocation
from autograder.public.notebook import checked_work
from autograder.public.outcome import CheckOutcome, PublicTaskResult
from autograder.public.render import Printer
from autograder.public.runner import check_runtime, run_public_tests
from autograder.sandbox.runtime import Runtime
from autograder.spec.assignment import Assignment
from autograder.submission.intake import default_work
from autograder.submission.notebook.read import is_notebook
from autograder.submission.package import PreparedSubmission
from autograder.util.syntax import parse

POLL_SECONDS = 0.1  # six stat calls: a tenth of a second costs nothing and feels instant
REST = "<module>"  # a module's code outside the tasks' functions
QUIZ = "<quiz>"

Write = Callable[[str], None]


def code_digests(assignment: Assignment, package: Path) -> dict[str, str]:
    """A digest per task function (``module.name``), per module's other code (``module.<module>``) and the quiz.

    A module that cannot be parsed (or read) has one digest of its bytes, under its ``<module>`` key.
    """
    digests: dict[str, str] = {}
    wanted = {name for task in assignment.tasks for name in task.functions}
    for module in ["__init__", *assignment.modules]:
        try:
            source = (package / f"{module}.py").read_bytes()
        except OSError:
            source = b"\0missing"  # not Python: a file that is missing differs from an empty one
        try:
            tree = parse(source)
        except (SyntaxError, ValueError):
            digests[f"{module}.{REST}"] = _digest(source)
            continue
        rest = []
        for node in tree.body:
            name = getattr(node, "name", None)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and f"{module}.{name}" in wanted:
                digests[f"{module}.{name}"] = _digest(ast.dump(node).encode())
            else:
                rest.append(node)
        digests[f"{module}.{REST}"] = _digest(ast.dump(ast.Module(body=rest, type_ignores=[])).encode())
    if assignment.quiz is not None:
        answers = package / assignment.quiz.answers_file
        digests[QUIZ] = _digest(answers.read_bytes() if answers.is_file() else b"")
    return digests


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tasks_to_rerun(assignment: Assignment, before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The tasks a change touches, in the manifest's order: those whose code reaches a changed function
    (:meth:`Assignment.reaches`: their own functions, what they use, transitively)."""
    changed = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)} - {QUIZ}
    if any(key.endswith(f".{REST}") for key in changed):
        return [task.id for task in assignment.tasks]
    return [task.id for task in assignment.tasks if changed & assignment.reaches([task.id])]


def file_stamps(files: list[Path]) -> dict[Path, tuple[int, int]]:
    """Each file's modification time (ns) and size; (0, -1) for a file that is missing."""
    stamps = {}
    for file in files:
        try:
            status = file.stat()
            stamps[file] = (status.st_mtime_ns, status.st_size)
        except OSError:
            stamps[file] = (0, -1)
    return stamps


def watched_files(assignment: Assignment, prepared: PreparedSubmission, given: Path) -> list[Path]:
    """The files a save of which may change the check: the student's own (never the intake's copy): the notebook or
    zip they gave or the intake chose, else their package's student files."""
    source = prepared.source
    if prepared.workdir in source.parents or source == prepared.workdir:  # unpacked from a zip: watch the zip
        return [given]
    if source.is_file():
        return [source]
    return [source / name for name in assignment.student_files]


def describe_watched(files: list[Path]) -> str:
    """The watched files as the ``watching ...`` line names them: the one file, or the package's folder."""
    return str(files[0]) if len(files) == 1 else f"the {len(files)} files of {files[0].parent}"


def saves(files: list[Path], stamps: dict[Path, tuple[int, int]], poll: float = POLL_SECONDS
          ) -> Iterator[list[Path]]:
    """Yield the files that changed since ``stamps``, each time some did and then stayed still for one poll (an
    editor's save)."""
    while True:
        time.sleep(poll)
        now = file_stamps(files)
        if now == stamps:
            continue
        while True:  # wait until the save is complete: editors write, rename and touch in several steps
            time.sleep(poll)
            settled = file_stamps(files)
            if settled == now:
                break
            now = settled
        changed = [file for file in files if now[file] != stamps[file]]
        stamps = now
        yield changed


def check_and_print(assignment: Assignment, prepared: PreparedSubmission, selected: list[str] | None,
                    write: Write, verbose: bool = False, runtime: Runtime | None = None,
                    invocation: Invocation | None = None,
                    earlier: dict[str, PublicTaskResult] | None = None, said: Collection[str] = (),
                    remind: bool = True, live: bool = False) -> CheckOutcome:
    """One check as ``grader check`` prints it: the intake's notes, the header, each task's line, the footer
    (its next steps worded for ``invocation``, how the student ran it; ``earlier``: a re-run's last results of the
    tasks it does not check, for the next step and for the tasks that use one that hung, held back at once;
    ``live``: ``write`` goes to a terminal, see Printer). A watch's re-run says again neither an intake note its
    last check said (``said``: the choice of what is checked, a file left out; a note that changed is new) nor the
    reminder about hidden tests (``remind``)."""
    write("".join(f"note: {note}\n" for note in prepared.notes() if note not in said))
    printer = Printer(assignment, write, verbose=verbose, invocation=invocation, remind=remind, live=live)
    printer.header(CheckOutcome(package=prepared.shown), quiz_only=selected == [] or None)
    return run_public_tests(assignment, prepared.package_dir, selected=selected, listener=printer,
                            shown=prepared.shown, refused=prepared.refused, runtime=runtime, cell_map=prepared.cell_map,
                            earlier=earlier)


def watch_and_check(assignment: Assignment, path: Path | None, selected: list[str] | None, write: Write,
          verbose: bool = False, show_extracted: Path | None = None, poll: float = POLL_SECONDS,
          typed_tasks: tuple[str, ...] = (), runtime: Runtime | None = None, live: bool = False) -> None:
    """Check once, then re-check what each save changed, on one runtime, until Ctrl-C.

    Args:
        assignment: The assignment.
        path: The student's work as ``grader check`` takes it (None: the current folder).
        selected: The tasks ``--task`` asked for (None: all); a re-run is limited to them.
        write: Writes text.
        verbose: Also print pytest's full output of each failing test.
        show_extracted: For a notebook: the folder the extracted package is written into, on each save.
        poll: Seconds between two looks at the files.
        typed_tasks: The tasks as typed (``--task``), for the suggested next commands.
        runtime: The runtime to check on (default: a new one); closed when the watch ends.
        live: ``write`` goes to a terminal (see Printer).
    """
    runtime = runtime or check_runtime()
    try:
        given = default_work(path)
        with checked_work(assignment, path, show_extracted) as prepared:
            files = watched_files(assignment, prepared, given)
            stamps = file_stamps(files)  # before the first check: a save while it runs is a save
            before = code_digests(assignment, prepared.package_dir)
            invocation = Invocation.of(assignment, None if path is None else str(path),
                                       notebook=is_notebook(prepared.source), tasks=typed_tasks,
                                       verbose=verbose, watch=True)
            outcome = check_and_print(assignment, prepared, selected, write, verbose, runtime, invocation, live=live)
            said = prepared.notes()  # each said once per session, and again only when it changes
        known = {result.task: result for result in outcome.tasks}  # each task's latest result
        write(f"\nwatching {describe_watched(files)} for saves (Ctrl-C to stop)\n")
        for changed in saves(files, stamps, poll):
            with checked_work(assignment, path, show_extracted) as prepared:
                after = code_digests(assignment, prepared.package_dir)
                tasks = [t for t in tasks_to_rerun(assignment, before, after) if selected is None or t in selected]
                quiz = before.get(QUIZ) != after.get(QUIZ)
                before = after
                saved = ", ".join(file.name for file in changed)
                if not tasks and not quiz:
                    write(f"\n{saved} saved: no checked function changed\n")
                    continue
                write(f"\n{saved} saved: re-running {', '.join(tasks) or 'the quiz format check'}\n")
                outcome = check_and_print(assignment, prepared, tasks, write, verbose, runtime, invocation, known,
                                          said=said, remind=False, live=live)
                said = prepared.notes()
                known.update({result.task: result for result in outcome.tasks})
    except KeyboardInterrupt:
        write("\nstopped watching\n")
    finally:
        runtime.close()
