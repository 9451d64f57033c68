"""Build notebooks for the notebook tests: the generated student notebook, filled with the reference's code."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from autograder.authoring.notebook_template import notebook_path
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.collect import ANSWERS_NAME
from autograder.submission.notebook.layout import parse_layout
from autograder.util.tomlio import load_toml


def reference_definitions(assignment: Assignment) -> dict[str, str]:
    """Every top-level definition of the reference, by name (its text, solution markers included)."""
    found: dict[str, str] = {}
    for module in assignment.modules:
        layout = parse_layout(module, (assignment.reference / f"{module}.py").read_text(encoding="utf-8"))
        for names, node, text in layout.items:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[names[0]] = text
    return found


def defined_name(source: str) -> str | None:
    """The name a cell defines when it is one function or class (a stub cell)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    if len(body) == 1 and isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return body[0].name
    return None


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
