"""Import a package from a folder under a private name, and say in one line where and why an import failed.

The one way a reference, a mutated reference (the judge, ``grader verify``'s sandboxed job) and nothing else is
imported from its folder: pure standard library, so a sandboxed job may use it as the grader does.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import traceback
from pathlib import Path
from types import ModuleType

from autograder.errors import AssignmentError

_LOADING = threading.RLock()


class PackageImportError(AssignmentError):
    """A package that raised while it was imported.

    Attributes:
        detail: Where and what, in one line: ``ops.py, line 3: NameError: name 'axis' is not defined``.
    """

    def __init__(self, folder: Path, detail: str) -> None:
        super().__init__(f"the reference solution in {folder} does not import: {detail}")
        self.detail = detail


def load_package(folder: Path, name: str, modules: tuple[str, ...]) -> ModuleType:
    """Import a package from a folder under a private name, with its modules.

    Args:
        folder: The package folder (holding ``__init__.py``).
        name: The name to register it under in ``sys.modules``.
        modules: Module names to import eagerly.

    Returns:
        The package, with each module reachable as an attribute.

    Raises:
        AssignmentError: If there is no package in the folder.
        PackageImportError: If importing it raises.
    """
    with _LOADING:  # graders in several threads may ask for the same package at once
        return _load_package(folder, name, modules)


def _load_package(folder: Path, name: str, modules: tuple[str, ...]) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    init = folder / "__init__.py"
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None or not init.is_file():
        raise AssignmentError(f"reference package not found at {folder}")
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
        for module in modules:
            importlib.import_module(f"{name}.{module}")
    except Exception as exc:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
        raise PackageImportError(folder, import_failure(folder, exc)) from None
    return package


def import_failure(folder: Path, exc: BaseException) -> str:
    """What an import raised, in one line, at the package's own line that raised it (the last frame in ``folder``,
    or the line a SyntaxError names): ``ops.py, line 3: NameError: name 'axis' is not defined``."""
    message = str(exc).strip().splitlines()
    what = f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__
    if isinstance(exc, SyntaxError) and exc.filename:
        where: list[tuple[str, int | None]] = [(exc.filename, exc.lineno)]
        what = f"SyntaxError: {exc.msg}"
    else:
        where = [(frame.filename, frame.lineno) for frame in traceback.extract_tb(exc.__traceback__)]
    root = folder.resolve()
    for filename, line in reversed(where):
        path = Path(filename).resolve()
        if path.is_relative_to(root):
            return f"{path.relative_to(root).as_posix()}, line {line}: {what}"
    return what
