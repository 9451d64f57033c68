"""Which modules of the instructor's copy a student-facing Python file imports: the one rule of lint and release.

A public test (or any file students get) runs on the student's copy, which holds no ``hidden/`` file and no
reference: an import of one works on the instructor's machine at best, and for every student fails, so ``grader
check`` tells them to fix code that is right. ``grader verify`` names such an import in the public tests, and the
release's leak scan in every Python file of the student release.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from autograder.spec.assignment import Assignment
from autograder.util.paths import display_path
from autograder.util.syntax import parse


@dataclass(frozen=True)
class HiddenImport:
    """An import of a module only the instructor's copy has: its line, the module, and the file it would be."""

    line: int
    module: str
    where: str

    def sentence(self) -> str:
        """What is wrong, after the file and line."""
        return (f"imports {self.module} ({self.where}), which students do not have: the release ships no hidden "
                f"file and no reference, so this fails for every student — copy what it needs into the file (or a "
                f"helper beside it that students get)")


def hidden_modules(assignment: Assignment) -> dict[str, str]:
    """The top-level module names only the instructor's copy provides, each with the file or folder it is: every
    Python file under ``hidden/`` (checks files and their helpers) and the folder holding the reference package.

    A name that also imports from outside the course's folders (``math``, ``torch``) is left out: it imports that.
    """
    found = {path.stem: display_path(path) for path in sorted((assignment.root / "hidden").rglob("*.py"))}
    found.setdefault(assignment.reference.parent.name, display_path(assignment.reference.parent))
    course = {assignment.root.parent.parent.resolve(), assignment.reference.parent.parent.resolve()}
    return {name: where for name, where in found.items() if name.isidentifier() and not _importable(name, course)}


def hidden_imports(tree: ast.AST, hidden: dict[str, str]) -> list[HiddenImport]:
    """Each absolute import of a name of ``hidden`` in a parsed Python file, in line order."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        else:
            continue
        found += [HiddenImport(node.lineno, name, hidden[name.split(".")[0]]) for name in names
                  if name.split(".")[0] in hidden]
    return sorted(found, key=lambda item: item.line)


def file_hidden_imports(path: Path, hidden: dict[str, str]) -> list[HiddenImport]:
    """:func:`hidden_imports` of a Python file (none for another file, or one that cannot be read or parsed: what
    reads it says so)."""
    if path.suffix != ".py":
        return []
    try:
        return hidden_imports(parse(path.read_text(encoding="utf-8"), str(path)), hidden)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []


def _importable(name: str, course: set[Path]) -> bool:
    """Whether a top-level module of this name imports from outside the course's folders (stdlib, installed); a
    folder of the course found on the path (``reference_solutions`` from the repository's root) is not."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    places = [spec.origin] if spec.origin else list(spec.submodule_search_locations or [])
    return any(place and not any(Path(place).resolve().is_relative_to(folder) for folder in course)
               for place in places)
