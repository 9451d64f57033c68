"""The generated notebook says what the student README says, section by section, for every assignment; every
heading of both has its text (no import circle between the generators: tests/test_import_graph.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder.authoring.notebook_template import notebook_path
from autograder.spec.assignment import load_assignment
from autograder.spec.quiz import load_questions

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted(p.name for p in (REPO / "assignments").iterdir() if (p / "assignment.toml").is_file())
_ITEM = re.compile(r"^\d+\.\s", re.MULTILINE)


def flat(text: str) -> str:
    return " ".join(text.split())


def readme_sections(text: str) -> list[tuple[str, str]]:
    """``(title, text)`` of each ``## `` section; the intro's title is ''."""
    parts = re.split(r"^(?=## )", text, flags=re.MULTILINE)
    return [("", parts[0])] + [(p.split("\n", 1)[0][3:].strip(), p) for p in parts[1:]]


def headings_without_text(markdown: str) -> list[str]:
    """Headings followed by another heading or by nothing (outside fenced code)."""
    lines = re.sub(r"```.*?```", "code", markdown, flags=re.DOTALL).splitlines()
    empty = []
    for number, line in enumerate(lines):
        if re.match(r"#{1,6} ", line):
            following = next((later for later in lines[number + 1:] if later.strip()), "")
            if not following or re.match(r"#{1,6} ", following):
                empty.append(line)
    return empty


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_the_notebook_says_what_the_readme_says_section_by_section(name: str) -> None:
    spec = load_assignment(name)
    readme = (spec.root / "STUDENT_README.md").read_text(encoding="utf-8")
    notebook = json.loads(notebook_path(spec).read_text(encoding="utf-8"))
    markdown = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    code = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    everything = flat("\n".join(markdown))

    assert headings_without_text(readme) == []
    assert [h for cell in markdown for h in headings_without_text(cell)] == []
    for title, text in readme_sections(readme):
        lowered = title.lower()
        if not title:
            assert markdown[0] == text.strip("\n")
        elif "order" in lowered:  # the list names the tasks; each step's text stands under its task's heading
            order = next(cell for cell in markdown if cell.startswith(f"## {title}"))
            listed = re.findall(r"^\d+\. Task `([^`]+)`", order, re.MULTILINE)
            assert listed == [t.id for t in spec.tasks], order
            items = [_ITEM.sub("", item.strip(), count=1) for item in re.split(r"\n(?=\d+\.\s)", text)[1:]]
            assert items, text
            for item in items:
                body = item.split("\n\n")[0]  # the paragraph after the last item stays in the order cell
                assert flat(body) in everything, body
            after = text.rsplit("\n\n", 2)[-2] if text.rstrip().count("\n\n") else ""
            assert flat(after) in flat(order), after
        elif "check" in lowered:  # the notebook's check cells replace the terminal command
            for task in spec.tasks:
                assert any(f'check_notebook("{name}", task="{task.id}")' in cell for cell in code), task.id
        elif "quiz" in lowered:  # the questions themselves, and the ANSWERS cell
            for question in load_questions(spec.quiz):
                assert f"**{question.id}.** {flat(question.text)}" in everything
            assert any(cell.startswith("ANSWERS = {") for cell in code)
        else:
            assert text.strip("\n") in markdown, title
    for task in spec.tasks:
        heading = next(cell for cell in markdown if cell.startswith(f"### Task `{task.id}`"))
        assert heading.split("\n", 1)[1].strip(), task.id
