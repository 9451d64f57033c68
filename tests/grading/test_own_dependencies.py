"""Substitution never punishes correct code: a helper the student added to their own class, used by another task."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.grading.dependencies import own_dependencies
from autograder.grading.grader import Grader
from autograder.spec.assignment import load_assignment
from autograder.spec.mutation import Mutation, apply_mutation, load_mutations

HELPER_VARIANTS = {"assignment2": ("variant_copy_through_stacked_helper", "weight_copy", "MultiHeadCausalAttentionStacked"),
                   "assignment3": ("variant_train_configure_optimizers", "tiny_gpt_training", "TinyGPT")}


def variant(assignment, mutation_id: str) -> Mutation:
    return next(m for m in load_mutations(assignment, "variants") if m.id == mutation_id)


def test_only_dependencies_that_pass_their_task_are_kept_in_the_context_they_were_verified_in() -> None:
    assignment = load_assignment("assignment3")
    decode = assignment.task("kv_cache_decode")
    passing = {"multi_head_attention"}
    context = own_dependencies(assignment, decode, lambda owner: owner.id in passing)
    assert context is not None and context.kept == ("attention.MultiHeadAttention",)
    # what multi_head_attention was graded with stays the reference's, here as in that task
    assert set(context.uses) == {"attention.causal_mask", "attention.scaled_dot_product_attention",
                                 "attention.split_heads", "attention.merge_heads"}
    # a dependency that its kept neighbour's task was graded with stays the reference's
    passing.add("attention")
    context = own_dependencies(assignment, decode, lambda owner: owner.id in passing)
    assert context.kept == ("attention.MultiHeadAttention",)
    assert own_dependencies(assignment, decode, lambda owner: False) is None
    # weight_copy's split layer was verified with the reference of weight_copy's own function: never kept
    assignment2 = load_assignment("assignment2")
    context = own_dependencies(assignment2, assignment2.task("weight_copy"), lambda owner: True)
    assert context.kept == ("modules.MultiHeadCausalAttentionStacked",)
    assert "modules.MultiHeadCausalAttention" in context.uses


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HELPER_VARIANTS))
def test_a_helper_added_to_the_students_own_class_keeps_full_marks(name: str, tmp_path: Path) -> None:
    assignment = load_assignment(name)
    mutation_id, task_id, cls = HELPER_VARIANTS[name]
    folder = apply_mutation(assignment.reference, variant(assignment, mutation_id), tmp_path / assignment.package)
    with Grader(assignment) as grader:
        helper_kept = grader.grade(folder, only={task_id}).tasks[0]
        assert (helper_kept.score, helper_kept.status) == (helper_kept.max_score, "passed"), helper_kept.feedback
        assert f"graded with your own {cls}, which pass their own task" in helper_kept.feedback
        if name != "assignment3":
            return
        # the student's TinyGPT fails its own task (no final norm): the reference stands in, named as the cause
        source = (folder / "tiny_gpt.py").read_text()
        (folder / "tiny_gpt.py").write_text(source.replace("return self.head(self.norm(x))", "return self.head(x)"))
        report = grader.grade(folder, only={task_id, "tiny_gpt"})
    tiny_gpt, training = report.tasks
    assert tiny_gpt.score < tiny_gpt.max_score and training.score < training.max_score
    train = next(c for c in training.checks if not c.passed)
    assert train.message.startswith("the reference tiny_gpt.TinyGPT stood in for yours in this task and has no "
                                    "'configure_optimizers', which your code uses"), train.message
    assert "AttributeError" in train.message
