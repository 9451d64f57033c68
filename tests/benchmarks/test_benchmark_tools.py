"""The benchmarks' own logic: a figure under load is never a target met, the warm benchmark's edit keeps the
function's behaviour, compare.py and bench_batch.py refuse bad input in one line, bench_batch's scaling mode grades
each class size, and the floor runs each task's probes with the reference standing in for what the task uses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_warm import function_source, toggled  # noqa: E402
from figures import figure, verdict  # noqa: E402


def test_a_figure_measured_under_load_is_never_a_target_met() -> None:
    assert verdict(0.2, 0.3, load=1.0) == "target met"
    assert verdict(0.4, 0.3, load=1.0) == "target MISSED"
    assert verdict(0.2, 0.3, load=2.5).startswith("not comparable with the target: measured under load 2.5")
    assert verdict(3.0, 2.0, load=0.5, higher_is_better=True) == "target met"
    assert figure("re-check", 0.25, " s", 0.3, 7.7) == (
        "re-check: 0.25 s (target <= 0.3 s), load 7.7; not comparable with the target: measured under load 7.7 > 2")


def test_the_warm_benchmarks_save_changes_the_syntax_tree_not_the_behaviour(assignment3, tmp_path: Path) -> None:
    _, source = function_source(assignment3, assignment3.reference, "causal_mask")
    once = toggled(source)
    assert once != source and toggled(once) == source
    namespace: dict = {"torch": torch}
    exec(once, namespace)  # noqa: S102 - the reference's own function, edited
    assert torch.equal(namespace["causal_mask"](5), torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1))


def test_compare_refuses_an_unknown_command_in_one_line() -> None:
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "compare.py"), "HEAD", "HEAD", "--only",
                             "grade,nope"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: no command 'grade' to compare; commands: grade-solved, grade-stub, grade-all, check, show"]


def test_bench_batch_refuses_bad_class_sizes_in_one_line() -> None:
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_batch.py"), "--scaling", "10"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --scaling takes at least two class sizes of at least 1, such as 10,200, not '10'"]


@pytest.mark.slow
def test_bench_batch_scaling_grades_each_class_size_and_prints_the_ratios(tmp_path: Path) -> None:
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(REPO / "tests" / "fixtures" / "assignments"),
           "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_batch.py"), "--assignment", "mini",
                             "--scaling", "1,2", "--jobs", "1", "--keep", str(tmp_path)],
                            capture_output=True, text=True, timeout=300, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert "class of 1: grade-all --jobs 1" in result.stdout and "(1 graded, 0 errors)" in result.stdout
    assert "class of 2: grade-all --jobs 1" in result.stdout and "(2 graded, 0 errors)" in result.stdout
    for name in ("wall", "grading"):
        assert f"per-submission {name} seconds, class of 2 / class of 1: " in result.stdout


@pytest.mark.slow
def test_the_floor_runs_a_task_with_the_reference_standing_in_for_what_it_uses(assignment3, tmp_path: Path) -> None:
    from bench_single import Floor

    from autograder.spec.mutation import apply_mutation, load_mutations

    wrong_mask = next(m for m in load_mutations(assignment3, "mistakes") if m.id == "causal_mask_int")
    package = apply_mutation(assignment3.reference, wrong_mask, tmp_path / assignment3.package)
    floor = Floor(assignment3.name)
    mask, attention = floor.run(package, only={"causal_mask"}), floor.run(package, only={"attention"})
    assert mask["checks"] > 0 and mask["passed"] < mask["checks"]  # the mistake is in causal_mask itself
    assert attention["checks"] > 0 and attention["passed"] == attention["checks"]  # graded with the reference's mask
