"""The quiz's malformed answers are named in every report format, the text report included (docs/INSTRUCTORS.md,
"What the quiz feedback shows"), while which well-formed answers are right stays hidden; every student's quiz
checks have the same names, so the class report lines them up."""

from __future__ import annotations

import re

import json
import shutil
from pathlib import Path

import pytest

from autograder.batch.run import BatchOptions, grade_all
from autograder.gradebook.store import Gradebook, Outcome
from autograder.grading.grader import Grader
from autograder.reports.classreport import class_stats, render_markdown, write_class_report
from autograder.reports.gradescope import render_gradescope
from autograder.reports.json_report import render_json
from autograder.reports.text import render_text
from autograder.spec.assignment import Assignment, load_assignment

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
    unanswered = shutil.copytree(package, tmp_path / "unanswered" / assignment3.package)
    (unanswered / assignment3.quiz.answers_file).unlink()
    with Grader(assignment3) as grader:
        report = grader.grade(package, only={assignment3.quiz.task_id})
        other = grader.grade(unanswered, only={assignment3.quiz.task_id})
    [quiz] = report.tasks
    assert quiz.feedback == f"14 of 16 answers correct; {'; '.join(MALFORMED)}"
    text, shown_json = render_text(report), render_json(report)
    gradescope = json.loads(render_gradescope(report, assignment3))["tests"][0]["output"]
    for line in MALFORMED:
        assert line in text, text
        assert line in shown_json and line in gradescope
    assert "you answered" not in text + shown_json + gradescope  # which well-formed answers are right stays hidden
    # The same checks, by name, for a student who wrote no answers file; what Gradescope shows says the one cause
    # once (it said "answers.toml not found" on each of the 16 checks' lines).
    assert [(c.name, c.description) for c in other.tasks[0].checks] == [(c.name, c.description) for c in quiz.checks]
    shown_other = json.loads(render_gradescope(other, assignment3))["tests"][0]["output"]
    assert shown_other.splitlines()[1:] == [
        f"[failed] {quiz.checks[0].description}: answers.toml not found (the 15 checks after it fail the same way)"]


QUIZ_MANIFEST = """
[quiz]
id = "quiz"
title = "Quiz"
points = 3
questions = "quiz.toml"
key = "hidden/quiz_key.toml"
answers_file = "answers.toml"
feedback = "score"
"""


def _mini_with_quiz(course: Path) -> Assignment:
    """The mini course with a three-question quiz whose answers are all "b"."""
    manifest = (course / "assignment.toml").read_text().replace('"ops.py"]', '"ops.py", "answers.toml"]')
    (course / "assignment.toml").write_text(manifest + QUIZ_MANIFEST)
    (course / "quiz.toml").write_text("".join(f'[[questions]]\nid = "q{i}"\ntext = "?"\n'
                                              f'options = {{ a = "A", b = "B", c = "C" }}\n' for i in (1, 2, 3)))
    (course / "hidden" / "quiz_key.toml").write_text("".join(f'[q{i}]\nanswer = "b"\n' for i in (1, 2, 3)))
    return load_assignment("mini", root=course.parent)


def test_a_class_report_lists_one_set_of_quiz_checks_whatever_each_student_answered(mini_course: Path,
                                                                                   tmp_path: Path) -> None:
    assignment = _mini_with_quiz(mini_course)
    reference = mini_course.parents[1] / "reference_solutions" / "mini"
    answers = {"ada": 'q1 = "b"\nq2 = "a"\nq3 = "e"\n', "bob": None, "cyd": 'q1 = "b"\nq2 = "b"\nq3 = "b"\n'}
    for student, text in answers.items():  # right, wrong and malformed; no answers file; all right
        package = shutil.copytree(reference, tmp_path / "subs" / student / "mini")
        if text is not None:
            (package / "answers.toml").write_text(text)
    grade_all(assignment, tmp_path / "subs", BatchOptions(jobs=2, gradebook=tmp_path / "gradebook.db",
                                                          feedback=tmp_path / "feedback"))
    with Gradebook(tmp_path / "gradebook.db", readonly=True) as book:
        reports = {row.student: row.report for row in book.current("mini")}
    quizzes = {student: next(t for t in report["tasks"] if t["id"] == "quiz") for student, report in reports.items()}
    names = {student: [(c["name"], c["description"]) for c in quiz["checks"]] for student, quiz in quizzes.items()}
    assert names["ada"] == names["bob"] == names["cyd"], names
    assert [c["status"] for c in quizzes["ada"]["checks"]] == ["passed", "failed", "failed"]
    assert quizzes["ada"]["feedback"] == "1 of 3 answers correct; q3: invalid: 'e' is not an option (options: a, b, c)"
    write_class_report(tmp_path / "gradebook.db", tmp_path / "report", assignment=None, figure=False, spec=assignment)
    report = (tmp_path / "report" / "class_report.md").read_text()
    failing = report.split("## Most frequently failed checks")[1].split("##")[0]
    # quiz.answer2 ... are places among ranked answers, no question: the code checks' table leaves them out
    assert "quiz." not in failing and "Every check passed for every student." in failing, failing
    assert 'The quiz\'s feedback is "score": the grades record how many answers each student got right, not ' \
           'which' in report.split("## Quiz questions most often missed")[1], report
    ada = (tmp_path / "feedback" / "ada.md").read_text()
    assert "q3: invalid" in ada and "q1" not in ada.replace("q3: invalid", "") and "q2" not in ada
    bob = (tmp_path / "feedback" / "bob.md").read_text()  # no answers file: one line says so, not three
    assert bob.count("answers.toml not found") == 1 and "the 2 checks after it fail the same way" in bob, bob


def test_a_class_report_lists_the_questions_missed_where_the_checks_name_them(mini_course: Path,
                                                                             tmp_path: Path) -> None:
    """Under feedback = "answers" each quiz check is a question: the class report counts who missed each one,
    apart from the code checks."""
    _mini_with_quiz(mini_course)
    manifest = (mini_course / "assignment.toml").read_text().replace('feedback = "score"', 'feedback = "answers"')
    (mini_course / "assignment.toml").write_text(manifest)
    assignment = load_assignment("mini", root=mini_course.parent)
    missed = {"ada": ("q2",), "bob": ("q2", "q3"), "cyd": ()}
    with Gradebook(tmp_path / "gradebook.db") as book:
        for student, wrong in missed.items():
            checks = [{"name": f"quiz.q{i}", "description": f"question q{i}", "weight": 1.0,
                       "status": "failed" if f"q{i}" in wrong else "passed",
                       "message": "incorrect (you answered a)" if f"q{i}" in wrong else ""} for i in (1, 2, 3)]
            code = [{"name": "scale.values", "description": "scale values", "weight": 1.0, "status": "failed",
                     "message": "wrong values"}]
            tasks = [{"id": "scale", "title": "Scale", "score": 0.0, "max_score": 1.0, "status": "failed",
                      "checks": code},
                     {"id": "quiz", "title": "Quiz", "score": 3.0 - len(wrong), "max_score": 3.0,
                      "status": "failed" if wrong else "passed", "checks": checks}]
            book.record("mini", "fp", student, f"d-{student}", student,
                        Outcome("graded", 3.0 - len(wrong), 4.0, report={"assignment": "mini", "tasks": tasks}))
        stats = class_stats(book, "mini", assignment)
    assert stats.failing_checks == [("scale.values", "scale values", 3)]
    assert stats.quiz_missed == [("q2", "question q2", 2), ("q3", "question q3", 1)]
    assert re.search(r"^\| q2 +\| question q2 +\| +2 \|$", render_markdown(stats, None), re.M)
