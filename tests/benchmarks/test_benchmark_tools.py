"""The benchmarks' own logic: a figure under load is never a target met, figures are recorded when asked and the
README's performance table is what the record renders, the warm benchmark's edit keeps the function's behaviour,
and compare.py refuses bad input in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import figures  # noqa: E402
from bench_warm import function_source, toggled  # noqa: E402
from figures import figure, read_record, verdict  # noqa: E402
from readme_table import BEGIN, END, README, RECORD, render_table, with_table  # noqa: E402


def test_a_figure_measured_under_load_is_never_a_target_met() -> None:
    assert verdict(0.2, 0.3, load=1.0) == "target met"
    assert verdict(0.4, 0.3, load=1.0) == "target MISSED"
    assert verdict(0.2, 0.3, load=2.5).startswith("not comparable with the target: measured under load 2.5")
    assert verdict(3.0, 2.0, load=0.5, higher_is_better=True) == "target met"
    assert figure("re-check", 0.25, " s", 0.3, 7.7) == (
        "re-check: 0.25 s (target <= 0.3 s), load 7.7; not comparable with the target: measured under load 7.7 > 2")


def test_the_readme_performance_table_is_what_the_committed_record_renders() -> None:
    runs = read_record(RECORD)
    assert any(run["command"].startswith("python benchmarks/bench_warm.py") for run in runs)  # real runs recorded
    text = README.read_text(encoding="utf-8")
    assert with_table(text, render_table(runs)) == text, "run: python benchmarks/readme_table.py"


def _run_figures(monkeypatch, record: Path, argv: list[str], *calls: tuple) -> None:
    """Figures printed by a fresh process running ``argv`` with the record variable set."""
    monkeypatch.setenv(figures.RECORD_VARIABLE, str(record))
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(figures, "_RECORDED", set())
    for call in calls:
        figure(*call)


def test_figures_are_recorded_when_asked_and_a_rerun_of_a_command_replaces_its_figures(monkeypatch,
                                                                                      tmp_path: Path) -> None:
    record = tmp_path / "figures.json"
    warm = [str(REPO / "benchmarks" / "bench_warm.py"), "--repeat", "3"]
    _run_figures(monkeypatch, record, warm, ("re-check", 0.2, " s", 0.3, 1.0), ("re-check CPU", 0.25, " s", None, 2.5))
    _run_figures(monkeypatch, record, [str(REPO / "benchmarks" / "bench_show.py")],
                 ("show, cold", 9.0, " s", 5.0, 0.5), ("speed-up", 3.0, "x", 2.0, 3.1, True))
    first = read_record(record)
    assert [(run["command"], [f["verdict"] for f in run["figures"]]) for run in first] == [
        ("python benchmarks/bench_warm.py --repeat 3", ["met", ""]),
        ("python benchmarks/bench_show.py", ["missed", "not comparable"])]
    assert first[0]["figures"][0]["load"] == 1.0 and first[0]["figures"][0]["utc"].endswith("+00:00")
    _run_figures(monkeypatch, record, warm, ("re-check", 0.4, " s", 0.3, 1.5))  # the same command again
    again = read_record(record)
    assert [run["command"] for run in again] == ["python benchmarks/bench_show.py",
                                                 "python benchmarks/bench_warm.py --repeat 3"]
    assert [(f["value"], f["verdict"]) for f in again[1]["figures"]] == [(0.4, "missed")]
    table = render_table(again)
    assert "| `python benchmarks/bench_show.py` |" in table and "| speed-up | 3x | 3.1 | ≥ 2x | not comparable (load " \
        "> 2) |" in table and "| re-check | 0.4 s | 1.5 | ≤ 0.3 s | **missed** |" in table


def test_the_table_script_checks_and_refuses_in_one_line(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{BEGIN}\nold\n{END}\nprose\n")
    script = [sys.executable, str(REPO / "benchmarks" / "readme_table.py"), "--readme", str(readme)]
    stale = subprocess.run(script + ["--check"], capture_output=True, text=True, timeout=60)
    assert stale.returncode == 1 and "performance table is stale" in stale.stderr
    assert subprocess.run(script, capture_output=True, text=True, timeout=60).returncode == 0
    assert readme.read_text().endswith(f"{END}\nprose\n") and "| command |" in readme.read_text()
    assert subprocess.run(script + ["--check"], capture_output=True, text=True, timeout=60).returncode == 0
    readme.write_text("# no markers\n")
    refused = subprocess.run(script, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1 and "README.md needs the two lines" in \
        refused.stderr


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
