"""The test of the hidden tests: every known mistake is caught in its own task, every variant keeps full marks."""

from __future__ import annotations

import re

import pytest

from autograder.authoring.audit import (
    CAUGHT,
    FULL,
    AuditRow,
    _audit_one,
    audit_figures,
    judge,
    render_audit,
    run_audit,
    tasks_to_grade,
)
from autograder.authoring.minimums import missed_minimums
from autograder.authoring.notebook_variant import NOTEBOOK_VARIANT
from autograder.reports.results import CheckResult, GradeReport, TaskResult
from autograder.spec.assignment import available_assignments, load_assignment
from autograder.spec.mutation import Edit, Mutation, load_mutations


def report(**scores: tuple[float, float]) -> GradeReport:
    tasks = [TaskResult(task, task, got, full, "passed" if got == full else "failed", "") for task, (got, full) in
             scores.items()]
    return GradeReport("a", "s", sum(t.score for t in tasks), sum(t.max_score for t in tasks), tasks)


MISTAKE = Mutation("m", "attention", "hint", (Edit("attention.py", "x", "y"),))
VARIANT = Mutation("v", "", "", (Edit("attention.py", "x", "y"),))


def test_a_mistake_is_caught_only_when_its_own_task_loses_points():
    assert judge(MISTAKE, "mistake", report(attention=(3, 10), causal_mask=(4, 4))).verdict == CAUGHT
    assert judge(MISTAKE, "mistake", report(attention=(10, 10), causal_mask=(4, 4))).verdict == "ESCAPED"
    assert judge(MISTAKE, "mistake", report(attention=(3, 10), causal_mask=(0, 4))).verdict == "COLLATERAL"


class _Grader:
    """Stands in for a Grader (no zygote): counts the graders started and closed."""

    started: list[_Grader] = []

    def __init__(self, assignment) -> None:
        self.closed = False
        _Grader.started.append(self)

    def __enter__(self) -> _Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed = True


def test_the_audit_pool_keeps_the_cases_order_and_closes_each_threads_grader(monkeypatch, tmp_path):
    from autograder.authoring import audit

    monkeypatch.setattr(audit, "Grader", _Grader)
    _Grader.started = []
    seen: list[int] = []
    rows = audit._in_parallel(None, list(range(12)), 3, lambda grader, tmp, item: (item, grader, tmp),
                              progress=lambda row: seen.append(row[0]))
    assert [row[0] for row in rows] == list(range(12)) and sorted(seen) == list(range(12))
    assert 1 <= len(_Grader.started) <= 3 and all(grader.closed for grader in _Grader.started)
    assert {row[1] for row in rows} <= set(_Grader.started)
    assert all(not row[2].exists() for row in rows)  # each thread's scratch folder is removed

    def broken(grader, tmp, item):
        if item == 1:
            raise ValueError("case 1 is broken")
        return item

    with pytest.raises(ValueError, match="case 1 is broken"):
        audit._in_parallel(None, list(range(6)), 2, broken)
    assert all(grader.closed for grader in _Grader.started)


def test_an_escaped_mistake_names_the_checks_that_ran_and_passed():
    graded = report(attention=(10, 10))
    graded.tasks[0].checks = [CheckResult("attention.values", "", 2, "passed"),
                              CheckResult("attention.rows", "", 1, "passed")]
    row = judge(MISTAKE, "mistake", graded)
    assert row.verdict == "ESCAPED" and row.detail == "passed 2 checks: attention.values, attention.rows"
    assert "attention.values" in render_audit([row], 0.0)


def test_an_escaped_mistake_that_costs_another_task_points_says_which_one():
    """A mistake filed under the wrong task: it escapes its own, and the row says where the points went."""
    graded = report(attention=(10, 10), causal_mask=(0, 4))
    graded.tasks[0].checks = [CheckResult("attention.values", "", 2, "passed")]
    row = judge(MISTAKE, "mistake", graded)
    assert row.verdict == "ESCAPED"
    assert row.detail == ("lost points in causal_mask instead (is its task right?); passed 1 check: "
                          "attention.values")


def test_a_variant_must_keep_every_point():
    assert judge(VARIANT, "variant", report(attention=(10, 10))).verdict == FULL
    assert judge(VARIANT, "variant", report(attention=(9.5, 10))).verdict == "WRONGLY PENALISED"


def test_the_audit_holds_its_own_counts_to_the_manifest_minimums():
    from dataclasses import replace

    assignment = load_assignment("assignment3")
    assignment = replace(assignment, audit=replace(assignment.audit, min_mistakes=2, min_variants=2,
                                                   min_right_hints=1))
    rows = [AuditRow(MISTAKE, "mistake", CAUGHT, diagnosed=False), AuditRow(MISTAKE, "mistake", "ESCAPED"),
            AuditRow(VARIANT, "variant", FULL), AuditRow(NOTEBOOK_VARIANT, "variant", FULL)]
    assert missed_minimums(assignment, audit_figures(rows)) == [
        "audit: 1 mistakes caught only in their task, [audit] min_mistakes asks for at least 2; add mistakes the "
        "checks catch, or lower [audit] min_mistakes in assignment.toml",
        # the notebook variant every assignment gets is not one of the assignment's own
        "audit: 1 variants with full marks, [audit] min_variants asks for at least 2; add variants, or lower "
        "[audit] min_variants in assignment.toml",
        "audit: 0 mistakes with the right diagnosis, [audit] min_right_hints asks for at least 1; make the rows "
        "without [right hint] diagnosable (a probe whose outputs tell them apart), or lower [audit] "
        "min_right_hints in assignment.toml"]
    rows[0].diagnosed = True
    rows[1].verdict = CAUGHT
    rows.append(AuditRow(VARIANT, "variant", FULL))
    assert missed_minimums(assignment, audit_figures(rows)) == []


def test_tasks_are_graded_when_their_files_are_or_import_an_edited_file():
    assignment = load_assignment("assignment3")
    chosen = tasks_to_grade(assignment, MISTAKE)
    assert "tiny_gpt_training" not in chosen and "attention" in chosen and "kv_cache_bytes" in chosen
    assert "tiny_gpt" in chosen and "sinusoidal_positions" not in chosen  # tiny_gpt.py imports attention.py
    in_gpt = Mutation("g", "tiny_gpt_training", "", (Edit("tiny_gpt.py", "x", "y"),))
    assert "tiny_gpt_training" in tasks_to_grade(assignment, in_gpt)


@pytest.mark.slow
@pytest.mark.parametrize("name", available_assignments())
def test_audit_catches_every_mistake_and_keeps_every_variant(name):
    assignment = load_assignment(name)
    mistakes, variants = load_mutations(assignment, "mistakes"), load_mutations(assignment, "variants")
    assert len(mistakes) >= assignment.audit.min_mistakes and len(variants) >= assignment.audit.min_variants
    rows = run_audit(assignment, jobs=2)
    table = render_audit(rows, 0.0)
    print(table)
    assert [row for row in rows if not row.ok] == [], table
    diagnosed = sum(row.diagnosed for row in rows if row.kind == "mistake")
    assert diagnosed >= len(mistakes) // 2, table


def test_a_stale_mutation_is_shown_in_full_and_counted_in_the_summary(assignment3, tmp_path):
    stale = Mutation("attention_scaled_by_a_constant_that_is_long", "attention", "hint",
                     (Edit("attention.py", "text the reference does not have", "y"),))
    row = _audit_one(None, assignment3, stale, "mistake", tmp_path)  # no grader: a stale edit grades nothing
    assert row.verdict == "STALE" and not row.ok
    assert row.detail == ("mutation 'attention_scaled_by_a_constant_that_is_long' is stale: its old text occurs 0 "
                          "times in attention.py of the reference (expected exactly once); copy it again from the "
                          "reference")
    table = render_audit([row], 0.0)
    assert row.detail in table
    assert ("stale mutations, not graded (an edit no longer applies to the reference): 1: "
            "attention_scaled_by_a_constant_that_is_long\n") in table


def test_a_mutation_that_does_not_import_is_said_so_with_the_line_verify_prints(mini_course, unimportable_mutations):
    """Graded, a mistake whose package raises when imported loses points in every task of its module: the audit
    called it COLLATERAL ("also lost points in scale") or, alone in its module, caught. It is tried by the one test
    of whether a mutation imports (spec/mutation.py:load_mutation), not graded, and said as `grader verify` says
    it: its file and line, the exception; a variant so made too."""
    import os
    import subprocess
    import sys

    manifest = mini_course / "assignment.toml"
    manifest.write_text(manifest.read_text() + "\n[audit]\nmin_mistakes = 1\nmin_variants = 0\nmin_right_hints = 1\n")
    said = unimportable_mutations
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(mini_course.parent)}

    def grader(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                              timeout=600, env=env)

    verified = grader("verify", "mini")
    for text in said.values():
        assert f" {text}\n" in verified.stdout, verified.stdout  # what verify prints, the audit prints
    audited = grader("audit", "mini", "--families", "mutations")
    assert audited.returncode == 1 and "Traceback" not in audited.stderr, audited.stderr
    rows = {line.split()[0]: line for line in audited.stdout.splitlines() if line.split()[:1]}
    assert re.search(r"\bcaught\b", rows["row_sums_over_columns"]), audited.stdout  # the sound one still graded
    for name, text in said.items():
        assert re.search(rf"\bDOES NOT IMPORT +{re.escape(text)}$", rows[name]), audited.stdout
    assert "COLLATERAL" not in audited.stdout and "lost points" not in audited.stdout, audited.stdout
    assert ("mutations that do not import, not graded: 2: row_sums_first_axis_helper, scale_with_numpy"
            in audited.stdout), audited.stdout
    assert audited.stderr.splitlines()[-1] == (
        "audit failed: a mistake escaped or cost another task points, a variant lost points, a mutation went stale "
        "or does not import, or a blind submission earned points"), audited.stderr
