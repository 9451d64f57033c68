"""Blind quiz strategies (by length, by words shared with the question, by letter): their scores and a bound."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from autograder.spec.assignment import Quiz
from autograder.spec.quiz import Question

#: Fraction of the questions a blind strategy may get right: ceil(3/8 of them), 6 of 16, 4 of 10.
DEFAULT_BOUND_EIGHTHS = 3
#: The most times in a row the key may use one letter; a longer run is a pattern.
MAX_RUN = 2
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class StrategyScore:
    """How many questions one blind strategy answers right.

    Attributes:
        name: What the strategy does, e.g. ``"always the longest option (in characters)"``.
        score: Questions it answers right (a tie counts as right when the key is among the tied options).
        questions: Questions in the quiz.
    """

    name: str
    score: int
    questions: int


def words(text: str) -> set[str]:
    """The distinct words of a text: lowercase runs of ASCII letters and digits (``"d_k"`` is ``d`` and ``k``)."""
    return set(_TOKEN.findall(text.lower()))


def shared_words(question: Question, letter: str) -> int:
    """How many distinct words option ``letter`` has in common with the question's text."""
    return len(words(question.options[letter]) & words(question.text))


def _ranked(question: Question, measure: Callable[[str], int], place: int, largest: bool) -> set[str]:
    """The letters whose option takes this place (0 for the first) when the options are sorted by ``measure``,
    largest first (or smallest first); several on a tie, none if the question has too few options."""
    values = {letter: measure(letter) for letter in question.options}
    ordered = sorted(values.values(), reverse=largest)
    if place >= len(ordered):
        return set()
    return {letter for letter, value in values.items() if value == ordered[place]}


#: How a strategy measures an option: its length in characters (surrounding blanks ignored), its length in words
#: (runs of non-blanks), and how many distinct words it shares with the question (see ``words``).
MEASURES: dict[str, Callable[[Question, str], int]] = {
    "characters": lambda q, letter: len(q.options[letter].strip()),
    "words": lambda q, letter: len(q.options[letter].split()),
    "shared words": shared_words,
}
#: Each strategy: its name, the measure it sorts the options by, the place it picks (0 for the first) and
#: whether it sorts the largest first.
RANK_STRATEGIES: tuple[tuple[str, str, int, bool], ...] = (
    ("always the longest option (in characters)", "characters", 0, True),
    ("always the second longest option (in characters)", "characters", 1, True),
    ("always the second shortest option (in characters)", "characters", 1, False),
    ("always the shortest option (in characters)", "characters", 0, False),
    ("always the longest option (in words)", "words", 0, True),
    ("always the shortest option (in words)", "words", 0, False),
    ("the option sharing the most words with the question", "shared words", 0, True),
    ("the option sharing the fewest words with the question", "shared words", 0, False),
)


def _rank_picker(measure: Callable[[Question, str], int], place: int,
                 largest: bool) -> Callable[[Question], set[str]]:
    """A strategy that picks the option(s) at this place when sorted by ``measure`` (see ``_ranked``)."""
    return lambda question: _ranked(question, lambda letter: measure(question, letter), place, largest)


def blind_scores(questions: Sequence[Question], key: Mapping[str, Mapping[str, str]]) -> list[StrategyScore]:
    """Score every blind strategy: one that picks an option without understanding the question.

    The strategies (``RANK_STRATEGIES``) are: always the longest option in characters, the second longest, the
    second shortest and the shortest (so that a key that is never the longest nor the shortest is a cue too);
    the longest and the shortest in words; the option sharing the most distinct words with the question, and
    the fewest (a key that never echoes the question is a cue as well); then always the same letter, one
    strategy per letter used by any question (the best of them is also "always the key's most common letter").

    Ties are broken in the strategy's favour: a question counts as right when the key is among the tied
    options. No tie-breaking rule (first letter, last letter, at random) does better, so a bound met here holds
    whichever rule a student uses, and a quiz cannot meet it by making the key tie with a distractor.

    Args:
        questions: The quiz's questions, as students see them.
        key: Question id to ``{"answer": letter, ...}``; a question missing from the key counts as wrong.

    Returns:
        One score per strategy: those of ``RANK_STRATEGIES`` in order, then the letters in alphabetical order.
    """
    answers = {q.id: key.get(q.id, {}).get("answer") for q in questions}
    pickers = [(name, _rank_picker(MEASURES[measure], place, largest))
               for name, measure, place, largest in RANK_STRATEGIES]
    letters = sorted({letter for q in questions for letter in q.options})
    pickers += [(f"always {letter!r}", lambda q, letter=letter: {letter} & set(q.options)) for letter in letters]
    return [StrategyScore(name, sum(answers[q.id] in pick(q) for q in questions), len(questions))
            for name, pick in pickers]


def default_bound(questions: int) -> int:
    """The most a blind strategy may score by default: ceil(0.375 * questions), so 6 of 16 and 4 of 10."""
    return -(-DEFAULT_BOUND_EIGHTHS * questions // 8)


def blind_bound(quiz: Quiz, questions: int) -> int:
    """The manifest's ``[quiz] max_blind_score`` if it declares one, otherwise ``default_bound(questions)``."""
    return default_bound(questions) if quiz.max_blind_score is None else quiz.max_blind_score


def cue_problems(questions: Sequence[Question], key: Mapping[str, Mapping[str, str]], bound: int) -> list[str]:
    """One sentence per blind strategy that scores above the bound (none when the quiz holds)."""
    return [f"the blind strategy '{s.name}' scores {s.score} of {s.questions}, above the bound of {bound}"
            for s in blind_scores(questions, key) if s.score > bound]


def key_pattern_problems(questions: Sequence[Question], key: Mapping[str, Mapping[str, str]]) -> list[str]:
    """One sentence per pattern in the key's letters, taken in question order.

    The patterns are: the same letter more than ``MAX_RUN`` times in a row, and a cycle, where every complete
    group of as many questions as there are letters (four for a to d) uses each letter once, so that the
    earlier answers of a group give away the last one. A cycle needs at least two complete groups.
    """
    sequence = [key.get(q.id, {}).get("answer") for q in questions]
    problems = []
    start = 0
    for end in range(1, len(sequence) + 1):
        if end == len(sequence) or sequence[end] != sequence[start]:
            if end - start > MAX_RUN and sequence[start] is not None:
                problems.append(f"the key answers {questions[start].id} to {questions[end - 1].id} with the same "
                                f"letter {sequence[start]!r} ({end - start} in a row, at most {MAX_RUN} allowed)")
            start = end
    letters = sorted({letter for q in questions for letter in q.options})
    size = len(letters)
    groups = [sequence[i:i + size] for i in range(0, len(sequence) - size + 1, size)]
    if size > 1 and len(groups) >= 2 and all(None not in group and sorted(group) == letters for group in groups):
        problems.append(f"the key cycles: each group of {size} questions uses every letter "
                        f"({', '.join(letters)}) once, so the earlier answers of a group give away the last")
    return problems


def blind_summary(questions: Sequence[Question], key: Mapping[str, Mapping[str, str]], bound: int) -> str:
    """One sentence on the best blind strategy and the bound, for a report of a quiz that holds."""
    best = max(blind_scores(questions, key), key=lambda s: s.score)  # the first of the best on a tie
    return (f"no blind strategy scores above {bound} of {len(questions)} (the best, '{best.name}', "
            f"scores {best.score})")
