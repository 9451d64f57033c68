"""``grader verify`` imports every mistake and variant in a child process: each that does not import is one line."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from autograder.authoring import mutation_imports
from autograder.authoring.mutation_imports import import_problems
from autograder.errors import GraderError
from autograder.spec.assignment import Assignment, load_assignment
from autograder.spec.mutation import Edit, Mutation, combined_problems

RUNNABLE = "a mistake or variant is code a student could run: fix its new text"


@pytest.fixture
def mini(mini_course: Path) -> Assignment:
    return load_assignment("mini", root=mini_course.parent)


def _at_top(name: str, line: str) -> Mutation:
    """A mutation that puts ``line`` at the top level of ops.py, before row_sums."""
    return Mutation(name, "row_sums", "hint", (Edit("ops.py", "def row_sums", f"{line}\n\n\ndef row_sums"),))


def _edited(assignment: Assignment, mutations: list[Mutation]) -> list[tuple[Mutation, dict[str, str]]]:
    problems, edited = combined_problems(assignment.reference, mutations)
    assert problems == [] and len(edited) == len(mutations)  # all valid Python: only importing them tells
    return edited


def test_a_mutation_that_hangs_or_ends_the_process_is_named_and_the_others_are_still_imported(
        mini: Assignment, monkeypatch: pytest.MonkeyPatch) -> None:
    """One child imports them in order; one that hangs or ends it is named, a new child imports the rest; what a
    mutated module prints (even an answer's shape) never passes for an answer."""
    monkeypatch.setattr(mutation_imports, "EACH_SECONDS", 3.0)
    mutations = [_at_top("prints", "print('ready')\nprint('\"\"')\nprint('\"fake problem\"')"),
                 _at_top("hangs", "while True:\n    pass"),
                 _at_top("raises", "raise RuntimeError('at import')"),
                 _at_top("exits", "import os\nos._exit(3)"),
                 _at_top("sound", "AXIS = -1")]
    problems = import_problems(mini.reference, mini.modules, _edited(mini, mutations))
    assert problems == [
        f"mutation 'hangs' does not import: importing it did not finish within 3 s; {RUNNABLE}",
        f"mutation 'raises' does not import: ops.py, line 13: RuntimeError: at import; {RUNNABLE}",
        f"mutation 'exits' does not import: importing it ended the process (exit code 3); {RUNNABLE}",
    ]


def test_a_child_that_cannot_start_is_one_line(mini: Assignment, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", shutil.which("false") or "/bin/false")
    with pytest.raises(GraderError, match="^the process that imports each mistake and variant did not start"):
        import_problems(mini.reference, mini.modules, _edited(mini, [_at_top("sound", "AXIS = -1")]))
