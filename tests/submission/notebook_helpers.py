"""Build notebooks for the notebook tests: the generated student notebook, filled with the reference's code."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.authoring.notebook_template import notebook_path
from autograder.authoring.notebook_variant import defined_name, reference_definitions
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.collect import ANSWERS_NAME
from autograder.util.tomlio import load_toml


def load_student_notebook(assignment: Assignment) -> dict:
    return json.loads(notebook_path(assignment).read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else text


def fill_with_reference(notebook: dict, assignment: Assignment) -> dict:
    """The notebook with every stub cell replaced by the reference's definition and the key's answers."""
    reference = reference_definitions(assignment)
    answers = load_toml(assignment.reference / assignment.quiz.answers_file) if assignment.quiz else {}
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        name = defined_name(source(cell))
        if name in reference:
            cell["source"] = reference[name]
        elif source(cell).startswith(f"{ANSWERS_NAME} = "):
            cell["source"] = f"{ANSWERS_NAME} = {json.dumps(answers, indent=4)}"
    return notebook


def code_cell(text: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": text}


def write(notebook: dict, path: Path) -> Path:
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return path
