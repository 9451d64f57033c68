"""Every mistake and variant imported in a child process, each that does not import named (verify, audit)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.errors import AssignmentError, GraderError
from autograder.sandbox.lines import PipeLines
from autograder.spec.mutation import Edited, Mutation, load_mutation, unimportable, write_mutated
from autograder.util.paths import PACKAGE_ROOT

FIRST_SECONDS = 120.0  # the child's start and its first import, which imports what the reference imports (torch)
EACH_SECONDS = 30.0  # every later import: the reference's own modules only
READY = b"ready"


def import_problems(reference: Path, modules: tuple[str, ...], edited: list[Edited]) -> list[str]:
    """One line for each mutation whose package does not import (see :func:`import_answers`)."""
    return [answer for answer in import_answers(reference, modules, edited) if answer]


def import_answers(reference: Path, modules: tuple[str, ...], edited: list[Edited]) -> list[str]:
    """For each mutation, in order, the line saying that its package does not import
    (:func:`autograder.spec.mutation.load_mutation`, what the judge runs on a mistake), hangs while importing or
    ends the process that imports it; '' for one that imports (``grader verify`` and ``grader audit`` ask).

    Importing runs the mutation's code: the instructor's, trusted, but in a child process all the same, so that a
    mutation's module-level code changes nothing here. One child imports them all, in order; one that hangs or
    ends it is named, and a new child imports the rest.

    Args:
        reference: The reference package folder.
        modules: The package's modules, imported as the judge imports them.
        edited: Each mutation with the text of the files it edits (``combined_problems``: edits that apply and
            leave Python).

    Raises:
        GraderError: If the child process cannot start.
    """
    said: list[str] = []
    with tempfile.TemporaryDirectory(prefix="grader-verify-imports-") as tmp:
        pending = [(write_mutated(reference, texts, Path(tmp) / "packages" / str(index)), mutation)
                   for index, (mutation, texts) in enumerate(edited)]
        while pending:
            answers, stopped = _import_in_child(pending, modules, Path(tmp))
            said += answers
            pending = pending[len(answers):]
            if pending:  # the child stopped at this one: it hung or ended the process
                said.append(unimportable(pending[0][1], stopped))
                pending = pending[1:]
    return said


def _import_in_child(packages: list[tuple[Path, Mutation]], modules: tuple[str, ...],
                     tmp: Path) -> tuple[list[str], str]:
    """What a child process answers for each package in order (its line, '' when it imports), and, when it stopped
    before the last, why, to be said of the first unanswered one."""
    log = tmp / "child.log"
    with log.open("wb") as errors:
        process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=errors, cwd=tmp, env=_environment())
    assert process.stdin is not None and process.stdout is not None
    try:
        try:
            process.stdin.write(pickle.dumps((modules, [(str(folder), mutation) for folder, mutation in packages])))
            process.stdin.close()
        except BrokenPipeError:
            pass  # it ended at once: said below
        lines = PipeLines(process.stdout.fileno())
        if _next_line(lines, FIRST_SECONDS) != READY:
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            raise GraderError(f"the process that imports each mistake and variant did not start"
                              f"{': ' + tail[-1] if tail else ''}")
        answers: list[str] = []
        for index in range(len(packages)):
            seconds = FIRST_SECONDS if index == 0 else EACH_SECONDS
            line = _next_line(lines, seconds)
            if line is None:
                return answers, f"importing it did not finish within {seconds:g} s"
            if not line:
                code = process.wait()
                how = f"signal {-code}" if code < 0 else f"exit code {code}"
                return answers, f"importing it ended the process ({how})"
            answers.append(json.loads(line))
        return answers, ""
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()


def _next_line(lines: PipeLines, seconds: float) -> bytes | None:
    """The child's next line; b"" if it ended first, None if none came within ``seconds``."""
    try:
        return lines.wait_line(time.monotonic() + seconds)
    except EOFError:
        return b""


def _environment() -> dict[str, str]:
    """This process's environment, with this grader first on the child's path (the one verify runs)."""
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PACKAGE_ROOT), path])),
                PYTHONDONTWRITEBYTECODE="1")


def _child() -> None:
    """Read ``(modules, [(folder, mutation), ...])`` from stdin; import each, answering one JSON line per package
    (its :func:`load_mutation` line, '' when it imports) on stdout, which what the packages print never reaches."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # print() in a mutated module goes to the log, not among the answers
    modules, packages = pickle.load(sys.stdin.buffer)
    answers.write(READY + b"\n")
    answers.flush()
    for index, (folder, mutation) in enumerate(packages):
        try:
            load_mutation(Path(folder), mutation, f"_verify_mutation_{index}", modules)
            answer = ""
        except AssignmentError as exc:
            answer = str(exc)
        answers.write(json.dumps(answer).encode() + b"\n")
        answers.flush()


if __name__ == "__main__":
    _child()
