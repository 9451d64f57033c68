"""The loop of the student's source that holds a line: where ``grader check`` says a test that overran was stopped.

faulthandler samples the line a looping test happens to be on when its wall clock ran out: ``while True: pass`` is
caught on either of its two lines, a loop around a short call on any line of the loop's body. Said as that line,
the same code would be stopped at a different line from one run to the next (a cold check and its warm re-check
too). Said as the loop holding the line, it is one place on every run.

Of nested loops, the outermost one of the function is said. Every sample taken anywhere in a loop nest lands in
its outermost loop, whichever loop runs endlessly: when it is the outer one, samples fall both in the inner loop
and in the outer loop's own lines, so the innermost loop holding the sample would change from run to run; when it
is the inner one, the outermost loop still holds every sample, and the student who reads it finds the inner loop
inside. The function is the one whose own code the line is (a def's body is another function's, even in a loop;
a comprehension is its function's, as Python 3.12 runs it, not a frame of its own as 3.11 does), so a loop that
calls a function whose own loop never ends is not said in place of that loop.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autograder.util.syntax import parse

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # a lambda holds no statement: not a scope here
_STATEMENT_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_LOOPS = (*_STATEMENT_LOOPS, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class Loop:
    """A loop of the source.

    Attributes:
        line: Its first line (``while True:``, or the line a comprehension opens on).
        function: The function (or class) whose code it is; '' at the module's top level.
    """

    line: int
    function: str


def loop_holding(source: str | bytes, line: int) -> Loop | None:
    """The outermost loop of the function whose own code ``line`` is, if it holds ``line`` (see the module's doc).

    Args:
        source: The module's source (bytes honour a coding declaration).
        line: A line of it (1-based), as faulthandler said it.

    Returns:
        That loop; None when the line is in no loop of its function (one long call), or the source cannot be
        parsed (the file changed since it was imported).
    """
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return None
    scope: ast.AST = tree
    found: ast.AST | None = None
    todo: list[tuple[ast.AST, ast.AST, bool]] = [(tree, tree, False)]  # a node, its scope, whether in its loop
    while todo:  # down the nodes whose lines hold the line: one chain of scopes, each with its outermost loop
        node, within, looped = todo.pop()
        for child in ast.iter_child_nodes(node):
            if not _holds(child, line):
                continue
            if isinstance(child, _SCOPES) and _body_holds(child, line):
                scope, found = child, None
                todo.append((child, child, False))
            elif not looped and isinstance(child, _LOOPS) and _body_holds(child, line):
                if within is scope and (found is None or _position(child) < _position(found)):
                    found = child  # the first in the source, should two comprehensions share the line
                todo.append((child, within, True))
            else:
                todo.append((child, within, looped))
    if found is None:
        return None
    return Loop(found.lineno, scope.name if isinstance(scope, _SCOPES) else "")


def _holds(node: ast.AST, line: int) -> bool:
    """Whether the node's lines hold ``line`` (a node without a position, ``ast.arguments``, may: look inside)."""
    first = getattr(node, "lineno", None)
    if first is None:
        return True
    return first <= line <= (getattr(node, "end_lineno", None) or first)


def _body_holds(node: ast.AST, line: int) -> bool:
    """Whether the part of the node that is its scope's or its loop's holds ``line``: a def's or a class's body
    (its decorators and header run in the enclosing function), a loop's header and body (not its ``else:``, run
    once), a comprehension whole."""
    if isinstance(node, (*_SCOPES, *_STATEMENT_LOOPS)):
        first = node.body[0].lineno if isinstance(node, _SCOPES) else node.lineno
        return first <= line <= (node.body[-1].end_lineno or node.body[-1].lineno)
    return _holds(node, line)


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
