"""WRITING_CHECKS.md is the complete instructor's guide: every public name, tolerance and mutation key is in it,
and its first examples, run as a checks file, pass on the reference and pay no blind answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

import autograder.probe as probe
from autograder.judge.compare import TOLERANCES
from autograder.spec.mutation import EDITS, SCHEMA
from autograder.util.tomlio import loads_toml

DOC = Path(__file__).resolve().parents[2] / "docs" / "WRITING_CHECKS.md"
MUTATION_KEYS = {key.name for table in (*SCHEMA, EDITS) for key in table.keys}  # the loader's own schema


def _spans() -> set[str]:
    """The leading name of every code span (``rows_sum_to_one(*names)`` -> ``rows_sum_to_one``)."""
    return {re.match(r"[\w.@]*", span.lstrip("@")).group(0) for span in re.findall(r"`([^`\n]+)`", DOC.read_text())}


def test_every_public_name_of_the_probe_api_is_documented():
    missing = sorted(name for name in probe.__all__ if name not in _spans())
    assert missing == [], f"document these in docs/WRITING_CHECKS.md: {missing}"


def test_every_tolerance_is_in_the_table_with_its_numbers():
    rows = {m[0]: (float(m[1]), float(m[2])) for m in
            re.findall(r"^\| `(\w+)` \| ([\d.e-]+) \| ([\d.e-]+) \|", DOC.read_text(), re.M)}
    assert rows == {name: (t.rtol, t.atol) for name, t in TOLERANCES.items()}


def test_every_mutation_key_and_both_forms_are_shown():
    text = DOC.read_text()
    assert {key for key in MUTATION_KEYS if f"`{key}`" not in text} == set()
    [example] = [block for block in re.findall(r"```toml\n(.*?)```", text, re.S) if "[[mutation.edits]]" in block]
    single, multiple = loads_toml(example)["mutation"]
    assert {"file", "old", "new"} <= set(single) and "edits" not in single
    assert len(multiple["edits"]) == 2 and "file" not in multiple


def test_the_python_examples_compile():
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S):
        compile(block, str(DOC), "exec")


# -- the guide's first examples, run as a checks file of the assignment `grader new` writes ----------------------

FIRST = 3  # the value check, the property shown by an output, the property as a plain function


def _first_examples() -> str:
    """The guide's first Python examples, as one checks file (the later ones share the first one's import)."""
    return "\n\n".join(re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[:FIRST])


def test_the_first_examples_need_six_concepts_and_nothing_else_of_the_api():
    """The six numbered concepts are all the first examples use: one name of the API, ``check``, whose only
    argument besides the task id is ``holds``."""
    text = DOC.read_text()
    section = text[text.index("## A check: six things to know"):text.index("```python")]
    assert re.findall(r"^(\d)\. \*\*", section, re.M) == ["1", "2", "3", "4", "5", "6"]
    source = _first_examples()
    assert re.findall(r"^from autograder\.probe import (.+)$", source, re.M) == ["check"]
    keywords = {k for call in re.findall(r"@check\(([^)]*)\)", source) for k in re.findall(r"(\w+)=", call)}
    assert keywords == {"holds"}


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    """The assignment `grader new` writes (its reference holds ops.softmax), with its checks file replaced by the
    guide's first examples, loaded as the grader loads them."""
    pytest.importorskip("nbgrader")
    from autograder.authoring.scaffold import new_assignment
    from autograder.probe.checks import task_checks
    from autograder.spec.assignment import load_assignment
    from autograder.spec.reference import load_package

    root = tmp_path_factory.mktemp("course") / "assignments"
    root.mkdir()
    new_assignment("guide", root)
    assignment = load_assignment("guide", root=root)
    checks_file = assignment.root / "hidden" / "checks" / "softmax.py"
    checks_file.write_text(_first_examples())
    checks = task_checks(checks_file, "softmax", assignment.task_ids)
    reference = load_package(assignment.reference, "_reference_guide_examples", assignment.modules)
    return assignment, checks, reference, tmp_path_factory.mktemp("judge")


class _Ops:
    def __init__(self, softmax) -> None:
        self.ops = type("ops", (), {"softmax": staticmethod(softmax)})


def _in_place(scores, temperature=1.0):
    scores.div_(temperature)
    scores.sub_(scores.amax(dim=-1, keepdim=True))
    return scores.exp() / scores.exp().sum(dim=-1, keepdim=True)


BLIND = {"zeros": lambda s, t=1.0: torch.zeros_like(s), "uniform": lambda s, t=1.0: torch.full_like(s, 1 / s.shape[-1]),
         "echo": lambda s, t=1.0: s.clone(), "raising": lambda s, t=1.0: 1 / 0}


def test_the_first_examples_pass_on_the_reference_and_pay_no_blind_answer(scaffolded):
    from autograder.judge.verdict import Judge
    from autograder.probe.context import derive_seed

    assignment, checks, reference, scratch = scaffolded
    judge = Judge(assignment, reference, {}, [], scratch)
    assert [c.name for c in checks] == ["softmax.values", "softmax.leaves_the_scores_unchanged",
                                        "softmax.rows_sum_to_one_when_large"]
    seeds = {c.name: derive_seed(assignment.seed, c.name) for c in checks}
    assert all(judge.passes(c, seeds[c.name], reference) for c in checks)
    for kind, softmax in BLIND.items():
        assert not any(judge.passes(c, seeds[c.name], _Ops(softmax)) for c in checks), kind
    # the property shown by an output catches what the values alone cannot
    assert [judge.passes(c, seeds[c.name], _Ops(_in_place)) for c in checks] == [True, False, True]
