"""A correct notebook in an awkward shape for the audit: decorators and defaults that reach helpers three levels down.

The student notebook (``student_template/<name>.ipynb``) with every stub cell replaced by the reference's
definition, each graded function or class decorated with ``@_counted`` (a bare decorator) and ``@_graded("name")``
(a decorator factory), both defined in the notebook's last cell: at decoration time each calls a helper that calls
another that calls a third, and ``_graded``'s default value is computed by such a chain too, every helper defined
after its caller. Extracted as the grader extracts notebooks (NOTEBOOKS.md rule 7), every module must import and the
notebook must keep full marks.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from autograder.spec.assignment import Assignment
from autograder.spec.mutation import Mutation
from autograder.submission.notebook.layout import parse_layout
from autograder.util.syntax import parse

NOTEBOOK_VARIANT = Mutation(
    id="notebook_decorators_three_levels_down", task="", hint="", edits=(),
    description="the reference as a notebook: each graded definition under two decorators from the last cell (a bare "
                "one and a factory with a default value), which call at import helpers three levels down, defined "
                "after them")

REGISTRY_CELL = '''GRADED = {}
COUNTS = {}


def _counted(definition):
    """Count a graded definition (a bare decorator: its body runs helpers three levels down at import)."""
    _tally(definition.__name__)
    return definition


def _tally(name):
    COUNTS[_count_key(name)] = COUNTS.get(_count_key(name), 0) + 1


def _count_key(name):
    return _folded(name)


def _folded(name):
    return name.casefold()


def _graded(name, label=_default_label()):
    """Register a graded definition (the default label is computed at import by a helper three levels down)."""
    _check_name(name)

    def register(definition):
        GRADED[label + name] = definition
        return definition

    return register


def _default_label():
    return _prefix() + ":"


def _prefix():
    return _word()


def _word():
    return "graded"


def _check_name(name):
    if not _is_identifier(name):
        raise ValueError(f"not a name: {name!r}")


def _is_identifier(name):
    return _identifier_test()(name)


def _identifier_test():
    return str.isidentifier
'''


def write_notebook_variant(assignment: Assignment, template_notebook: Path, destination: Path) -> Path:
    """Write the notebook variant of an assignment (see the module docstring) and return its path.

    Args:
        assignment: The assignment (its reference is read for the definitions).
        template_notebook: The student notebook to fill.
        destination: The notebook file to write.
    """
    definitions = reference_definitions(assignment)
    graded = {q.split(".", 1)[1] for task in assignment.tasks for q in task.functions}
    notebook = json.loads(template_notebook.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        source = cell.get("source", "")
        name = defined_name("".join(source) if isinstance(source, list) else source) \
            if cell.get("cell_type") == "code" else None
        if name in definitions:
            decorator = f"@_counted\n@_graded({name!r})\n" if name in graded else ""
            cell["source"] = decorator + definitions[name]
            cell["outputs"], cell["execution_count"] = [], None
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "source": REGISTRY_CELL, "outputs": [],
                              "execution_count": None})
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return destination


def reference_definitions(assignment: Assignment) -> dict[str, str]:
    """Every top-level function and class of the reference, by name: its text (solution markers included)."""
    found: dict[str, str] = {}
    for module in assignment.modules:
        layout = parse_layout(module, (assignment.reference / f"{module}.py").read_text(encoding="utf-8"))
        for names, node, text in layout.items:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[names[0]] = text
    return found


def defined_name(source: str) -> str | None:
    """The name a code cell defines when it is one function or class (a stub cell)."""
    try:
        body = parse(source).body
    except SyntaxError:
        return None
    if len(body) == 1 and isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return body[0].name
    return None
