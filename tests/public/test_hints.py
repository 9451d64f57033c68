"""`grader check`'s "may be caused by X" names X only when a failing test called X's code (recorded by the plugin's
trace of the student's calls, or seen in the failure's traceback)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autograder.public import outcome, plugin
from autograder.public.hints import dependency_hints, wrong_used_tasks
from autograder.public.outcome import CheckOutcome, PublicTaskResult
from autograder.spec.assignment import load_assignment

A3 = load_assignment("assignment3")


def _hints(frames: list[str], mask_status: str = "failed", test_status: str = "failed") -> list[str]:
    mask = PublicTaskResult("causal_mask", [outcome.TestResult("t_mask", mask_status)], done=True)
    mha = PublicTaskResult("multi_head_attention", [outcome.TestResult("t_mha", test_status, frames=frames)], done=True)
    if test_status != "failed":
        mha.tests.append(outcome.TestResult("t_other", "failed"))
    return dependency_hints(A3, CheckOutcome(Path("."), [mask, mha]), mha)


def test_a_hint_needs_the_failing_test_to_reach_the_other_tasks_function():
    assert _hints(["attention.MultiHeadAttention.forward", "attention.causal_mask"]) == \
        ["may be caused by causal_mask, which fails: fix that first"]
    assert _hints(["attention.MultiHeadAttention.forward"]) == []  # never reached causal_mask
    assert _hints([]) == []  # an assertion in the test itself


def test_a_method_counts_for_its_class_and_a_not_implemented_test_counts_too():
    frames = ["attention.MultiHeadAttention.forward", "attention.causal_mask"]
    assert _hints(frames, mask_status="not_implemented", test_status="not_implemented") == \
        ["may be caused by causal_mask, not implemented yet: do that first"]
    block = PublicTaskResult("transformer_block", [outcome.TestResult("t", "failed",
                                                               frames=["attention.MultiHeadAttention.__init__"])])
    mha = PublicTaskResult("multi_head_attention", [outcome.TestResult("t", "failed")], done=True)
    assert dependency_hints(A3, CheckOutcome(Path("."), [mha, block]), block) == \
        ["may be caused by multi_head_attention, which fails: fix that first"]


def test_a_watch_reruns_hint_counts_the_last_result_of_a_used_task_it_did_not_rerun():
    """A --watch save of MultiHeadAttention alone re-runs its task only: causal_mask, failing at the last check,
    is still named as a cold check of the same code names it."""
    mask = PublicTaskResult("causal_mask", [outcome.TestResult("t_mask", "failed")], done=True)
    mha = PublicTaskResult("multi_head_attention", [outcome.TestResult(
        "t_mha", "failed", frames=["attention.MultiHeadAttention.forward", "attention.causal_mask"])], done=True)
    rerun = CheckOutcome(Path("."), [mha], earlier=[mask])
    assert dependency_hints(A3, rerun, mha) == dependency_hints(A3, CheckOutcome(Path("."), [mask, mha]), mha) == \
        ["may be caused by causal_mask, which fails: fix that first"]


def test_the_walk_of_uses_goes_through_the_tasks_the_caller_has_no_verdict_on():
    attention = {"attention"}.__contains__
    # one step by default (`grader check` has a verdict on every task): tiny_gpt_training uses tiny_gpt only
    assert wrong_used_tasks(A3, ("tiny_gpt_training",), attention) == []
    unseen = {"tiny_gpt", "transformer_block", "multi_head_attention"}.__contains__  # `grader show`: no figure
    assert wrong_used_tasks(A3, ("tiny_gpt_training",), attention, unseen) == ["attention"]
    # a task with a verdict stops the walk: a right one hides what it uses, a wrong one is named in its place
    assert wrong_used_tasks(A3, ("tiny_gpt_training",), attention, {"tiny_gpt"}.__contains__) == []
    wrong = {"multi_head_attention", "attention"}.__contains__
    assert wrong_used_tasks(A3, ("tiny_gpt_training",), wrong, unseen) == ["multi_head_attention"]
    assert wrong_used_tasks(A3, ("multi_head_attention",), lambda _: True, lambda _: True) == \
        ["causal_mask", "attention", "head_split"]  # never the tasks asked about, in the manifest's order


def test_the_trace_follows_the_students_imports_but_not_other_packages(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "studentpkg").mkdir()
    (tmp_path / "studentpkg" / "__init__.py").write_text("")
    (tmp_path / "studentpkg" / "late.py").write_text("def helper():\n    return 1\n\n\nhelper()\n")
    (tmp_path / "otherpkg_for_trace.py").write_text("def other():\n    return 2\n\n\nother()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    bootstrap = sys.modules["_frozen_importlib"]
    original = bootstrap._find_and_load
    called: list[str] = []

    def tracer(frame, event, arg):  # noqa: ANN001, ANN202 - a trace function's own signature
        if event == "call":
            called.append(frame.f_code.co_name)

    try:
        with plugin._untraced_imports("studentpkg"):
            sys.settrace(tracer)
            try:
                import otherpkg_for_trace  # noqa: F401
                import studentpkg.late  # noqa: F401
            finally:
                sys.settrace(None)
    finally:
        for name in ("otherpkg_for_trace", "studentpkg.late", "studentpkg"):
            sys.modules.pop(name, None)
    assert "helper" in called and "other" not in called
    assert bootstrap._find_and_load is original
