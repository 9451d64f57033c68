"""Assignment 2 ("Attention from scratch") on the shared framework: declaration, reference, template, quiz, hidden
checks, known mistakes and correct variants.

The fast tests run every probe in this process, judged the way the grader judges (outputs encoded and decoded
through the transport, compared with the reference, then verified): the reference passes every check, each known
mistake fails a check of its own task, each correct variant passes everything. The slow tests grade in the
sandbox: the reference scores 100, the template 0 with every task not implemented, and a broken function costs
only its own task (the reference stands in for what other tasks build on).
"""

from __future__ import annotations

import ast
import inspect
import re

import numpy as np
import pytest
import torch
from in_process import InProcess  # beside these tests

from autograder.authoring.verify import check_quiz_key
from autograder.grading.grader import Grader
from autograder.public.runner import run_public_tests
from autograder.reports.results import NOT_IMPLEMENTED, PASSED
from autograder.spec.assignment import load_assignment
from autograder.spec.mutation import load_mutations
from autograder.spec.quiz import load_key, load_questions, read_answers
from autograder.spec.reference import load_package, prune_reference

ASSIGNMENT = load_assignment("assignment2")
IN_PROCESS = InProcess(ASSIGNMENT, "a2")
REFERENCE = IN_PROCESS.reference
MISTAKES = load_mutations(ASSIGNMENT, "mistakes")
VARIANTS = load_mutations(ASSIGNMENT, "variants")

# The notes' toy example: one decoder query over three encoder states.
QUERY = np.array([0.9, 0.1, 0.8])
STATES = np.array([[0.8, 0.1, 0.0], [0.2, 0.9, 0.1], [0.7, 0.0, 0.9]])


CHECKS = {task.id: IN_PROCESS.checks(task.id) for task in ASSIGNMENT.tasks}


# -- declaration -------------------------------------------------------------------------------------------


def test_points_add_up_to_100_and_every_task_has_checks():
    assert ASSIGNMENT.max_score == 100
    assert ASSIGNMENT.quiz is not None
    for task in ASSIGNMENT.tasks:
        assert task.checks.is_file(), task.id
        assert CHECKS[task.id], f"{task.id} declares no check"


def test_uses_point_at_reference_definitions_of_other_tasks():
    for task in ASSIGNMENT.tasks:
        for qualified in task.uses:
            module, name = qualified.split(".")
            assert hasattr(getattr(REFERENCE, module), name), qualified
            owner = ASSIGNMENT.owner_of(qualified)
            assert owner is not None and owner.id != task.id, qualified


def test_no_task_finds_the_reference_of_its_own_code_in_the_worker():
    """The pruned reference (what a task uses, and what that needs) never holds the task's own functions."""
    for task in ASSIGNMENT.tasks:
        pruned = prune_reference(ASSIGNMENT.reference, ASSIGNMENT.modules, task.uses)
        defined = {node.name for source in pruned.values() for node in ast.parse(source).body
                   if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        assert not defined & {q.split(".")[1] for q in task.functions}, task.id


def test_every_code_task_has_public_tests_and_every_marker_names_a_task():
    markers = []
    for path in sorted(ASSIGNMENT.public_tests.glob("test_*.py")):
        markers += re.findall(r"""mark\.task\(\s*["']([A-Za-z0-9_]+)["']""", path.read_text())
    assert set(markers) <= {t.id for t in ASSIGNMENT.tasks}
    assert {t.id for t in ASSIGNMENT.tasks} <= set(markers)


# -- the reference: the notes' numbers and the documented contract ----------------------------------------


def test_notes_toy_example_scores_weights_and_context():
    np.testing.assert_allclose(STATES @ QUERY, [0.73, 0.35, 1.35], atol=1e-12)
    context, weights = REFERENCE.numpy_attention.soft_attention(QUERY, STATES)
    scores = np.array([0.73, 0.35, 1.35])
    np.testing.assert_allclose(weights, np.exp(scores) / np.exp(scores).sum(), rtol=1e-12)
    assert np.argmax(weights) == 2  # most weight on h3
    assert np.all(weights > 0.19)  # soft: every state contributes
    np.testing.assert_allclose(context, weights @ STATES, rtol=1e-12)
    np.testing.assert_allclose(context, [0.6317, 0.2020, 0.4915], atol=5e-5)


def test_softmax_is_stable_and_keeps_the_dtype():
    softmax = REFERENCE.numpy_attention.softmax
    np.testing.assert_allclose(softmax(np.array([1000.0, 1001.0, 1002.0])), softmax(np.array([0.0, 1.0, 2.0])))
    assert softmax(np.zeros(3, dtype=np.float32)).dtype == np.float32
    x = np.array([[1000.0, 0.0], [-1000.0, -1001.0]])
    np.testing.assert_allclose(softmax(x).sum(axis=-1), [1.0, 1.0])


def test_stacked_and_split_heads_agree_after_the_copy():
    modules = REFERENCE.modules
    torch.manual_seed(0)
    stacked = modules.MultiHeadCausalAttentionStacked(5, 12, 8, 3, dropout=0.5, bias=True).eval()
    split = modules.MultiHeadCausalAttention(5, 12, 8, 3, dropout=0.5, bias=True).eval()
    modules.copy_stacked_to_split(stacked, split)
    x = torch.randn(2, 8, 5)
    with torch.no_grad():
        torch.testing.assert_close(split(x), stacked(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        modules.copy_stacked_to_split(stacked, modules.MultiHeadCausalAttention(5, 12, 8, 4))


def test_mask_is_a_bool_buffer_that_follows_to():
    layer = REFERENCE.modules.CausalSelfAttention(4, 3, 6)
    assert "mask" in dict(layer.named_buffers()) and "mask" not in dict(layer.named_parameters())
    assert layer.to(torch.float64).mask.dtype == torch.bool
    assert layer.to("meta").mask.device.type == "meta"


# -- quiz -----------------------------------------------------------------------------------------------------


def test_quiz_key_is_complete_and_matches_the_reference_answers():
    questions = load_questions(ASSIGNMENT.quiz)
    key = load_key(ASSIGNMENT.quiz)
    assert 8 <= len(questions) <= 12
    assert set(key) == {q.id for q in questions}
    for question in questions:
        assert key[question.id]["answer"] in question.options, question.id
        assert key[question.id]["explanation"], question.id
    answers, problem = read_answers(ASSIGNMENT.reference / ASSIGNMENT.quiz.answers_file)
    assert problem is None
    assert {q: a for q, a in answers.items()} == {q: v["answer"] for q, v in key.items()}
    assert check_quiz_key(ASSIGNMENT).ok


# -- template -------------------------------------------------------------------------------------------------


def test_template_is_current():
    pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install -e '.[instructor]')")
    from autograder.authoring.template import template_drift

    assert template_drift(ASSIGNMENT) == [], "run `grader template assignment2`"


def test_template_imports_and_every_graded_function_raises_not_implemented():
    package = load_package(ASSIGNMENT.template, "_test_assignment2_template", ASSIGNMENT.modules)
    for task in ASSIGNMENT.tasks:
        for qualified in task.functions:
            module, name = qualified.split(".")
            target = getattr(getattr(package, module), name)
            arguments = [None for p in inspect.signature(target).parameters.values()
                         if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            with pytest.raises(NotImplementedError):
                target(*arguments)


def test_reference_regions_are_inside_function_bodies_only():
    for module in ASSIGNMENT.modules:
        source = (ASSIGNMENT.reference / f"{module}.py").read_text()
        tree = ast.parse(source)
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for number, line in enumerate(source.splitlines(), start=1):
            if line.strip() == "### BEGIN SOLUTION":
                assert any(f.body[0].lineno < number <= f.end_lineno for f in functions), f"{module}.py:{number}"


# -- hidden checks, in process -----------------------------------------------------------------------------


def test_enough_mutations_with_distinct_hints():
    assert len(MISTAKES) >= ASSIGNMENT.audit.min_mistakes and len(VARIANTS) >= ASSIGNMENT.audit.min_variants
    assert all(m.task in CHECKS and m.hint and m.description for m in MISTAKES)
    assert {m.task for m in MISTAKES} == set(CHECKS), "every code task has known mistakes"
    hints = [m.hint for m in MISTAKES]
    assert len(set(hints)) == len(hints), "every mistake needs its own hint"


@pytest.mark.parametrize("task", sorted(CHECKS))
def test_reference_passes_every_check(task):
    assert [c.name for c in CHECKS[task] if not IN_PROCESS.passes(c, REFERENCE)] == []


@pytest.mark.filterwarnings("ignore::UserWarning")  # e.g. a mistake's x.T on a batch
@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.id)
def test_mistake_fails_a_check_of_its_task(mistake, tmp_path):
    package = IN_PROCESS.package(mistake, tmp_path)
    assert any(not IN_PROCESS.passes(c, package) for c in CHECKS[mistake.task]), f"{mistake.id} is not caught"


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda m: m.id)
def test_variant_passes_every_check(variant, tmp_path):
    package = IN_PROCESS.package(variant, tmp_path)
    failing = [c.name for checks in CHECKS.values() for c in checks if not IN_PROCESS.passes(c, package)]
    assert failing == [], f"{variant.id} fails {failing}"


# -- sandboxed grading -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def grader():
    with Grader(ASSIGNMENT) as shared:
        yield shared


@pytest.mark.slow
def test_reference_scores_100(grader):
    report = grader.grade(ASSIGNMENT.reference)
    assert report.score == report.max_score == 100, [(t.id, t.feedback) for t in report.tasks]
    assert all(t.status == PASSED for t in report.tasks)
    assert report.notes == []


@pytest.mark.slow
def test_template_scores_0_with_every_task_not_implemented(grader):
    report = grader.grade(ASSIGNMENT.template)
    assert report.score == 0
    assert {t.id: t.status for t in report.tasks if t.id != "quiz"} == {
        t.id: NOT_IMPLEMENTED for t in ASSIGNMENT.tasks}


@pytest.mark.slow
@pytest.mark.parametrize(("function", "task"), [("numpy_attention.softmax", "softmax"),
                                                ("modules.CausalSelfAttention", "causal_self_attention"),
                                                ("modules.copy_stacked_to_split", "weight_copy")])
def test_a_broken_function_costs_only_its_task(grader, tmp_path, function, task):
    """softmax is used by three tasks, CausalSelfAttention and the copy helper by the multi-head tasks."""
    module, name = function.split(".")
    package = tmp_path / "assignment2"
    package.mkdir()
    for file in ASSIGNMENT.student_files:
        (package / file).write_bytes((ASSIGNMENT.reference / file).read_bytes())
    path = package / f"{module}.py"
    source = path.read_text()
    node = next(n for n in ast.parse(source).body if getattr(n, "name", None) == name)
    lines = source.splitlines(keepends=True)
    for index in range(node.lineno - 1, node.end_lineno):
        if lines[index].strip() == "### BEGIN SOLUTION":
            indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
            lines[index] += f"{indent}raise RuntimeError('deliberately broken')\n"
    path.write_text("".join(lines))
    report = grader.grade(package)
    lost = {t.id for t in report.tasks if t.score < t.max_score}
    assert lost == {task}, [(t.id, t.feedback) for t in report.tasks if t.id in lost]


@pytest.mark.slow
def test_public_tests_pass_on_the_reference_and_are_not_implemented_on_the_template():
    reference = run_public_tests(ASSIGNMENT, ASSIGNMENT.reference)
    assert reference.ok, [(t.task, t.first_failure) for t in reference.tasks]
    template = run_public_tests(ASSIGNMENT, ASSIGNMENT.template)
    assert {t.task: t.status for t in template.tasks} == {t.id: "not implemented" for t in ASSIGNMENT.tasks}
