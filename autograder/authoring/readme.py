"""The student README (``STUDENT_README.md``) read once into the sections the package template and the notebook show."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from autograder.errors import TemplateError
from autograder.spec.assignment import Assignment
from autograder.util.paths import display_path

STUDENT_README = "STUDENT_README.md"

_ITEM = re.compile(r"^\d+\.\s", re.MULTILINE)
_TICKED = re.compile(r"`([^`]+)`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*`])")


@dataclass(frozen=True)
class Step:
    """One item of the README's order of work.

    Attributes:
        number: Its number in the list (1-based).
        text: Its text, without the number.
        tasks: The tasks it names, in the order it names them (a function in backticks, or a module file,
            which stands for the module's first task); the first is the task it is about.
    """

    number: int
    text: str
    tasks: tuple[str, ...]


@dataclass
class StudentReadme:
    """The README split by its ``## `` headings.

    Attributes:
        text: The whole README, as the package template ships it.
        intro: Everything before the first ``## `` heading.
        order: The order-of-work section (a heading with "order"), or "".
        checking: The section on ``grader check`` (a heading with "check"), or "" (a notebook's check cells
            replace it).
        quiz: The quiz section (a heading with "quiz"), or "" (a notebook shows the questions themselves).
        others: Every other section, ``(title, text)`` in order (rules, contract), shown as they are.
    """

    text: str
    intro: str
    order: str = ""
    checking: str = ""
    quiz: str = ""
    others: list[tuple[str, str]] = field(default_factory=list)


def student_readme(assignment: Assignment) -> bytes:
    """The student README as the package template ships it (its ``README.md``).

    Raises:
        TemplateError: When the assignment has none: one line naming the file to write, what goes in it and what
            ``grader new`` would have put there.
    """
    path = assignment.root / STUDENT_README
    if not path.is_file():
        raise TemplateError(f"{display_path(path)} does not exist: write the students' instructions there (the "
                            f"template's README.md and the notebook's text come from it; `grader new` starts one with "
                            f"a title, the functions to write and their files, where to answer the quiz and `grader "
                            f"check {assignment.name}`), then run `grader template {assignment.name}`")
    return path.read_bytes()


def read_student_readme(assignment: Assignment) -> StudentReadme:
    """The assignment's student README (a title line when it has none), split into its sections."""
    path = assignment.root / STUDENT_README
    text = path.read_text(encoding="utf-8") if path.is_file() else f"# {assignment.title}\n"
    parts = re.split(r"^(?=## )", text, flags=re.MULTILINE)
    readme = StudentReadme(text=text, intro=parts[0])
    for part in parts[1:]:
        title = part.split("\n", 1)[0][3:].strip()
        lowered = title.lower()
        if "order" in lowered and not readme.order:
            readme.order = part
        elif "check" in lowered and not readme.checking:
            readme.checking = part
        elif "quiz" in lowered and not readme.quiz:
            readme.quiz = part
        else:
            readme.others.append((title, part))
    return readme


def order_steps(assignment: Assignment, section: str) -> tuple[str, list[Step], str]:
    """The order of work's list, and the text before and after it.

    Returns:
        ``(head, steps, tail)``: the section up to the list (its heading included), the numbered items, and the
        paragraphs after the list (e.g. "Then answer the quiz.").
    """
    starts = [m.start() for m in _ITEM.finditer(section)]
    if not starts:
        return section, [], ""
    steps = []
    tail = ""
    for number, (start, end) in enumerate(zip(starts, starts[1:] + [len(section)]), start=1):
        item = section[start:end]
        if end == len(section):
            item, tail = _split_tail(item)
        text = _ITEM.sub("", item.strip(), count=1)
        steps.append(Step(number, text, _named_tasks(assignment, text)))
    return section[: starts[0]], steps, tail


def _named_tasks(assignment: Assignment, text: str) -> tuple[str, ...]:
    """The tasks a step names in backticks, in order: by a function's name (``train`` in ``train(steps=300)``)
    or by a module's file (its first task)."""
    by_name = {q.split(".", 1)[1]: t.id for t in assignment.tasks for q in t.functions}
    by_module: dict[str, str] = {}
    for task in assignment.tasks:
        for module in task.modules:
            by_module.setdefault(f"{module}.py", task.id)
    named: list[str] = []
    for ticked in _TICKED.findall(text):
        word = re.match(r"[A-Za-z_][\w.]*", ticked)
        task = by_module.get(ticked) or (by_name.get(word.group(0)) if word else None)
        if task and task not in named:
            named.append(task)
    return tuple(named)


def sentences_naming(text: str, names: list[str]) -> str:
    """The sentences of a step that name one of ``names`` in backticks (a task that shares a step with another)."""
    wanted = [s for s in _SENTENCE_END.split(" ".join(text.split()))
              if any(re.match(rf"{re.escape(name)}\b", ticked) for ticked in _TICKED.findall(s) for name in names)]
    return " ".join(wanted)


def _split_tail(item: str) -> tuple[str, str]:
    """The last list item, and the paragraph after it (an unindented line after a blank line)."""
    match = re.search(r"\n\s*\n(?=\S)", item)
    return (item[: match.start()] + "\n", item[match.end():]) if match else (item, "")
