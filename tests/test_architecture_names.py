"""Every function, class and method docs/ARCHITECTURE.md names (`path.py:name`, `Class.method`) exists in the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def _defined(tree: ast.AST) -> set[str]:
    """The names a module defines at its top level, and its classes' members as ``Class.member``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(f"{node.name}.{item.name}")
                targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(
                    item, ast.AnnAssign) else []
                names.update(f"{node.name}.{t.id}" for t in targets if isinstance(t, ast.Name))
            names.update(f"{node.name}.{attr}" for attr in _self_attributes(node))
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _self_attributes(cls: ast.ClassDef) -> set[str]:
    """The attributes a class's methods set on ``self`` (``self.x = ...``, ``self.x, self.y = ...``)."""
    found: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) \
                and node.value.id == "self":
            found.add(node.attr)
    return found


def _modules() -> dict[str, set[str]]:
    return {path.relative_to(ROOT).as_posix(): _defined(ast.parse(path.read_text(encoding="utf-8")))
            for path in (ROOT / "autograder").rglob("*.py")}


def test_every_name_the_architecture_names_exists() -> None:
    modules, text = _modules(), DOC.read_text(encoding="utf-8")
    everywhere = set().union(*modules.values())
    missing = []
    for path, name in re.findall(r"`([\w/]+\.py):([A-Za-z_][\w.]*)`", text):
        found = [names for module, names in modules.items() if module.endswith(path)]
        if not any(name in names or name.split(".")[-1] in names for names in found):
            missing.append(f"{path}:{name}")
    missing += [f"{cls}.{member}" for cls, member in re.findall(r"`([A-Z]\w*)\.(_?[a-z]\w*)`", text)
                if f"{cls}.{member}" not in everywhere]
    assert not missing, f"docs/ARCHITECTURE.md names what the code does not define: {missing}"
