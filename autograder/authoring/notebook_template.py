"""Generate the student notebook from the same single source as the package template (never edited by hand)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from autograder.authoring.dependencies import notebook_requirements
from autograder.authoring.readme import Step, order_steps, read_student_readme, sentences_naming
from autograder.errors import TemplateError
from autograder.spec.assignment import Assignment
from autograder.spec.quiz import load_questions
from autograder.submission.notebook.collect import ANSWERS_NAME
from autograder.submission.notebook.layout import parse_layout
from autograder.util.paths import display_path
from autograder.util.pins import pinned_version
from autograder.util.syntax import literal_eval, parse

GRADING_NOTE = """## How this notebook is graded

This notebook is generated from the same source as the `{package}/` package; you may work in either. Write
each function and class in its cell below (the README's file names are the sections of this notebook).

* The grader **reads** your saved notebook from top to bottom and **never runs it**. It keeps your imports,
  functions, classes and constants (`UPPER_CASE = ...` or a plain literal) and leaves out every other top-level
  statement: prints, plots, experiments and training runs cost nothing, so try things out freely. Anything
  your functions need must be a definition, not the result of running a cell.
* A later definition of a name replaces an earlier one, as in the kernel. Do not rename anything.
* A cell with a syntax error costs the definitions in that cell only. `%magics` and `!shell` lines are ignored.
* Each task ends with a cell that runs that task's public tests on your definitions
  (`check_notebook(...)`). Passing them does not guarantee full marks: hidden tests run at grading time.
* The quiz answers go in the `{answers}` dict near the end.
* Submit this `.ipynb` file.
"""

SHOW_NOTE = """## Look at what your code does

The cell below runs your definitions on the course's examples, in the same sandbox as the grader, and draws the
figures of the course notes from your numbers, with notes saying what each picture should show. It also writes
them to a page beside this notebook; like the checks, it says nothing about the hidden tests.
"""

SETUP_CELL = '''# Setup: run this cell first. It makes the checker importable and installs with pip only what is missing
# (never torch: this kernel must already have one, which stays as it is).
import importlib
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

RELEASE = "{release}"  # the student release: a folder or a .zip beside this notebook (on Colab, upload it)
# What `check` and `show` import: (module, what pip installs, needed only below this Python version)
NEEDED = {needed}
if importlib.util.find_spec("torch") is None:
    raise ModuleNotFoundError("torch is not installed in this kernel: choose the course's kernel, or install "
                              "torch=={torch} (the course's, its CPU build) and restart the kernel")
if importlib.util.find_spec("autograder") is None:
    places = [Path.cwd(), Path.cwd().parent]
    folders = [p / RELEASE for p in places if (p / RELEASE / "autograder").is_dir()]
    archives = [p / f"{{RELEASE}}.zip" for p in places if (p / f"{{RELEASE}}.zip").is_file()]
    if not folders and archives:
        with zipfile.ZipFile(archives[0]) as bundle:
            bundle.extractall(archives[0].parent)
        folders = [archives[0].parent / RELEASE]
    if not folders:
        raise FileNotFoundError(f"The checker is not installed and neither {{RELEASE}}/ nor {{RELEASE}}.zip is "
                                f"beside this notebook: put the student release there and run this cell again.")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", str(folders[0])], check=True)
    sys.path.insert(0, str(folders[0].resolve()))  # this kernel started before the install
missing = [pip for module, pip, below in NEEDED
           if (below is None or sys.version_info < below) and importlib.util.find_spec(module) is None]
if missing:  # Colab and course images have most of these; nothing present is ever reinstalled
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)
    importlib.invalidate_caches()  # this kernel's import system has not seen the new packages yet

from autograder.public.notebook import check_notebook'''


def setup_cell(assignment: Assignment) -> str:
    """The notebook's setup cell: the student release made importable, and every runtime dependency of ``check``
    and ``show`` installed when missing (torch never: see dependencies.KERNEL_PROVIDED; its message names the build
    grades are computed with)."""
    needed = [(r.import_name, r.text, r.python_below) for r in notebook_requirements()]
    rows = "".join(f"\n    {entry!r}," for entry in needed)
    return SETUP_CELL.format(release=f"{assignment.name}-student", needed=f"[{rows}\n]", torch=pinned_version("torch"))


def notebook_path(assignment: Assignment) -> Path:
    """Where the student notebook lives: beside the template package, ``student_template/<name>.ipynb``."""
    return assignment.template.parent / f"{assignment.name}.ipynb"


def render_notebook(assignment: Assignment, template: dict[str, bytes]) -> str:
    """The student notebook's text (nbformat 4 JSON), built from the template's files and the student README.

    Args:
        assignment: The assignment.
        template: The template's files (``authoring.template.render_template``).

    Raises:
        TemplateError: If nbformat is missing or a template module does not parse.
    """
    try:
        import nbformat
    except ImportError:
        raise TemplateError("generating the student notebook needs nbformat: pip install -e '.[instructor]'") from None
    builder = _Builder(nbformat)
    readme = read_student_readme(assignment)
    head, steps, tail = order_steps(assignment, readme.order)
    builder.markdown(readme.intro, "intro")
    builder.markdown(GRADING_NOTE.format(package=assignment.package, answers=ANSWERS_NAME), "grading")
    builder.code(setup_cell(assignment), "setup")
    for title, text in readme.others:
        builder.markdown(text, _slug(title))
    if readme.order:
        builder.markdown(_order_cell(assignment, head, steps, tail), "order")
    _task_cells(builder, assignment, template, steps)
    _quiz_cells(builder, assignment)
    builder.markdown("## Before you submit\n\nSave the notebook, then check every task at once:", "final")
    builder.code(f'from autograder.public.notebook import check_notebook\n\ncheck_notebook("{assignment.name}");', "check-all")
    _show_cells(builder, assignment)
    return nbformat.writes(builder.notebook())


class _Builder:
    """Cells with stable ids (from their position and role), so generating twice gives the same bytes."""

    def __init__(self, nbformat: Any) -> None:
        self.nbformat = nbformat
        self.cells: list[Any] = []

    def _id(self, role: str) -> str:
        return f"c{len(self.cells) + 1:03d}-{role}"[:64]

    def markdown(self, text: str, role: str) -> None:
        self.cells.append(self.nbformat.v4.new_markdown_cell(text.strip("\n"), id=self._id(role)))

    def code(self, text: str, role: str) -> None:
        self.cells.append(self.nbformat.v4.new_code_cell(text.strip("\n"), id=self._id(role)))

    def notebook(self) -> Any:
        notebook = self.nbformat.v4.new_notebook(cells=self.cells)
        notebook.metadata = {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"},
                             "language_info": {"name": "python"}}
        self.nbformat.validate(notebook)
        return notebook


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "section"


def _order_cell(assignment: Assignment, head: str, steps: list[Step], tail: str) -> str:
    """The order of work: the README's words around its list, the list being the tasks below in their order
    (each step's text stands under its task's heading)."""
    if not steps:
        return head
    tasks = [f"{n}. Task `{t.id}`: {t.title} ({t.points:g} points)" for n, t in enumerate(assignment.tasks, start=1)]
    return head.rstrip("\n") + "\n\n" + "\n".join(tasks) + ("\n\n" + tail.strip("\n") if tail.strip() else "") + "\n"


def task_text(assignment: Assignment, task_id: str, steps: list[Step], layouts: dict[str, Any]) -> str:
    """The text under a task's heading: the README's steps about it; else the sentences of the steps that name it
    beside another task; else the first line of each of its functions' docstrings (never nothing)."""
    own = [step.text for step in steps if step.tasks and step.tasks[0] == task_id]
    if own:
        return "\n\n".join(own)
    task = assignment.task(task_id)
    names = [q.split(".", 1)[1] for q in task.functions]
    shared = [(step, sentences_naming(step.text, names)) for step in steps if task_id in step.tasks[1:]]
    shared = [(step, text) for step, text in shared if text]
    if shared:
        return "\n\n".join(f"From step {step.number} of the order of work (with task `{step.tasks[0]}`): {text}"
                            for step, text in shared)
    lines = [f"* `{name}`: {_summary(layouts.get(q.split('.', 1)[0]), name)}" for q, name in zip(task.functions, names)]
    return "\n".join(lines)


def _summary(layout: Any, name: str) -> str:
    """The first line of a definition's docstring in the template ('see its docstring' when it has none)."""
    text = _definition_text(layout, name)
    try:
        node = parse(text).body[0] if text else None
    except SyntaxError:
        node = None
    doc = ast.get_docstring(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
    return doc.strip().split("\n", 1)[0] if doc else "see its docstring below"


def _task_cells(builder: _Builder, assignment: Assignment, template: dict[str, bytes], steps: list[Step]) -> None:
    layouts = {m: parse_layout(m, template[f"{m}.py"].decode("utf-8")) for m in assignment.modules
               if f"{m}.py" in template}
    owned = {q.split(".", 1)[1] for t in assignment.tasks for q in t.functions}
    started: set[str] = set()
    for task in assignment.tasks:
        for module in task.modules:
            if module not in started and module in layouts:
                started.add(module)
                _module_cells(builder, layouts[module], owned)
        builder.markdown(f"### Task `{task.id}`: {task.title} ({task.points:g} points)\n\n"
                         + task_text(assignment, task.id, steps, layouts), f"task-{task.id}")
        for qualified in task.functions:
            module, _, name = qualified.partition(".")
            text = _definition_text(layouts.get(module), name)
            if text:
                builder.code(text, f"{task.id}-{name}")
        builder.code(f'from autograder.public.notebook import check_notebook\n\n'
                     f'check_notebook("{assignment.name}", task="{task.id}");', f"check-{task.id}")


def _module_cells(builder: _Builder, layout: Any, owned: set[str]) -> None:
    """A module's heading, then one cell with its imports and constants, then its other (non-task) definitions."""
    doc = literal_eval(layout.docstring) if layout.docstring else ""
    builder.markdown(f"## `{layout.name}.py`\n\n{doc.strip()}", f"module-{layout.name}")
    imports = [line for line in layout.imports if not line.startswith("from .")]
    relative = [line for line in layout.imports if line.startswith("from .")]
    if relative:
        names = ", ".join(n.strip() for line in relative for n in line.split(" import ", 1)[1].split(","))
        imports.append(f"# The package's {layout.name}.py imports {names} from its other modules; here they are "
                       f"the definitions above.")
    constants = [text for names, node, text in layout.items
                 if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    builder.code("\n".join(imports) + ("\n\n" + "\n".join(constants) if constants else ""), f"setup-{layout.name}")
    for names, node, text in layout.items:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and names[0] not in owned:
            builder.code(text, f"helper-{names[0]}")


def _definition_text(layout: Any, name: str) -> str:
    if layout is None:
        return ""
    return next((text for names, _, text in layout.items if name in names), "")


def _quiz_cells(builder: _Builder, assignment: Assignment) -> None:
    quiz = assignment.quiz
    if quiz is None:
        return
    questions = load_questions(quiz)
    lines = [f"## {quiz.title} ({quiz.points:g} points)", "",
             (f"Write one letter between the quotes of each answer in `{ANSWERS_NAME}` below. An empty answer earns "
              f"nothing; the check cell only checks the format."), ""]
    for question in questions:
        lines.append(f"**{question.id}.** {' '.join(question.text.split())}")
        lines.append("")
        lines += [f"* {letter}) {' '.join(option.split())}" for letter, option in sorted(question.options.items())]
        lines.append("")
    builder.markdown("\n".join(lines), "quiz")
    body = "\n".join(f'    "{q.id}": "",' for q in questions)
    builder.code(f"{ANSWERS_NAME} = {{\n{body}\n}}", "answers")
    builder.code(f'from autograder.public.notebook import check_notebook\n\n'
                 f'check_notebook("{assignment.name}", task="{quiz.task_id}");', "check-quiz")


def _show_cells(builder: _Builder, assignment: Assignment) -> None:
    """The last section, for an assignment that declares figures: ``show()`` draws them from this notebook."""
    from autograder.show.render import declares_figures

    if not declares_figures(assignment):
        return
    builder.markdown(SHOW_NOTE, "show")
    builder.code(f'from autograder.show import show\n\nshow("{assignment.name}");', "show")


def notebook_drift(assignment: Assignment, template: dict[str, bytes], path: Path | None = None) -> list[str]:
    """One line if the committed student notebook (default: notebook_path) is missing or differs from a fresh
    generation from ``template`` (the template's files)."""
    path = path or notebook_path(assignment)
    if not path.is_file():
        return [f"{display_path(path)} is missing"]
    if path.read_text(encoding="utf-8") != render_notebook(assignment, template):
        return [f"{display_path(path)} differs from a fresh generation"]
    return []


def write_notebook(assignment: Assignment, template: dict[str, bytes], path: Path | None = None) -> Path:
    """Write the student notebook (default: notebook_path) generated from ``template`` (the template's files)."""
    path = path or notebook_path(assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_notebook(assignment, template), encoding="utf-8")
    return path
