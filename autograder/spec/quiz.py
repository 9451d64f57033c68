"""Read a student's quiz answers, check their format, and grade them against the hidden key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.errors import AssignmentError
from autograder.reports.results import FAILED, PASSED, CheckResult
from autograder.spec.assignment import Quiz
from autograder.util.tomlio import TOMLDecodeError, load_toml, loads_toml

MAX_ANSWERS_BYTES = 64 * 1024
NO_ANSWER = "no answer"  # an empty or absent answer: not wrong, just not written yet
_LETTER = re.compile(r"^[a-z]$")


@dataclass(frozen=True)
class Question:
    """A multiple-choice question as students see it."""

    id: str
    text: str
    options: dict[str, str]


@dataclass(frozen=True)
class AnswerCheck:
    """The verdict on one answer."""

    question: str
    answer: str | None
    valid: bool
    correct: bool
    message: str
    explanation: str = ""


def load_questions(quiz: Quiz) -> list[Question]:
    """Load the quiz's questions and options.

    Raises:
        AssignmentError: If the questions file is missing or malformed.
    """
    if not quiz.questions_file.is_file():  # shipped with every copy: the manifest names the wrong file
        raise AssignmentError(f"[quiz] questions names {quiz.questions_file}, which does not exist; fix the path in "
                              f"assignment.toml")
    try:
        data = load_toml(quiz.questions_file)
        return [Question(q["id"], q["text"], dict(q["options"])) for q in data["questions"]]
    except (OSError, TOMLDecodeError, KeyError, TypeError) as exc:
        raise AssignmentError(f"cannot read quiz questions {quiz.questions_file}: {exc}") from None


def load_key(quiz: Quiz, absent: str = "") -> dict[str, dict[str, str]]:
    """Load the hidden key: question id to ``{"answer": letter, "explanation": text}``.

    Args:
        quiz: The quiz.
        absent: Why the key is absent, if it is and the manifest is to blame (``spec.assignment.absent_file``).

    Raises:
        AssignmentError: If the key is missing (it ships only with the instructor's copy) or malformed.
    """
    if not quiz.key_file.is_file():
        raise AssignmentError(absent or f"the quiz key is not part of this installation ({quiz.key_file.name} "
                                        f"missing)")
    try:
        data = load_toml(quiz.key_file)
    except (OSError, TOMLDecodeError) as exc:
        raise AssignmentError(f"cannot read the quiz key: {exc}") from None
    return {qid: {"answer": str(v["answer"]).strip().lower(), "explanation": str(v.get("explanation", ""))}
            for qid, v in data.items()}


def read_answers(path: Path) -> tuple[dict[str, Any], str | None]:
    """Read ``answers.toml`` without trusting it.

    Returns:
        ``(answers, problem)``: the parsed table (empty on failure) and a one-line problem, or None.
    """
    if not path.is_file():
        return {}, f"{path.name} not found"
    data = path.read_bytes()[: MAX_ANSWERS_BYTES + 1]
    if len(data) > MAX_ANSWERS_BYTES:
        return {}, f"{path.name} is larger than {MAX_ANSWERS_BYTES // 1024} KiB"
    try:
        return loads_toml(data.decode("utf-8")), None
    except (UnicodeDecodeError, TOMLDecodeError) as exc:
        return {}, f"{path.name} is not valid TOML: {exc}"
    except RecursionError:
        return {}, f"{path.name} is not valid TOML: nested too deeply"


def check_answer(question: Question, raw: Any) -> tuple[str | None, str | None]:
    """Normalise one answer and say what is wrong with its format.

    Returns:
        ``(letter, problem)``: the normalised letter (or None) and a problem message (or None).
    """
    if raw is None:
        return None, NO_ANSWER
    if not isinstance(raw, str):
        return None, f"answer must be a string such as \"b\", got {type(raw).__name__}"
    letter = raw.strip().lower()
    if not letter:
        return None, NO_ANSWER
    if not _LETTER.match(letter):
        return None, f"answer must be one letter, got {raw.strip()[:20]!r}"
    if letter not in question.options:
        return None, f"{letter!r} is not an option (options: {', '.join(sorted(question.options))})"
    return letter, None


def check_format(questions: list[Question], answers: dict[str, Any]) -> list[AnswerCheck]:
    """Check every answer's format only (what ``grader check`` reports; no key needed)."""
    checks = []
    for question in questions:
        letter, problem = check_answer(question, answers.get(question.id))
        checks.append(AnswerCheck(question.id, letter, problem is None, False, problem or "well-formed"))
    unknown = sorted(set(answers) - {q.id for q in questions})
    for name in unknown:
        checks.append(AnswerCheck(str(name)[:40], None, False, False, "not a question of this quiz; ignored"))
    return checks


def grade_answers(questions: list[Question], key: dict[str, dict[str, str]], answers: dict[str, Any]) -> list[AnswerCheck]:
    """Grade each answer against the key; an invalid answer earns nothing and says why."""
    graded = []
    for question in questions:
        letter, problem = check_answer(question, answers.get(question.id))
        entry = key.get(question.id, {})
        correct = problem is None and letter == entry.get("answer")
        if problem:
            message = f"invalid: {problem}"
        else:
            message = "correct" if correct else f"incorrect (you answered {letter})"
        graded.append(AnswerCheck(question.id, letter, problem is None, correct, message, entry.get("explanation", "")))
    return graded


def quiz_check_name(feedback: str, question: str, place: int) -> str:
    """The name of the quiz's check on one answer, the only place one is named.

    Every student's quiz gets the same names, so a class report lines them up: ``quiz.<question>``, or under
    ``feedback = "score"`` ``quiz.answer<place>``, the answer's place in :func:`_ranked`'s order, which says how
    many answers are right, not which.

    Args:
        feedback: The quiz's ``feedback``.
        question: The question's id.
        place: The answer's place among the checks, from 1.
    """
    return f"{QUIZ_CHECK_PREFIX}answer{place}" if feedback == "score" else f"{QUIZ_CHECK_PREFIX}{question}"


QUIZ_CHECK_PREFIX = "quiz."  # every quiz check's name starts so (:func:`quiz_check_name`)


def question_of_check(name: str, feedback: str) -> str | None:
    """The question a quiz check is about, by its name (:func:`quiz_check_name`); None under ``feedback =
    "score"``, whose names are places among the ranked answers, which say nothing of a question."""
    if feedback == "score" or not name.startswith(QUIZ_CHECK_PREFIX):
        return None
    return name[len(QUIZ_CHECK_PREFIX):]


def _ranked(graded: list[AnswerCheck], feedback: str) -> list[AnswerCheck]:
    """The answers in the order of their checks: the questions', or under ``score`` right ones first, then wrong
    ones, then malformed ones (each in the questions' order); malformed ones last as a block, since their questions
    are named and a place among the wrong ones would tell which those are."""
    if feedback != "score":
        return list(graded)
    return sorted(graded, key=lambda a: (not a.correct, not a.valid))


def _names_question(answer: AnswerCheck, feedback: str) -> bool:
    """Whether a report may say which question an answer is: always, except a well-formed one under ``score``
    (with its verdict, that would give the key away)."""
    return feedback != "score" or not answer.valid


def _description(answer: AnswerCheck, feedback: str, place: int, count: int) -> str:
    """What a check is about; alike for every student's check of one name (a class report lists them by both)."""
    if feedback == "score":
        return f"answer {place} of {count}, right ones first (which questions are right is not shown)"
    if feedback == "explanations" and answer.explanation:
        return answer.explanation
    return f"question {answer.question}"


def _verdict(answer: AnswerCheck, feedback: str) -> str:
    """Why an answer earns nothing, naming its question when its check's name does not and the feedback allows."""
    if not _names_question(answer, feedback):
        return "incorrect"
    return f"{answer.question}: {answer.message}" if feedback == "score" else answer.message


def quiz_checks(graded: list[AnswerCheck], feedback: str, problem: str | None = None) -> list[CheckResult]:
    """One check per answer, showing as much of the key as the quiz's ``feedback`` allows.

    ``score`` names only the malformed answers (in their checks' messages): the checks are the student's answers
    ranked, right ones first (:func:`quiz_check_name`), so a report (and a student resubmitting) learns how many
    are right, not which. ``answers`` says which are right; ``explanations`` adds the key's explanation of each
    question.
    """
    return [CheckResult(quiz_check_name(feedback, answer.question, place),
                        _description(answer, feedback, place, len(graded)), 1.0,
                        PASSED if answer.correct else FAILED,
                        "" if answer.correct else (problem or _verdict(answer, feedback)))
            for place, answer in enumerate(_ranked(graded, feedback), start=1)]


def quiz_summary(graded: list[AnswerCheck], feedback: str, problem: str | None) -> str:
    """The quiz's one-line feedback (all the text report shows of a task): how many answers are right, then the
    problem with the answers file, or each answer that earns nothing and whose question the checks may name
    (under ``feedback = "score"`` the malformed ones only) with what is wrong, as the checks say it."""
    named = [f"{a.question}: {a.message}" for a in graded if not a.correct and _names_question(a, feedback)]
    correct = sum(answer.correct for answer in graded)
    return "; ".join([f"{correct} of {len(graded)} answers correct", *([problem] if problem else named)])
