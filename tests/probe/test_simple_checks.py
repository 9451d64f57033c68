"""The simple forms of a check: outputs compared with the reference, a property as a plain function (``holds=``),
and a slip in ``@check``'s arguments refused in one line that names the argument meant."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from autograder.judge.verdict import Judge
from autograder.probe import check, gate_values
from autograder.probe.checks import checks_file_problems
from autograder.probe.context import derive_seed
from autograder.reports.results import ERROR, CheckResult
from autograder.spec.assignment import load_assignment
from autograder.spec.reference import load_package

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def topk():
    """The topk fixture course (read only) and its reference, loaded here."""
    assignment = load_assignment("topk", root=FIXTURES / "assignments")
    return assignment, load_package(assignment.reference, "_reference_topk_simple_checks", assignment.modules)


def _verdict(topk, tmp_path: Path, probe, implementation) -> CheckResult:
    """The judge's verdict on a check for an implementation loaded here (the reference's outputs on the same seed)."""
    assignment, reference = topk
    found = probe.__check__
    seed = derive_seed(assignment.seed, found.name)
    judge = Judge(assignment, reference, {}, [], tmp_path / "judge")
    actual = judge.run_reference_probe(found, seed, implementation)
    return judge.judge(found, seed, actual, CheckResult(found.name, found.description, found.weight, ERROR, seed=seed))


class _Ops:
    """A stand-in package: ``impl.ops.top_k`` is the given function."""

    def __init__(self, top_k) -> None:
        self.ops = type("ops", (), {"top_k": staticmethod(top_k)})


def _in_place(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill_(logits < kth, -math.inf)


def _exactly_k(logits, k):
    """A top-k that breaks ties by position: exactly k kept."""
    kept = torch.full_like(logits, -math.inf)
    indices = logits.topk(k, dim=-1).indices
    return kept.scatter(-1, indices, logits.gather(-1, indices))


def test_a_property_shown_by_an_output_is_judged_by_the_comparison_with_the_reference(topk, tmp_path):
    """``leaves the input unchanged`` written as the guide's first property: the logits after the call are an output,
    compared with the reference's (which leaves them unchanged), in the check that compares the values too."""
    @check("top_k")
    def leaves_the_logits_unchanged(impl, ref, ctx):
        """top_k leaves the logits it is given unchanged"""
        logits = ctx.randn(2, 7)
        kept = impl.ops.top_k(logits, 2)
        return {"top_k(logits (2, 7), k=2)": kept, "the logits after the call": logits}

    _, reference = topk
    assert _verdict(topk, tmp_path, leaves_the_logits_unchanged, reference).status == "passed"
    result = _verdict(topk, tmp_path, leaves_the_logits_unchanged, _Ops(_in_place))
    assert result.status == "failed" and result.message.startswith("the logits after the call: ")
    zeros = _Ops(lambda logits, k: torch.zeros_like(logits))  # leaves the logits alone, computes nothing
    assert _verdict(topk, tmp_path, leaves_the_logits_unchanged, zeros).status == "failed"
    assert leaves_the_logits_unchanged.__check__.description == "top_k leaves the logits it is given unchanged"


def _two_per_row(outputs):
    """at least 2 logits of each row stay finite"""
    return bool((outputs["top_k(logits (3, 6), k=2)"].isfinite().sum(-1) >= 2).all())


def test_holds_judges_a_plain_property_of_the_outputs_once_they_equal_the_reference(topk, tmp_path):
    @check("top_k", holds=_two_per_row)
    def keeps_two(impl, ref, ctx):
        return {"top_k(logits (3, 6), k=2)": impl.ops.top_k(ctx.randn(3, 6), 2)}

    _, reference = topk
    assert _verdict(topk, tmp_path, keeps_two, reference).status == "passed"
    # the property holds for code that keeps everything, but its values are wrong: the comparison gates it
    echo = _verdict(topk, tmp_path, keeps_two, _Ops(lambda logits, k: logits.clone()))
    assert echo.status == "failed" and echo.message.startswith("top_k(logits (3, 6), k=2): ")


def test_a_property_that_does_not_hold_says_its_docstring_or_its_assertion(topk, tmp_path):
    def never(outputs):
        """every row keeps no logit at all"""
        return False

    def asserting(outputs):
        assert outputs["top_k(logits (3, 6), k=2)"].isinf().all(), "top_k kept some logits"

    for holds, said in ((never, "every row keeps no logit at all: does not hold"), (asserting, "top_k kept some logits")):
        @check("top_k", holds=holds)
        def keeps(impl, ref, ctx):
            return {"top_k(logits (3, 6), k=2)": impl.ops.top_k(ctx.randn(3, 6), 2)}

        _, reference = topk
        result = _verdict(topk, tmp_path, keeps, reference)
        assert (result.status, result.message) == ("failed", said)


def test_holds_without_the_comparison_waits_for_the_gate_values(topk, tmp_path):
    """Outputs with several right answers (ties kept or broken) are not compared; the gate values are, first."""
    def at_least_two(outputs):
        """at least 2 logits of each row with ties stay finite"""
        return bool((outputs["top_k(tied logits (5, 6), k=2)"].isfinite().sum(-1) >= 2).all())

    @check("top_k", holds=at_least_two, compare_reference=False)
    def keeps_k_with_ties(impl, ref, ctx):
        ordinary = gate_values({"top_k(logits (4, 10), k=3)": impl.ops.top_k(ctx.randn(4, 10), 3)})
        tied = (ctx.randn(5, 6) * 2).round() / 2
        return {**ordinary, "top_k(tied logits (5, 6), k=2)": impl.ops.top_k(tied, 2)}

    _, reference = topk
    assert _verdict(topk, tmp_path, keeps_k_with_ties, reference).status == "passed"
    assert _verdict(topk, tmp_path, keeps_k_with_ties, _Ops(_exactly_k)).status == "passed"  # ties broken: right too
    everything = _verdict(topk, tmp_path, keeps_k_with_ties, _Ops(lambda logits, k: logits.clone()))
    assert everything.status == "failed" and "does not compute the right values yet" in everything.message


def test_check_refuses_an_argument_it_does_not_take_naming_the_one_meant(tmp_path):
    with pytest.raises(TypeError) as refused:
        check("top_k", points=4)
    assert str(refused.value) == (
        "@check(points=4): check() has no argument 'points' — did you mean weight=? (the check's share of its "
        "task's points, relative to the task's other checks; a task's points are set in assignment.toml)")
    with pytest.raises(TypeError, match=r"@check\(descripton='x'\): .* did you mean description=\?$"):
        check("top_k", descripton="x")
    with pytest.raises(TypeError, match="give one of them"):
        check("top_k", holds=_two_per_row, verify=lambda s, r, c: [])
    checks = tmp_path / "top_k.py"  # as verify and grading load the file: one line, at the decorator
    checks.write_text('from autograder.probe import check\n\n\n@check("top_k", points=4)\n'
                      'def values(impl, ref, ctx):\n    return {}\n')
    assert checks_file_problems(checks, "top_k", ["top_k"])[1] == [
        f"{checks}:4: TypeError: @check(points=4): check() has no argument 'points' — did you mean weight=? (the "
        f"check's share of its task's points, relative to the task's other checks; a task's points are set in "
        f"assignment.toml)"]


def test_a_number_given_as_a_tolerance_is_refused_once_with_every_named_tolerance_once(tmp_path):
    checks = tmp_path / "top_k.py"
    checks.write_text('from autograder.probe import check\n\n\n@check("top_k", tolerance=0.05)\n'
                      'def values(impl, ref, ctx):\n    return {}\n')
    [problem] = checks_file_problems(checks, "top_k", ["top_k"])[1]
    assert problem == (
        f"{checks}:4: check(tolerance=0.05): a tolerance is a name, not a number — 0.05 is looser than every named "
        f"one (the loosest is deep); name one of: float32 (rtol 0.0001, atol 1e-05), deep (rtol 0.001, atol "
        f"0.0001), exact (rtol 0, atol 0), angles (rtol 0.0001, atol 0.0001); they live in "
        f"autograder/judge/compare.py, each with why")
    for name in ("float32", "deep", "exact", "angles"):
        assert problem.count(f"{name} (") == 1
