"""Python source parsed to an AST one thread at a time: every ``ast.parse`` of the grader goes through :func:`parse`.

CPython 3.11 builds the Python objects of a parsed tree with a recursion counter that is shared by the whole
interpreter (``ast_state.recursion_depth``). When the garbage collector runs Python code in the middle of a parse
(a ``__del__``, a weakref callback), another thread may get the GIL and parse too; the first parse then ends with
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905). ``grader audit`` grades with
two Graders in two threads of one process, and each Grader parses checks, references and submissions, so one
lock serialises every parse. A parse takes milliseconds; nothing waits on it for long.
"""

from __future__ import annotations

import ast
import threading

_PARSING = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> ast.Module | ast.Expression:
    """``ast.parse(source, filename, mode)``, while no other thread of this process parses.

    Args:
        source: Python source text (or its bytes).
        filename: The name SyntaxErrors carry.
        mode: ``"exec"`` for a module, ``"eval"`` for one expression.

    Returns:
        The module's tree (an ``ast.Expression`` in ``"eval"`` mode).

    Raises:
        SyntaxError: If ``source`` is not valid Python (ValueError if it holds a NUL byte), as ``ast.parse``.
    """
    with _PARSING:
        return ast.parse(source, filename, mode)


def literal_eval(value: str | ast.AST) -> object:
    """``ast.literal_eval(value)``: a text is parsed under the same lock, a tree is evaluated as it is.

    Raises:
        SyntaxError: If a text is not an expression; ValueError if it is not a literal, as ``ast.literal_eval``.
    """
    return ast.literal_eval(parse(value.lstrip(" \t"), mode="eval") if isinstance(value, str) else value)
