"""Generate the student template from the reference: solution regions become ``raise NotImplementedError()`` stubs."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from autograder.authoring.notebook_template import notebook_drift, write_notebook
from autograder.authoring.readme import student_readme
from autograder.errors import TemplateError
from autograder.spec.assignment import Assignment
from autograder.spec.quiz import load_questions
from autograder.submission.package import PACKAGE_README
from autograder.util.paths import display_path
from autograder.util.syntax import parse
from autograder.util.tomlio import dumps_toml

BEGIN = "### BEGIN SOLUTION"


END = "### END SOLUTION"


CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


_MARKER_TEXT = re.compile(r"\b(BEGIN|END)\s+SOLUTION\b")  # case-sensitive, like nbgrader


_COMMENT_WIDTH = 100


@dataclass(frozen=True)
class Region:
    """One solution region of a source file (1-based line numbers of its markers)."""

    begin: int
    end: int
    indent: str


def find_regions(source: str, filename: str) -> list[Region]:
    """Locate the solution regions of a source file and validate their markers.

    A marker is a line holding exactly ``### BEGIN SOLUTION`` or ``### END SOLUTION`` (plus indentation);
    both markers of a region share one indentation; regions neither nest nor stay open.

    Args:
        source: The file's text.
        filename: Name used in error messages.

    Returns:
        The regions in file order.

    Raises:
        TemplateError: On a malformed, nested, unmatched or unterminated marker.
    """
    regions: list[Region] = []
    opened: tuple[int, str] | None = None
    for number, line in enumerate(source.split("\n"), start=1):
        if not _MARKER_TEXT.search(line):
            continue
        stripped, indent = line.strip(), line[: len(line) - len(line.lstrip())]
        if stripped == BEGIN:
            if opened is not None:
                raise TemplateError(f"{filename}:{number}: nested {BEGIN} (the region opened at line "
                                    f"{opened[0]} is not closed)")
            opened = (number, indent)
        elif stripped == END:
            if opened is None:
                raise TemplateError(f"{filename}:{number}: {END} without a matching {BEGIN}")
            if indent != opened[1]:
                raise TemplateError(f"{filename}:{number}: {END} is indented differently from its {BEGIN} "
                                    f"at line {opened[0]}")
            regions.append(Region(opened[0], number, opened[1]))
            opened = None
        else:
            raise TemplateError(f"{filename}:{number}: solution marker text outside a marker line "
                                f"(a marker line holds exactly {BEGIN!r} or {END!r})")
    if opened is not None:
        raise TemplateError(f"{filename}:{opened[0]}: {BEGIN} is never closed by {END}")
    return regions


def check_region_blocks(source: str, filename: str, regions: list[Region]) -> None:
    """Check that the reference parses and that no region leaves the block it starts in.

    Whether each region lies in a function body is checked on the generated file (see clear_solutions),
    where the stub stands exactly where the region was.

    Args:
        source: The reference file's text.
        filename: Name used in error messages.
        regions: The file's regions, from find_regions.

    Raises:
        TemplateError: If the reference does not parse, or a region holds a statement indented less than
            its markers.
    """
    try:
        tree = parse(source, filename=filename)
    except SyntaxError as exc:
        raise TemplateError(f"{filename}:{exc.lineno}: the reference does not parse: {exc.msg}") from None
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    for region in regions:
        for node in statements:
            if region.begin < node.lineno < region.end and node.col_offset < len(region.indent):
                raise TemplateError(f"{filename}:{node.lineno}: the solution region opened at line {region.begin} "
                                    f"leaves its block (a statement indented less than its markers)")


def clear_solutions(source: str, filename: str) -> str:
    """Replace every solution region of one Python file with the stub, using nbgrader's ClearSolutions.

    The markers are validated first; the result must parse, hold no marker text, and have each stub
    inside a function.

    Args:
        source: The reference file's text.
        filename: Name used in error messages.

    Returns:
        The template file's text.

    Raises:
        TemplateError: If the markers are malformed or misplaced, nbgrader is missing, or the output is invalid.
    """
    regions = find_regions(source, filename)
    if not regions:
        return source
    check_region_blocks(source, filename, regions)
    cleared = _run_clear_solutions(source, filename)
    _check_output(cleared, filename, regions)
    return cleared


def _run_clear_solutions(source: str, filename: str) -> str:
    """Run nbgrader's ClearSolutions on a one-cell in-memory notebook holding the file (nbgrader imported here)."""
    try:
        import nbformat
        from nbgrader.preprocessors import ClearSolutions
    except ImportError:
        raise TemplateError("generating the student template needs nbgrader: "
                            "pip install -e '.[instructor]'") from None
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    preprocessor = ClearSolutions(code_stub={"python": CODE_STUB}, begin_solution_delimeter=BEGIN,
                                  end_solution_delimeter=END, enforce_metadata=False)
    try:
        notebook, _ = preprocessor.preprocess(notebook, {})
    except (RuntimeError, ValueError) as exc:
        raise TemplateError(f"{filename}: nbgrader could not clear the solutions: {exc}") from None
    return notebook.cells[0].source


def _check_output(cleared: str, filename: str, regions: list[Region]) -> None:
    """The generated text parses, holds no marker text, and every stub sits in a function body."""
    origin = _origin_lines(regions, cleared.count("\n") + 1)
    try:
        tree = parse(cleared, filename=filename)
    except SyntaxError as exc:
        line = origin.get(exc.lineno or 0, exc.lineno)
        raise TemplateError(f"{filename}:{line}: the generated stub does not parse: {exc.msg}") from None
    for number, line in enumerate(cleared.split("\n"), start=1):
        if _MARKER_TEXT.search(line):
            raise TemplateError(f"{filename}:{origin.get(number, number)}: solution marker text left in the template")
    stub_lines = _stub_raise_lines(regions)
    for node in _raises_outside_functions(tree):
        if node.lineno in stub_lines:
            raise TemplateError(f"{filename}:{origin.get(node.lineno, node.lineno)}: solution region outside a "
                                f"function body")


def _origin_lines(regions: list[Region], total: int) -> dict[int, int]:
    """Map each generated line to the reference line it comes from (a stub maps to its BEGIN marker)."""
    stub_length = len(CODE_STUB.split("\n"))
    mapping: dict[int, int] = {}
    generated, reference = 1, 1
    for region in regions:
        while reference < region.begin:
            mapping[generated] = reference
            generated, reference = generated + 1, reference + 1
        for _ in range(stub_length):
            mapping[generated] = region.begin
            generated += 1
        reference = region.end + 1
    while generated <= total:
        mapping[generated] = reference
        generated, reference = generated + 1, reference + 1
    return mapping


def _stub_raise_lines(regions: list[Region]) -> set[int]:
    """Generated line numbers of each stub's ``raise`` line."""
    stub_length = len(CODE_STUB.split("\n"))
    lines, removed = set(), 0
    for region in regions:
        lines.add(region.begin - removed + stub_length - 1)
        removed += (region.end - region.begin + 1) - stub_length
    return lines


def _raises_outside_functions(tree: ast.Module) -> list[ast.Raise]:
    """Raise statements whose nearest enclosing def or class is not a function."""
    found: list[ast.Raise] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, True)
            elif isinstance(child, ast.ClassDef):
                visit(child, False)
            else:
                if isinstance(child, ast.Raise) and not in_function:
                    found.append(child)
                visit(child, in_function)

    visit(tree, False)
    return found


def blank_answers(assignment: Assignment) -> str:
    """The blank ``answers.toml``: every question id with an empty answer, its question and options as comments.

    Built from the questions file only; the key is never read.
    """
    quiz = assignment.quiz
    if quiz is None:
        raise TemplateError(f"assignment {assignment.name!r} declares no quiz, so there is no answers file to generate")
    questions = load_questions(quiz)
    letters = sorted({letter for q in questions for letter in q.options})
    span = f'"{letters[0]}" to "{letters[-1]}"' if letters else "one letter"
    lines = [f"# Quiz answers for {assignment.name}: write one letter ({span}) between the quotes of each answer.",
             "# `grader check` only checks the format; the answers are graded at grading time.", ""]
    for question in questions:
        lines += _comment(f"{question.id}. {question.text}", "# ", "#     ")
        for letter, option in sorted(question.options.items()):
            lines += _comment(f"{letter}) {option}", "#   ", "#      ")
        lines += [dumps_toml({question.id: ""}).rstrip("\n"), ""]  # quoted where TOML needs it (1.a, q 2)
    return "\n".join(lines).rstrip("\n") + "\n"


def _comment(text: str, first: str, rest: str) -> list[str]:
    wrapped = textwrap.wrap(" ".join(text.split()), width=_COMMENT_WIDTH - len(rest)) or [""]
    return [first + wrapped[0]] + [rest + line for line in wrapped[1:]]


def render_template(assignment: Assignment) -> dict[str, bytes]:
    """The student template's files, by name relative to the package folder.

    The student files (Python files are the reference's with their solutions cleared; the answers file is
    blank; any other declared file is copied from the reference), plus ``README.md``: the assignment's
    ``STUDENT_README.md``. The grader ignores the README in a submission.

    Raises:
        TemplateError: If the student README or a reference file is missing, or a file's solution regions are
            invalid.
    """
    readme = student_readme(assignment)  # first: without it, neither `template` nor `verify` can go on
    files: dict[str, bytes] = {}
    answers_file = assignment.quiz.answers_file if assignment.quiz else None
    for name in assignment.student_files:
        if name == answers_file:
            files[name] = blank_answers(assignment).encode("utf-8")
            continue
        path = assignment.reference / name
        if not path.is_file():
            raise TemplateError(f"{display_path(path)}: missing from the reference solution")
        data = path.read_bytes()
        if name.endswith(".py"):
            source = _decode(data, path)
            data = clear_solutions(source, display_path(path)).encode("utf-8")
        files[name] = data
    files[PACKAGE_README] = readme
    return files


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TemplateError(f"{display_path(path)}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def template_drift(assignment: Assignment, folder: Path | None = None) -> list[str]:
    """Differences between a template folder on disk and a fresh generation (empty when byte-identical).

    Args:
        assignment: The assignment.
        folder: The template folder; defaults to the committed one (``assignment.template``).

    Returns:
        One line per differing, missing or unexpected file.
    """
    folder = folder or assignment.template
    expected = render_template(assignment)
    if not folder.is_dir():
        return [f"{display_path(folder)} does not exist"]
    problems = []
    for name, data in expected.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{display_path(path)} is missing")
        elif path.read_bytes() != data:
            problems.append(f"{display_path(path)} differs from a fresh generation")
    for path in sorted(_files_below(folder)):
        name = path.relative_to(folder).as_posix()
        if name not in expected:
            problems.append(f"{display_path(path)} is not part of the template: delete it (grader template never "
                            f"deletes a file){left_in_reference(assignment, [name])}")
    return problems + notebook_drift(assignment, expected, folder.parent / f"{assignment.name}.ipynb")


def _files_below(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def write_files(files: dict[str, bytes], destination: Path, assignment: Assignment | None = None) -> None:
    """Replace ``destination`` by a folder holding exactly ``files`` (built beside it, then swapped in).

    ``assignment``: the template's assignment, whose reference may hold the same strays (:func:`left_in_reference`).

    Raises:
        TemplateError: If the destination holds files the template would not contain (it is never wiped then).
    """
    destination = destination.resolve()
    if destination.exists():
        strangers = [p.relative_to(destination).as_posix() for p in _files_below(destination)
                     if p.relative_to(destination).as_posix() not in files]
        if not destination.is_dir():
            raise TemplateError(f"{display_path(destination)} is not a folder; move it away, then generate again")
        if strangers:
            left = left_in_reference(assignment, strangers) if assignment is not None else ""
            raise TemplateError(_strangers_message(destination, strangers, left))
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}-", dir=destination.parent))
    try:
        for name, data in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            os.chmod(target, 0o644)
        os.chmod(staging, 0o755)
        if destination.exists():
            shutil.rmtree(destination)
        staging.rename(destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _strangers_message(destination: Path, strangers: list[str], left: str = "") -> str:
    """What to do about files of a template folder that a fresh generation would not write (never deleted for the
    instructor: the folder may be one they chose by mistake); ``left``: what the reference still holds of them."""
    files = "files" if len(strangers) > 1 else "a file"
    them = "them" if len(strangers) > 1 else "it"
    listed = ", ".join(strangers[:5]) + (f" and {len(strangers) - 5} more" if len(strangers) > 5 else "")
    remove = " ".join(shlex.quote(display_path(destination / name)) for name in strangers)
    guess = "" if left else " (a module the reference no longer has?)"
    return (f"{display_path(destination)} holds {files} a fresh generation would not write, and it never deletes one: "
            f"{listed}{guess}; delete {them} (rm {remove}), then generate again{left}")


def left_in_reference(assignment: Assignment, names: list[str]) -> str:
    """``; the reference still has ops.py, ...`` for the files the reference holds that ``student_files`` no longer
    lists, such as a module of ``grader new`` renamed in the manifest but left behind ('' for none)."""
    left = [name for name in names if (assignment.reference / name).is_file() and name not in assignment.student_files]
    if not left:
        return ""
    remove = " ".join(shlex.quote(display_path(assignment.reference / name)) for name in left)
    return (f"; the reference still has {', '.join(left)}, which [assignment] student_files no longer lists (left "
            f"from `grader new` or a rename?): delete {'them' if len(left) > 1 else 'it'} there too (rm {remove})")


def generate_template(assignment: Assignment, destination: Path | None = None) -> Path:
    """Generate the student template package from the reference solution.

    Args:
        assignment: The assignment.
        destination: The package folder to write; defaults to ``student_template/<name>/`` (assignment.template).

    Returns:
        The folder written.

    Raises:
        TemplateError: If the reference's markers are invalid, nbgrader is missing, or a file does not parse.
    """
    destination = destination or assignment.template
    files = render_template(assignment)
    write_files(files, destination, assignment)
    write_notebook(assignment, files, destination.parent / f"{assignment.name}.ipynb")
    return destination
