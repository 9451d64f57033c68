"""Modes and state: code right in train mode under torch.no_grad() (where most value checks call it) but wrong in
eval mode, under autograd, or when called again, loses the points of its own task, and only those.

The submissions are written the way public GPT code is written (``field_code.py``): nanoGPT's last-position logits
at inference, Hugging Face's past keys and values kept on the module, a ``@torch.no_grad()`` helper reused in
forward, a block that is always causal at inference, a decoder that keeps its cache on the layer in eval mode.
The fast tests run each task's checks in this process; the slow ones grade in the sandbox, with the reference
standing in for what other tasks use, as students are graded.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from field_code import SUBMISSIONS, FieldSubmission, write_field_package  # beside these tests
from in_process import InProcess

from autograder.grading.grader import Grader
from autograder.spec.assignment import Assignment, load_assignment
from autograder.spec.mutation import load_mutations
from autograder.spec.reference import load_package

ASSIGNMENTS = {name: load_assignment(name) for name in ("assignment2", "assignment3")}
IN_PROCESS = {name: InProcess(assignment, f"modes_{name}") for name, assignment in ASSIGNMENTS.items()}
MODE_MISTAKES = ("gpt_last_position_only_in_eval_mode", "gpt_embed_without_gradient",
                 "kv_cache_kept_on_the_layer_in_eval_mode")  # positions_kv_gpt.toml's (no in-process test runs them)
_COUNTER = itertools.count()


def _package(submission: FieldSubmission, tmp_path: Path):
    in_process = IN_PROCESS[submission.assignment]
    folder = write_field_package(in_process.assignment, submission, tmp_path / in_process.assignment.package)
    return load_package(folder, f"_test_field_{submission.id}_{next(_COUNTER)}", in_process.assignment.modules)


@pytest.mark.parametrize("submission", SUBMISSIONS, ids=lambda s: s.id)
def test_field_code_wrong_in_one_mode_fails_a_check_of_its_task(submission: FieldSubmission, tmp_path: Path) -> None:
    in_process = IN_PROCESS[submission.assignment]
    package = _package(submission, tmp_path)
    failing = [c.name for c in in_process.checks(submission.task) if not in_process.passes(c, package)]
    assert failing, f"{submission.id} keeps full marks in {submission.task}"


@pytest.mark.parametrize("mistake_id", MODE_MISTAKES)
def test_mode_mistakes_fail_a_check_of_their_task(mistake_id: str, tmp_path: Path) -> None:
    in_process = IN_PROCESS["assignment3"]
    mistake = next(m for m in load_mutations(in_process.assignment, "mistakes") if m.id == mistake_id)
    package = in_process.package(mistake, tmp_path)
    assert any(not in_process.passes(c, package) for c in in_process.checks(mistake.task)), mistake_id


def _affected(assignment: Assignment, submission: FieldSubmission) -> set[str]:
    """The tasks of the submission's module and the tasks that use anything of that module."""
    module = submission.module
    return {t.id for t in assignment.tasks
            if module in t.modules or any(use.split(".")[0] == module for use in t.uses)}


@pytest.fixture(scope="module")
def graders():
    opened: dict[str, Grader] = {}
    yield lambda name: opened.setdefault(name, Grader(ASSIGNMENTS[name]))
    for grader in opened.values():
        grader.close()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")  # a known mistake tried in diagnosis (x.T on a batch)
@pytest.mark.parametrize("submission", SUBMISSIONS, ids=lambda s: s.id)
def test_field_code_loses_the_points_of_its_task_only(submission: FieldSubmission, graders, tmp_path: Path) -> None:
    assignment = ASSIGNMENTS[submission.assignment]
    folder = write_field_package(assignment, submission, tmp_path / assignment.package)
    only = _affected(assignment, submission)
    report = graders(submission.assignment).grade(folder, only=only)
    assert {t.id for t in report.tasks} == only
    lost = {t.id: t.feedback for t in report.tasks if t.score < t.max_score}
    assert set(lost) == {submission.task}, lost
