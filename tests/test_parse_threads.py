"""Every parse of the grader goes through ``autograder.util.syntax.parse``, which two threads can call at once."""

from __future__ import annotations

import ast
import gc
import threading

import pytest

from autograder.util import syntax
from autograder.util.paths import PACKAGE_DIR

HEAVY = PACKAGE_DIR / "submission" / "notebook" / "layout.py"  # a few hundred lines: a parse long enough to be cut


class _Cycle:
    """Garbage whose collection runs Python code, where the interpreter may hand the GIL to another thread."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        sum(range(50))


def _parse_in_two_threads(parse, rounds: int = 100) -> list[BaseException]:
    source = HEAVY.read_text(encoding="utf-8")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(rounds):
                for _ in range(20):
                    _Cycle()
                parse(source)
        except Exception as error:  # noqa: BLE001 - what the other thread's parse did to this one is the finding
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.fixture
def gc_pressure():
    """The young generation collected every 50 allocations, so collections fall inside parses."""
    before = gc.get_threshold()
    gc.set_threshold(50, 1, 1)
    yield
    gc.set_threshold(*before)


def test_two_threads_parse_without_a_recursion_depth_mismatch(gc_pressure):
    """``ast.parse`` alone fails here on CPython 3.11 (``SystemError: AST constructor recursion depth mismatch``,
    python/cpython#106905), as ``grader audit``'s two Graders once did in CI."""
    assert _parse_in_two_threads(syntax.parse) == []


def test_nothing_under_autograder_parses_around_the_lock():
    """A new ``ast.parse`` (or ``from ast import parse``, or ``compile(..., ast.PyCF_ONLY_AST)``) would bring the race
    back for every thread that reaches it."""
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if path == PACKAGE_DIR / "util" / "syntax.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            called = ast.unparse(node.func) if isinstance(node, ast.Call) else ""
            if called in ("ast.parse", "ast.literal_eval") or (
                    isinstance(node, ast.ImportFrom) and node.module == "ast"
                    and any(alias.name in ("parse", "literal_eval") for alias in node.names)) or (
                    called == "compile" and "PyCF_ONLY_AST" in ast.unparse(node)):
                found.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{node.lineno}")
    assert found == []
