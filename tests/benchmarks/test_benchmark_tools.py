"""The benchmarks' own logic: a figure under load is never a target met, figures are recorded when asked and the
README's performance table is what the record renders, the warm benchmark's edit keeps the function's behaviour,
compare.py and bench_batch.py refuse bad input in one line, bench_batch's scaling mode grades each class size, and
the floor runs each task's probes with the reference standing in for what the task uses, in one process or one
process per task alike, and bench_show's re-run floor draws what a re-run drew."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
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
                             "--scaling", "1,2", "--jobs", "1", "--settle", "0", "--keep", str(tmp_path)],
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


def test_the_floor_with_a_process_per_task_judges_as_the_floor_in_one_process(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_single import Floor

    monkeypatch.setenv("GRADER_ASSIGNMENTS", str(REPO / "tests" / "fixtures" / "assignments"))
    floor = Floor("mini")
    reference = floor.assignment.reference
    wrong = tmp_path / "wrong" / "mini"
    wrong.mkdir(parents=True)
    (wrong / "__init__.py").write_text((reference / "__init__.py").read_text())
    (wrong / "ops.py").write_text((reference / "ops.py").read_text().replace("x.sum(dim=-1)", "x.sum(dim=0)"))
    broken = tmp_path / "broken" / "mini"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("")
    (broken / "ops.py").write_text("def scale(:\n")
    floor.warm_up()
    for package in (reference, wrong, broken):
        in_one, forked = floor.run(package), floor.run_forked(package)
        assert (forked["passed"], forked["checks"]) == (in_one["passed"], in_one["checks"]), package
    assert floor.run(reference)["passed"] == floor.run(reference)["checks"] > 0
    assert 0 < floor.run(wrong)["passed"] < floor.run(wrong)["checks"]  # scale passes, row_sums does not
    assert floor.run_forked(broken)["checks"] == 0  # the module cannot be imported: no task of it runs


def test_compare_runs_each_commit_from_its_own_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -c`` puts its working folder first on ``sys.path``: run from the repository, both commits ran the
    working tree's package. Each commit's commands start in its own exported tree, and the tree is checked."""
    import compare

    commit = compare.Commit("A", "HEAD", tmp_path, "assignment3")  # exits in one line if it would run another tree
    probe = [sys.executable, "-c", "import autograder; print(autograder.__file__)"]
    from_root = subprocess.run(probe, env=commit.env, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert not Path(from_root.stdout.strip()).resolve().is_relative_to(commit.tree.resolve())  # the trap
    seen: list[Path] = []
    monkeypatch.setattr(compare, "timed", lambda command, env, cpus, groups, cwd=REPO: seen.append(cwd) or
                        compare.Run(1.0, 1.0, None))
    compare.measure(commit, "check", 0, None, settle=0)
    assert seen == [commit.tree]
    (tmp_path / "elsewhere").mkdir()  # a tree with no package: the working tree's would be imported instead
    refused = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import compare; "
                              "from pathlib import Path; c = compare.Commit.__new__(compare.Commit); "
                              "c.label, c.commit, c.tree = 'A', 'HEAD', Path(sys.argv[2]); "
                              "c.env = {**__import__('os').environ, 'PYTHONPATH': sys.argv[3]}; c.check_own_code()",
                              str(REPO / "benchmarks"), str(tmp_path / "elsewhere"), str(REPO)],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1
    assert "would run" in refused.stderr and "not its own tree" in refused.stderr


@pytest.mark.slow
def test_the_rerun_floor_draws_what_the_rerun_drew_as_the_rerun_drew_it(tmp_path: Path) -> None:
    """bench_show's re-run floor: after one function changed, the figures a fresh ``grader show`` redrew (and only
    those) are drawn again, from the results it kept, into PNGs identical to the page's."""
    from bench_show import change_function, floor_once, run_once

    from autograder.show.catalog import load_catalog
    from autograder.spec.assignment import load_assignment

    work = tmp_path / "numpy_attention_work" / "assignment2"
    shutil.copytree(REPO / "reference_solutions" / "assignment2", work)
    out = tmp_path / "figures"
    run_once("assignment2", work, out)
    change_function(work, "numpy_attention.softmax", 1)
    since = time.time()
    run_once("assignment2", work, out)
    floor = floor_once("assignment2", work, out, tmp_path / "floor", since)
    drawn = {path.stem for path in (tmp_path / "floor").glob("*.png")}
    assert set(floor["summary"].removeprefix("drew ").split(", ")) == drawn
    softmax_users = {"notes_example", "five_tokens"}  # the probes reaching softmax (tests/show/test_show_cache.py)
    catalog = load_catalog(load_assignment("assignment2"))
    assert drawn == {figure_.name for figure_ in catalog.figures if figure_.probe.name in softmax_users}
    for name in drawn:
        assert (tmp_path / "floor" / f"{name}.png").read_bytes() == (out / f"{name}.png").read_bytes(), name
