"""A task built on the reference sees only what it uses: never the reference of its own functions."""

from __future__ import annotations

import ast

import pytest

from autograder.spec.assignment import load_assignment
from autograder.spec.reference import prune_reference

ASSIGNMENT = load_assignment("assignment3")


def defined_names(source: str) -> set[str]:
    return {node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


@pytest.mark.parametrize("task", ASSIGNMENT.tasks, ids=lambda t: t.id)
def test_pruned_reference_never_defines_the_tasks_own_functions(task):
    pruned = prune_reference(ASSIGNMENT.reference, ASSIGNMENT.modules, task.uses)
    for qualified in task.functions:
        module, name = qualified.split(".")
        assert name not in defined_names(pruned.get(module, "")), qualified


@pytest.mark.parametrize("task", ASSIGNMENT.tasks, ids=lambda t: t.id)
def test_pruned_reference_defines_everything_it_uses(task):
    pruned = prune_reference(ASSIGNMENT.reference, ASSIGNMENT.modules, task.uses)
    for qualified in task.uses:
        module, name = qualified.split(".")
        assert name in defined_names(pruned[module])
    for module, source in pruned.items():
        compile(source, module, "exec")


def test_the_closure_follows_relative_imports():
    pruned = prune_reference(ASSIGNMENT.reference, ASSIGNMENT.modules, ("tiny_gpt.TinyGPT",))
    assert "TransformerBlock" in defined_names(pruned["attention"])
    assert "sinusoidal_positions" in defined_names(pruned["positions"])
    assert "train" not in defined_names(pruned["tiny_gpt"])
    assert "kv_cache" not in pruned


def test_nothing_used_means_no_reference_at_all():
    assert prune_reference(ASSIGNMENT.reference, ASSIGNMENT.modules, ()) == {}


def test_type_hints_do_not_pull_a_class_in(tmp_path):
    (tmp_path / "m.py").write_text(
        "class Graded:\n    pass\n\n\n"
        "def helper(layer: Graded, n: int = 1) -> Graded:\n    return layer\n\n\n"
        "total: Graded = None\n"
    )
    pruned = prune_reference(tmp_path, ("m",), ("m.helper",))
    assert defined_names(pruned["m"]) == {"helper"}


def test_a_used_name_still_pulls_its_class_in(tmp_path):
    (tmp_path / "m.py").write_text("class Graded:\n    pass\n\n\ndef build():\n    return Graded()\n")
    assert defined_names(prune_reference(tmp_path, ("m",), ("m.build",))["m"]) == {"build", "Graded"}
