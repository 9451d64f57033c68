"""The judge's diagnosis leaves out a known mistake that does not import, and keeps its line for the instructor."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.errors import AssignmentError
from autograder.judge import verdict
from autograder.judge.verdict import Judge
from autograder.probe.checks import task_checks
from autograder.spec.assignment import load_assignment
from autograder.spec.mutation import Edit, Mutation, apply_mutation, load_mutation
from autograder.spec.reference import load_package

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_a_mistake_that_does_not_import_is_left_out_once_with_the_line_verify_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two mistakes give the same outputs (row sums over dimension 0); the first does not import. The judge
    names the second, keeps the first's line (load_mutation's, which `grader verify` prints too) and tries to
    import it once, however many checks fail."""
    shutil.copytree(FIXTURES / "assignments" / "mini", tmp_path / "assignments" / "mini")
    shutil.copytree(FIXTURES / "reference_solutions" / "mini", tmp_path / "reference_solutions" / "mini")
    assignment = load_assignment("mini", root=tmp_path / "assignments")
    broken = Mutation("first_axis_helper", "row_sums", "broken's hint",
                      (Edit("ops.py", "import torch\n", "import torch\n\nAXIS = first_axis()\n"),
                       Edit("ops.py", "x.sum(dim=-1)", "x.sum(dim=AXIS)")))
    sound = Mutation("first_axis", "row_sums", "sound's hint", (Edit("ops.py", "x.sum(dim=-1)", "x.sum(dim=0)"),))
    with pytest.raises(AssignmentError) as caught:
        load_mutation(apply_mutation(assignment.reference, broken, tmp_path / "alone"), broken, "_alone",
                      assignment.modules)
    reference = load_package(assignment.reference, "_judge_imports_reference", assignment.modules)
    judge = Judge(assignment, reference, {}, [broken, sound], tmp_path / "judge")
    student = load_package(apply_mutation(assignment.reference, sound, tmp_path / "student"), "_judge_imports_student",
                           assignment.modules)
    tried: list[str] = []
    original = verdict.load_mutation

    def counting(folder: Path, mutation: Mutation, name: str, modules: tuple[str, ...]) -> object:
        tried.append(mutation.id)
        return original(folder, mutation, name, modules)

    monkeypatch.setattr(verdict, "load_mutation", counting)
    checks = task_checks(assignment.task("row_sums").checks, "row_sums", assignment.task_ids)
    assert len(checks) == 2
    for seed, check in enumerate(checks):
        assert judge.diagnose(check, seed, judge.run_reference_probe(check, seed, student)) == "sound's hint"
    assert judge.unimportable == {"first_axis_helper": str(caught.value)}
    assert "does not import: ops.py, line 5: NameError: name 'first_axis' is not defined" in str(caught.value)
    assert tried == ["first_axis_helper", "first_axis"]  # each imported (or not) once
