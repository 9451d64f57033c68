"""`grader check`'s "may be caused by X" names X only when a failing test called X's code (recorded by the plugin's
trace of the student's calls, or seen in the failure's traceback)."""

from __future__ import annotations

from pathlib import Path

from autograder.public.hints import dependency_hints
from autograder.public.outcome import CheckOutcome, PublicTaskResult
from autograder.public import outcome
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
