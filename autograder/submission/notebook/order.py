"""Order a module's definitions by what each needs when the module is imported, transitively, and find the cycles.

A function's body runs when it is called; its decorators, defaults and annotations, a class's bases, keywords and
body, and an assignment's value run at import. What runs at import may call the notebook's own helpers (a
decorator defined in a later cell whose body calls a helper that calls another...): those run at import too, to
any depth, so everything they mention is placed first (NOTEBOOKS.md, rule 7).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from typing import Protocol, TypeVar


class Placed(Protocol):
    """A statement being placed in a module: the names it defines and its syntax tree."""

    names: tuple[str, ...]
    node: ast.stmt


P = TypeVar("P", bound=Placed)


@functools.lru_cache(maxsize=4096)  # asked many times per statement while helpers are placed
def referenced(node: ast.AST) -> frozenset[str]:
    """Every name a statement mentions (a superset of what it needs: locals included)."""
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def definition_time_names(node: ast.stmt) -> set[str]:
    """Names a statement needs when it runs at import: decorators, defaults, annotations, bases, class bodies,
    assigned values (a function's body runs later, when called)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parts: list[ast.AST] = list(node.decorator_list) + list(node.args.defaults)
        parts += [d for d in node.args.kw_defaults if d is not None]
        parts += [a.annotation for a in _all_args(node.args) if a.annotation is not None]
        parts += [node.returns] if node.returns is not None else []
        return set().union(*(referenced(p) for p in parts)) if parts else set()
    if isinstance(node, ast.ClassDef):
        names = set().union(*(referenced(p) for p in node.bases + node.decorator_list + node.keywords)) \
            if node.bases or node.decorator_list or node.keywords else set()
        for statement in node.body:
            names |= definition_time_names(statement)
        return names
    return set(referenced(node))


def _all_args(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return args.posonlyargs + args.args + args.kwonlyargs + extra


def _definition_time_parts(node: ast.stmt) -> list[ast.AST]:
    """The parts of a statement evaluated at import (see :func:`definition_time_names`)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return list(node.decorator_list) + list(node.args.defaults) + [d for d in node.args.kw_defaults if d]
    if isinstance(node, ast.ClassDef):
        return [*node.bases, *node.decorator_list, *node.keywords,
                *(p for statement in node.body for p in _definition_time_parts(statement))]
    return [node]


@functools.lru_cache(maxsize=4096)  # asked for every statement that calls the definition at import
def called_names(node: ast.AST) -> frozenset[str]:
    """Names called anywhere inside a node (``f(...)``), nested functions included (a decorator factory's inner
    function runs when the decorator is applied), and bare decorators (``@register`` calls ``register``)."""
    names = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names |= _bare_decorators(n)
    return frozenset(names)


def called_at_definition(node: ast.stmt) -> set[str]:
    """Names a statement calls when it runs at import: the calls in its decorators, defaults, bases and class
    body, and the names it calls without a call expression (:func:`_called_bare`)."""
    return set().union(*(called_names(part) for part in _definition_time_parts(node))) | _called_bare(node)


def _called_bare(node: ast.stmt) -> set[str]:
    """The names a definition calls without a call expression: its bare decorators (``@register`` calls
    ``register`` with the definition), a class's metaclass, and those of the definitions in a class body (they
    run when the class is defined)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _bare_decorators(node)
    if not isinstance(node, ast.ClassDef):
        return set()
    metaclass = {k.value.id for k in node.keywords if k.arg == "metaclass" and isinstance(k.value, ast.Name)}
    return _bare_decorators(node) | metaclass | set().union(*(_called_bare(s) for s in node.body))


def _bare_decorators(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    return {d.id for d in node.decorator_list if isinstance(d, ast.Name)}


def import_time_needs(item: Placed, by_name: Mapping[str, Placed]) -> tuple[set[str], list[str]]:
    """What a statement needs when the module is imported: the names it mentions at definition time and,
    transitively, every name in the definitions it calls there (a decorator that calls a helper that calls
    another). Returns those names, and the chain of calls by which it needs itself ([] if it does not)."""
    needs = set(definition_time_names(item.node))
    caller: dict[str, str | None] = {}
    pending: list[tuple[str, str | None]] = [(name, None) for name in sorted(called_at_definition(item.node))]
    loop: list[str] = []
    while pending:
        name, parent = pending.pop(0)  # breadth first: the shortest chain back to the statement is reported
        called = by_name.get(name)
        if name in caller or called is None or called is item:
            continue
        caller[name] = parent
        mentioned = referenced(called.node)
        needs |= mentioned
        if not loop and set(item.names) & mentioned:
            loop = [name]
            while caller[loop[0]] is not None:
                loop.insert(0, caller[loop[0]])
        pending.extend((callee, name) for callee in called_names(called.node))
    return needs, loop


def definition_order(items: list[P]) -> tuple[list[P], list[list[P]]]:
    """Stable order in which whatever a statement needs at import (a base class, a default, a decorator and the
    helpers it calls, transitively) comes first; and the cycles that make such an order impossible (definitions
    that need each other at import), each in the order placed."""
    by_name = {name: item for item in items for name in item.names}
    ordered: list[P] = []
    done: set[int] = set()
    stack: list[P] = []
    cycles: list[list[P]] = []

    def visit(item: P) -> None:
        if id(item) in done:
            return
        on_stack = next((i for i, x in enumerate(stack) if x is item), None)
        if on_stack is not None:
            cycles.append(stack[on_stack:])
            return
        stack.append(item)
        needs, loop = import_time_needs(item, by_name)
        if loop:  # needs itself at import, through the helpers it calls
            chain = [item]
            for link in (by_name[name] for name in loop):
                if all(link is not known for known in chain):
                    chain.append(link)
            cycles.append(chain)
        for name in sorted(needs):
            if name in by_name and by_name[name] is not item:
                visit(by_name[name])
        stack.pop()
        done.add(id(item))
        ordered.append(item)

    try:
        for item in items:
            visit(item)
    except RecursionError:  # a chain of thousands of constants: keep the notebook's order
        return items, []
    return ordered, cycles
