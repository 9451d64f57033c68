"""`grader verify` runs what students run on the reference (issue 43): a public test that fails on it, and a figure
that shows a ✗ drawn from it, are named at their definitions with the fix; a -inf the figure declares right is no ✗."""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

import torch

from autograder.spec.assignment import Assignment, load_assignment


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _reloaded(assignment: Assignment) -> Assignment:
    return load_assignment(assignment.name, root=assignment.root.parent)


def _line(path: Path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


def test_a_public_test_that_fails_on_the_reference_is_named_at_its_definition(topk_course):
    """verify runs the public tests on the reference's student files: a test that fails there would tell students
    to fix code that is right (`grader check` said "fix beam_search" for the instructor's bug)."""
    from autograder.authoring.reference_runs import public_tests_on_reference

    tests = topk_course.public_tests / "test_ops.py"
    tests.write_text(tests.read_text() + '\n\n@pytest.mark.task("top_k")\ndef test_keeps_one():\n'
                                         '    assert top_k(torch.tensor([[1.0, 2.0]]), 1).tolist() == [[1.0, -math.inf]]\n')
    run = public_tests_on_reference(topk_course)
    assert not run.ok and len(run.details) == 1  # the course's own two tests pass
    assert run.details[0].startswith(f"{tests}:{_line(tests, 'def test_keeps_one():')}: public test test_keeps_one "
                                     f"(top_k) failed on the reference: ")
    assert "assert [[-inf, 2.0]] == [[1.0, -inf]]" in run.details[0]
    assert run.details[0].endswith("— a public test must pass on the reference (grader check would tell students to "
                                   "fix code that is right): fix the test")


# -- figures: a -inf that is right ---------------------------------------------------------------------------------


def test_a_figure_reading_a_right_inf_with_allow_inf_notes_no_x_and_nan_still_is():
    from autograder.show.draw import draw_panel
    from autograder.show.figures import Figure, Probe
    from autograder.show.outcome import ProbeResult

    def draw(data, fig, notes, allow=True):
        kept = data.tensor("kept", allow_inf=allow)
        fig.subplots().plot(kept[0].numpy())

    probe = Probe("one_row", lambda impl, ctx: {})
    masked = {"kept": torch.tensor([[2.0, -math.inf, 3.0]])}
    folder = Path(tempfile.mkdtemp())
    try:
        right = draw_panel(Figure("kept_logits", probe, "t", "c", draw), ProbeResult("ok", outputs=masked), folder)
        assert right.notes == []
        undeclared = Figure("kept_logits", probe, "t", "c", lambda d, f, n: draw(d, f, n, allow=False))
        assert [kind for kind, _ in draw_panel(undeclared, ProbeResult("ok", outputs=masked), folder).notes] == ["bad"]
        nan = {"kept": torch.tensor([[2.0, math.nan, -math.inf]])}
        [(kind, text)] = draw_panel(Figure("kept_logits", probe, "t", "c", draw), ProbeResult("ok", outputs=nan),
                                    folder).notes
        assert kind == "bad" and text.startswith("kept: 1 of 3 values are NaN ")
    finally:
        shutil.rmtree(folder)


def test_a_figure_with_an_x_on_the_reference_is_named_at_its_draw_function(topk_course):
    """The ✗ show adds by itself for a -inf the figure did not declare is a note (the reference is right: an
    assignment written before allow_inf still verifies); a ✗ of the figure's own notes fails verify."""
    from autograder.authoring.reference_runs import figures_on_reference

    figure = topk_course.root / "figures" / "masked.py"
    _edit(figure, ", allow_inf=True)", ")")
    _edit(figure, "int(kept.isfinite().sum()) == 3", "int(kept.isfinite().sum()) == 2")
    run = figures_on_reference(_reloaded(topk_course))
    line = _line(figure, "@figure(one_row, \"Top-k keeps three logits\", caption=\"\"\"")
    fix = ("the reference's own figure must show no ✗, or every correct student sees it: a ±inf that is right there "
           "(a masked logit) is read with data.tensor(name, allow_inf=True); any other ✗ is the note's test to fix")
    assert not run.ok and run.details == [
        f"note: {figure}:{line}: the reference's figure kept_logits shows ✗ top_k(logits, 3): 3 of 6 values are "
        f"infinite (magenta cells in maps, gaps in curves) — {fix}",
        f"{figure}:{line}: the reference's figure kept_logits shows ✗ 3 logits kept — {fix}"]
