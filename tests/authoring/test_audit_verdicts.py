"""The audit's verdicts on a mistake, beyond caught or not (issue 43): one that lost points only because its module
could not be imported in the graded copy is not caught; an escaped one says how near each check it passed came to
failing it; a row's detail is never cut mid-word."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.authoring.audit import CAUGHT, ESCAPED, IMPORT_ONLY, AuditRow, judge, render_audit
from autograder.authoring.escapes import closeness_words, escaped_detail
from autograder.reports.results import ERROR, FAILED, PASSED, CheckResult, GradeReport, TaskResult
from autograder.spec.mutation import Edit, Mutation


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


MISTAKE = Mutation("top_k_one_too_many", "top_k", "hint", (Edit("ops.py", "x", "y"),))


def _report(tasks: list[TaskResult], notes: list[str]) -> GradeReport:
    return GradeReport("topk", "s", sum(t.score for t in tasks), sum(t.max_score for t in tasks), tasks, notes=notes)


def test_a_mistake_that_lost_points_only_to_an_import_error_is_not_caught():
    why = "ops.py could not be imported: ModuleNotFoundError: No module named 'topk._logmath' (topk/ops.py, line 5)"
    stopped = [CheckResult("top_k.values", "", 1, ERROR, why), CheckResult("top_k.unchanged", "", 1, ERROR, why)]
    row = judge(MISTAKE, "mistake", _report([TaskResult("top_k", "", 0, 6, ERROR, "", stopped),
                                             TaskResult("softmax", "", 0, 4, ERROR, "", stopped[:1])], [why]))
    assert row.verdict == IMPORT_ONLY and not row.ok
    assert row.detail == (f"it lost points only because {why}; a check must catch a mistake, not an import of the "
                          f"graded copy, which holds only [assignment] student_files: is a file it needs missing "
                          f"there?")
    assert row.detail in render_audit([row], 0.0)
    caught = [CheckResult("top_k.values", "", 1, FAILED, "top_k(...): values differ"), stopped[1]]
    row = judge(MISTAKE, "mistake", _report([TaskResult("top_k", "", 0, 6, FAILED, "", caught)], [why]))
    assert row.verdict == CAUGHT  # a check failed on its own: the import is not all that stopped it


def test_a_long_detail_is_cut_at_a_word_never_mid_word():
    words = " ".join(f"word{n}" for n in range(60))
    row = AuditRow(Mutation("variant_x", "", "", ()), "variant", "WRONGLY PENALISED", detail=words)
    shown = next(line for line in render_audit([row], 0.0).splitlines() if line.startswith("variant_x")).rstrip()
    assert shown.endswith(" …") and shown.split()[-2] in words.split()


def test_an_escaped_mistake_says_how_near_each_check_it_passed_came_to_failing(topk_course, tmp_path):
    """Run here as the judge runs a known mistake: the same outputs (the check's inputs never reach it), or a share
    of what the tolerance allows (the check saw it and let it through)."""
    from autograder.judge.verdict import Judge
    from autograder.probe.checks import task_checks
    from autograder.probe.context import derive_seed
    from autograder.spec.reference import load_package

    reference = load_package(topk_course.reference, "_reference_topk_escapes", topk_course.modules)
    checks = task_checks(topk_course.tasks[1].checks, "softmax", topk_course.task_ids)
    judge_here = Judge(topk_course, reference, {}, [], tmp_path / "judge")
    grader = SimpleNamespace(checks={"softmax": checks}, judge=judge_here)
    epsilon = Mutation("softmax_epsilon", "softmax", "", (Edit(
        "ops.py", "return exponentials / exponentials.sum(dim=-1, keepdim=True)",
        "return exponentials / (exponentials.sum(dim=-1, keepdim=True) + 3e-6)"),))
    passed = [CheckResult(c.name, "", 1, PASSED, seed=derive_seed(topk_course.seed, c.name)) for c in checks]
    target = TaskResult("softmax", "", 4, 4, PASSED, "", passed)
    words = closeness_words(grader, epsilon, target)
    assert re.fullmatch(r"its outputs differ from the reference's by (\d+%|under 1%) of what float32 allows",
                        words["softmax.weights"]), words
    assert escaped_detail(target, words).startswith(f"passed 2 checks: softmax.weights ({words['softmax.weights']})")
    assert escaped_detail(target, words).endswith("; give them inputs this mistake changes")
    unreached = Mutation("softmax_never_reached", "softmax", "", (Edit(
        "ops.py", "exponentials = shifted.exp()", "exponentials = shifted.exp() if shifted.numel() != 7 else shifted"),))
    assert set(closeness_words(grader, unreached, target).values()) == {"the same outputs as the reference's"}


@pytest.mark.slow
def test_the_audit_grades_a_mistake_stopped_by_the_import_of_a_file_students_lack(topk_course, tmp_path):
    """Graded, the copy holds only student_files: every mistake of ops.py lost points because ops.py did not import,
    which the audit counted as caught (alone in its module) or collateral."""
    from autograder.authoring.audit import _audit_one
    from autograder.grading.grader import Grader
    from autograder.spec.mutation import load_mutations

    (topk_course.reference / "_logmath.py").write_text("def row_max(x):\n    return x.amax(dim=-1, keepdim=True)\n")
    _edit(topk_course.reference / "ops.py", "import torch\n", "import torch\n\nfrom ._logmath import row_max\n")
    mistake = next(m for m in load_mutations(topk_course, "mistakes") if m.id == "top_k_one_too_many")
    with Grader(topk_course) as grader:
        row = _audit_one(grader, topk_course, mistake, "mistake", tmp_path)
    assert row.verdict == IMPORT_ONLY and "No module named 'topk._logmath'" in row.detail, row.detail
    assert ESCAPED not in row.detail
