"""Turn a student's Jupyter notebook into the assignment's package by extraction: its code is read, never run."""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import math
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.errors import SubmissionError
from autograder.spec.assignment import Assignment, assignments_root

# nbformat is not imported here: its import costs seconds (jsonschema), which would dominate grading a notebook.
# The file format (nbformat 4, and nbformat 3's worksheets) is plain JSON and read as such.
NOTEBOOK_SUFFIX = ".ipynb"
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024  # embedded output images make real notebooks large; only sources are kept
MAX_NOTES = 20
ANSWERS_NAME = "ANSWERS"
# Cell magics whose body is Python that IPython runs (timed, captured): the body is kept, the magic line dropped.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
# Calls an UPPER_CASE constant may make: pure and fast, so a module can run them at import.
SAFE_CALLS = frozenset({"float", "int", "str", "bool", "complex", "tuple", "list", "dict", "set", "frozenset",
                        "range", "len", "min", "max", "abs", "round", "sorted", "bytes"})
SAFE_CALL_ROOTS = {"math": None, "torch": frozenset({"device", "finfo", "iinfo", "tensor"}),
                   "np": frozenset({"float32", "float64", "int64", "finfo", "array"})}
_UPPER = re.compile(r"^_*[A-Z][A-Z0-9_]*$")
_HELP = re.compile(r"^[A-Za-z_][\w.]*(\(.*\))?\?{1,2}$")
_SHELL_ASSIGN = re.compile(r"^[A-Za-z_][\w.,\s]*=\s*[!%]")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
HEADER = "# Extracted by the grader from a notebook: its definitions only, nothing of it was run."


class NotebookError(SubmissionError):
    """The notebook cannot be read (not JSON, not a notebook, too large)."""


@dataclass(frozen=True)
class Cell:
    """One code cell as the extraction sees it.

    Attributes:
        label: How messages name it: ``cell 7`` (its position among all cells) or ``In [5]`` (kernel history).
        source: Its text.
    """

    label: str
    source: str

    @property
    def first_line(self) -> str:
        line = next((line.strip() for line in self.source.split("\n") if line.strip()), "")
        return line if len(line) <= 60 else line[:57] + "..."


@dataclass
class Definition:
    """A top-level statement kept from the notebook: an import, a function, a class or a constant."""

    kind: str  # "import", "def" or "const"
    names: tuple[str, ...]
    source: str
    node: ast.stmt
    label: str = ""


@dataclass
class Extraction:
    """What the extraction made of a notebook.

    Attributes:
        files: The package's files by name (``attention.py``, ``answers.toml``, ...).
        notes: One sentence per thing the student should know (a cell with a syntax error, a dropped constant).
        cells: Code cells read.
        dropped: Top-level statements that are not definitions and were left out (prints, training runs, ...).
        defined: Names the notebook defines (the final definition of each).
    """

    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cells: int = 0
    dropped: int = 0
    defined: list[str] = field(default_factory=list)


# -- reading -------------------------------------------------------------------------------------------------


def is_notebook(path: Path) -> bool:
    """Whether ``path`` names a notebook file (by its suffix)."""
    return path.suffix.lower() == NOTEBOOK_SUFFIX


def read_notebook(path: Path) -> list[Cell]:
    """The code cells of a notebook file, labelled by their position among all its cells.

    Raises:
        NotebookError: If the file is too large, not JSON, or not a Jupyter notebook (nbformat 3 or 4).
    """
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            raise NotebookError(f"{name} is {size // (1024 * 1024)} MB, more than the {MAX_NOTEBOOK_BYTES >> 20} MB "
                                f"a notebook may have; clear its outputs (Edit > Clear All Outputs) and save it again")
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise NotebookError(f"cannot read {name}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"{name} is not a Jupyter notebook: it is not valid JSON ({str(exc)[:80]}); save it "
                            f"from Jupyter or Colab again (File > Download .ipynb)") from None
    return notebook_cells(data, name)


def notebook_cells(data: Any, name: str = "the notebook") -> list[Cell]:
    """The code cells of a parsed notebook (nbformat 4, or 3 whose cells live in worksheets).

    Raises:
        NotebookError: If ``data`` is not a notebook.
    """
    if not isinstance(data, dict) or "nbformat" not in data:
        raise NotebookError(f"{name} is JSON but not a Jupyter notebook (no 'nbformat' field)")
    version = data.get("nbformat")
    if version == 3:
        worksheets = data.get("worksheets") or [{}]
        raw_cells = [c for sheet in worksheets if isinstance(sheet, dict) for c in sheet.get("cells") or []]
        source_key = "input"
    elif version == 4:
        raw_cells, source_key = data.get("cells"), "source"
    else:
        raise NotebookError(f"{name} is in notebook format {version!r}; the grader reads formats 3 and 4: open it "
                            f"in Jupyter and save it again")
    if not isinstance(raw_cells, list):
        raise NotebookError(f"{name} is not a readable notebook (its 'cells' is not a list)")
    cells = []
    for position, raw in enumerate(raw_cells, start=1):
        if isinstance(raw, dict) and raw.get("cell_type") == "code":
            cells.append(Cell(f"cell {position}", _text(raw.get(source_key, ""))))
    return cells


def _text(source: Any) -> str:
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


# -- IPython syntax ------------------------------------------------------------------------------------------


def neutralise(source: str) -> str:
    """Replace IPython-only syntax by ``pass`` lines, keeping line numbers.

    Line magics (``%time``), shell escapes (``!pip``, ``x = !ls``) and help (``?obj``, ``obj??``) become
    ``pass`` at their indentation; a cell magic (``%%bash``) drops its cell, unless its body is Python that
    IPython runs (``%%time``, ``%%capture``: the body is kept). Lines inside triple-quoted strings are left alone.
    """
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in PYTHON_CELL_MAGICS:
            return ""
        lines[first] = ""
    quote: str | None = None
    for number, line in enumerate(lines):
        if quote is None and _ipython_line(line.strip()):
            lines[number] = line[: len(line) - len(line.lstrip())] + "pass"
        else:
            quote = _quote_after(line, quote)
    return "\n".join(lines)


def _ipython_line(stripped: str) -> bool:
    return bool(stripped) and (stripped[0] in "%!?" or bool(_HELP.match(stripped))
                               or bool(_SHELL_ASSIGN.match(stripped)))


def _quote_after(line: str, quote: str | None) -> str | None:
    """The triple quote still open after ``line`` (None when none is): a small scanner, enough to skip docstrings."""
    index, single = 0, None
    while index < len(line):
        if quote is not None:
            end = line.find(quote, index)
            if end < 0:
                return quote
            index, quote = end + 3, None
            continue
        char = line[index]
        if single is not None:
            index += 2 if char == "\\" else 1
            if char == single:
                single = None
            continue
        if char == "#":
            break
        if line.startswith(('"""', "'''"), index):
            quote, index = line[index:index + 3], index + 3
            continue
        if char in "\"'":
            single = char
        index += 1
    return quote


# -- collecting definitions ----------------------------------------------------------------------------------


@dataclass
class Collected:
    """Definitions found in the cells, the latest of each name winning, as in the kernel."""

    by_name: dict[str, Definition] = field(default_factory=dict)
    imports: list[Definition] = field(default_factory=list)
    future: list[str] = field(default_factory=list)
    answers: tuple[Any, str] | None = None  # the ANSWERS value and its cell's label
    notes: list[str] = field(default_factory=list)
    dropped: int = 0

    def definitions(self) -> list[Definition]:
        """The current definitions, each once, in the order they were last defined."""
        seen: dict[int, Definition] = {}
        for definition in self.by_name.values():
            seen.setdefault(id(definition), definition)
        return list(seen.values())


def collect(cells: Sequence[Cell], package: str) -> Collected:
    """Keep the top-level imports, functions, classes and constants of every cell, in order."""
    collected = Collected()
    for cell in cells:
        tree, lines = _parse_cell(cell, collected)
        if tree is None:
            continue
        for node in tree.body:
            _collect_statement(node, lines, cell, package, collected)
    return collected


def _parse_cell(cell: Cell, collected: Collected) -> tuple[ast.Module | None, list[str]]:
    source = cell.source
    try:
        return ast.parse(source), source.split("\n")
    except (SyntaxError, ValueError):
        pass
    except (RecursionError, MemoryError):
        collected.notes.append(f"{cell.label} ({cell.first_line!r}) is nested too deeply to be read; its "
                               f"definitions were not graded")
        return None, []
    source = neutralise(source)
    try:
        return ast.parse(source), source.split("\n")
    except (RecursionError, MemoryError):
        collected.notes.append(f"{cell.label} ({cell.first_line!r}) is nested too deeply to be read; its "
                               f"definitions were not graded")
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        collected.notes.append(f"{cell.label} ({cell.first_line!r}) has a syntax error{where}: {exc.msg}; its "
                               f"definitions were not graded")
    except ValueError as exc:  # e.g. a NUL character
        collected.notes.append(f"{cell.label} ({cell.first_line!r}) cannot be parsed ({exc}); its definitions "
                               f"were not graded")
    return None, []


def _collect_statement(node: ast.stmt, lines: list[str], cell: Cell, package: str, collected: Collected) -> None:
    source = _segment(node, lines)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            collected.future.append(source)
        elif not _imports_own_package(node, package):
            collected.imports.append(Definition("import", _bound_by_import(node), source, node, cell.label))
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        _define(collected, Definition("def", (node.name,), source, node, cell.label))
        return
    names, value = _assigned(node)
    if names == (ANSWERS_NAME,) and value is not None:
        try:
            collected.answers = (ast.literal_eval(value), cell.label)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            collected.notes.append(f"{cell.label}: {ANSWERS_NAME} must be a dict of literal strings "
                                   f"({{\"q1\": \"b\", ...}}); it was not read")
        return
    if names and value is not None:
        if _is_literal(value) or (all(_UPPER.match(n) for n in names) and _is_static(value)):
            _define(collected, Definition("const", names, source, node, cell.label))
            return
        if all(_UPPER.match(n) for n in names):
            collected.notes.append(f"{cell.label}: {', '.join(names)} was not kept: a constant may only be computed "
                                   f"from literals, names and pure built-ins (anything else would run at import)")
    collected.dropped += 1


def _define(collected: Collected, definition: Definition) -> None:
    for name in definition.names:
        collected.by_name[name] = definition


def _segment(node: ast.stmt, lines: list[str]) -> str:
    """The statement's text with its decorators (top-level statements start at column 0)."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(lines[start - 1: node.end_lineno]).rstrip()


def _imports_own_package(node: ast.Import | ast.ImportFrom, package: str) -> bool:
    """Imports of the assignment's own package (or relative ones) are replaced by the package's own wiring."""
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return node.level > 0 or module == package or module.startswith(package + ".")
    return any(a.name == package or a.name.startswith(package + ".") for a in node.names)


def _bound_by_import(node: ast.Import | ast.ImportFrom) -> tuple[str, ...]:
    if isinstance(node, ast.Import):
        return tuple(a.asname or a.name.split(".")[0] for a in node.names)
    return tuple(a.asname or a.name for a in node.names)


def _assigned(node: ast.stmt) -> tuple[tuple[str, ...], ast.expr | None]:
    """Names bound by a plain assignment (``X = ...``, ``A, B = ...``, ``X: int = ...``) and its value."""
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return (node.target.id,), node.value
    if not isinstance(node, ast.Assign):
        return (), None
    names: list[str] = []
    for target in node.targets:
        elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if not all(isinstance(e, ast.Name) for e in elements):
            return (), None
        names += [e.id for e in elements]  # type: ignore[attr-defined]
    return tuple(dict.fromkeys(names)), node.value


def _is_literal(value: ast.expr) -> bool:
    try:
        ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _is_static(value: ast.expr) -> bool:
    """An expression that is cheap and pure to evaluate at import: no call beyond a few built-ins."""
    for node in ast.walk(value):
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
        if isinstance(node, ast.Call) and not _safe_call(node.func):
            return False
    return True


def _safe_call(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in SAFE_CALLS
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in SAFE_CALL_ROOTS:
        allowed = SAFE_CALL_ROOTS[func.value.id]
        return allowed is None or func.attr in allowed
    return False


# -- the package's layout ------------------------------------------------------------------------------------


@dataclass
class ModuleLayout:
    """One module of the package as the template lays it out.

    Attributes:
        name: Module name (``attention``).
        docstring: The module docstring statement's text ('' if none).
        imports: The module's import statements (relative ones included), in order.
        items: Its other top-level statements, in order: (names they define, the statement, its text).
    """

    name: str
    docstring: str = ""
    imports: list[str] = field(default_factory=list)
    items: list[tuple[tuple[str, ...], ast.stmt, str]] = field(default_factory=list)

    @property
    def names(self) -> set[str]:
        return {name for names, _, _ in self.items for name in names}


def layout_sources(assignment: Assignment) -> dict[str, str]:
    """Each module's text as laid out for students: the template's, else the reference's (only its structure is
    used, never its code), else the package shipped beside the grader in the student release."""
    folders = [assignment.template, assignment.reference, assignments_root().parent / assignment.package]
    sources = {}
    for module in assignment.modules:
        for folder in folders:
            path = folder / f"{module}.py"
            if path.is_file():
                sources[module] = path.read_text(encoding="utf-8", errors="replace")
                break
    return sources


def parse_layout(name: str, source: str) -> ModuleLayout:
    """Split a template module into its docstring, imports and other top-level statements."""
    layout = ModuleLayout(name)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return layout
    lines = source.split("\n")
    for index, node in enumerate(tree.body):
        text = _segment(node, lines)
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            layout.docstring = text
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            layout.imports.append(text)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            layout.items.append(((node.name,), node, text))
        else:
            layout.items.append((_assigned(node)[0], node, text))
    return layout


def stub(node: ast.stmt) -> str:
    """A definition's not-implemented stand-in: its signature and docstring, a body that raises
    NotImplementedError (a class keeps its bases; constructing it raises). Never the template's code."""
    if isinstance(node, ast.ClassDef):
        body: list[ast.stmt] = _docstring(node) + [_raising_function("__init__", _star_args(self_arg=True))]
        new: ast.stmt = ast.ClassDef(node.name, node.bases, node.keywords, body, [], type_params=[])
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raising = _raising_function(node.name, node.args)
        raising.body = _docstring(node) + raising.body
        raising.returns = node.returns
        new = raising
    else:
        return ""
    return ast.unparse(ast.fix_missing_locations(new))


def _docstring(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    doc = ast.get_docstring(node, clean=False)
    return [ast.Expr(ast.Constant(doc))] if doc else []


def _raising_function(name: str, args: ast.arguments) -> ast.FunctionDef:
    error = ast.Raise(ast.Call(ast.Name("NotImplementedError", ast.Load()), [], []), None)
    return ast.FunctionDef(name, args, [error], [], None, type_params=[])


def _star_args(self_arg: bool) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg("self")] if self_arg else [], vararg=ast.arg("args"),
                         kwonlyargs=[], kw_defaults=[], kwarg=ast.arg("kwargs"), defaults=[])


# -- building the package ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)  # asked many times per statement while helpers are placed
def referenced(node: ast.AST) -> frozenset[str]:
    """Every name a statement mentions (a superset of what it needs: locals included)."""
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def definition_time_names(node: ast.stmt) -> set[str]:
    """Names a statement needs when it runs at import: decorators, defaults, annotations, bases, class bodies,
    assigned values (a function's body runs later, when called)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parts: list[ast.AST] = list(node.decorator_list) + list(node.args.defaults)
        parts += [d for d in node.args.kw_defaults if d is not None]
        parts += [a.annotation for a in _all_args(node.args) if a.annotation is not None]
        parts += [node.returns] if node.returns is not None else []
        return set().union(*(referenced(p) for p in parts)) if parts else set()
    if isinstance(node, ast.ClassDef):
        names = set().union(*(referenced(p) for p in node.bases + node.decorator_list + node.keywords)) \
            if node.bases or node.decorator_list or node.keywords else set()
        for statement in node.body:
            names |= definition_time_names(statement)
        return names
    return set(referenced(node))


def _all_args(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return args.posonlyargs + args.args + args.kwonlyargs + extra


@dataclass
class _Item:
    names: tuple[str, ...]
    node: ast.stmt
    text: str


def owners(assignment: Assignment, layouts: dict[str, ModuleLayout]) -> dict[str, list[str]]:
    """Which module(s) each name belongs in: the manifest's ``module.name`` first, then the template's layout."""
    owned: dict[str, list[str]] = {}
    for task in assignment.tasks:
        for qualified in task.functions:
            module, _, name = qualified.partition(".")
            owned.setdefault(name, [module])
    for module, layout in layouts.items():
        for name in layout.names:
            if name not in owned or module not in owned[name]:
                owned.setdefault(name, []).append(module)
    return owned


def build_modules(assignment: Assignment, collected: Collected, layouts: dict[str, ModuleLayout]) -> dict[str, str]:
    """Each module's text: the template's layout, with each definition the notebook provides in place of the
    template's (a stub where the notebook has none), the notebook's own helpers where they are used, and
    imports between the modules where the notebook's code needs them."""
    owned = owners(assignment, layouts)
    ours = collected.definitions()
    bodies: dict[str, list[_Item]] = {}
    for module in assignment.modules:
        layout = layouts.get(module, ModuleLayout(module))
        items = [_layout_item(names, node, text, collected) for names, node, text in layout.items]
        placed = {name for item in items for name in item.names}
        items += [_Item(d.names, d.node, _labelled(d)) for d in ours
                  if module in owned.get(d.names[0], []) and not set(d.names) & placed]
        bodies[module] = [item for item in items if item.text]
    _place_helpers(bodies, ours, owned)
    return {f"{module}.py": _render_module(module, layouts.get(module, ModuleLayout(module)), bodies[module],
                                           collected, owned, assignment) for module in assignment.modules}


def _layout_item(names: tuple[str, ...], node: ast.stmt, text: str, collected: Collected) -> _Item:
    mine = next((collected.by_name[n] for n in names if n in collected.by_name), None)
    if mine is not None:
        return _Item(mine.names, mine.node, _labelled(mine))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return _Item(names, node, stub(node))
    return _Item(names, node, text)  # the template's constants and other module-level statements


def _labelled(definition: Definition) -> str:
    return f"# from {definition.label}\n{definition.source}" if definition.label else definition.source


def _place_helpers(bodies: dict[str, list[_Item]], ours: list[Definition], owned: dict[str, list[str]]) -> None:
    """The notebook's definitions no module owns go to every module whose code mentions them (repeatedly: a
    helper of a helper follows it); one nothing mentions is left out."""
    free = {name: d for d in ours for name in d.names if name not in owned}
    changed = True
    while changed:
        changed = False
        for items in bodies.values():
            present = {name for item in items for name in item.names}
            wanted = set().union(*(referenced(item.node) for item in items)) if items else set()
            for name in sorted((wanted & set(free)) - present):
                definition = free[name]
                items.append(_Item(definition.names, definition.node, _labelled(definition)))
                present |= set(definition.names)
                changed = True


def _render_module(module: str, layout: ModuleLayout, items: list[_Item], collected: Collected,
                   owned: dict[str, list[str]], assignment: Assignment) -> str:
    items = _definition_order(items)
    bound = {name for item in items for name in item.names}
    header_bound = set().union(*(_bound_by_text(text) for text in layout.imports)) if layout.imports else set()
    needed = set().union(*(referenced(item.node) for item in items)) if items else set()
    at_import = set().union(*(definition_time_names(item.node) for item in items)) if items else set()
    imports = [d.source for d in collected.imports
               if (set(d.names) & (needed - bound - header_bound)) or "*" in d.names]
    imported = header_bound | set().union(*(d.names for d in collected.imports if d.source in imports))
    early, late = _cross_imports(module, needed - bound - imported, at_import, owned, assignment)
    parts = [layout.docstring] if layout.docstring else []
    parts += collected.future[:1] if collected.future else []
    parts += [HEADER, "\n".join(layout.imports + list(dict.fromkeys(imports)) + early)]
    parts += [item.text for item in items]
    if late:  # after the definitions, so two modules that need each other's names can import each other
        parts.append("# Imports between modules needed by the notebook's code (placed last: no import cycle).\n"
                     + "\n".join(late))
    return "\n\n\n".join(part for part in parts if part.strip()) + "\n"


def _bound_by_text(text: str) -> set[str]:
    try:
        node = ast.parse(text).body[0]
    except (SyntaxError, IndexError):
        return set()
    return set(_bound_by_import(node)) if isinstance(node, (ast.Import, ast.ImportFrom)) else set()


def _cross_imports(module: str, missing: set[str], at_import: set[str], owned: dict[str, list[str]],
                   assignment: Assignment) -> tuple[list[str], list[str]]:
    early, late = [], []
    for name in sorted(missing):
        homes = [m for m in owned.get(name, []) if m != module]
        if not homes:
            continue
        line = f"from .{homes[0]} import {name}"
        (early if name in at_import else late).append(line)
    return early, late


def _definition_order(items: list[_Item]) -> list[_Item]:
    """Stable order in which whatever a statement needs at import (a base class, a default) comes first."""
    by_name = {name: item for item in items for name in item.names}
    ordered: list[_Item] = []
    visiting: set[int] = set()

    def visit(item: _Item) -> None:
        if id(item) in visiting:
            return
        visiting.add(id(item))
        for name in sorted(definition_time_names(item.node)):
            if name in by_name and by_name[name] is not item:
                visit(by_name[name])
        ordered.append(item)

    try:
        for item in items:
            visit(item)
    except RecursionError:  # a chain of thousands of constants: keep the notebook's order
        return items
    return ordered


def answers_toml(answers: Any) -> str:
    """The ``ANSWERS`` dict as the ``answers.toml`` a package would hold."""
    lines = ["# Extracted by the grader from the notebook's ANSWERS."]
    for key, value in answers.items():
        name = key if isinstance(key, str) and _BARE_KEY.match(key) else json.dumps(str(key))
        if isinstance(value, bool):
            rendered = "true" if value else "false"
        elif isinstance(value, (int, float)) and math.isfinite(value):
            rendered = repr(value)
        else:
            rendered = json.dumps(value if isinstance(value, str) else str(value))
        lines.append(f"{name} = {rendered}")
    return "\n".join(lines) + "\n"


# -- the whole extraction ------------------------------------------------------------------------------------


def extract(assignment: Assignment, cells: Sequence[Cell]) -> Extraction:
    """The package files a notebook's cells amount to.

    Args:
        assignment: The assignment (its manifest and template say which name goes to which module).
        cells: The code cells, in notebook order.

    Returns:
        The files and what the student should know about them.
    """
    collected = collect(cells, assignment.package)
    layouts = {m: parse_layout(m, text) for m, text in layout_sources(assignment).items()}
    extraction = Extraction(cells=len(cells), dropped=collected.dropped, notes=collected.notes[:MAX_NOTES])
    extraction.defined = sorted(collected.by_name)
    extraction.files = build_modules(assignment, collected, layouts)
    init = assignment.template / "__init__.py"
    extraction.files["__init__.py"] = init.read_text(encoding="utf-8") if init.is_file() else ""
    if assignment.quiz is not None:
        if isinstance(collected.answers, tuple) and isinstance(collected.answers[0], dict):
            extraction.files[assignment.quiz.answers_file] = answers_toml(collected.answers[0])
        elif collected.answers is not None:
            extraction.notes.append(f"{collected.answers[1]}: {ANSWERS_NAME} must be a dict such as "
                                    f"{{\"q1\": \"b\"}}; the quiz was not read")
    return extraction


def write_package(extraction: Extraction, folder: Path) -> Path:
    """Write the extracted files into ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in extraction.files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def extract_notebook(path: Path, assignment: Assignment, destination: Path) -> tuple[Path, list[str]]:
    """Extract a notebook file into ``destination/<package>/``.

    Returns:
        The folder holding the package, and one note per thing the student should know (prefixed by the name).

    Raises:
        NotebookError: If the file is not a readable notebook.
    """
    cells = read_notebook(path)
    if not cells:
        raise NotebookError(f"{path.name} has no code cells: nothing to grade (is it the right notebook?)")
    extraction = extract(assignment, cells)
    write_package(extraction, destination / assignment.package)
    summary = (f"everything in the notebook {path.name} but its definitions ({extraction.cells} code cells read, "
               f"never run; {extraction.dropped} top-level statements left out)")
    return destination, [summary] + [f"{path.name}: {note}" for note in extraction.notes]


def find_notebook(root: Path, assignment: Assignment) -> Path | None:
    """The student's notebook at or below ``root`` (a few levels), or None.

    Checkpoints (``.ipynb_checkpoints``) and ``__MACOSX`` are skipped. Several notebooks: the one named after
    the assignment or its package wins.

    Raises:
        SubmissionError: If several notebooks are found and none is named after the assignment.
    """
    if root.is_file():
        return root if is_notebook(root) else None
    found = [p for p in _notebooks_below(root, depth=3)]
    if len(found) <= 1:
        return found[0] if found else None
    named = [p for p in found if p.stem in {assignment.name, assignment.package}]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(p.relative_to(root).as_posix() for p in found[:4])
    raise SubmissionError(f"several notebooks in {root.name}: {listed}; submit one, or name it "
                          f"{assignment.name}{NOTEBOOK_SUFFIX}")


def _notebooks_below(root: Path, depth: int) -> list[Path]:
    found, frontier = [], [root]
    for _ in range(depth + 1):
        following = []
        for folder in frontier:
            try:
                children = sorted(folder.iterdir())
            except OSError:
                continue
            for child in children:
                if child.name.startswith(".") or child.name == "__MACOSX" or child.is_symlink():
                    continue
                if child.is_dir():
                    following.append(child)
                elif is_notebook(child) and child.is_file():
                    found.append(child)
        frontier = following
    return found


def use_notebook(path: Path, assignment: Assignment, scratch: Path) -> tuple[Path, list[str]]:
    """Where to look for the student's package: ``path`` itself, or the package extracted from its notebook.

    A notebook file is extracted. In a folder, a package wins over a notebook unless its modules are the
    untouched template (a student who worked in the notebook of the student release and handed in the whole
    folder); a folder with no package and one notebook is the notebook.

    Args:
        path: A notebook, or a folder (a zip already unpacked).
        assignment: The assignment.
        scratch: A private folder; the extraction goes to ``scratch/notebook``.

    Returns:
        The folder to look for the package in, and notes for the report.
    """
    from autograder.submission.package import find_package

    if path.is_file():
        return extract_notebook(path, assignment, scratch / "notebook") if is_notebook(path) else (path, [])
    try:
        package = find_package(path.absolute(), assignment)
    except SubmissionError as exc:
        if not str(exc).startswith("no "):  # several packages: ambiguous, whatever notebooks there are
            raise
        notebook = find_notebook(path, assignment)
        if notebook is None:
            raise SubmissionError(f"{exc}, nor a notebook (.ipynb)") from None
        return extract_notebook(notebook, assignment, scratch / "notebook")
    if not _untouched_template(package, assignment):
        return path, []  # a package the student worked on: notebooks beside it are not looked at
    try:
        notebook = find_notebook(path, assignment)
    except SubmissionError:
        return path, []
    if notebook is None:
        return path, []
    folder, notes = extract_notebook(notebook, assignment, scratch / "notebook")
    return folder, notes + [f"{package.name}/ (the untouched template; the notebook was graded instead)"]


def _untouched_template(package: Path, assignment: Assignment) -> bool:
    if not assignment.template.is_dir():
        return False
    for name in assignment.student_files:
        if name.endswith(".py") and name != "__init__.py":
            mine, theirs = package / name, assignment.template / name
            if mine.is_file() != theirs.is_file():
                return False
            # sizes first: a submitted file is never read whole just to learn it is not the template
            if mine.is_file() and (mine.stat().st_size != theirs.stat().st_size
                                   or mine.read_bytes() != theirs.read_bytes()):
                return False
    return True



# -- checking a notebook (grader check, and inside the notebook itself) --------------------------------------


@contextlib.contextmanager
def checked_work(assignment: Assignment, path: Path | None, show_extracted: Path | None = None
                 ) -> Iterator[tuple[Path, Path | None, list[str]]]:
    """The package ``grader check`` tests: the student's package, or one extracted from their notebook.

    Yields:
        The package folder, the notebook it came from (None for a package), and notes for the student.
    """
    from autograder.public.runner import locate_work

    if path is not None and not path.exists():
        raise SubmissionError(f"{path} does not exist")
    if path is None and (Path.cwd() / assignment.package).is_dir():
        yield locate_work(assignment, None), None, []
        return
    target = (path or Path.cwd()).resolve()
    with tempfile.TemporaryDirectory(prefix="grader-notebook-") as scratch:
        folder, notes = use_notebook(target, assignment, Path(scratch))
        if folder == target:  # a package (a notebook beside it is mentioned in the notes)
            yield locate_work(assignment, path), None, notes
            return
        package = folder / assignment.package
        if show_extracted is not None:
            show_extracted.mkdir(parents=True, exist_ok=True)
            for file in sorted(package.iterdir()):
                shutil.copyfile(file, show_extracted / file.name)
        yield package, find_notebook(target, assignment), notes


def kernel_cells() -> list[Cell]:
    """The cells this Jupyter kernel has run, in the order it ran them (``In``), labelled ``In [n]``.

    Reading the kernel's history rather than the notebook file works the same on JupyterHub, Colab and VS Code,
    where the file's path is not known to the kernel (or not a local file at all).

    Raises:
        NotebookError: Outside an IPython kernel.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None  # type: ignore[assignment]
    shell = get_ipython() if get_ipython is not None else None
    history = shell.user_ns.get("In") if shell is not None else None
    if not history:
        raise NotebookError("check_notebook() reads the cells this notebook has run, so it works inside Jupyter or "
                            "Colab only; elsewhere pass the file: check_notebook(ASSIGNMENT, path='work.ipynb')")
    return [Cell(f"In [{number}]", source) for number, source in enumerate(history) if number and source]


def check_notebook(assignment: str, task: str | None = None, path: str | Path | None = None,
                   show_extracted: str | Path | None = None) -> Any:
    """Run the public tests (one task's, or all) on this notebook's definitions and print the table.

    The definitions are extracted exactly as the grader extracts them, into a temporary package, and tested
    there by ``grader check``'s runner in a separate process: what passes here passes there.

    Args:
        assignment: The assignment's name (``"assignment3"``).
        task: A task id, or ``"quiz"`` for the format of ``ANSWERS``; all tasks when None.
        path: A saved notebook file to check instead of the cells this kernel ran.
        show_extracted: A folder to write the extracted package files into, to see what the grader sees.

    Returns:
        The check outcome (``grader check``'s ``CheckOutcome``); end the cell with ``;`` to hide it.
    """
    from autograder.public.runner import render_check, run_public_tests
    from autograder.spec.assignment import load_assignment

    spec = load_assignment(assignment)
    if task is not None and task not in spec.task_ids:
        raise NotebookError(f"no task {task!r} in {spec.name} (tasks: {', '.join(spec.task_ids)})")
    cells = read_notebook(Path(path)) if path is not None else kernel_cells()
    extraction = extract(spec, cells)
    with tempfile.TemporaryDirectory(prefix="check-notebook-") as scratch:
        package = write_package(extraction, Path(scratch) / spec.package)
        if show_extracted is not None:
            write_package(extraction, Path(show_extracted))
        quiz_only = spec.quiz is not None and task == spec.quiz.task_id
        tasks = None if task is None or quiz_only else [task]
        outcome = run_public_tests(spec, package, tasks=tasks, run_tests=not quiz_only)
    outcome.package = Path(path) if path is not None else Path("this notebook")
    if task is not None:
        outcome.tasks = [t for t in outcome.tasks if t.task == task]
        if not quiz_only:
            outcome.quiz_problems, outcome.quiz_questions = [], 0
    text = render_check(spec, outcome)
    if task is not None and not quiz_only:
        text = text.split("\nquiz: ")[0].rstrip("\n") + "\n"
    # A kernel rejects a cell with a syntax error whole, so a rejected entry of its history never defined
    # anything there either (and was most likely fixed and re-run): only the saved file's errors are news.
    shown = extraction.notes if path is not None else [n for n in extraction.notes if "syntax error" not in n]
    notes = "".join(f"note: {note}\n" for note in shown)
    print(notes + text, end="")
    return outcome
