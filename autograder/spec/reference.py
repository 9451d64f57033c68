"""Load the reference solution in the trusted parent, and cut it down to the parts a task may build on."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from autograder.errors import AssignmentError
from autograder.util.packages import PackageImportError, import_failure, load_package  # noqa: F401 - used from here
from autograder.util.syntax import parse

def _top_level_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [t.id for t in targets if isinstance(t, ast.Name)]
    return []


def _referenced_names(node: ast.AST) -> set[str]:
    """Names a definition uses at run time; annotations are skipped (a type hint must not pull a class in)."""
    names: set[str] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Name):
            names.add(current.id)
        for field, value in ast.iter_fields(current):
            if field in ("annotation", "returns"):
                continue
            children = value if isinstance(value, list) else [value]
            pending.extend(child for child in children if isinstance(child, ast.AST))
    return names


def module_imports(folder: Path, modules: tuple[str, ...]) -> dict[str, set[str]]:
    """For each module of a package, the sibling modules it imports, directly or through others."""
    direct = {m: set() for m in modules}
    for module in modules:
        tree = parse((folder / f"{module}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module in direct:
                direct[module].add(node.module)
    closure = {}
    for module in modules:
        seen, pending = set(), list(direct[module])
        while pending:
            current = pending.pop()
            if current not in seen:
                seen.add(current)
                pending.extend(direct[current])
        closure[module] = seen
    return closure


class _ModuleIndex:
    """The top-level definitions and relative imports of one module's source."""

    def __init__(self, source: str, filename: str) -> None:
        self.tree = parse(source, filename=filename)
        self.definitions: dict[str, ast.stmt] = {}
        self.relative_imports: dict[str, tuple[str, str]] = {}
        for node in self.tree.body:
            for name in _top_level_names(node):
                self.definitions[name] = node
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                for alias in node.names:
                    self.relative_imports[alias.asname or alias.name] = (node.module, alias.name)


@functools.lru_cache(maxsize=64)
def _module_index(source: str, filename: str) -> _ModuleIndex:
    """One parse per module source, shared by every task's pruning (read-only once built)."""
    return _ModuleIndex(source, filename)


def prune_reference(folder: Path, modules: tuple[str, ...], uses: tuple[str, ...]) -> dict[str, str]:
    """Return the reference sources reduced to ``uses`` and what they need, module by module.

    A task graded "with the reference for what it builds on" must not find the reference of anything
    else in the worker's memory, so only the transitive closure of the used definitions is kept.

    Args:
        folder: The reference package folder.
        modules: The package's module names.
        uses: Qualified names (``"module.name"``) to keep.

    Returns:
        Module name to pruned source; modules with nothing kept are left out.

    Raises:
        AssignmentError: If a used name is not defined by the reference.
    """
    index = {m: _module_index((folder / f"{m}.py").read_text(), f"{m}.py") for m in modules}
    keep: dict[str, set[str]] = {m: set() for m in modules}
    pending = [tuple(q.split(".", 1)) for q in uses]
    while pending:
        module, name = pending.pop()
        if name in keep[module]:
            continue
        source = index[module]
        keep[module].add(name)
        if name in source.relative_imports:
            pending.append(source.relative_imports[name])
            continue
        if name not in source.definitions:
            raise AssignmentError(f"reference {module}.py defines no {name!r}")
        for referenced in _referenced_names(source.definitions[name]):
            if referenced in source.definitions or referenced in source.relative_imports:
                pending.append((module, referenced))
    return {m: _render(index[m], keep[m]) for m in modules if keep[m]}


def _render(source: _ModuleIndex, kept: set[str]) -> str:
    body: list[ast.stmt] = []
    for node in source.tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [a for a in node.names if (a.asname or a.name) in kept]
            if names:
                body.append(ast.ImportFrom(module=node.module, names=names, level=1))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            body.append(node)
        elif any(name in kept for name in _top_level_names(node)):
            body.append(node)
    return ast.unparse(ast.Module(body=body, type_ignores=[]))
