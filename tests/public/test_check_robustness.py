"""``grader check`` on broken work: an endless loop, a crash, a syntax error and a failing used task, each costing
only its own test or task, in both assignments; and its flags."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.template import BEGIN
from autograder.spec.assignment import available_assignments, load_assignment

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SHORT_LIMIT = 3  # seconds per public test in the copied manifests, so the endless loops end soon


def inject(path: Path, anchor: str, code: str) -> None:
    """Insert ``code`` at the start of the solution region that follows ``anchor`` in a copied reference file."""
    text = path.read_text()
    begin = text.index(BEGIN, text.index(anchor))
    end_of_line = text.index("\n", begin) + 1
    indent = text[begin - (begin - text.rindex("\n", 0, begin) - 1):begin]
    body = "".join(f"{indent}{line}\n" for line in code.splitlines())
    path.write_text(text[:end_of_line] + body + text[end_of_line:])


def copy_assignment(name: str, tmp_path: Path) -> dict[str, str]:
    """The assignment's manifest and public tests in a temporary tree with a short public wall clock."""
    root = tmp_path / "assignments"
    shutil.copytree(REPO / "assignments" / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = root / name / "assignment.toml"
    text = manifest.read_text().replace("[assignment]\n", f"[assignment]\npublic_timeout = {SHORT_LIMIT}\n", 1)
    manifest.write_text(text)
    return dict(os.environ, GRADER_ASSIGNMENTS=str(root))


def work_from_reference(name: str, tmp_path: Path) -> Path:
    package = tmp_path / "work" / name
    shutil.copytree(REPO / "reference_solutions" / name, package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def run_check(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "check", *args], capture_output=True, text=True,
                          timeout=600, env=env, cwd=cwd)


def task_block(output: str, task: str) -> str:
    """A task's line and the indented lines under it."""
    match = re.search(rf"^{task} .*\n(?:    .*\n)*", output, flags=re.M)
    assert match, f"no line for {task} in:\n{output}"
    return match.group(0)


def test_assignment3_loop_crash_syntax_error_and_dependency_cost_only_their_tasks(tmp_path: Path) -> None:
    env = copy_assignment("assignment3", tmp_path)
    package = work_from_reference("assignment3", tmp_path)
    inject(package / "kv_cache.py", "def kv_cache_bytes(", "while True:\n    pass")
    inject(package / "kv_cache.py", "def decode_with_cache(", "import os\nos._exit(3)")
    inject(package / "attention.py", "def causal_mask(", "return torch.tril(torch.ones(n, n, dtype=torch.bool), -1)")
    text = (package / "positions.py").read_text()
    broken = text.replace("\ndef sinusoidal_positions(", "\nbroken = [1, 2\n\ndef sinusoidal_positions(", 1)
    (package / "positions.py").write_text(broken)
    result = run_check("assignment3", str(package), env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    loop = task_block(result.stdout, "kv_cache_bytes")
    assert loop.startswith("kv_cache_bytes") and " 0/2  failed" in loop, loop
    assert f"did not finish within {SHORT_LIMIT} s — an endless loop?" in loop
    # where the loop was when it was stopped: the student's loop (whichever of its lines the stack was taken on),
    # not only that something somewhere looped
    source = (package / "kv_cache.py").read_text()
    line = source[:source.index("while True:", source.index("def kv_cache_bytes("))].count("\n") + 1
    assert re.search(rf"^      stopped in the loop at kv_cache\.py, line {line}, in kv_cache_bytes\n"
                     r"          while True:$", loop, re.M), loop
    crash = task_block(result.stdout, "kv_cache_decode")
    assert "crashed: the test's process ended abruptly (exit code 3)" in crash, crash
    assert "also failing: test_uncached_decoding_matches_causal_attention" in crash  # its other test still ran
    assert output.count("SyntaxError") == 1, output
    assert re.search(r"^error: .*positions\.py, line \d+: SyntaxError: '\[' was never closed$", result.stdout, re.M)
    assert "    broken = [1, 2" in result.stdout
    assert "this blocks sinusoidal_positions, tiny_gpt, tiny_gpt_training: fix it first" in result.stdout
    for task in ("sinusoidal_positions", "tiny_gpt", "tiny_gpt_training"):
        assert "blocked: positions.py cannot be imported (see above)" in task_block(result.stdout, task)
    mha = task_block(result.stdout, "multi_head_attention")
    assert "test_multi_head_causal_weights_hide_the_future failed" in mha
    assert "test_multi_head_self_attention_shapes" not in mha  # the shapes test does not depend on the mask
    # causal_mask returned wrong values without raising: the failing test called it, so the hint names it
    assert "may be caused by causal_mask, which fails: fix that first" in mha
    for task in ("head_split", "transformer_block"):
        assert task_block(result.stdout, task).rstrip().endswith("passed"), result.stdout
    assert "quiz: 16 of 16 answers well-formed" in result.stdout
    order = [line.split()[0] for line in result.stdout.splitlines() if re.match(r"^[a-z_]+ +( ?\d+/\d+| -/-)", line)]
    assert order == [line for line in order if line] and order == [
        "causal_mask", "attention", "head_split", "multi_head_attention", "transformer_block",
        "sinusoidal_positions", "kv_cache_decode", "kv_cache_bytes", "tiny_gpt", "tiny_gpt_training"]
    assert result.stdout.rstrip().splitlines()[-1].startswith("Next: fix positions.py, line ")


def test_assignment2_loop_crash_syntax_error_and_dependency_cost_only_their_tasks(tmp_path: Path) -> None:
    env = copy_assignment("assignment2", tmp_path)
    package = work_from_reference("assignment2", tmp_path)
    inject(package / "modules.py", "def forward(self, x: torch.Tensor)", "while True:\n    pass")  # SelfAttention
    inject(package / "modules.py", "def copy_stacked_to_split(", "import os\nos.kill(os.getpid(), 9)")
    causal = (package / "modules.py").read_text().index("class CausalSelfAttention")
    text = (package / "modules.py").read_text()
    forward = text.index("def forward(", causal)
    (package / "modules.py").write_text(text[:forward] + text[forward:].replace(
        BEGIN, BEGIN + "\n        raise RuntimeError('shape mismatch in the mask')", 1))
    numpy_file = package / "numpy_attention.py"
    numpy_file.write_text(numpy_file.read_text().replace("\ndef softmax(", "\ndef broken(:\n    pass\n\n"
                                                                             "def softmax(", 1))
    (package / "answers.toml").write_text('q1 = "a, b"\n')
    result = run_check("assignment2", str(package), env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    assert output.count("SyntaxError") == 1, output
    assert re.search(r"^error: .*numpy_attention\.py, line \d+: SyntaxError", result.stdout, re.M), output
    assert "this blocks softmax, soft_attention, self_attention, attention: fix it first" in result.stdout
    loop = task_block(result.stdout, "self_attention_module")
    assert f"did not finish within {SHORT_LIMIT} s — an endless loop?" in loop, loop
    crash = task_block(result.stdout, "weight_copy")
    assert "crashed: the test's process ended abruptly (signal 9, SIGKILL)" in crash, crash
    stacked = task_block(result.stdout, "multi_head_stacked")
    assert "may be caused by causal_self_attention, which fails: fix that first" in stacked, stacked
    causal = task_block(result.stdout, "causal_self_attention")
    assert "RuntimeError: shape mismatch in the mask" in causal and "raised in modules.py, line" in causal, causal
    assert task_block(result.stdout, "multi_head_split").rstrip().endswith("passed"), result.stdout
    assert "q1: answer must be one letter" in result.stdout  # the quiz's check does not depend on the tests
    assert result.stdout.rstrip().splitlines()[-1].startswith("Next: fix numpy_attention.py, line ")


@pytest.mark.parametrize("name", available_assignments())
def test_task_runs_only_that_task_and_verbose_shows_pytests_output(name: str, tmp_path: Path) -> None:
    package = work_from_reference(name, tmp_path)
    task = load_assignment(name).tasks[0]
    first, (module, function) = task.id, task.functions[0].split(".")
    target = package / f"{module}.py"
    anchor = f"def {function}(" if f"def {function}(" in target.read_text() else f"class {function}"
    inject(target, anchor, "assert False, 'deliberately wrong'")
    result = run_check(name, str(package), "--task", first, "--task", first, "--verbose")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if re.match(r"^[a-z_0-9]+ +\d+/\d+", line)]
    assert [line.split()[0] for line in lines] == [first]
    assert "--- pytest's output of" in result.stdout and "deliberately wrong" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", available_assignments())
def test_bad_inputs_are_one_line_errors(name: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.py").write_text("x = 1\n")
    cases = [["nope"], [str(tmp_path / "missing")], [str(tmp_path / "file.py")], [str(tmp_path / "empty")],
             ["--task", "no_such_task", str(REPO / "reference_solutions" / name)]]
    for extra in cases:
        args = extra if extra == ["nope"] else [name, *extra]
        result = run_check(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stdout + result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: "), result.stderr


@pytest.mark.parametrize("name", available_assignments())
def test_task_quiz_checks_only_the_quiz(name: str, tmp_path: Path) -> None:
    result = run_check(name, str(REPO / "reference_solutions" / name), "--task", "quiz")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not re.search(r"^[a-z_0-9]+ +\d+/\d+", result.stdout, re.M)
    assert re.search(r"^quiz: (\d+) of \1 answers well-formed", result.stdout, re.M)


def test_a_loop_or_a_crash_at_import_time_blocks_only_that_modules_tasks(tmp_path: Path) -> None:
    env = copy_assignment("assignment3", tmp_path)
    package = work_from_reference("assignment3", tmp_path)
    with open(package / "kv_cache.py", "a") as handle:
        handle.write("\nwhile True:\n    pass\n")
    with open(package / "tiny_gpt.py", "a") as handle:
        handle.write("\nimport os\nos._exit(4)\n")
    result = run_check("assignment3", str(package), env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in output, output
    assert (f"kv_cache.py: importing it did not finish within {SHORT_LIMIT} s — an endless loop at the top level "
            "of kv_cache.py?") in result.stdout
    assert "tiny_gpt.py: importing it stopped the test process (which ended with exit code 4)" in result.stdout
    assert "this blocks kv_cache_decode, kv_cache_bytes: fix it first" in result.stdout
    for task in ("causal_mask", "attention", "head_split", "multi_head_attention", "sinusoidal_positions"):
        assert task_block(result.stdout, task).rstrip().endswith("passed"), result.stdout
    for task in ("kv_cache_bytes", "tiny_gpt_training"):
        assert "blocked:" in task_block(result.stdout, task)


def test_a_public_test_tagged_with_no_task_of_the_manifest_is_reported_not_dropped(tmp_path: Path) -> None:
    env = copy_assignment("assignment3", tmp_path)
    tests = tmp_path / "assignments" / "assignment3" / "public_tests" / "test_attention.py"
    text = tests.read_text()
    tests.write_text(text.replace('@pytest.mark.task("causal_mask")', '@pytest.mark.task("causal_msk")'))
    line = text.splitlines().index('@pytest.mark.task("causal_mask")') + 1
    tagged = text.count('@pytest.mark.task("causal_mask")')
    package = work_from_reference("assignment3", tmp_path)
    known = ", ".join(task.id for task in load_assignment("assignment3").tasks)
    for selection in ([], ["--task", "attention"]):  # whatever the selection: the test is not lost
        result = run_check("assignment3", str(package), *selection, env=env)
        assert result.returncode == 1, result.stdout + result.stderr  # a failed line is printed: not 0
        block = task_block(result.stdout, "causal_msk")
        assert re.match(rf"causal_msk +0/{tagged} +failed\n", block), block
        assert (f"test_attention.py:{line}: @pytest.mark.task('causal_msk') names no task of the assignment — did "
                f"you mean causal_mask? (tasks: {known}); the test did not run: the public tests need fixing, not "
                f"your code") in block
        assert task_block(result.stdout, "attention").rstrip().endswith("passed")
        assert ("Next: tell your instructor that a public test names no task of the assignment (causal_msk, above); "
                "it says nothing about your code.") in result.stdout  # never `--task causal_msk`, which is refused
