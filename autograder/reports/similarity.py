"""Similar submissions, to be reviewed by a person: normalised code per task compared across the class."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import GraderError
from autograder.util.atomic import write_atomic
from autograder.util.syntax import parse

THRESHOLD = 0.9  # token-sequence similarity from which two submissions are listed for review
MIN_TOKENS = 40  # shorter code is too often written identically by independent students to be worth a look
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._@+-]")


@dataclass
class SimilarGroup:
    """Students whose code for one task is identical or nearly so (a reason to look, not a finding).

    Attributes:
        task: The task id.
        students: The students, sorted.
        similarity: The lowest pairwise similarity inside the group (1.0: identical after normalisation).
    """

    task: str
    students: list[str]
    similarity: float


@dataclass
class _Canon(ast.NodeTransformer):
    """Renames every identifier to its order of first appearance and every literal to its type."""

    names: dict[str, str] = field(default_factory=dict)

    def _name(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self._name(node.id), ctx=node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.copy_location(ast.arg(arg=self._name(node.arg), annotation=None), node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, bool) or value is None or value is Ellipsis:
            kind = repr(value)
        elif isinstance(value, (int, float, complex)):
            kind = "number"  # 0 and 0.0 are the same idea
        else:
            kind = type(value).__name__
        return ast.copy_location(ast.Constant(value=kind), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._name(node.name)
        node.returns = None
        node.body = _without_docstring(node.body)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._name(node.name)
        node.body = _without_docstring(node.body)
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        self.generic_visit(node)
        node.annotation = ast.Constant(value="annotation")
        return node


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:] or [ast.Pass()]
    return body


def definition_tokens(source: str) -> dict[str, list[str]]:
    """Each top-level function's or class's normalised tokens, by name (empty when the source does not parse).

    Each definition is canonicalised on its own, so a task's code does not depend on what else the module holds.
    """
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return {}
    return {node.name: _tokens(_Canon().visit(node)) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def task_tokens(modules: dict[str, dict[str, list[str]]], functions: tuple[str, ...]) -> list[str] | None:
    """A task's tokens: its functions' tokens in declaration order, or None when none of them is defined.

    Args:
        modules: Module name (without ``.py``) to :func:`definition_tokens` of its source.
        functions: The task's qualified names (``module.name``).
    """
    tokens: list[str] = []
    for qualified in functions:
        module, _, name = qualified.partition(".")
        tokens += modules.get(module, {}).get(name, [])
    return tokens or None


def normalise(sources: dict[str, str], functions: tuple[str, ...]) -> list[str] | None:
    """A task's code as a token sequence free of names, literals, comments, docstrings and formatting.

    Args:
        sources: The student's files (``module.py`` to text).
        functions: The task's qualified names (``module.name``).

    Returns:
        The tokens, or None when none of the task's functions can be found or parsed.
    """
    return task_tokens(_parsed(sources), functions)


def _parsed(sources: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    return {name[:-3]: definition_tokens(text) for name, text in sources.items() if name.endswith(".py")}


def _tokens(node: ast.AST) -> list[str]:
    """A flat sequence: node types, canonical names, attribute names and operators, depth first (a statement's
    tokens stay together, so one added statement changes one stretch of the sequence)."""
    out: list[str] = []
    stack = [node]
    while stack:
        child = stack.pop()
        out.append(type(child).__name__)
        for attribute in ("id", "arg", "attr", "name", "value"):
            value = getattr(child, attribute, None)
            if isinstance(value, str):
                out.append(value)
        stack.extend(reversed(list(ast.iter_child_nodes(child))))
    return out


SHINGLE = 4  # tokens per n-gram: long enough to keep local order, short enough that one edit touches few


def shingles(tokens: list[str]) -> frozenset[int]:
    """The hashed n-grams of a token sequence (the whole sequence when it is shorter than one n-gram)."""
    if len(tokens) <= SHINGLE:
        return frozenset([hash(tuple(tokens))])
    return frozenset(hash(tuple(tokens[i:i + SHINGLE])) for i in range(len(tokens) - SHINGLE + 1))


def similarity(a: list[str] | frozenset[int], b: list[str] | frozenset[int]) -> float:
    """Token-sequence similarity in [0, 1]: the Dice coefficient of the sequences' n-grams (1.0: the same n-grams).

    N-gram sets compare in C in microseconds, so a class of hundreds compares every pair in seconds; an edit
    changes at most ``SHINGLE`` n-grams, so near copies stay near.
    """
    first = a if isinstance(a, frozenset) else shingles(a)
    second = b if isinstance(b, frozenset) else shingles(b)
    if not first or not second:
        return 0.0
    return 2 * len(first & second) / (len(first) + len(second))


def similar_groups(sources: dict[str, dict[str, str]], tasks: dict[str, tuple[str, ...]],
                   template: dict[str, str], threshold: float = THRESHOLD,
                   min_tokens: int = MIN_TOKENS) -> list[SimilarGroup]:
    """Group students whose normalised code per task is identical or at least ``threshold`` similar.

    Code identical to the template (a task left as handed out) and code shorter than ``min_tokens`` are left out.

    Args:
        sources: Student to their files (``module.py`` to text).
        tasks: Task id to its qualified function names.
        template: The student template's files, whose code is excluded.

    Returns:
        The groups, per task in the given order, largest first.
    """
    groups = []
    parsed = {student: _parsed(files) for student, files in sources.items()}  # each file parsed once
    stubs = _parsed(template)
    for task, functions in tasks.items():
        stub = task_tokens(stubs, functions)
        code = {}
        for student, modules in parsed.items():
            tokens = task_tokens(modules, functions)
            if tokens is not None and tokens != stub and len(tokens) >= min_tokens:
                code[student] = tokens
        groups += _cluster(task, code, threshold)
    return groups


def _cluster(task: str, code: dict[str, list[str]], threshold: float) -> list[SimilarGroup]:
    students = sorted(code)
    parent = {s: s for s in students}

    def root(s: str) -> str:
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    grams = {s: shingles(code[s]) for s in students}
    sizes = {s: len(grams[s]) for s in students}
    scores: dict[tuple[str, str], float] = {}
    for i, a in enumerate(students):
        for b in students[i + 1:]:
            small, large = sorted((sizes[a], sizes[b]))
            if 2 * small / (small + large) < threshold:  # the best Dice these sizes allow is below the threshold
                continue
            score = 1.0 if code[a] == code[b] else similarity(grams[a], grams[b])
            if score >= threshold:
                scores[(a, b)] = score
                parent[root(b)] = root(a)
    members: dict[str, list[str]] = {}
    for s in students:
        members.setdefault(root(s), []).append(s)
    groups = []
    for group in members.values():
        if len(group) > 1:
            pairs = [scores[(a, b)] for i, a in enumerate(group) for b in group[i + 1:] if (a, b) in scores]
            groups.append(SimilarGroup(task, group, min(pairs)))
    return sorted(groups, key=lambda g: (-len(g.students), -g.similarity, g.students))


def folder_name(student: str) -> str:
    """A folder name for a student that cannot leave the export folder or hide itself."""
    return _SAFE_NAME.sub("_", student).lstrip(".")[:120] or "student"


def export_for_tools(sources: dict[str, dict[str, str]], template: dict[str, str], out: Path) -> int:
    """Write ``out/submissions/<student>/`` per student and ``out/template/`` for JPlag, Dolos or MOSS.

    Returns:
        The number of student folders written.

    Raises:
        GraderError: If two student ids map to the same folder name.
    """
    names: dict[str, str] = {}
    for student in sources:
        name = folder_name(student)
        if name in names:
            raise GraderError(f"students {names[name]!r} and {student!r} would share export folder {name}")
        names[name] = student
    for name, student in names.items():
        for file, text in sources[student].items():
            write_atomic(out / "submissions" / name / Path(file).name, text)
    for file, text in template.items():
        write_atomic(out / "template" / Path(file).name, text)
    write_atomic(out / "README.txt", _EXPORT_README)
    return len(names)


_EXPORT_README = """One folder per student under submissions/, the handed-out template under template/ (base code:
matches with it are not similarities). Any of these tools compares them; a match is a reason to look, not a verdict.

  JPlag:  java -jar jplag.jar -l python3 --bc template submissions
  Dolos:  dolos run -l python submissions/*/*.py
  MOSS:   moss -l python -b template/*.py -d submissions/*/*.py
"""
