"""Lay the collected definitions out as the assignment's modules, following the template's structure."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

from autograder.spec.assignment import Assignment
from autograder.submission.notebook.collect import Collected, Definition, _assigned, _bound_by_import, _segment
from autograder.submission.notebook.order import definition_order, import_time_needs, referenced
from autograder.submission.notebook.places import CellMap, Span
from autograder.util.syntax import parse
from autograder.util.tomlio import dumps_toml

HEADER = "# Extracted by the grader from a notebook: its definitions only, nothing of it was run."


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
    folders = [assignment.template, assignment.reference, assignment.root.parent.parent / assignment.package]
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
        tree = parse(source)
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


@dataclass
class _Item:
    names: tuple[str, ...]
    node: ast.stmt
    text: str
    label: str = ""  # the notebook cell it comes from ('' for the template's)
    line: int = 0  # the cell's line where the definition starts (0: its text is not the cell's, line for line)
    what: str = ""  # what the text is when no cell holds it (a stub, the template's constant)
    stub: str = ""  # the name a grader's stub stands in for


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


def build_modules(assignment: Assignment, collected: Collected,
                  layouts: dict[str, ModuleLayout]) -> tuple[dict[str, str], CellMap]:
    """Each module's text: the template's layout, with each definition the notebook provides in place of the
    template's (a stub where the notebook has none), the notebook's own helpers where they are used, and
    imports between the modules where the notebook's code needs them; and where each of its lines comes from."""
    owned = owners(assignment, layouts)
    ours = collected.definitions()
    bodies: dict[str, list[_Item]] = {}
    for module in assignment.modules:
        layout = layouts.get(module, ModuleLayout(module))
        items = [_layout_item(names, node, text, collected) for names, node, text in layout.items]
        placed = {name for item in items for name in item.names}
        items += [_notebook_item(d) for d in ours if module in owned.get(d.names[0], []) and not set(d.names) & placed]
        bodies[module] = [item for item in items if item.text]
    _place_helpers(bodies, ours, owned)
    files, cells = {}, CellMap(unreadable=list(collected.unreadable))
    for module in assignment.modules:
        name = f"{module}.py"
        files[name], cells.spans[name] = _render_module(module, layouts.get(module, ModuleLayout(module)),
                                                        bodies[module], collected, owned, assignment)
    return files, cells


def _layout_item(names: tuple[str, ...], node: ast.stmt, text: str, collected: Collected) -> _Item:
    mine = next((collected.by_name[n] for n in names if n in collected.by_name), None)
    if mine is not None:
        return _notebook_item(mine)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return _Item(names, node, stub(node), what=f"the grader's stub of {names[0]} (no cell defines it)",
                     stub=names[0])
    return _Item(names, node, text, what="a statement of the template")  # its constants, other top-level code


def _notebook_item(definition: Definition) -> _Item:
    return _Item(definition.names, definition.node, _labelled(definition), definition.label, definition.line)


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
                items.append(_notebook_item(free[name]))
                present |= set(free[name].names)
                changed = True


@dataclass
class _Piece:
    """Lines of a module being written, and where they come from (see :class:`Span`)."""

    text: str
    cell: str = ""
    line: int = 0
    what: str = ""
    stub: str = ""


def _item_pieces(item: _Item) -> list[_Piece]:
    """A definition's lines: the comment naming its cell (the grader's), then the cell's own lines."""
    if not item.label:
        return [_Piece(item.text, what=item.what, stub=item.stub)]
    if not item.line:  # the grader rewrote the cells' code (see _guard_cycles)
        return [_Piece(item.text, item.label)]
    comment, _, source = item.text.partition("\n")
    return [_Piece(comment, what=f"the grader's comment naming {item.label}"), _Piece(source, item.label, item.line)]


def _join(parts: list[list[_Piece]]) -> tuple[str, list[Span]]:
    """The module's text (its parts three lines apart, as PEP 8 spaces definitions) and its spans."""
    texts, spans, first = [], [], 1
    for part in parts:
        text = "\n".join(piece.text for piece in part)
        if not text.strip():
            continue
        for piece in part:
            count = piece.text.count("\n") + 1
            spans.append(Span(first, first + count - 1, piece.cell, piece.line, piece.what, piece.stub))
            first += count
        texts.append(text)
        first += 2  # the two blank lines between parts
    return "\n\n\n".join(texts) + "\n", spans


def _render_module(module: str, layout: ModuleLayout, items: list[_Item], collected: Collected,
                   owned: dict[str, list[str]], assignment: Assignment) -> tuple[str, list[Span]]:
    items, cycles = definition_order(items)
    items = _guard_cycles(module, items, cycles)
    bound = {name for item in items for name in item.names}
    header_bound = set().union(*(_bound_by_text(text) for text in layout.imports)) if layout.imports else set()
    needed = set().union(*(referenced(item.node) for item in items)) if items else set()
    by_name = {name: item for item in items for name in item.names}
    at_import = set().union(*(import_time_needs(item, by_name)[0] for item in items)) if items else set()
    chosen = [d for d in collected.imports if (set(d.names) & (needed - bound - header_bound)) or "*" in d.names]
    first_of: dict[str, Definition] = {}
    for definition in chosen:  # each import's text once, where it first is
        first_of.setdefault(definition.source, definition)
    imports = list(first_of.values())
    imported = header_bound | set().union(*(d.names for d in chosen))
    early, late = _cross_imports(module, needed - bound - imported, at_import, owned, assignment)
    grader_import = "an import between modules the grader adds"
    parts = [[_Piece(layout.docstring, what="the template's docstring")]] if layout.docstring else []
    parts += [[_Piece(collected.future[0], what="a __future__ import of the notebook")]] if collected.future else []
    parts += [[_Piece(HEADER, what="the grader's header")],
              [_Piece(text, what="an import of the template") for text in layout.imports]
              + [_Piece(d.source, d.label, d.line) for d in imports]
              + [_Piece(text, what=grader_import) for text in early]]
    parts += [_item_pieces(item) for item in items]
    if late:  # after the definitions, so two modules that need each other's names can import each other
        parts.append([_Piece("# Imports between modules needed by the notebook's code (placed last: no import "
                             "cycle).", what=grader_import)] + [_Piece(text, what=grader_import) for text in late])
    return _join(parts)


def _bound_by_text(text: str) -> set[str]:
    try:
        node = parse(text).body[0]
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


def _guard_cycles(module: str, items: list[_Item], cycles: list[list[_Item]]) -> list[_Item]:
    """Wrap the span of each cycle in a ``try`` that turns the NameError it causes at import into a sentence
    naming the cells (it changes nothing when the module imports: the analysis is conservative)."""
    for cycle in cycles:
        members = [i for i, item in enumerate(items) if any(item is c for c in cycle)]
        if not members:
            continue
        first, last = min(members), max(members)
        span = items[first:last + 1]
        names = sorted({name for item in cycle for name in item.names})
        labels = list(dict.fromkeys(item.label for item in cycle if item.label)) or ["the notebook"]
        chain = " -> ".join(item.names[0] for item in cycle + cycle[:1])
        message = (f"the definitions in {_cells(labels)} need each other when {module}.py is imported ({chain}, "
                   f"through decorators, default values or base classes and the helpers they call), so no order "
                   f"of them can work; call the helper inside the function instead")
        try:
            body = [node for item in span for node in parse(item.text).body]
        except SyntaxError:
            continue
        guard = parse(f"try:\n    pass\nexcept NameError as _import_cycle:\n"
                          f"    if _import_cycle.name in {tuple(names)!r}:\n"
                          f"        raise ImportError({message!r}) from _import_cycle\n    raise\n")
        guard.body[0].body = body
        text = "\n".join(f"# from {label}" for label in labels) + "\n" + ast.unparse(guard)
        merged = _Item(tuple(n for item in span for n in item.names), guard.body[0], text, _cells(labels))
        items = items[:first] + [merged] + items[last + 1:]
    return items


def _cells(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def answers_toml(answers: dict[Any, Any]) -> str:
    """The ``ANSWERS`` dict as the ``answers.toml`` a package would hold: each key as text, each value as it is
    where TOML has its type (text, a boolean, a finite number) and as its text otherwise (the quiz then says what
    is wrong with its format, as with any answer that is not one letter)."""
    document = {str(key): value if _has_toml_type(value) else str(value) for key, value in answers.items()}
    return "# Extracted by the grader from the notebook's ANSWERS.\n" + dumps_toml(document)


def _has_toml_type(value: Any) -> bool:
    return isinstance(value, (str, bool)) or (isinstance(value, (int, float)) and math.isfinite(value))
