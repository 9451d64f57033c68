"""What ``grader check`` says where it said something wrong or too much (issue 41): the next step under ``--watch``
(what blocks tasks before the quiz; saving, not a command), a renamed function said once with the tasks it blocks,
the tests after the first that timed out, a stub held back by a hang, a kernel's cell never run, a check of the
quiz alone."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from test_check_robustness import REPO, copy_assignment, work_from_reference  # beside these tests

from autograder.public import notebook as public_notebook
from autograder.public.hints import stub_tasks
from autograder.public.invocation import Invocation
from autograder.public.outcome import CheckOutcome, MissingName, PublicTaskResult
from autograder.public.outcome import TestResult as PublicTest  # not a test class for pytest to collect
from autograder.public.render import Printer, next_step, task_lines
from autograder.public.runner import check_runtime, run_public_tests
from autograder.public.watch import watch_and_check
from autograder.spec.assignment import Assignment, load_assignment
from autograder.submission.notebook.read import Cell

A3 = load_assignment("assignment3")
SAVE = "then save it: this watch checks it again."


def _next_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("Next: ")]


def _printed(assignment: Assignment, package: Path, selected: list[str] | None, invocation: Invocation | None = None,
             quiz_only: bool | None = None) -> str:
    out = io.StringIO()
    printer = Printer(assignment, out.write, invocation=invocation)
    printer.header(CheckOutcome(package=package), quiz_only=quiz_only)
    run_public_tests(assignment, package, selected=selected, listener=printer)
    return out.getvalue()


@pytest.mark.slow
def test_under_watch_an_import_error_comes_before_the_quiz_and_saving_is_the_next_step(tmp_path: Path) -> None:
    """With a syntax error in attention.py, saving answers.toml re-checks the quiz alone: its next step was "answer
    the quiz" while nine tasks were blocked, and a watch's steps said to run `grader check` again."""
    package = work_from_reference("assignment3", tmp_path)
    shutil.copyfile(REPO / "student_template" / "assignment3" / "answers.toml", package / "answers.toml")
    with open(package / "attention.py", "a") as handle:
        handle.write("\ndef broken(:\n")
    written: list[str] = []

    def write(text: str) -> None:
        written.append(text)
        if text.startswith("\nwatching "):  # the first check is done: the student saves their answers
            with open(package / "answers.toml", "a") as answers:
                answers.write("# thinking about q1\n")
        if len(_next_lines("".join(written))) == 2 and "stopped" not in text:
            raise KeyboardInterrupt  # Ctrl-C once the save's check is printed

    runtime = check_runtime()
    try:
        watch_and_check(A3, package, None, write, poll=0.05, runtime=runtime)
    finally:
        runtime.close()
    out = "".join(written)
    first, second = _next_lines(out)
    assert first.startswith("Next: fix attention.py, line ") and first.endswith(f"(it cannot be imported), {SAVE}"), out
    assert second == f"Next: fix attention.py: it cannot be imported (the error is above, in the check that ran its " \
                     f"tasks), {SAVE}", out
    rerun = out.split("answers.toml saved: re-running the quiz format check\n", 1)[1]
    assert rerun.startswith(f"Quiz answers of assignment3 in {package}\n\nquiz: 0 of 16"), rerun
    assert "grader check" not in first + second and out.rstrip().endswith("stopped watching"), out


def test_a_watch_words_each_next_step_as_a_save_and_a_restart_as_a_command() -> None:
    watch = Invocation.of(A3, tasks=("attention",), watch=True)
    failing = CheckOutcome(package=Path("assignment3"))
    failing.tasks = [PublicTaskResult("attention", [PublicTest("t", "failed")], expected=1, done=True)]
    assert next_step(A3, failing, watch) == (
        "Next: fix attention (scaled_dot_product_attention), the first failing task in the README's order, then save "
        "it: this watch checks it again (`grader check assignment3 --task attention --verbose` shows pytest's full "
        "output).")
    stopped = CheckOutcome(package=Path("assignment3"))
    stopped.tasks = [PublicTaskResult("attention", [PublicTest("t", "not_run")], expected=1, done=True)]
    assert next_step(A3, stopped, watch) == ("Next: stop this watch (Ctrl-C) and run `grader check assignment3 --task "
                                             "attention`: the tests of attention did not run.")


@pytest.mark.slow
def test_a_renamed_function_is_said_once_with_the_tasks_it_blocks(tmp_path: Path) -> None:
    """Each of the three tasks whose test file imports causal_mask said the same sentence, each as 0/1 (their
    totals are 2, 5 and 3); the README promises it once, with the tasks it blocks, as an import error."""
    package = work_from_reference("assignment3", tmp_path)
    text = (package / "attention.py").read_text()
    (package / "attention.py").write_text(text.replace("def causal_mask(", "def make_causal_mask("))
    out = _printed(A3, package, ["causal_mask", "attention", "head_split"])
    sentence = f"{package}/attention.py has no causal_mask (renamed or removed? the public tests import it by that name)"
    assert out.count("has no causal_mask") == 1 and f"error: {sentence}\n" in out, out
    assert "    this blocks causal_mask, attention, head_split: fix it first\n" in out, out
    for task in ("causal_mask", "attention", "head_split"):
        assert f"{task.ljust(20)}   -/-  blocked: no causal_mask in {package}/attention.py (see above)\n" in out, out
    assert "0/1" not in out and _next_lines(out)[0].startswith("Next: give causal_mask its name back in "), out


def test_the_tests_after_the_first_that_timed_out_are_said_to_have_timed_out() -> None:
    result = PublicTaskResult("attention", [PublicTest("t1", "timeout", ["did not finish within 5 s"]),
                                            PublicTest("t2", "timeout"), PublicTest("t3", "failed"),
                                            PublicTest("t4", "timeout")], expected=4, done=True)
    assert task_lines(result, 9)[2:] == ["    also timed out: t2, t4", "    also failing: t3"]


def test_a_task_still_as_released_is_not_implemented_even_when_a_hang_holds_its_tests_back(tmp_path: Path) -> None:
    """Its stubs would only raise NotImplementedError: "not checked: it uses attention, which hung" sent the
    student to attention for a task they have not started."""
    assert stub_tasks(A3, A3.template) == {task.id for task in A3.tasks}
    assert stub_tasks(A3, A3.reference) == set()
    outcome = CheckOutcome(package=Path("assignment3"))
    hung = PublicTaskResult("attention", [PublicTest("t", "timeout")], expected=1, done=True)
    stub = PublicTaskResult("multi_head_attention", expected=5, done=True, stub=True)
    written = PublicTaskResult("transformer_block", expected=2, done=True)
    outcome.tasks = [hung, stub, written]
    out = io.StringIO()
    Printer(A3, out.write)("end", outcome, None)
    assert "multi_head_attention   0/5  not implemented\n" in out.getvalue(), out.getvalue()
    assert "transformer_block      -/-  not checked: it uses attention, which hung" in out.getvalue(), out.getvalue()


@pytest.mark.slow
def test_a_stub_task_held_back_by_a_hang_says_not_implemented_in_a_real_check(tmp_path: Path) -> None:
    root = tmp_path / "course"
    copy_assignment("assignment3", root)
    short = load_assignment("assignment3", root / "assignments")
    package = tmp_path / "work" / "assignment3"
    shutil.copytree(REPO / "student_template" / "assignment3", package)  # the student's start: every task a stub
    text = (package / "attention.py").read_text()
    stub = "    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    body = text.index(stub, text.index("def scaled_dot_product_attention("))
    (package / "attention.py").write_text(text[:body] + "    while True:\n        pass\n" + text[body + len(stub):])
    out = _printed(short, package, ["attention", "multi_head_attention"])
    assert "multi_head_attention   0/5  not implemented\n" in out and "not checked" not in out, out


@pytest.mark.slow
def test_a_kernel_cell_filled_in_but_never_run_is_said_so(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A check cell tests the cells the kernel ran: causal_mask's cell, written but not run, was "not implemented",
    and the next step said to implement it."""
    monkeypatch.setattr(public_notebook, "kernel_cells", lambda: [Cell("In [1]", "import torch")])
    public_notebook.check_notebook("assignment3", task="causal_mask")
    out = capsys.readouterr().out
    assert ("causal_mask            0/2  not implemented: no cell this kernel has run defines causal_mask (write "
            "causal_mask in its cell and run it)\n") in out, out
    assert _next_lines(out) == ['Next: implement causal_mask in its cell and run that cell (a check cell tests the '
                                'cells this kernel has run), then re-run its check cell '
                                '(`check_notebook("assignment3", task="causal_mask")`).'], out


def test_a_check_of_the_quiz_alone_has_no_empty_public_tests_header(tmp_path: Path) -> None:
    package = tmp_path / "assignment3"
    package.mkdir()
    shutil.copyfile(REPO / "student_template" / "assignment3" / "answers.toml", package / "answers.toml")
    out = _printed(A3, package, [], Invocation.of(A3, tasks=("quiz",)))
    assert out.startswith(f"Quiz answers of assignment3 in {package}\n\nquiz: 0 of 16 answers"), out
    assert "Public tests" not in out and "These are the public tests only" not in out, out


def test_a_missing_name_blocks_and_is_named_in_the_task_line() -> None:
    result = PublicTaskResult("attention", [PublicTest("test_attention.py", "failed")], expected=5, done=True,
                              missing=MissingName("assignment3/attention.py", "causal_mask"))
    assert result.status == "blocked"
    assert task_lines(result, 9) == ["attention   -/-  blocked: no causal_mask in assignment3/attention.py (see above)"]
