"""Which student modules a task need not import: those it only takes names from that the reference replaces."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from autograder.util.syntax import parse

NOT_IMPORTED = ("{module}.py is not imported for this task: everything the task takes from it is graded with "
                "the reference")


def unneeded_modules(package_dir: Path, package: str, modules: tuple[str, ...], own: tuple[str, ...],
                     uses: tuple[str, ...]) -> list[str]:
    """The student modules a task can be graded without importing (their import-time effects cannot reach it).

    A module is needed when it holds the task's own functions, when the package's ``__init__.py`` or a needed
    module imports it whole (``from . import m``, ``import pkg.m``, ``from .m import *``), or when a needed
    module takes from it a name the task does not ``use``. A module whose source cannot be parsed, or that
    imports dynamically (``importlib``, ``__import__``), makes every module needed.

    Args:
        package_dir: The submission's package folder.
        package: The package name.
        modules: Every student module of the assignment.
        own: The modules holding the task's functions.
        uses: Qualified names the task builds on (graded with the reference).

    Returns:
        The modules not needed, in the assignment's order.
    """
    wanted = set(uses)
    needed: set[str] = set()
    pending = [*own, "__init__"]
    while pending:
        module = pending.pop()
        if module in needed:
            continue
        needed.add(module)
        taken = _taken_names(package_dir / f"{module}.py", package, modules, module == "__init__")
        if taken is None:
            return []
        for other, names in taken.items():
            if other not in needed and (names is None or any(f"{other}.{n}" not in wanted for n in names)):
                pending.append(other)
    return [m for m in modules if m not in needed]


def _taken_names(path: Path, package: str, modules: tuple[str, ...],
                 is_init: bool) -> dict[str, set[str] | None] | None:
    """Sibling module to the names taken from it (None: the whole module); None if the file defeats analysis."""
    if not path.is_file():
        return {}
    try:
        source = path.read_text(encoding="utf-8")
    except (ValueError, UnicodeDecodeError, OSError):
        return None
    found = _taken_in_source(source, package, modules, is_init)
    return None if found is None else {module: None if names is None else set(names)
                                       for module, names in found.items()}


@functools.lru_cache(maxsize=16)  # a submission's modules; sources are at most 2 MiB each (the intake's rule)
def _taken_in_source(source: str, package: str, modules: tuple[str, ...],
                     is_init: bool) -> dict[str, frozenset[str] | None] | None:
    """:func:`_taken_names` of a module's source, parsed once per source: every task of a submission asks it of the
    same files (the caller gets a copy to change)."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    taken: dict[str, set[str] | None] = {}

    def whole(module: str) -> None:
        if module in modules:
            taken[module] = None

    def names(module: str, aliases: list[ast.alias]) -> None:
        if module not in modules:
            return
        if any(a.name == "*" for a in aliases):
            taken[module] = None
        elif taken.get(module, set()) is not None:
            taken[module] = taken.get(module, set()) | {a.name for a in aliases}

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in ("importlib", "__import__"):
            return None
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "importlib" or alias.name.startswith("importlib."):
                    return None
                parts = alias.name.split(".")
                if parts[0] == package:
                    for module in parts[1:2] or modules:  # `import pkg` alone reaches every module
                        whole(module)
        elif isinstance(node, ast.ImportFrom):
            base = _sibling_base(node, package, is_init)
            if base is None:
                if node.module and node.module.split(".")[0] == "importlib":
                    return None
                continue
            if base == "":  # from . import m / from pkg import m
                for alias in node.names:
                    for module in ([alias.name] if alias.name != "*" else list(modules)):
                        whole(module)
            else:
                names(base, node.names)
    return {module: None if found is None else frozenset(found) for module, found in taken.items()}


def _sibling_base(node: ast.ImportFrom, package: str, is_init: bool) -> str | None:
    """The sibling module an ``ImportFrom`` reads ("" for the package itself), or None for another package."""
    dotted = node.module or ""
    if node.level == 1 or (node.level == 0 and (dotted == package or dotted.startswith(package + "."))):
        inside = dotted if node.level == 1 else dotted[len(package) + 1:]
        return inside.split(".")[0] if inside else ""
    if node.level > 1 and is_init:
        return None
    return None if node.level == 0 else ""  # `from .. import x` climbs out of a flat package: be careful
