"""The grader's modules some entry points need, found statically (every import, lazy ones included)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from autograder.errors import ReleaseError
from autograder.util.paths import PACKAGE_DIR
from autograder.util.syntax import parse

ROOT_PACKAGE = PACKAGE_DIR.name


def module_closure(entry_points: Iterable[str]) -> list[Path]:
    """The files of ``entry_points`` and of every grader module they import, directly or not, anywhere in the
    file (an import inside a function counts: it runs later, e.g. when a figure is drawn), and the packages
    holding them. Imports under ``if TYPE_CHECKING:`` do not count; neither does ``importlib`` by name.

    Args:
        entry_points: Dotted module names (``autograder.cli.check``).

    Returns:
        The module files, sorted.

    Raises:
        ReleaseError: If an entry point is not a module of the grader.
    """
    found: dict[str, Path] = {}
    pending = list(entry_points)
    for name in pending:
        if module_file(name) is None:
            raise ReleaseError(f"{name} is not a module of the grader")
    while pending:
        name = pending.pop()
        path = module_file(name)
        if path is None or name in found:
            continue  # a name imported from a module (``from x import y``), not a module itself
        found[name] = path
        parts = name.split(".")
        pending += [".".join(parts[:i]) for i in range(1, len(parts))]
        pending += [n for n in imported_names(name, path) if n == ROOT_PACKAGE or n.startswith(f"{ROOT_PACKAGE}.")]
    return sorted(found.values())


def module_file(name: str) -> Path | None:
    """The file of a grader module or package, None if there is none by that name."""
    parts = name.split(".")
    if parts[0] != ROOT_PACKAGE:
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def imported_names(name: str, path: Path) -> Iterator[str]:
    """Every module a file imports, and every ``module.name`` it imports from one (a submodule, maybe)."""
    tree = parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _type_checking(block.test)
                   for statement in block.body for n in ast.walk(statement)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(package, node.level, node.module)
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def _absolute(package: str, level: int, module: str | None) -> str:
    if not level:
        return module or ""
    base = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(base + ([module] if module else []))


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
