"""``grader verify``: the real assignment passes; each failure mode is detected and listed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.authoring.verify import (
    Finding,
    Verification,
    check_quiz_key,
    check_reference_report,
    check_template_current,
    check_template_report,
    render_verification,
    verify_assignment,
)
from autograder.cli import main
from autograder.reports.results import (
    ERROR,
    FAILED,
    NOT_IMPLEMENTED,
    PASSED,
    CheckResult,
    GradeReport,
    TaskResult,
)
from autograder.spec.assignment import Assignment, available_assignments, load_assignment

NBGRADER_MISSING = "nbgrader is not installed (pip install -e '.[instructor]'); CI installs it, so this runs there"


# -- the real thing ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", available_assignments())
def test_verify_passes_on_every_assignment(name: str) -> None:
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
    verification = verify_assignment(load_assignment(name))
    assert verification.ok, render_verification(verification)
    assert [f.name for f in verification.findings] == ["authoring", "quiz key", "student template",
                                                       "reference scores full marks", "template scores 0",
                                                       "public tests pass on the reference",
                                                       "reference figures show no ✗"]


# -- the quiz key --------------------------------------------------------------------------------------


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_the_key_of_assignment3_is_sound(assignment3: Assignment) -> None:
    finding = check_quiz_key(assignment3)
    assert finding.ok, finding.details


def test_a_key_missing_a_question_is_reported(assignment_copy: Assignment) -> None:
    assert assignment_copy.quiz is not None
    key = assignment_copy.quiz.key_file
    text = key.read_text()
    start = text.index("[q7]")
    key.write_text(text[:start] + text[text.index("[q8]"):])
    finding = check_quiz_key(assignment_copy)
    assert not finding.ok
    assert "q7 has no answer in the key" in finding.details


def test_a_key_answer_that_is_not_an_option_is_reported(assignment_copy: Assignment) -> None:
    assert assignment_copy.quiz is not None
    _edit(assignment_copy.quiz.key_file, '[q3]\nanswer = "d"', '[q3]\nanswer = "e"')
    finding = check_quiz_key(assignment_copy)
    assert not finding.ok
    assert any(d.startswith("q3: key answer 'e' is not an option") for d in finding.details)


def test_a_key_entry_for_no_question_is_reported(assignment_copy: Assignment) -> None:
    assert assignment_copy.quiz is not None
    key = assignment_copy.quiz.key_file
    key.write_text(key.read_text() + '\n[q17]\nanswer = "a"\n')
    assert "q17 is in the key but is not a question" in check_quiz_key(assignment_copy).details


def test_reference_answers_disagreeing_with_the_key_are_reported(assignment_copy: Assignment) -> None:
    _edit(assignment_copy.reference / "answers.toml", 'q5 = "b"', 'q5 = "c"')
    finding = check_quiz_key(assignment_copy)
    assert not finding.ok
    assert "reference answers: q5 is 'c', the key says 'b'" in finding.details


def test_a_missing_key_is_reported_not_raised(assignment_copy: Assignment) -> None:
    assert assignment_copy.quiz is not None
    assignment_copy.quiz.key_file.unlink()
    finding = check_quiz_key(assignment_copy)
    # beside the reference (the instructor's copy) the manifest names a file that does not exist
    manifest = assignment_copy.root / "assignment.toml"
    line = manifest.read_text().splitlines().index('key = "hidden/quiz_key.toml"') + 1
    assert not finding.ok and finding.details == [
        f"{manifest}:{line}: [quiz] key names 'hidden/quiz_key.toml', which does not exist"]


def test_a_student_copy_lacks_the_key_by_design(assignment_copy: Assignment) -> None:
    assert assignment_copy.quiz is not None
    assignment_copy.quiz.key_file.unlink()
    shutil.rmtree(assignment_copy.reference)  # a student release ships no reference and no hidden file
    finding = check_quiz_key(assignment_copy)
    assert not finding.ok and finding.details == [
        "the quiz key is not part of this installation (quiz_key.toml missing)"]


# -- the committed template ----------------------------------------------------------------------------


def test_a_drifted_template_is_reported(assignment_copy: Assignment) -> None:
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
    assert check_template_current(assignment_copy).ok
    _edit(assignment_copy.template / "kv_cache.py", "raise NotImplementedError()", "return tokens")
    (assignment_copy.template / "helpers.py").write_text("x = 1\n")
    (assignment_copy.template / "positions.py").unlink()
    finding = check_template_current(assignment_copy)
    assert not finding.ok
    joined = "\n".join(finding.details)
    assert "kv_cache.py differs from a fresh generation" in joined
    assert "helpers.py is not part of the template: delete it (grader template never deletes a file)" in joined
    assert "positions.py is missing" in joined
    assert "grader template assignment3" in joined


def test_a_reference_edited_outside_its_solutions_drifts_the_template(assignment_copy: Assignment) -> None:
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
    _edit(assignment_copy.reference / "positions.py", "Fixed sinusoidal position vectors.", "Positions.")
    finding = check_template_current(assignment_copy)
    assert not finding.ok and "positions.py differs" in finding.details[0]


# -- the gradings --------------------------------------------------------------------------------------


def _task(task_id: str, score: float, max_score: float, status: str) -> TaskResult:
    return TaskResult(task_id, task_id, score, max_score, status, f"{status} feedback")


def _report(tasks: list[TaskResult], notes: list[str] | None = None) -> GradeReport:
    return GradeReport("assignment3", "x", sum(t.score for t in tasks), sum(t.max_score for t in tasks), tasks,
                       notes=notes or [])


def test_a_reference_below_full_marks_fails_and_names_the_task() -> None:
    finding = check_reference_report(_report([_task("causal_mask", 4, 4, PASSED), _task("attention", 7.5, 10, FAILED)]))
    assert not finding.ok
    assert finding.details[0] == "scored 11.5 / 14 in 0 s"
    assert finding.details[1] == "attention: 7.5 / 10 (failed): failed feedback"
    assert check_reference_report(_report([_task("causal_mask", 4, 4, PASSED)])).ok


def test_a_reference_with_notes_fails() -> None:
    finding = check_reference_report(_report([_task("causal_mask", 4, 4, PASSED)], ["missing file: answers.toml"]))
    assert not finding.ok and "note: missing file: answers.toml" in finding.details


def test_a_template_task_that_is_not_not_implemented_fails(assignment3: Assignment) -> None:
    tasks = [_task(t.id, 0, t.points, NOT_IMPLEMENTED) for t in assignment3.tasks] + [_task("quiz", 0, 16, FAILED)]
    assert check_template_report(_report(tasks), assignment3).ok
    tasks[1] = _task(tasks[1].id, 0, tasks[1].max_score, ERROR)
    finding = check_template_report(_report(tasks, ["attention.py could not be imported: SyntaxError"]),
                                    assignment3)
    assert not finding.ok
    assert f"{tasks[1].id}: status error, expected not_implemented (error feedback)" in finding.details
    assert "note: attention.py could not be imported: SyntaxError" in finding.details


def test_a_template_that_scores_fails(assignment3: Assignment) -> None:
    tasks = [_task(t.id, 0, t.points, NOT_IMPLEMENTED) for t in assignment3.tasks] + [_task("quiz", 1, 16, FAILED)]
    finding = check_template_report(_report(tasks), assignment3)
    assert not finding.ok and "quiz: the untouched template earns 1 / 16; the checks that paid: none passed; the blank " \
        "answers file must earn nothing" in finding.details


def test_a_template_that_scores_names_the_checks_that_paid_not_the_first_problem(assignment3: Assignment) -> None:
    tasks = [_task(t.id, 0, t.points, NOT_IMPLEMENTED) for t in assignment3.tasks] + [_task("quiz", 0, 16, FAILED)]
    attention = tasks[1]
    attention.checks = [CheckResult("attention.values", "values", 2, FAILED, "NotImplementedError"),
                        CheckResult("attention.shape", "shape", 1, PASSED),
                        CheckResult("attention.dtype", "dtype", 1, PASSED)]
    attention.status, attention.score = FAILED, 5.0
    finding = check_template_report(_report(tasks), assignment3)
    assert not finding.ok and finding.details[1:] == [
        f"attention: the untouched template earns 5 / {attention.max_score:g}; the checks that paid: attention.shape "
        f"({attention.max_score / 4:g} points), attention.dtype ({attention.max_score / 4:g} points); a check a stub "
        f"passes pays for code the students were given: gate it on the function's values (gated) or move what it "
        f"tests into a solution region"]


# -- the command ---------------------------------------------------------------------------------------


def test_grader_verify_exits_non_zero_with_the_list(monkeypatch: pytest.MonkeyPatch) -> None:
    import autograder.authoring.verify as verify_module

    failing = Verification("assignment3", [Finding("quiz key", True, ["16 questions"]),
                                           Finding("template scores 0", False, ["attention: status error"])])
    monkeypatch.setattr(verify_module, "verify_assignment", lambda assignment: failing)
    result = CliRunner().invoke(main, ["verify", "assignment3"])
    assert result.exit_code == 1
    assert "  FAIL  template scores 0\n          attention: status error\n" in result.output
    assert "verify failed: 1 of 2 checks did not hold" in result.output


def test_grader_release_stops_when_verify_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import autograder.authoring.verify as verify_module

    failing = Verification("assignment3", [Finding("reference scores full marks", False, ["scored 90 / 100"])])
    monkeypatch.setattr(verify_module, "verify_assignment", lambda assignment: failing)
    result = CliRunner().invoke(main, ["release", "assignment3", "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "release not built" in result.output
    assert not (tmp_path / "out").exists()


def test_grader_verify_reports_missing_hidden_checks_as_a_problem(assignment_copy: Assignment) -> None:
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
    shutil.rmtree(assignment_copy.root / "hidden" / "checks")
    verification = verify_assignment(assignment_copy)
    assert not verification.ok
    manifest = assignment_copy.root / "assignment.toml"
    assert f"authoring: {manifest}:19: [[tasks]] checks names 'hidden/checks/causal_mask.py', which does not " \
           f"exist" in verification.problems
    assert not any("not part of this installation" in p for p in verification.problems)


def test_grading_beside_the_reference_names_the_manifest_key_of_a_missing_checks_file(
        assignment_copy: Assignment) -> None:
    manifest = assignment_copy.root / "assignment.toml"
    manifest.write_text(manifest.read_text().replace('"hidden/checks/attention.py"', '"hidden/checks/atention.py"'))
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "assignment3",
                             str(assignment_copy.reference)], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, GRADER_ASSIGNMENTS=str(assignment_copy.root.parent)))
    assert result.returncode != 0
    assert result.stderr.splitlines() == [f"error: {manifest}:27: [[tasks]] checks names "
                                          f"'hidden/checks/atention.py', which does not exist"]


# -- known mistakes and variants -----------------------------------------------------------------------

MISTAKES, VARIANTS = Path("hidden/mistakes/attention_family.toml"), Path("hidden/variants/attention_family.toml")
FIRST_OLD = 'old = "return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)"'
# each slip an instructor made working from the docs: (file, old, new, line, what the one line says)
MUTATION_SLIPS = {
    "stale old": (MISTAKES, FIRST_OLD, FIRST_OLD.replace("diagonal=1", "1"), 19,
                  "mutation 'causal_mask_float' is stale: its old text occurs 0 times in attention.py of the "
                  "reference (expected exactly once); copy it again from the reference"),
    "misspelt file": (MISTAKES, 'file = "attention.py"', 'file = "atention.py"', 18,
                      "mutation 'causal_mask_float': file 'atention.py' is not in the reference"),
    "misspelt table": (MISTAKES, "[[mutation]]", "[[mutations]]", 13,
                       "unknown table [[mutations]] (did you mean 'mutation'?)"),
    "an id of both folders": (VARIANTS, 'id = "variant_causal_mask_arange"', 'id = "causal_mask_float"', 5,
                              "mutation id 'causal_mask_float' is already used at "),
    "a variant with a task": (VARIANTS, 'id = "variant_causal_mask_arange"\n',
                              'id = "variant_causal_mask_arange"\ntask = "causal_mask"\n', 6,
                              "variant 'variant_causal_mask_arange' has task = 'causal_mask', but a variant must "
                              "keep full marks in every task"),
    "misspelt task": (MISTAKES, 'task = "causal_mask"', 'task = "causal_msk"', 15,
                      "mistake 'causal_mask_float' names unknown task 'causal_msk' (did you mean 'causal_mask'?)"),
}


@pytest.mark.parametrize("slip", sorted(MUTATION_SLIPS))
def test_verify_names_each_mutation_slip_at_its_line_and_grades_nothing(assignment_copy: Assignment,
                                                                        slip: str) -> None:
    relative, old, new, line, says = MUTATION_SLIPS[slip]
    path = assignment_copy.root / relative
    _edit(path, old, new)
    verification = verify_assignment(load_assignment("assignment3", root=assignment_copy.root.parent), grade=False)
    [problem] = [p for p in verification.problems if p.startswith("authoring: ")]
    assert problem.startswith(f"authoring: {path}:{line}: ") and says in problem, problem
    result = CliRunner().invoke(main, ["verify", "assignment3"],
                                env={"GRADER_ASSIGNMENTS": str(assignment_copy.root.parent)})
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert says in result.output and "not graded: fix the authoring problems first" in result.output


def test_verify_lists_every_problem_of_the_manifest_where_loading_names_the_first(mini_course: Path,
                                                                                  tmp_path: Path) -> None:
    """A manifest with two slips: loading it (any command) names the first and how many more; `grader verify`
    lists each, with its line, instead of stopping at the first."""
    manifest = tmp_path / "assignments" / "mini" / "assignment.toml"
    text = manifest.read_text()
    text = text.replace('title = "Mini: two tensor functions"', 'title = "Mini: two tensor functions"\ntitel = "typo"', 1)
    text = text.replace("points = 2", 'points = "two"', 1)
    manifest.write_text(text)
    lines = manifest.read_text().splitlines()
    typo, points = lines.index('titel = "typo"') + 1, lines.index('points = "two"') + 1
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(tmp_path / "assignments")}

    def grader(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                              timeout=300, env=env)

    verified = grader("verify", "mini")
    assert verified.returncode == 1, verified.stderr
    said = verified.stdout.splitlines()
    assert len(said) == 3 and said[0].startswith(f"{manifest}:{typo}: unknown key 'titel'"), said
    assert said[1].startswith(f"{manifest}:{points}: ") and "points" in said[1], said
    assert said[2] == "mini: 2 problems in the manifest; fix them and run `grader verify mini` again"
    loaded = grader("template", "mini")
    assert loaded.returncode == 2 and len(loaded.stderr.splitlines()) == 1, loaded.stderr
    assert loaded.stderr.startswith(f"error: {manifest}:{typo}: unknown key 'titel'")
    assert loaded.stderr.rstrip().endswith("(and 1 more: `grader verify mini` lists each)")


def test_verify_names_a_mutation_that_is_python_but_does_not_import(mini_course: Path,
                                                                      unimportable_mutations: dict[str, str],
                                                                      tmp_path: Path) -> None:
    """A mistake whose edited file parses but raises when imported is caught by the import, never by a check: its
    hint could never be shown, and a variant so made cannot keep its marks. `grader verify` imports each mutation
    (in a child process) and names it in one line, like a syntax error; `verify_assignment(grade=False)` stays
    text only."""
    root = tmp_path / "assignments" / "mini"
    (root / "public_tests").mkdir()
    manifest = root / "assignment.toml"
    manifest.write_text(manifest.read_text() + "\n[audit]\nmin_mistakes = 2\nmin_variants = 1\n")
    expected = [f"authoring: {line}" for line in unimportable_mutations.values()]
    assignment = load_assignment("mini", root=tmp_path / "assignments")
    authoring = [p for p in verify_assignment(assignment).problems if p.startswith("authoring: ")]
    assert authoring == expected
    assert [p for p in verify_assignment(assignment, grade=False).problems if p.startswith("authoring: ")] == []
    result = CliRunner().invoke(main, ["verify", "mini"], env={"GRADER_ASSIGNMENTS": str(tmp_path / "assignments")})
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert [line.strip() for line in result.output.splitlines()][2:4] == [e.removeprefix("authoring: ")
                                                                          for e in expected]
    assert "not graded: fix the authoring problems first" in result.output
