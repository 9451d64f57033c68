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


def quiz_checks(graded: list[AnswerCheck], feedback: str, problem: str | None = None) -> list[CheckResult]:
    """One check per answer, showing as much of the key as the quiz's ``feedback`` allows.

    ``score`` names only the malformed answers; the well-formed ones become anonymous checks, right ones
    first, so a report (and a student resubmitting) learns how many are right, not which. ``answers`` says
    which are right; ``explanations`` adds the key's explanation of each question.
    """
    if feedback == "score":
        invalid = [a for a in graded if not a.valid]
        valid = sorted((a for a in graded if a.valid), key=lambda a: not a.correct)
        checks = [CheckResult(f"quiz.{a.question}", f"question {a.question}", 1.0, FAILED, problem or a.message)
                  for a in invalid]
        for number, answer in enumerate(valid, start=1):
            checks.append(CheckResult(f"quiz.answer{number}", "a well-formed answer (which questions are right "
                                      "is not shown)", 1.0, PASSED if answer.correct else FAILED,
                                      "" if answer.correct else "incorrect"))
        return checks
    return [CheckResult(f"quiz.{a.question}",
                        a.explanation if feedback == "explanations" and a.explanation else f"question {a.question}",
                        1.0, PASSED if a.correct else FAILED, "" if a.correct else (problem or a.message))
            for a in graded]
