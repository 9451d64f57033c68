"""Blind quiz strategies: the real quizzes give a blind strategy nothing beyond chance, and the scoring catches cues."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.authoring.quiz_cues import (
    blind_bound,
    blind_scores,
    cue_problems,
    default_bound,
    key_pattern_problems,
    shared_words,
    words,
)
from autograder.authoring.lint import key_balance_problems
from autograder.authoring.verify import check_quiz_key
from autograder.errors import AssignmentError
from autograder.spec.assignment import Assignment, available_assignments, load_assignment
from autograder.spec.quiz import Question, load_key, load_questions

QUIZZES = [name for name in available_assignments() if load_assignment(name).quiz is not None]


def _scores(questions: list[Question], key: dict[str, dict[str, str]]) -> dict[str, int]:
    return {s.name: s.score for s in blind_scores(questions, key)}


def _key(*letters: str) -> dict[str, dict[str, str]]:
    return {f"q{i}": {"answer": letter} for i, letter in enumerate(letters, start=1)}


# -- the real quizzes ------------------------------------------------------------------------------------


def test_every_assignment_has_a_quiz_checked_here() -> None:
    assert QUIZZES == available_assignments()


@pytest.mark.parametrize("name", QUIZZES)
def test_no_blind_strategy_scores_above_the_bound(name: str) -> None:
    assignment = load_assignment(name)
    assert assignment.quiz is not None
    questions, key = load_questions(assignment.quiz), load_key(assignment.quiz)
    bound = blind_bound(assignment.quiz, len(questions))
    scores = _scores(questions, key)
    assert len(scores) >= 12  # 8 by length and shared words, 4 letters
    assert {n: s for n, s in scores.items() if s > bound} == {}, f"{name}: bound {bound}, scores {scores}"
    assert cue_problems(questions, key, bound) == []


@pytest.mark.parametrize("name", QUIZZES)
def test_the_key_has_no_pattern_and_uses_every_letter(name: str) -> None:
    assignment = load_assignment(name)
    assert assignment.quiz is not None
    questions, key = load_questions(assignment.quiz), load_key(assignment.quiz)
    assert key_pattern_problems(questions, key) == []
    assert key_balance_problems(assignment) == []  # balanced unless the manifest's [audit] says otherwise


@pytest.mark.parametrize("name", QUIZZES)
def test_verify_reports_the_best_blind_strategy(name: str) -> None:
    finding = check_quiz_key(load_assignment(name))
    assert finding.ok, finding.details
    assert any(d.startswith("no blind strategy scores above") for d in finding.details)


# -- the strategies on small quizzes ---------------------------------------------------------------------


def _question(qid: str, text: str, **options: str) -> Question:
    return Question(qid, text, dict(options))


LONGEST_WINS = [
    _question("q1", "What is x?", a="short", b="a much longer right answer", c="tiny", d="brief one"),
    _question("q2", "What is y?", a="the long and detailed right one", b="nope", c="wrong", d="no no"),
    _question("q3", "What is z?", a="no", b="not it", c="nor this", d="this, the longest, is right"),
    _question("q4", "What is w?", a="wrong", b="also wrong", c="the longest option is right", d="bad"),
]


def test_a_quiz_whose_key_is_always_the_longest_option_is_flagged() -> None:
    key = _key("b", "a", "d", "c")
    scores = _scores(LONGEST_WINS, key)
    assert scores["always the longest option (in characters)"] == 4
    assert scores["always the shortest option (in characters)"] == 0
    assert [scores[f"always {letter!r}"] for letter in "abcd"] == [1, 1, 1, 1]
    problems = cue_problems(LONGEST_WINS, key, bound=2)
    assert "the blind strategy 'always the longest option (in characters)' scores 4 of 4, above the bound of 2" \
        in problems
    assert not [p for p in problems if "shortest" in p or "always 'a'" in p]


def test_a_key_that_is_always_the_second_longest_is_flagged() -> None:
    questions = [_question(f"q{i}", "?", a="a" * 10, b="b" * 20, c="c" * 30, d="d" * 40) for i in (1, 2, 3)]
    scores = _scores(questions, _key("c", "c", "c"))
    assert scores["always the second longest option (in characters)"] == 3
    assert scores["always the longest option (in characters)"] == 0
    assert scores["always the second shortest option (in characters)"] == 0


def test_blanks_around_an_option_do_not_count_as_length() -> None:
    questions = [_question("q1", "?", a="   right   ", b="wrongs")]
    scores = _scores(questions, _key("a"))
    assert scores["always the longest option (in characters)"] == 0
    assert scores["always the shortest option (in characters)"] == 1


def test_a_tie_counts_for_the_strategy_when_the_key_is_among_the_tied_options() -> None:
    questions = [_question("q1", "How large?", a="1 GiB", b="2 GiB", c="4 GiB", d="512 MiB")]
    scores = _scores(questions, _key("b"))
    assert scores["always the shortest option (in characters)"] == 1  # tied with a and c
    assert scores["always the second shortest option (in characters)"] == 1
    assert scores["always the second longest option (in characters)"] == 1
    assert scores["always the longest option (in characters)"] == 0  # d alone is longest
    assert scores["the option sharing the most words with the question"] == 1  # none shares a word: all tie
    assert scores["always 'b'"] == 1 and scores["always 'a'"] == 0


def test_words_are_lowercase_runs_of_letters_and_digits() -> None:
    assert words("Divide by sqrt(d_k), THEN softmax; 4,096 tokens") == {
        "divide", "by", "sqrt", "d", "k", "then", "softmax", "4", "096", "tokens"}
    question = _question("q1", "Why are the scores divided by sqrt(d_k)?", a="Scores divided by d_k", b="No")
    assert shared_words(question, "a") == 5  # scores, divided, by, d, k
    assert shared_words(question, "b") == 0


def test_an_option_echoing_the_question_is_flagged() -> None:
    questions = [_question(f"q{i}", f"What does the causal mask {verb}?", a=f"The causal mask {verb}s the future",
                           b="Something else", c="Another thing", d="A fourth option")
                 for i, verb in enumerate(("hide", "block", "stop"), start=1)]
    key = _key("a", "a", "a")
    assert _scores(questions, key)["the option sharing the most words with the question"] == 3
    assert "'the option sharing the most words with the question' scores 3 of 3" in " ".join(
        cue_problems(questions, key, bound=1))
    assert _scores(questions, _key("b", "c", "d"))["the option sharing the fewest words with the question"] == 3


def test_a_question_missing_from_the_key_counts_as_wrong_for_every_strategy() -> None:
    questions = [_question("q1", "?", a="x", b="y")]
    assert set(_scores(questions, {}).values()) == {0}


def test_a_quiz_within_the_bound_has_no_problems() -> None:
    key = _key("b", "a", "d", "c")
    assert cue_problems(LONGEST_WINS, key, bound=4) == []


# -- the key's letters ------------------------------------------------------------------------------------


def _plain(n: int) -> list[Question]:
    return [_question(f"q{i}", "?", a="a", b="b", c="c", d="d") for i in range(1, n + 1)]


def test_a_cycling_key_is_flagged() -> None:
    problems = key_pattern_problems(_plain(8), _key(*"bcaddabc"))
    assert problems == [("the key cycles: each group of 4 questions uses every letter (a, b, c, d) once, so the "
                         "earlier answers of a group give away the last")]
    assert key_pattern_problems(_plain(8), _key(*"bcaddabb")) == []
    assert key_pattern_problems(_plain(4), _key(*"bcad")) == []  # one group is not yet a cycle


def test_a_run_of_three_letters_is_flagged() -> None:
    assert key_pattern_problems(_plain(6), _key(*"abbbcd")) == [
        "the key answers q2 to q4 with the same letter 'b' (3 in a row, at most 2 allowed)"]
    assert key_pattern_problems(_plain(6), _key(*"abbcdd")) == []
    assert key_pattern_problems(_plain(4), _key(*"dccc")) == [
        "the key answers q2 to q4 with the same letter 'c' (3 in a row, at most 2 allowed)"]


# -- the bound ---------------------------------------------------------------------------------------------


def test_the_default_bound_is_three_eighths_rounded_up() -> None:
    assert [default_bound(n) for n in (0, 1, 8, 10, 16, 17)] == [0, 1, 3, 4, 6, 7]


@pytest.fixture
def quiz_copy(tmp_path: Path, repo: Path) -> Path:
    """assignment3's manifest, quiz and key, and its reference answers, copied into a temporary tree."""
    for part in ("assignments", "reference_solutions"):
        shutil.copytree(repo / part / "assignment3", tmp_path / part / "assignment3",
                        ignore=shutil.ignore_patterns("__pycache__", "checks", "assets", "public_tests"))
    return tmp_path / "assignments"


def _set_bound(root: Path, value: str) -> Assignment:
    manifest = root / "assignment3" / "assignment.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace('feedback = "score"', f'feedback = "score"\nmax_blind_score = {value}'))
    return load_assignment("assignment3", root=root)


def test_a_missing_bound_means_the_default(quiz_copy: Path) -> None:
    assignment = load_assignment("assignment3", root=quiz_copy)
    assert assignment.quiz is not None and assignment.quiz.max_blind_score is None
    assert blind_bound(assignment.quiz, 16) == 6


def test_the_manifest_can_declare_the_bound_and_verify_fails_above_it(quiz_copy: Path) -> None:
    assignment = _set_bound(quiz_copy, "2")
    assert assignment.quiz is not None and blind_bound(assignment.quiz, 16) == 2
    finding = check_quiz_key(assignment)
    assert not finding.ok
    assert any(d.startswith("the blind strategy 'always 'a'' scores 4 of 16, above the bound of 2")
               for d in finding.details), finding.details


def test_a_bound_that_is_not_a_number_is_an_invalid_manifest(quiz_copy: Path) -> None:
    with pytest.raises(AssignmentError, match=r"assignment.toml:\d+: max_blind_score must be an integer, not str 'six'"):
        _set_bound(quiz_copy, '"six"')


def test_verify_fails_when_an_edit_brings_the_longest_option_cue_back(quiz_copy: Path) -> None:
    assignment = load_assignment("assignment3", root=quiz_copy)
    assert assignment.quiz is not None
    key = load_key(assignment.quiz)
    text = assignment.quiz.questions_file.read_text()
    for question in load_questions(assignment.quiz):  # pad every right option: the key becomes the longest
        right = question.options[key[question.id]["answer"]]
        text = text.replace(f'"{right}"', f'"{right} (this is, all things considered, the right option)"', 1)
    assignment.quiz.questions_file.write_text(text)
    finding = check_quiz_key(assignment)
    assert not finding.ok
    assert "the blind strategy 'always the longest option (in characters)' scores 16 of 16, above the bound of 6" \
        in finding.details
