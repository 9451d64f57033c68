"""Quiz answers: format checks, normalisation and grading against the key."""

from __future__ import annotations

import json

import pytest

from autograder.reports.results import PASSED
from autograder.spec.assignment import QUIZ_FEEDBACK
from autograder.spec.quiz import (
    Question,
    check_answer,
    check_format,
    grade_answers,
    load_key,
    load_questions,
    quiz_checks,
    read_answers,
)

Q = Question("q1", "?", {"a": "A", "b": "B", "c": "C", "d": "D"})


def test_case_and_blanks_do_not_matter():
    assert check_answer(Q, "  B ") == ("b", None)


def test_several_letters_are_invalid():
    assert check_answer(Q, "a, b")[1] == "answer must be one letter, got 'a, b'"
    assert check_answer(Q, "ab")[1].startswith("answer must be one letter")


def test_missing_non_string_and_unknown_options_are_invalid():
    assert check_answer(Q, None)[1] == "no answer"
    assert check_answer(Q, "")[1] == "no answer"
    assert "must be a string" in check_answer(Q, 2)[1]
    assert "'e' is not an option" in check_answer(Q, "e")[1]


def test_invalid_answers_earn_nothing_and_say_why():
    key = {"q1": {"answer": "b", "explanation": "because"}}
    [graded] = grade_answers([Q], key, {"q1": ["a", "b"]})
    assert not graded.correct and graded.message.startswith("invalid:")
    [graded] = grade_answers([Q], key, {"q1": "b"})
    assert graded.correct and graded.explanation == "because"


def test_format_check_flags_unknown_questions():
    checks = check_format([Q], {"q1": "a", "q99": "b"})
    assert checks[0].valid and not checks[1].valid and "not a question" in checks[1].message


def test_malformed_toml_is_reported_not_raised(tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text('q1 = "a"\nq2 = \n')
    answers, problem = read_answers(path)
    assert answers == {} and problem.startswith("answers.toml is not valid TOML")


def test_missing_file_is_reported(tmp_path):
    assert read_answers(tmp_path / "answers.toml") == ({}, "answers.toml not found")


def test_assignment3_quiz_has_16_questions_and_a_complete_key(assignment3):
    questions = load_questions(assignment3.quiz)
    key = load_key(assignment3.quiz)
    assert [q.id for q in questions] == [f"q{i}" for i in range(1, 17)]
    for question in questions:
        assert len(question.options) == 4
        assert key[question.id]["answer"] in question.options
        assert key[question.id]["explanation"]
    assert len({entry["answer"] for entry in key.values()}) == 4


def test_reference_answers_equal_the_key(assignment3):
    answers, problem = read_answers(assignment3.reference / "answers.toml")
    key = load_key(assignment3.quiz)
    assert problem is None
    assert {qid: value.strip().lower() for qid, value in answers.items()} == {q: e["answer"] for q, e in key.items()}


QUESTIONS = [Question(f"q{i}", "?", {"a": "A", "b": "B", "c": "C"}) for i in range(1, 5)]
KEY = {f"q{i}": {"answer": "b", "explanation": f"the key's reason number {i}"} for i in range(1, 5)}
ANSWERS = {"q1": "a", "q2": "b", "q3": "zz"}  # wrong, right, malformed, missing


def _shown(feedback):
    checks = quiz_checks(grade_answers(QUESTIONS, KEY, ANSWERS), feedback)
    return checks, json.dumps([c.to_dict() if hasattr(c, "to_dict") else vars(c) for c in checks])


def test_score_feedback_names_malformed_answers_but_not_which_are_right():
    checks, text = _shown("score")
    assert sum(c.status == PASSED for c in checks) == 1 and len(checks) == 4
    assert "q3" in text and "q4" in text and "must be one letter" in text  # the student's own format problems
    assert "q1" not in text and "q2" not in text and "you answered" not in text and "reason" not in text


def test_answers_feedback_says_which_are_right_without_explanations():
    checks, text = _shown("answers")
    assert [c.status == PASSED for c in checks] == [False, True, False, False]
    assert "you answered a" in text and "reason" not in text


def test_explanations_feedback_shows_the_keys_explanations():
    checks, text = _shown("explanations")
    assert [c.description for c in checks] == [f"the key's reason number {i}" for i in range(1, 5)]


@pytest.mark.parametrize("feedback", QUIZ_FEEDBACK)
def test_every_student_s_quiz_checks_have_the_same_names_and_descriptions(feedback):
    # A class report lines checks up by name: one student's answers must not get other names than another's.
    students = [(ANSWERS, None), ({}, "answers.toml not found"), ({q: "b" for q in KEY}, None),
                ({q: "a" for q in KEY}, None), ({"q1": "b", "q2": "x"}, None)]
    shown = [[(c.name, c.description) for c in quiz_checks(grade_answers(QUESTIONS, KEY, answers), feedback, problem)]
             for answers, problem in students]
    assert all(checks == shown[0] for checks in shown), shown
    assert len({name for name, _ in shown[0]}) == len(QUESTIONS)


def test_score_feedback_ranks_right_then_wrong_then_malformed_answers():
    # Right answers first (how many, not which); malformed last, so their place says nothing about the others.
    checks = quiz_checks(grade_answers(QUESTIONS, KEY, {"q1": "zz", "q2": "a", "q3": "b"}), "score")
    assert [(c.status, c.message) for c in checks] == [
        ("passed", ""), ("failed", "incorrect"), ("failed", "q1: invalid: answer must be one letter, got 'zz'"),
        ("failed", "q4: invalid: no answer")]


def test_the_assignments_hide_the_key_by_default(assignment3):
    assert assignment3.quiz.feedback == "score"


def test_deeply_nested_answers_are_a_format_problem_not_a_crash(tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text("q1 = " + "[" * 5000 + "]" * 5000 + "\n")
    answers, problem = read_answers(path)
    assert answers == {} and problem == "answers.toml is not valid TOML: nested too deeply"
