"""The quiz's malformed answers are named in every report format, the text report included (docs/INSTRUCTORS.md,
"What the quiz feedback shows"), while which well-formed answers are right stays hidden."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autograder.grading.grader import Grader
from autograder.reports.gradescope import render_gradescope
from autograder.reports.json_report import render_json
from autograder.reports.text import render_text
from autograder.spec.assignment import Assignment

pytestmark = pytest.mark.slow

MALFORMED = ("q4: invalid: 'e' is not an option (options: a, b, c, d)", "q6: invalid: no answer")


def test_score_feedback_names_the_malformed_answers_in_text_json_and_gradescope(assignment3: Assignment,
                                                                               tmp_path: Path) -> None:
    assert assignment3.quiz is not None and assignment3.quiz.feedback == "score"
    package = shutil.copytree(assignment3.reference, tmp_path / assignment3.package,
                              ignore=shutil.ignore_patterns("__pycache__"))
    answers = package / assignment3.quiz.answers_file
    lines = answers.read_text().splitlines()
    answers.write_text("\n".join("q4 = \"e\"" if line.startswith("q4 ") else line for line in lines
                                 if not line.startswith("q6 ")) + "\n")
    with Grader(assignment3) as grader:
        report = grader.grade(package, only={assignment3.quiz.task_id})
    [quiz] = report.tasks
    assert quiz.feedback == f"14 of 16 answers correct; {'; '.join(MALFORMED)}"
    text, shown_json = render_text(report), render_json(report)
    gradescope = json.loads(render_gradescope(report, assignment3))["tests"][0]["output"]
    for line in MALFORMED:
        assert line in text, text
        assert line in shown_json and line.split(": ", 1)[1] in gradescope
    assert "you answered" not in text + shown_json + gradescope  # which well-formed answers are right stays hidden
