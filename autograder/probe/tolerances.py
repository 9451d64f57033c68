"""Where a checks file can name a tolerance, and whether each name it gives is known: one rule for lint and grading.

A tolerance is named (never given as numbers) through a ``tolerance`` parameter of the probe API: ``@check``,
``gated``, ``same_as_fresh``, ``gate_failures``. Which functions those are is read from their signatures, so a
function that gains the parameter is covered without a list to keep. ``grader verify`` finds every name a checks
file (or a helper beside it) gives by reading its source; grading looks each name up through
:func:`named_tolerance`, which refuses an unknown one with the same sentence.
"""

from __future__ import annotations

import ast
import inspect
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.errors import AssignmentError
from autograder.util.names import nearest
from autograder.util.syntax import parse

if TYPE_CHECKING:
    from autograder.judge.compare import Tolerance

PARAMETER = "tolerance"
API_MODULE = "autograder.probe"


@cache
def tolerance_parameters() -> dict[str, int | None]:
    """Each public function of the probe API that takes a tolerance name: its name -> the parameter's position
    (None when it is keyword-only)."""
    import autograder.probe as api  # lazily: this module is part of the package it reads

    taking = {}
    for name in api.__all__:
        value = getattr(api, name)
        if not inspect.isfunction(value):
            continue
        parameters = list(inspect.signature(value).parameters.values())
        for index, parameter in enumerate(parameters):
            if parameter.name == PARAMETER:
                positional = parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
                taking[name] = index if positional else None
    return taking


def tolerance_problem(name: object) -> str | None:
    """The sentence refusing an unknown tolerance name, with the nearest known one (for a number, the named
    tolerance nearest to it, with each one's numbers); None for a known name."""
    from autograder.judge.compare import TOLERANCES  # lazily: the worker side never needs the judge

    if isinstance(name, str) and name in TOLERANCES:
        return None
    if isinstance(name, (int, float)) and not isinstance(name, bool):
        known = ", ".join(f"{key} (rtol {t.rtol:g}, atol {t.atol:g})" for key, t in TOLERANCES.items())
        return (f"a tolerance is a name, not a number — {_nearest_in_size(name, TOLERANCES)}; name one of: {known}; "
                f"they live in autograder/judge/compare.py, each with why")
    close = nearest(name, TOLERANCES)
    fix = f"did you mean {close}? " if close else ""
    return f"unknown tolerance {name!r} — {fix}(known: {', '.join(TOLERANCES)})"


def _nearest_in_size(number: float, tolerances: dict[str, Tolerance]) -> str:
    """Which named tolerance a number is closest to, by the larger of its rtol and atol."""
    if number <= 0:
        return f"{number:g} is exact"
    sized = {key: max(t.rtol, t.atol) for key, t in tolerances.items() if max(t.rtol, t.atol) > 0}
    loosest = max(sized, key=sized.get)
    if number > sized[loosest]:
        return f"{number:g} is looser than every named one (the loosest is {loosest})"
    key = min(sized, key=lambda k: abs(math.log10(sized[k]) - math.log10(number)))
    return f"{number:g} is nearest to {key}"


def named_tolerance(name: str) -> Tolerance:
    """The tolerance of this name, as grading uses it.

    Raises:
        AssignmentError: The name is unknown (the sentence of :func:`tolerance_problem`).
    """
    from autograder.judge.compare import TOLERANCES

    problem = tolerance_problem(name)
    if problem:
        raise AssignmentError(problem)
    return TOLERANCES[name]


@dataclass(frozen=True)
class GivenTolerance:
    """A tolerance name given in a source file: where, to which function, and the name (None when not a constant;
    a number as it was written)."""

    path: Path
    line: int
    function: str
    name: object


def given_tolerances(path: Path) -> list[GivenTolerance]:
    """Every tolerance name a Python file gives to the probe API, found in its source (a file that does not parse
    gives none: loading it reports that).

    A name is read where it is a string literal or a module-level constant holding one; a call that passes the
    parameter as ``**kwargs`` or an expression is left to grading, which looks the name up at run time.
    """
    try:
        tree = parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return []
    taking = tolerance_parameters()
    imports, calls = [], []
    for node in ast.walk(tree):  # once: walking a checks file's tree costs as much as parsing it
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
    aliases = _api_aliases(imports, set(taking))
    constants = _string_constants(tree)
    given = []
    for node in calls:
        function = _called(node, aliases)
        if function is None:
            continue
        argument = _tolerance_argument(node, taking[function])
        if argument is not None:
            given.append(GivenTolerance(path, argument.lineno, function, _string_value(argument, constants)))
    return given


def given_problem(given: GivenTolerance) -> str | None:
    """One line if the name given is unknown: ``file:line: gated(tolerance='x'): unknown tolerance 'x' — did you
    mean ...?``; None for a known name or one the source does not spell out."""
    problem = None if given.name is None else tolerance_problem(given.name)
    return f"{given.path}:{given.line}: {given.function}({PARAMETER}={given.name!r}): {problem}" if problem else None


def _api_aliases(imports: list[ast.Import | ast.ImportFrom], taking: set[str]) -> dict[str, str]:
    """Each spelling under which the file calls a tolerance-taking function of the probe API, to its name: the
    names imported from it (``as`` and ``*`` included), and ``module.gated`` through a module bound to it."""
    aliases: dict[str, str] = {}
    modules = {API_MODULE}  # ``import autograder.probe`` binds the dotted name itself
    for node in imports:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(API_MODULE):
            for alias in node.names:
                if alias.name == "*":
                    aliases.update({name: name for name in taking})
                elif alias.name in taking:
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module == API_MODULE.rpartition(".")[0]:
            modules |= {alias.asname or alias.name for alias in node.names if alias.name == "probe"}
        elif isinstance(node, ast.Import):
            modules |= {alias.asname for alias in node.names if alias.asname and alias.name.startswith(API_MODULE)}
            modules |= {alias.name for alias in node.names if not alias.asname and alias.name.startswith(API_MODULE)}
    aliases.update({f"{module}.{name}": name for module in modules for name in taking})
    return aliases


def _called(call: ast.Call, aliases: dict[str, str]) -> str | None:
    return aliases.get(_dotted(call.func) or "")


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _tolerance_argument(call: ast.Call, position: int | None) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == PARAMETER:
            return keyword.value
    if position is not None and position < len(call.args) and \
            not any(isinstance(arg, ast.Starred) for arg in call.args[:position + 1]):
        return call.args[position]
    return None


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments (a tolerance kept in a constant is still read)."""
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            constants.update({target.id: node.value.value for target in node.targets if isinstance(target, ast.Name)})
    return constants


def _string_value(argument: ast.expr, constants: dict[str, str]) -> object:
    if isinstance(argument, ast.Constant):
        value = argument.value  # a number as a number: refused as one, the way grading refuses it
        return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else repr(value)
    if isinstance(argument, ast.Name):
        return constants.get(argument.id)
    return None
