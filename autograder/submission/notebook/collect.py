"""Collect a notebook's top-level definitions by name, as the kernel would hold them after running every cell."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from autograder.submission.notebook.places import Unreadable
from autograder.submission.notebook.read import Cell, neutralise
from autograder.util.syntax import literal_eval, parse

MAX_NOTES = 20


# Calls an UPPER_CASE constant may make: pure and fast, so a module can run them at import.
ANSWERS_NAME = "ANSWERS"  # the notebook's quiz cell assigns its answers to this name
SAFE_CALLS = frozenset({"float", "int", "str", "bool", "complex", "tuple", "list", "dict", "set", "frozenset",
                        "range", "len", "min", "max", "abs", "round", "sorted", "bytes"})


SAFE_CALL_ROOTS = {"math": None, "torch": frozenset({"device", "finfo", "iinfo", "tensor"}),
                   "np": frozenset({"float32", "float64", "int64", "finfo", "array"})}


_UPPER = re.compile(r"^_*[A-Z][A-Z0-9_]*$")
_TOP_LEVEL_DEF = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)", re.MULTILINE)


@dataclass
class Definition:
    """A top-level statement kept from the notebook: an import, a function, a class or a constant."""

    kind: str  # "import", "def" or "const"
    names: tuple[str, ...]
    source: str
    node: ast.stmt
    label: str = ""
    line: int = 0  # the cell's line where ``source`` starts (its first decorator's)


@dataclass
class Collected:
    """Definitions found in the cells, the latest of each name winning, as in the kernel."""

    by_name: dict[str, Definition] = field(default_factory=dict)
    imports: list[Definition] = field(default_factory=list)
    future: list[str] = field(default_factory=list)
    answers: tuple[Any, str] | None = None  # the ANSWERS value and its cell's label
    notes: list[str] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)  # the cells with a syntax error
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
        return parse(source), source.split("\n")
    except (SyntaxError, ValueError):
        pass
    except (RecursionError, MemoryError):
        collected.notes.append(f"{cell.label} ({cell.first_line!r}) is nested too deeply to be read; its "
                               f"definitions were not graded")
        return None, []
    source = neutralise(source)
    try:
        return parse(source), source.split("\n")
    except (RecursionError, MemoryError):
        collected.notes.append(f"{cell.label} ({cell.first_line!r}) is nested too deeply to be read; its "
                               f"definitions were not graded")
    except SyntaxError as exc:
        unreadable = Unreadable(cell.label, cell.first_line, exc.lineno or 0, exc.msg, _defined_in_text(cell.source))
        collected.unreadable.append(unreadable)
        collected.notes.append(unreadable.note())
    except ValueError as exc:  # e.g. a NUL character
        collected.notes.append(f"{cell.label} ({cell.first_line!r}) cannot be parsed ({exc}); its definitions "
                               f"were not graded")
    return None, []


def _defined_in_text(source: str) -> tuple[str, ...]:
    """The top-level functions and classes a cell that cannot be parsed seems to define (its ``def`` lines)."""
    return tuple(dict.fromkeys(_TOP_LEVEL_DEF.findall(source)))


def _collect_statement(node: ast.stmt, lines: list[str], cell: Cell, package: str, collected: Collected) -> None:
    source, start = _segment(node, lines), _start(node)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            collected.future.append(source)
        elif not _imports_own_package(node, package):
            collected.imports.append(Definition("import", _bound_by_import(node), source, node, cell.label, start))
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        _define(collected, Definition("def", (node.name,), source, node, cell.label, start))
        return
    names, value = _assigned(node)
    if names == (ANSWERS_NAME,) and value is not None:
        try:
            collected.answers = (literal_eval(value), cell.label)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            collected.notes.append(f"{cell.label}: {ANSWERS_NAME} must be a dict of literal strings "
                                   f"({{\"q1\": \"b\", ...}}); it was not read")
        return
    if names and value is not None:
        if _is_literal(value) or (all(_UPPER.match(n) for n in names) and _is_static(value)):
            _define(collected, Definition("const", names, source, node, cell.label, start))
            return
        if all(_UPPER.match(n) for n in names):
            collected.notes.append(f"{cell.label}: {', '.join(names)} was not kept: a constant may only be computed "
                                   f"from literals, names and pure built-ins (anything else would run at import)")
    collected.dropped += 1


def _define(collected: Collected, definition: Definition) -> None:
    for name in definition.names:
        collected.by_name[name] = definition


def _start(node: ast.stmt) -> int:
    """The statement's first line, its first decorator's if it has any."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def _segment(node: ast.stmt, lines: list[str]) -> str:
    """The statement's text with its decorators (top-level statements start at column 0)."""
    return "\n".join(lines[_start(node) - 1: node.end_lineno]).rstrip()


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
        literal_eval(value)
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
