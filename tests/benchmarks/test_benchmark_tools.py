"""The benchmarks' own logic: a figure under load is never a target met, the warm benchmark's edit keeps the
function's behaviour, and compare.py refuses bad input in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
