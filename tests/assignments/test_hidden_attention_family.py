"""Fast in-process audit of the attention-family hidden checks, known mistakes and correct variants.

Runs every probe of causal_mask, attention, head_split, multi_head_attention and transformer_block in this
process (no sandbox, no substitution of ``uses``), the way the grader judges outputs: the reference must pass
every check, each known mistake must fail a check of its own task, each correct variant must pass them all.
The full sandboxed audit (other tasks unaffected, hints shown) is `grader`'s audit; this catches stale edits and
broken checks in seconds.
"""

from __future__ import annotations

import pytest
import torch
from in_process import InProcess  # beside these tests

from autograder.probe import Context
from autograder.spec.assignment import load_assignment
from autograder.spec.mutation import load_mutations
from autograder.util.tomlio import load_toml

TASKS = ("causal_mask", "attention", "head_split", "multi_head_attention", "transformer_block")
FAMILY_FILE = "attention_family.toml"

ASSIGNMENT = load_assignment("assignment3")
IN_PROCESS = InProcess(ASSIGNMENT, "family")
REFERENCE = IN_PROCESS.reference
CHECKS = {task: IN_PROCESS.checks(task) for task in TASKS}


def _family(which: str):
    """This family's mutations (the ones declared in attention_family.toml), in file order."""
    folder = ASSIGNMENT.root / ("hidden/mistakes" if which == "mistakes" else "hidden/variants")
    mine = {entry["id"] for entry in load_toml(folder / FAMILY_FILE).get("mutation", [])}
    return [m for m in load_mutations(ASSIGNMENT, which) if m.id in mine]


MISTAKES = _family("mistakes")
VARIANTS = _family("variants")


def test_enough_mutations_with_hints():
    assert len(MISTAKES) >= 22 and len(VARIANTS) >= 6
    assert all(m.task in TASKS and m.hint and m.description for m in MISTAKES)
    hints = [m.hint for m in MISTAKES]
    assert len(set(hints)) == len(hints), "every mistake needs its own hint"


@pytest.mark.parametrize("task", TASKS)
def test_reference_passes_every_check(task):
    failing = [c.name for c in CHECKS[task] if not IN_PROCESS.passes(c, REFERENCE)]
    assert not failing


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.id)
def test_mistake_fails_its_task(mistake, tmp_path):
    package = IN_PROCESS.package(mistake, tmp_path)
    assert any(not IN_PROCESS.passes(c, package) for c in CHECKS[mistake.task]), f"{mistake.id} is not caught"


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda m: m.id)
def test_variant_passes_everything(variant, tmp_path):
    package = IN_PROCESS.package(variant, tmp_path)
    failing = [c.name for task in TASKS for c in CHECKS[task] if not IN_PROCESS.passes(c, package)]
    assert not failing, f"{variant.id} fails {failing}"


def test_the_mask_type_is_judged_on_the_decoded_value_not_on_a_reported_name():
    from autograder.judge.transport import Foreign

    check = next(c for c in CHECKS["causal_mask"] if c.name.endswith("mask_dtype_and_shape"))
    right = {f"causal_mask({n})": torch.ones(n, n, dtype=torch.bool).triu(1) for n in (1, 6)}
    pattern = {f"values: causal_mask({n}) as bool": mask for n, mask in zip((1, 6), right.values())}
    reference = {**right, **pattern}
    spoof = {"causal_mask(1)": Foreign("assignment3.attention.Tensor"), "causal_mask(6)": torch.ones(6, 6), **pattern}
    messages = list(check.verify(spoof, reference, Context(1)))
    assert messages == ["causal_mask(1) must be a torch.Tensor, got assignment3.attention.Tensor",
                        "causal_mask(6) must be a bool tensor, got a floating-point dtype (torch.float32)"]
    assert list(check.verify(reference, reference, Context(1))) == []
    blind = {name: torch.zeros_like(mask) for name, mask in reference.items()}  # bool, (n, n), all False
    assert list(check.verify(blind, reference, Context(1))), "a mask of the right type but no pattern earned the check"
