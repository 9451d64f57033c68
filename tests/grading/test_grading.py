"""Grading end to end: full marks for the reference, zero for the template, one broken function costs one task."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest

from autograder.errors import AssignmentError
from autograder.grading.grader import Grader
from autograder.reports.gradescope import render_gradescope
from autograder.reports.json_report import render_json
from autograder.reports.junit import render_junit
from autograder.reports.registry import RENDERERS
from autograder.reports.results import NOT_IMPLEMENTED, PASSED
from autograder.reports.text import render_text
from autograder.sandbox.host import new_scratch, start_zygotes
from autograder.spec.mutation import load_mutations
from autograder.spec.quiz import load_key

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def grader(assignment3):
    with Grader(assignment3) as shared:
        yield shared


@pytest.fixture(scope="module")
def reference_report(grader, assignment3):
    return grader.grade(assignment3.reference)


def cheap_tasks(assignment) -> set[str]:
    return {t.id for t in assignment.tasks if not t.slow} | {assignment.quiz.task_id}


def break_functions(reference: Path, destination: Path, qualified_names: tuple[str, ...]) -> Path:
    """Copy the reference and make every solution region inside the named functions/classes raise."""
    shutil.copytree(reference, destination, ignore=shutil.ignore_patterns("__pycache__"))
    for qualified in qualified_names:
        module, name = qualified.split(".")
        path = destination / f"{module}.py"
        lines = path.read_text().splitlines(keepends=True)
        node = next(n for n in ast.parse("".join(lines)).body
                    if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
        output, inside = [], False
        for number, line in enumerate(lines, start=1):
            in_def = node.lineno <= number <= node.end_lineno
            if in_def and line.strip() == "### BEGIN SOLUTION":
                indent = line[: len(line) - len(line.lstrip())]
                output.append(f"{indent}raise RuntimeError('deliberately broken by a test')\n")
                inside = True
            elif inside and line.strip() == "### END SOLUTION":
                inside = False
            elif not inside:
                output.append(line)
        path.write_text("".join(output))
    return destination


def test_reference_scores_full_marks(reference_report, assignment3):
    failing = {t.id: t.feedback for t in reference_report.tasks if t.status != PASSED}
    assert failing == {}
    assert reference_report.score == reference_report.max_score == 100
    assert [t.id for t in reference_report.tasks] == assignment3.task_ids


def test_template_scores_zero_and_every_task_is_not_implemented(grader, repo):
    report = grader.grade(repo / "student_template" / "assignment3")
    assert report.score == 0
    code_tasks = [t for t in report.tasks if t.id != "quiz"]
    assert {t.id: t.status for t in code_tasks} == {t.id: NOT_IMPLEMENTED for t in code_tasks}
    assert all("not implemented" in t.feedback for t in code_tasks)


@pytest.mark.parametrize("task_id", [
    "causal_mask", "attention", "head_split", "multi_head_attention", "transformer_block",
    "sinusoidal_positions", "kv_cache_decode", "kv_cache_bytes", "tiny_gpt", "tiny_gpt_training",
])
def test_one_broken_task_costs_only_that_task(grader, assignment3, tmp_path, task_id):
    task = assignment3.task(task_id)
    broken = break_functions(assignment3.reference, tmp_path / "assignment3", task.functions)
    report = grader.grade(broken, only=cheap_tasks(assignment3) | {task_id})
    scores = {t.id: (t.score, t.max_score) for t in report.tasks}
    assert scores[task_id][0] == 0, scores
    assert {k: v for k, v in scores.items() if k != task_id and v[0] != v[1]} == {}
    target = next(t for t in report.tasks if t.id == task_id)
    assert "deliberately broken" in target.feedback


def test_the_same_submission_graded_five_times_gets_identical_results(grader, repo, assignment3):
    only = cheap_tasks(assignment3)
    reports = [grader.grade(repo / "examples" / "partial_submission", only=only) for _ in range(5)]
    signatures = [[(t.id, t.score, [(c.name, c.status, c.message) for c in t.checks]) for t in r.tasks]
                  for r in reports]
    assert all(s == signatures[0] for s in signatures)
    assert 0 < reports[0].score < reports[0].max_score


def test_the_example_submission_gets_hints_for_its_mistakes(grader, repo, assignment3):
    report = grader.grade(repo / "examples" / "partial_submission", only=cheap_tasks(assignment3))
    by_id = {t.id: t for t in report.tasks}
    assert by_id["attention"].score < by_id["attention"].max_score
    assert by_id["transformer_block"].score < by_id["transformer_block"].max_score
    assert by_id["kv_cache_bytes"].score < by_id["kv_cache_bytes"].max_score
    assert by_id["multi_head_attention"].status == PASSED  # graded with the reference attention
    assert by_id["quiz"].score == 13
    explanations = [" ".join(e["explanation"].split())[:60] for e in load_key(assignment3.quiz).values()]
    for render in RENDERERS.values():
        text = " ".join(render(report).split())
        assert not [e for e in explanations if e in text], "a report shows the quiz key's explanations"


def test_a_module_that_imports_a_broken_one_is_graded_with_its_fallback(grader, repo, tmp_path):
    package = tmp_path / "assignment3"
    shutil.copytree(repo / "reference_solutions" / "assignment3", package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "positions.py").write_text((package / "positions.py").read_text() + "\n)\n")  # a syntax error
    report = grader.grade(package, only={"sinusoidal_positions", "tiny_gpt"})
    by_id = {t.id: t for t in report.tasks}
    assert by_id["sinusoidal_positions"].score == 0 and "SyntaxError" in by_id["sinusoidal_positions"].feedback
    assert by_id["tiny_gpt"].status == PASSED, by_id["tiny_gpt"].feedback  # it imports positions: the reference's
    assert [note for note in report.notes if "could not be imported" in note] == [
        next(note for note in report.notes if note.startswith("positions.py"))]


def test_a_renamed_function_is_said_as_grader_check_says_it(grader, repo, tmp_path):
    """``grader check`` and grading word a missing function with one sentence (submission/package.py)."""
    package = tmp_path / "assignment3"
    shutil.copytree(repo / "reference_solutions" / "assignment3", package, ignore=shutil.ignore_patterns("__pycache__"))
    source = (package / "attention.py").read_text()
    (package / "attention.py").write_text(source.replace("def causal_mask(", "def make_causal_mask(", 1))
    task = grader.grade(package, only={"causal_mask"}).tasks[0]
    assert task.score == 0
    assert {c.message for c in task.checks} == {
        "assignment3/attention.py has no causal_mask (renamed or removed? the grader calls it by that name)"}


MASK_LINE = "    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)"


def causal_mask_submission(repo: Path, destination: Path, trap: str) -> Path:
    """The reference with ``trap`` (code using ``n``) run first in causal_mask."""
    package = destination / "assignment3"
    shutil.copytree(repo / "reference_solutions" / "assignment3", package, ignore=shutil.ignore_patterns("__pycache__"))
    source = (package / "attention.py").read_text()
    assert source.count(MASK_LINE) == 1
    (package / "attention.py").write_text(source.replace(MASK_LINE, f"{trap}\n{MASK_LINE}"))
    return package


def test_a_crash_in_one_check_costs_that_check_alone(grader, repo, tmp_path):
    # causal_mask(6) is called by the first check only; the task's other checks run in a fresh process
    trap = "    if n == 6:\n        import os\n        os._exit(0)"
    report = grader.grade(causal_mask_submission(repo, tmp_path, trap), only={"causal_mask"})
    checks = {c.name.split(".")[1]: c for c in report.tasks[0].checks}
    assert {name: c.status for name, c in checks.items()} == {
        "mask_dtype_and_shape": "error", "mask_pattern": "passed", "mask_large": "passed", "fresh_masks": "passed"}
    assert "exited (code 0)" in checks["mask_dtype_and_shape"].message
    assert 0 < report.tasks[0].score < report.tasks[0].max_score


def test_a_hang_costs_its_check_and_the_later_ones_only(assignment3, repo, tmp_path):
    quick = dataclasses.replace(assignment3, tasks=tuple(
        # 6 s: short enough for a test, long enough that the passing check before the hang never runs out of
        # time on a machine loaded by the rest of the suite
        dataclasses.replace(t, timeout=6.0) if t.id == "causal_mask" else t for t in assignment3.tasks))
    trap = "    if n == 2:\n        while True:\n            pass"  # causal_mask(2): the second check only
    submission = causal_mask_submission(repo, tmp_path, trap)
    scratch = new_scratch()
    zygotes = start_zygotes(2, scratch, eager=1)  # the second starts on demand, as in `grader grade`
    with Grader(quick, scratch=scratch, zygotes=zygotes) as two:
        started = time.monotonic()
        report = two.grade(submission, only={"causal_mask", "attention", "head_split"})
        elapsed = time.monotonic() - started
    tasks = {t.id: t for t in report.tasks}
    statuses = {c.name.split(".")[1]: c.status for c in tasks["causal_mask"].checks}
    assert statuses == {"mask_dtype_and_shape": "passed", "mask_pattern": "timeout", "mask_large": "timeout",
                        "fresh_masks": "timeout"}
    assert "did not finish within 6 s" in tasks["causal_mask"].checks[1].message
    assert "not run" in tasks["causal_mask"].checks[2].message
    assert tasks["attention"].score == tasks["attention"].max_score
    assert tasks["head_split"].score == tasks["head_split"].max_score
    assert elapsed < 6.0 + 30  # one wait for the hang, not one per check (three would be 18 s more)
    assert report.environment["isolation"] == zygotes[0].isolation["tier"]


def test_a_grader_of_some_tasks_only_keeps_their_diagnosis(assignment3, repo):
    subset = dataclasses.replace(assignment3, tasks=(assignment3.task("causal_mask"), assignment3.task("attention")))
    with pytest.raises(AssignmentError, match="names unknown task"):
        load_mutations(subset, "mistakes")  # the audit stays strict about mistakes of unknown tasks
    with Grader(subset) as grader_of_two:
        assert {m.task for m in grader_of_two.judge.mistakes} <= {"causal_mask", "attention"}
        report = grader_of_two.grade(repo / "examples" / "partial_submission", only={"causal_mask", "attention"})
    attention = next(t for t in report.tasks if t.id == "attention")
    assert attention.score < attention.max_score
    assert any("sqrt(d_model" in c.hint for c in attention.checks)


def test_reports_in_every_format_are_valid(reference_report):
    data = json.loads(render_json(reference_report))
    assert {"assignment", "score", "max_score", "tasks", "environment", "seconds"} <= set(data)
    task = data["tasks"][0]
    assert {"id", "score", "max_score", "status", "feedback", "checks"} <= set(task)
    assert {"torch", "python", "seed", "isolation"} <= set(data["environment"])
    assert all(check["seed"] is not None for t in data["tasks"] if t["id"] != "quiz" for check in t["checks"])

    gradescope = json.loads(render_gradescope(reference_report))
    assert gradescope["score"] == 100 and isinstance(gradescope["execution_time"], float)
    for test in gradescope["tests"]:
        assert {"name", "number", "score", "max_score", "status", "output", "visibility"} <= set(test)
        assert test["status"] in ("passed", "failed") and test["visibility"] == "visible"

    root = ElementTree.fromstring(render_junit(reference_report).split("?>", 1)[1])
    cases = root.findall(".//testcase")
    assert len(cases) == sum(len(t.checks) for t in reference_report.tasks)
    assert not root.findall(".//failure")
    assert "100 / 100" in render_text(reference_report)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("args, message", [
    (("grade", "assignment3", "/nonexistent/submission"), "error: /nonexistent/submission does not exist"),
    (("grade", "assignment9", "."), "error: no assignment named 'assignment9'"),
])
def test_cli_bad_input_is_one_line_and_exit_2(args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(message)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_cli_broken_zip_is_one_line_and_exit_2(tmp_path):
    bogus = tmp_path / "submission.zip"
    bogus.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    result = run_cli("grade", "assignment3", str(bogus))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ")


def test_cli_writes_the_gradescope_report_to_a_file(tmp_path, repo):
    broken = break_functions(repo / "reference_solutions" / "assignment3", tmp_path / "assignment3",
                             ("kv_cache.kv_cache_bytes",))
    output = tmp_path / "results" / "results.json"
    result = run_cli("grade", "assignment3", str(broken), "--format", "gradescope", "--output", str(output),
                     "--task", "kv_cache_bytes", "--task", "causal_mask", "--task", "quiz")
    assert result.returncode == 0, result.stderr
    data = json.loads(output.read_text())
    assert data["score"] == 20
    assert [t["name"].split(":")[0] for t in data["tests"]] == ["causal_mask", "kv_cache_bytes", "quiz"]
    assert [p.name for p in output.parent.iterdir()] == ["results.json"]


def test_a_check_that_raises_on_the_reference_too_is_the_checks_error_not_the_students(mini_course, tmp_path):
    """A probe bug (here a shape mismatch in the check's own code) raises on every submission: it is refused as
    the check's mistake, with its line, and never charged to a student's code; the reference still passes checks
    whose probe runs."""
    checks = tmp_path / "assignments" / "mini" / "hidden" / "checks" / "scale.py"
    lines = checks.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if "impl.ops.scale(" in text)
    checks.write_text(checks.read_text().replace("impl.ops.scale(ctx.randn(3, 4), 2.5)",
                                                 "impl.ops.scale(ctx.randn(3, 4), 2.5) + ctx.randn(5)"))
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(tmp_path / "assignments")}
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "mini",
                             str(tmp_path / "reference_solutions" / "mini")], capture_output=True, text=True,
                            timeout=600, env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == (
        f"error: {checks}:{line}: check scale.scale_values raises on the reference solution too (RuntimeError: The "
        f"size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1): the check's code "
        f"is wrong, not the student's")


def test_a_stale_known_mistake_is_said_once_to_the_instructor_and_never_in_the_report(mini_course, tmp_path):
    """A mistake whose old text left the reference cannot diagnose anything: `grader grade` goes on without it and
    says so once on stderr; the report (what the student sees) holds no trace of it, and a Gradescope run whose
    output students may be shown ([gradescope] stdout_visibility) says nothing."""
    mistakes = tmp_path / "assignments" / "mini" / "hidden" / "mistakes" / "row_sums.toml"
    mistakes.write_text(mistakes.read_text().replace('old = "x.sum(dim=-1)"', 'old = "x.sum(-1)"'))
    submission = tmp_path / "work" / "mini"
    shutil.copytree(tmp_path / "reference_solutions" / "mini", submission)
    (submission / "ops.py").write_text((submission / "ops.py").read_text().replace("x.sum(dim=-1)", "x.sum(dim=0)"))
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(tmp_path / "assignments")}

    def grade(*options: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "mini", str(submission), *options],
                              capture_output=True, text=True, timeout=600, env=env)

    result = grade("--format", "json")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"warning: {mistakes}:7: mutation 'row_sums_over_columns' is stale: its old text occurs 0 times in ops.py of "
        f"the reference (expected exactly once); copy it again from the reference; until then no student is told "
        f"this mistake's hint (`grader verify mini` refuses it)"]
    report = json.loads(result.stdout)
    assert report["score"] == 2 and "row_sums_over_columns" not in result.stdout and "is stale" not in result.stdout, \
        result.stdout
    manifest = tmp_path / "assignments" / "mini" / "assignment.toml"
    manifest.write_text(manifest.read_text() + '\n[gradescope]\nstdout_visibility = "visible"\n')
    shown = grade("--format", "gradescope")
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr


def test_grade_all_says_a_stale_known_mistake_once_before_grading(mini_course, tmp_path):
    """`grader grade-all` grades in workers whose graders leave a stale mistake out: the batch says it once, on
    stderr, as `grader grade` does, and no student's record carries it."""
    mistakes = tmp_path / "assignments" / "mini" / "hidden" / "mistakes" / "row_sums.toml"
    mistakes.write_text(mistakes.read_text().replace('old = "x.sum(dim=-1)"', 'old = "x.sum(-1)"'))
    shutil.copytree(tmp_path / "reference_solutions" / "mini", tmp_path / "class" / "alice" / "mini")
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(tmp_path / "assignments")}
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "grade-all", "mini", str(tmp_path / "class"),
                             "--jobs", "1", "--gradebook", str(tmp_path / "gb.db"), "--csv", str(tmp_path / "c.csv")],
                            capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {mistakes}:7: mutation 'row_sums_over_columns' is stale: its old text occurs 0 times in ops.py of "
        f"the reference (expected exactly once); copy it again from the reference; until then no student is told "
        f"this mistake's hint (`grader verify mini` refuses it)"]
    assert "stale" not in (tmp_path / "c.csv").read_text()


def _mini_with_a_mistake_that_does_not_import(course: Path, mistake: Path) -> str:
    """The mini course (the ``mini_course`` fixture) whose only mistake is valid Python that fails when imported
    (the ``import_failing_mistake`` fixture), and the warning grading gives for it (the line
    `grader verify` prints); were it sound, it would diagnose a row sum over dimension 0."""
    mistakes = course / "hidden" / "mistakes" / "row_sums.toml"
    shutil.copyfile(mistake, mistakes)
    line = mistakes.read_text().splitlines().index('id = "row_sums_first_axis_helper"') + 1
    return (f"warning: {mistakes}:{line}: mutation 'row_sums_first_axis_helper' does not import: ops.py, line 5: "
            f"NameError: name 'first_axis' is not defined; a mistake or variant is code a student could run: fix "
            f"its new text; until then no student is told this mistake's hint (`grader verify mini` refuses it)")


def _summing_over_columns(source: Path, destination: Path) -> Path:
    shutil.copytree(source, destination)
    ops = destination / "ops.py"
    ops.write_text(ops.read_text().replace("x.sum(dim=-1)", "x.sum(dim=0)"))
    return destination


def test_a_known_mistake_that_does_not_import_is_said_once_to_the_instructor_and_never_in_the_report(
        mini_course, import_failing_mistake, tmp_path):
    """The judge finds it when it first tries it, on a failed check: `grader grade` says so once on stderr, as it
    says a stale one, and the report holds no trace of it."""
    warning = _mini_with_a_mistake_that_does_not_import(mini_course, import_failing_mistake)
    submission = _summing_over_columns(tmp_path / "reference_solutions" / "mini", tmp_path / "work" / "mini")
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(tmp_path / "assignments")}
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "mini", str(submission), "--format",
                             "json"], capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [warning]
    report = json.loads(result.stdout)
    assert report["score"] == 2 and "first_axis" not in result.stdout, result.stdout


def test_grade_all_says_a_known_mistake_that_does_not_import_once_after_grading(mini_course, import_failing_mistake,
                                                                                tmp_path):
    """Each worker's judge finds it on its own: the batch says it once, after its summary, and no student's record
    carries it."""
    warning = _mini_with_a_mistake_that_does_not_import(mini_course, import_failing_mistake)
    for student in ("alice", "bob"):
        _summing_over_columns(tmp_path / "reference_solutions" / "mini", tmp_path / "class" / student / "mini")
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(tmp_path / "assignments")}
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "grade-all", "mini", str(tmp_path / "class"),
                             "--jobs", "2", "--gradebook", str(tmp_path / "gb.db"), "--csv", str(tmp_path / "c.csv")],
                            capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("warning:")] == [warning]
    assert "first_axis" not in (tmp_path / "c.csv").read_text() and "first_axis" not in result.stdout
