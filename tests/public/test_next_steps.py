"""What ``grader check`` and a notebook's check cells tell the student to do next, in their own terms: the path they
typed, the cell to re-run, the ``ANSWERS`` cell; and the messages of a few common mistakes (a NumPy array for a
tensor, tensors that must be equal, unanswered questions)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from autograder.authoring.notebook_template import notebook_path
from autograder.public.invocation import Invocation
from autograder.public.outcome import CheckOutcome, PublicTaskResult
from autograder.public.outcome import TestResult as PublicTest  # not a test class for pytest to collect
from autograder.public.render import next_step
from autograder.public.runner import run_public_tests
from autograder.spec.assignment import load_assignment

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]

# per assignment: the first task, and a wrong definition of its function (cell text)
WRONG = {
    "assignment3": ("causal_mask", ("def causal_mask(n):\n    import numpy as np\n\n"
                                    "    return np.triu(np.ones((n, n), dtype=bool), k=1)")),
    "assignment2": ("softmax", "def softmax(x, axis=-1):\n    return x * 1.0"),
}


def run_check(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), **env)
    return subprocess.run([sys.executable, "-m", "autograder.cli", "check", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd, env=env, check=False)


def student_copy(tmp_path: Path, edit: Callable[[str], str] = lambda text: text) -> Path:
    """The reference of assignment3 in ``tmp_path/work/assignment3``, its attention.py edited, with an unanswered
    quiz; and an empty ``tmp_path/here`` to run the check from."""
    package = tmp_path / "work" / "assignment3"
    shutil.copytree(REPO / "reference_solutions" / "assignment3", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(REPO / "student_template" / "assignment3" / "answers.toml", package / "answers.toml")
    (package / "attention.py").write_text(edit((package / "attention.py").read_text()))
    (tmp_path / "here").mkdir()
    return package


def next_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("Next: "))


def test_a_package_path_is_repeated_and_common_mistakes_are_said_plainly(tmp_path: Path) -> None:
    package = tmp_path / "work2" / "assignment3"
    shutil.copytree(REPO / "reference_solutions" / "assignment3", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(REPO / "student_template" / "assignment3" / "answers.toml", package / "answers.toml")
    attention = package / "attention.py"
    text = attention.read_text()
    text = text.replace("return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)",
                        "import numpy as np\n    return np.triu(np.ones((n, n), dtype=bool), k=1)")
    text = text.replace("return x.reshape(batch, n, heads, dim // heads).transpose(1, 2)",
                        "return x.reshape(batch, n, dim // heads, heads).permute(0, 3, 1, 2)")  # interleaved heads
    attention.write_text(text)
    (tmp_path / "here").mkdir()

    result = run_check("assignment3", "../work2", "--task", "causal_mask", "--task", "head_split",
                       cwd=tmp_path / "here")
    out = result.stdout
    assert result.returncode == 1 and "Traceback" not in out + result.stderr, out + result.stderr
    assert "causal_mask returned a numpy.ndarray; return a torch.Tensor" in out
    assert "dtype('bool')" not in out
    split = out[out.index("head_split "):]
    assert re.search(r"\d+ of \d+ entries differ \(must be equal\); the first at index \(\d+, \d+, \d+\): got \S+, "
                     r"expected \S+", split), split  # an exact assert_close, said as torch.equal's failure is
    assert "16 of 16 questions not answered yet: q1–q16" in out and "no answer" not in out
    assert next_line(out) == ("Next: fix causal_mask, the first failing task in the README's order, then run "
                              "`grader check assignment3 ../work2 --task causal_mask --verbose`: it shows pytest's "
                              "full output.")


def test_an_exact_equality_failure_says_how_many_elements_differ_and_the_first_one(tmp_path: Path) -> None:
    # causal_mask off by one diagonal: the public tests compare it with `assert torch.equal(...)`, which returns a
    # bare False; the check says what an assert_close with no tolerance would (one description of both).
    package = student_copy(tmp_path, lambda text: text.replace("dtype=torch.bool), diagonal=1)",
                                                               "dtype=torch.bool), diagonal=0)"))
    result = run_check("assignment3", str(package), "--task", "causal_mask", cwd=tmp_path / "here")
    out = result.stdout
    assert result.returncode == 1 and "Traceback" not in out + result.stderr, out + result.stderr
    assert ("      test_attention.py, line 32: assert torch.equal(mask, expected)\n"
            "      mask (shape (4, 4)) differs from the expected values\n"
            "      4 of 16 entries differ (must be equal); the first at index (0, 0): got True, expected False\n"
            ) in out
    assert "where False = <built-in method equal" not in out, out
    outcome = run_public_tests(load_assignment("assignment3"), package, ["causal_mask"])
    assert {test.test: test.summary[1:] for test in outcome.task("causal_mask").tests} == {
        "test_causal_mask_literal_values_for_four_tokens": [
            "mask (shape (4, 4)) differs from the expected values",
            "4 of 16 entries differ (must be equal); the first at index (0, 0): got True, expected False"],
        "test_causal_mask_single_token_sees_itself": [  # a call's result, compared without a name
            "causal_mask(1) (shape (1, 1)) differs from the expected values",
            "1 of 1 entries differ (must be equal); the first at index (0, 0): got True, expected False"]}


def test_a_renamed_function_is_named_with_the_students_file_and_the_next_step_restores_it(tmp_path: Path) -> None:
    student_copy(tmp_path, lambda text: text.replace("causal_mask", "make_causal_mask"))

    result = run_check("assignment3", "../work", cwd=tmp_path / "here")
    out = result.stdout
    assert result.returncode == 1 and "Traceback" not in out + result.stderr, out + result.stderr
    sentence = ("error: ../work/assignment3/attention.py has no causal_mask (renamed or removed? the public tests "
                "import it by that name)")
    assert out.count(sentence) == 1 and out.count("has no causal_mask") == 1, out  # once, with what it blocks
    assert ("this blocks causal_mask, attention, head_split, multi_head_attention, transformer_block: fix it first"
            in out), out  # the five tasks test_attention.py holds
    assert "grader-check-" not in out and "cannot import name" not in out and "ImportError" not in out, out
    assert next_line(out) == ("Next: give causal_mask its name back in ../work/assignment3/attention.py (the public "
                              "tests import it by that name), then run `grader check assignment3 ../work` again.")


_LOCATION = re.compile(r"^\s*(\S+\.py):\d+:", re.M)  # pytest's ``path:line:`` of each traceback entry


def test_verbose_names_every_file_by_a_path_that_resolves_from_the_students_folder(tmp_path: Path) -> None:
    course = tmp_path / "course"  # the public tests beside the check's temporary folders: pytest prints them relative
    shutil.copytree(REPO / "assignments" / "assignment3", course / "assignment3",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "scratch").mkdir()
    student_copy(tmp_path, lambda text: text.replace("diagonal=1)", "diagonal=1) + [1]", 1))  # raises in their file

    result = run_check("assignment3", "../work", "--task", "causal_mask", "--verbose", cwd=tmp_path / "here",
                       TMPDIR=str(tmp_path / "scratch"), GRADER_ASSIGNMENTS=str(course))
    out = result.stdout
    assert result.returncode == 1 and "--- pytest's output of" in out, out + result.stderr
    locations = set(_LOCATION.findall(out))
    assert any(p.endswith("public_tests/test_attention.py") for p in locations), out
    assert "../work/assignment3/attention.py" in locations, out
    assert [p for p in locations if not (tmp_path / "here" / p).is_file()] == [], out
    assert "scratch" not in out, out


def test_next_names_the_next_unfinished_task_or_says_which_tasks_did_not_run(tmp_path: Path) -> None:
    package = student_copy(tmp_path)
    shutil.copyfile(REPO / "student_template" / "assignment3" / "tiny_gpt.py", package / "tiny_gpt.py")

    whole = run_check("assignment3", "../work", cwd=tmp_path / "here")
    assert next_line(whole.stdout) == ("Next: implement tiny_gpt (TinyGPT), the first task in the README's order not "
                                       "done yet, then run `grader check assignment3 ../work --task tiny_gpt`.")
    one = run_check("assignment3", "../work", "--task", "causal_mask", cwd=tmp_path / "here")
    assert next_line(one.stdout) == ("Next: the public tests of causal_mask pass; the other tasks were not run this "
                                     "time: run `grader check assignment3 ../work` to check them all.")


def test_a_watch_rerun_of_some_tasks_does_not_skip_to_the_quiz() -> None:
    spec = load_assignment("assignment3")  # a --watch re-run: the tasks typed are none, the tasks run a few
    outcome = CheckOutcome(package=Path("assignment3"), quiz_unanswered=["q1"], quiz_questions=1, quiz_checked=True)
    outcome.tasks = [PublicTaskResult("causal_mask", [PublicTest("test_one", "passed")], expected=1, done=True)]
    assert next_step(spec, outcome, Invocation.of(spec)) == (
        "Next: the public tests of causal_mask pass; the other tasks were not run this time: run "
        "`grader check assignment3` to check them all.")
    outcome.tasks = []  # only the quiz changed
    assert next_step(spec, outcome, Invocation.of(spec)).startswith("Next: answer the quiz in answers.toml")


def test_a_whole_check_that_passes_every_task_says_so_and_never_that_tasks_were_not_run() -> None:
    spec = load_assignment("assignment3")  # every code task ran and passed; the quiz is no public-test task
    outcome = CheckOutcome(package=Path("assignment3"), quiz_questions=16, quiz_checked=True)
    outcome.tasks = [PublicTaskResult(task.id, [PublicTest("test_one", "passed")], expected=1, done=True)
                     for task in spec.tasks]
    assert next_step(spec, outcome, Invocation.of(spec)) == "Next: every public test passes; submit when you are ready."
    outcome.quiz_unanswered = ["q16"]
    assert next_step(spec, outcome, Invocation.of(spec)).startswith("Next: answer the quiz in answers.toml")


def test_a_notebook_path_is_repeated_and_its_answers_are_the_answers_cell(tmp_path: Path) -> None:
    spec = load_assignment("assignment2")
    (tmp_path / "nb").mkdir()
    shutil.copyfile(notebook_path(spec), tmp_path / "nb" / "my work.ipynb")
    (tmp_path / "here").mkdir()

    result = run_check("assignment2", "../nb/my work.ipynb", "--task", "quiz", cwd=tmp_path / "here")
    out = result.stdout
    assert result.returncode == 1 and "Traceback" not in out + result.stderr, out + result.stderr
    assert "10 of 10 questions not answered yet: q1–q10" in out
    assert next_line(out) == ("Next: answer the quiz in the `ANSWERS` cell (the lines above say what is missing), "
                              "then run `grader check assignment2 '../nb/my work.ipynb' --task quiz`.")


def _small_notebook(name: str) -> dict:
    """The generated notebook cut to: setup, the first task's module setup, its stub (filled wrongly), its check
    cell and the call its Next line suggests, the quiz's ANSWERS and check cells, and the final check (the rest of
    the tasks are not run)."""
    task, wrong = WRONG[name]
    spec = load_assignment(name)
    notebook = json.loads(notebook_path(spec).read_text())
    module = spec.task(task).modules[0]
    roles = {"setup", f"setup-{module}", f"{task}-{task}", f"check-{task}", "answers", "check-quiz", "check-all"}
    notebook["cells"] = [c for c in notebook["cells"] if c["id"].split("-", 1)[1] in roles]
    for cell in notebook["cells"]:
        if cell["id"].endswith(f"{task}-{task}"):
            cell["source"] = wrong
    check = next(n for n, c in enumerate(notebook["cells"]) if c["id"].endswith(f"check-{task}"))
    suggested = {"cell_type": "code", "id": "c999-suggested", "metadata": {}, "outputs": [], "execution_count": None,
                 "source": f'check_notebook("{name}", task="{task}", verbose=True);'}  # what the Next line says
    notebook["cells"].insert(check + 1, suggested)
    return notebook


@pytest.fixture(scope="module", params=["assignment2", "assignment3"])
def executed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """The small notebook of an assignment (:func:`_small_notebook`) run top to bottom in a real kernel: the
    assignment's name, and what each cell printed, by role (``check-causal_mask``, ``suggested``, ...)."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    name = request.param
    notebook = nbformat.reads(json.dumps(_small_notebook(name)), as_version=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(REPO))
        NotebookClient(notebook, kernel_name="python3", timeout=600,
                       resources={"metadata": {"path": str(tmp_path_factory.mktemp(name))}}).execute()
    return name, {c.id.split("-", 1)[1]: "".join(o.get("text", "") for o in c.outputs) for c in notebook.cells}


def test_check_cells_name_the_cell_to_rerun_and_only_the_quiz_cells_speak_of_the_quiz(
        executed: tuple[str, dict[str, str]]) -> None:
    name, outputs = executed
    task = WRONG[name][0]
    per_task = outputs[f"check-{task}"]
    assert "quiz" not in per_task.lower() and "grader check" not in per_task, per_task
    assert next_line(per_task) == (f"Next: fix {task}, the first failing task in the README's order, then re-run its "
                                   f"check cell (`check_notebook(\"{name}\", task=\"{task}\", verbose=True)`): it "
                                   f"shows pytest's full output.")
    if name == "assignment3":
        assert "causal_mask returned a numpy.ndarray; return a torch.Tensor" in per_task

    suggested = outputs["suggested"]
    assert "--- pytest's output of" in suggested and "quiz" not in suggested.lower()
    assert "\\x1b" not in suggested and "\x1b" not in suggested, suggested  # the kernel sets FORCE_COLOR=1
    assert "(pytest's full output is above)" in next_line(suggested), suggested  # not sent back to verbose=True

    quiz = outputs["check-quiz"]
    assert "questions not answered yet: q1–" in quiz and "answers.toml" not in quiz, quiz
    assert next_line(quiz) == ("Next: answer the quiz in the `ANSWERS` cell (the lines above say what is missing), "
                               f"then re-run its check cell (`check_notebook(\"{name}\", task=\"quiz\")`).")

    final = outputs["check-all"]
    assert "questions not answered yet" in final and "grader check" not in final and "answers.toml" not in final
    assert f'check_notebook("{name}", task="{task}", verbose=True)' in next_line(final)


def test_a_kernel_says_that_hidden_tests_grade_too_in_its_first_check_and_each_check_of_all_tasks(
        executed: tuple[str, dict[str, str]]) -> None:
    """Twenty check cells need not repeat the same three lines: the first check cell of the kernel says it, the
    later ones of one task (or of the quiz) do not, and the final check of every task, before submitting, does."""
    name, outputs = executed
    task = WRONG[name][0]
    reminder = "These are the public tests only. Hidden tests run at grading time"
    said = {role: reminder in outputs[role] for role in (f"check-{task}", "suggested", "check-quiz", "check-all")}
    assert said == {f"check-{task}": True, "suggested": False, "check-quiz": False, "check-all": True}, outputs
    assert outputs["check-all"].count(reminder) == 1


def test_verbose_output_has_no_colour_codes_even_where_colour_is_forced(tmp_path: Path) -> None:
    """Jupyter kernels set FORCE_COLOR=1: pytest's colour codes came out as literal ``\\x1b[...m`` text (printable()
    escapes them), and a coloured path escaped the rewriting to the student's own paths."""
    student_copy(tmp_path, lambda text: text.replace("diagonal=1)", "diagonal=-1)", 1))

    result = run_check("assignment3", "../work", "--task", "causal_mask", "--verbose", cwd=tmp_path / "here",
                       FORCE_COLOR="1", PY_COLORS="1")
    out = result.stdout
    assert "--- pytest's output of" in out, out + result.stderr
    assert "\x1b" not in out and "\\x1b" not in out, out
    locations = set(_LOCATION.findall(out))
    assert locations and [p for p in locations if not (tmp_path / "here" / p).is_file()] == [], out


def test_after_verbose_the_next_step_does_not_send_the_student_back_for_the_output_they_have(tmp_path: Path) -> None:
    student_copy(tmp_path, lambda text: text.replace("diagonal=1)", "diagonal=-1)", 1))

    result = run_check("assignment3", "../work", "--task", "causal_mask", "--verbose", cwd=tmp_path / "here")
    assert next_line(result.stdout) == ("Next: fix causal_mask, the first failing task in the README's order (pytest's "
                                        "full output is above), then run `grader check assignment3 ../work --task "
                                        "causal_mask --verbose`.")


def test_verbose_shows_what_the_students_code_printed(tmp_path: Path) -> None:
    """Print debugging: what the student's function printed in a failing test is part of pytest's full output."""
    student_copy(tmp_path, lambda text: text.replace(
        "    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)",
        "    for row in range(n):\n        print('debug row', row)\n"
        "    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=-1)", 1))

    plain = run_check("assignment3", "../work", "--task", "causal_mask", cwd=tmp_path / "here")
    verbose = run_check("assignment3", "../work", "--task", "causal_mask", "--verbose", cwd=tmp_path / "here")
    assert "debug row" not in plain.stdout, plain.stdout
    assert "debug row 3" in verbose.stdout and "Captured stdout" in verbose.stdout, verbose.stdout


@pytest.mark.parametrize(("task", "words"), [
    ("head_split", "implement head_split (split_heads and merge_heads), the first task"),
    ("tiny_gpt", "implement tiny_gpt (TinyGPT), the first task"),
    ("causal_mask", "implement causal_mask, the first task"),
])
def test_the_next_task_is_named_with_the_functions_the_student_finds_in_their_files(task: str, words: str) -> None:
    """The package's README and stubs name functions, never task ids: ``implement head_split`` sent the student
    looking for a function that does not exist."""
    spec = load_assignment("assignment3")
    outcome = CheckOutcome(package=Path("assignment3"))
    outcome.tasks = [PublicTaskResult(task, [PublicTest("test_one", "not_implemented")], expected=1, done=True)]
    assert next_step(spec, outcome, Invocation.of(spec)).startswith(f"Next: {words} in the README's order not done")


def test_a_watch_rerun_names_the_first_unfinished_task_of_all_not_of_those_it_ran() -> None:
    """A save re-runs the tasks it touched: their first unfinished one is not "the first task in the README's order
    not done yet" while an earlier task, not re-run, is not done either."""
    from autograder.public.render import Printer

    spec = load_assignment("assignment3")
    done = {task: PublicTaskResult(task, [PublicTest("test_one", "passed")], expected=1, done=True)
            for task in ("causal_mask", "attention")}
    stub = PublicTaskResult("head_split", [PublicTest("test_one", "not_implemented")], expected=1, done=True)
    outcome = CheckOutcome(package=Path("assignment3"))
    outcome.tasks = [PublicTaskResult("multi_head_attention", [PublicTest("test_one", "not_implemented")],
                                      expected=1, done=True)]
    outcome.earlier = [*done.values(), stub]  # what run_public_tests keeps of a re-run's earlier results
    written: list[str] = []
    Printer(spec, written.append)("end", outcome, None)
    out = "".join(written)
    assert next_line(out).startswith("Next: implement head_split (split_heads and merge_heads), the first task"), out
    assert "head_split " not in out.split("Next:")[0], out  # the line of a task this run did not check is not printed


def test_a_task_whose_cell_has_a_syntax_error_sends_the_student_to_that_error_not_to_implement_it() -> None:
    """A notebook cell that cannot be parsed defines nothing, so the grader's stubs stand in and its task is "not
    implemented": the student wrote it, and "Next: implement" sent them to write it again."""
    from autograder.submission.notebook.places import CellMap, Unreadable

    spec = load_assignment("assignment3")
    broken = Unreadable("In [5]", "def split_heads(x, heads):", 3, "'(' was never closed", ("split_heads", "helper"))
    outcome = CheckOutcome(package=Path("this notebook"), cell_map=CellMap(unreadable=[broken]))
    outcome.tasks = [PublicTaskResult("head_split", [PublicTest("test_one", "not_implemented")], expected=1)]
    invocation = Invocation.of(spec, "work.ipynb", tasks=("head_split",))
    assert next_step(spec, outcome, invocation) == (
        "Next: fix the syntax error in In [5] (line 3: '(' was never closed): until it parses, split_heads counts "
        f"as not implemented; then {invocation.rerun('head_split')}.")
    elsewhere = Unreadable("cell 9", "x = (", 1, "'(' was never closed")  # no def line names the task's functions
    outcome.cell_map = CellMap(unreadable=[elsewhere])
    assert next_step(spec, outcome, invocation).endswith(
        "If you did write it, fix the syntax error in cell 9 (line 1: '(' was never closed) first.")
