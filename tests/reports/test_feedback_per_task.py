"""Feedback a student reads to the end: ``grade-all --feedback`` on a known mistake of each assignment (the real
grader, two tasks), with a late deadline, and a rerun beside a submission that could not be graded."""

from __future__ import annotations

import io
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from autograder.batch.run import BatchOptions, grade_all
from autograder.batch.summary import render_summary
from autograder.gradebook.store import Gradebook
from autograder.grading.grader import Grader
from autograder.reports.feedback import FOLLOWING_WIDTH, markdown_text, task_lines
from autograder.reports.results import GradeReport
from autograder.spec.assignment import Assignment, load_assignment
from autograder.spec.late import LatePolicy
from autograder.spec.mutation import apply_mutation, load_mutations

pytestmark = pytest.mark.slow

# per assignment: a known mistake that fails most checks of its task, and a cheap task graded beside it that passes
CASES = {"assignment3": ("attention_no_scaling", "causal_mask"), "assignment2": ("csa_scale_by_d_in", "softmax")}
DUE = datetime(2026, 12, 1, 23, 0, tzinfo=timezone.utc)


class TwoTaskGrader:
    """The real grader, on the mistake's task and the cheap one only (the feedback, not grading, is under test)."""

    def __init__(self, assignment: Assignment) -> None:
        mistake, cheap = CASES[assignment.name]
        task = next(m.task for m in load_mutations(assignment, "mistakes") if m.id == mistake)
        self.grader = Grader(assignment)
        self.only = {task, cheap}

    def grade(self, path: Path, prepared: object = None) -> GradeReport:
        return self.grader.grade(path, only=self.only, prepared=prepared)

    def close(self) -> None:
        self.grader.close()


def two_task_factory(assignment: Assignment) -> TwoTaskGrader:
    return TwoTaskGrader(assignment)


def _section(text: str, title: str, heading: str) -> str:
    """The part of a feedback file from the task's heading to the next heading."""
    start = text.index(f"{heading}{title}")
    end = text.find(heading, start + len(heading))
    return text[start: end if end > 0 else len(text)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_task_shows_its_first_failure_in_full_the_rest_in_a_line_and_its_hint_once(name: str,
                                                                                      tmp_path: Path) -> None:
    spec = load_assignment(name)
    mistake = next(m for m in load_mutations(spec, "mistakes") if m.id == CASES[name][0])
    apply_mutation(spec.reference, mistake, tmp_path / "subs" / "alice" / spec.package)
    (tmp_path / "subs" / "bob").mkdir()  # nothing to grade: an error row
    stamps = tmp_path / "stamps.csv"
    stamps.write_text("student,submitted_at\nalice,2026-12-03T22:00:00Z\nbob,2026-12-01T20:00:00Z\n")
    options = BatchOptions(jobs=1, gradebook=tmp_path / "g.db", grader_factory=two_task_factory, due=DUE,
                           late=LatePolicy(rate=0.1), timestamps=stamps, csv=tmp_path / "class.csv",
                           feedback=tmp_path / "feedback")
    progress = io.StringIO()
    grade_all(spec, tmp_path / "subs", options, progress=progress)

    with Gradebook(tmp_path / "g.db", readonly=True) as book:
        alice = next(r for r in book.current(name) if r.student == "alice")
    assert alice.penalty == pytest.approx(0.2) and 0 < alice.score < alice.raw
    # the progress line and the CSV's total are the final score; the raw one is said as such
    assert f"alice: {alice.score:g} / {alice.max_score:g} ({alice.raw:g} before the late penalty)" \
        in progress.getvalue()
    row = next(line for line in (tmp_path / "class.csv").read_text().splitlines() if line.startswith("alice,"))
    assert row.endswith(f",20%,{alice.score:g},{alice.max_score:g},graded")

    title = next(t["title"] for t in alice.report["tasks"] if t["id"] == mistake.task)
    markdown = _section((tmp_path / "feedback" / "alice.md").read_text(), title, "## ")
    page = _section((tmp_path / "feedback" / "alice.html").read_text(), title, "<h2>")
    failed = [line for line in markdown.splitlines() if line.startswith("- \\[failed\\]")]
    assert len(failed) >= 3, markdown
    assert markdown.count("Hint:") == 1 and page.count("Hint:") == 1
    assert markdown.index("Hint:") < markdown.index(failed[1])  # under the first failure
    assert mistake.hint.split(".")[0][:40] in markdown.replace("\\", "")
    checks = next(t for t in alice.report["tasks"] if t["id"] == mistake.task)["checks"]
    failing = [" ".join(c["message"].split()) for c in checks if c["status"] != "passed"]
    assert markdown_text(failing[0]) in markdown and len(failing[0]) > FOLLOWING_WIDTH  # the first one in full
    for message, line in zip(failing[1:], failed[1:]):  # the others in one short line each
        cut = message[: FOLLOWING_WIDTH - 2].rsplit(" ", 1)[0] + " …"  # at a word
        shown = message if len(message) <= FOLLOWING_WIDTH else cut
        assert line.endswith(": " + markdown_text(shown)), (line, message)
    assert len(re.findall(r'<li><span class="failed">\[failed\]', page)) == len(failed)  # HTML alike
    assert "checks passed; first problem" not in markdown + page  # the summary does not repeat the first failure

    # A rerun grades nothing new, but bob's error row remains: the summary says so.
    again = grade_all(spec, tmp_path / "subs", BatchOptions(jobs=1, gradebook=tmp_path / "g.db",
                                                            grader_factory=two_task_factory))
    text = render_summary(again)
    assert "could not grade  1 (1 unchanged since an earlier run; --retry-errors grades it again)" in text
    assert re.search(r"could not grade:\n  bob: ", text), text


def test_a_later_failing_check_is_cut_at_a_word_never_inside_one() -> None:
    message = "weights for (4, 9) entries in the thousands: the weights contain NaN or infinite values"
    task = {"checks": [{"status": "failed", "message": "the first failure, in full"},
                       {"status": "failed", "message": message},
                       {"status": "failed", "message": "x" * 80}]}
    lines = task_lines(task)
    assert lines[1].message == "weights for (4, 9) entries in the thousands: the weights …"  # not "the weights co…"
    assert len(lines[1].message) <= FOLLOWING_WIDTH
    assert lines[2].message == "x" * (FOLLOWING_WIDTH - 2) + " …"  # one long word: cut, there is no other place


def test_checks_that_all_fail_for_one_cause_are_one_line_in_the_feedback_and_on_gradescope() -> None:
    """One cause, one line (a function that raises on every call, a quiz without its answers file); checks that
    fail alike beside checks that fail otherwise, or pass, keep a line each (their descriptions say which)."""
    from autograder.reports.gradescope import _output
    from autograder.reports.results import CheckResult

    same = [CheckResult(f"t.c{i}", f"check {i}", 1.0, "error", "TypeError: forward() takes 2 arguments")
            for i in range(4)]
    [line] = task_lines({"checks": [vars(c) for c in same]})
    assert (line.description, line.message) == ("check 0", "TypeError: forward() takes 2 arguments (the 3 checks "
                                                            "after it fail the same way)")
    assert _output("", same).splitlines() == ["[error] check 0: TypeError: forward() takes 2 arguments (the 3 "
                                              "checks after it fail the same way)"]
    mixed = [*same[:2], CheckResult("t.c9", "check 9", 1.0, "passed")]
    assert len(task_lines({"checks": [vars(c) for c in mixed]})) == 3 and len(_output("", mixed).splitlines()) == 3
