"""The docs cannot go stale: every file path and ``path.py:name`` / ``autograder.module.name`` they name exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ROOTS = ("autograder/", "tests/", "assignments/", "reference_solutions/", "student_template/", "docs/", "deploy/",
         "benchmarks/", "examples/")
# A code span naming a file: a path with a folder and an extension, optionally ``:name`` (a function, a class or
# ``Class.method`` defined in it); or a dotted name below ``autograder``.
_PATH = re.compile(r"^\.?/?(?P<path>[A-Za-z0-9_./\-]+/[A-Za-z0-9_.\-]+\.(?:py|md|toml|yml|yaml|json|ipynb|sh|sql|txt))"
                   r"(?::(?P<name>[A-Za-z_][A-Za-z0-9_.]*))?$")
_DOTTED = re.compile(r"^(?P<dotted>autograder(?:\.[A-Za-z_][A-Za-z0-9_]*)+)$")
_SPAN = re.compile(r"`([^`\n]+)`")


def _spans(doc: Path) -> list[tuple[int, str]]:
    """Each code span (outside code blocks, which hold examples), and each word of a span that is a command line
    naming a file of the repository (``python -m pytest tests/x.py``)."""
    text = doc.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    spans = []
    for match in _SPAN.finditer(text):
        line, span = text.count("\n", 0, match.start()) + 1, match.group(1).strip()
        words = span.split()
        spans += [(line, span)] if len(words) == 1 else [(line, w) for w in words if w.startswith(ROOTS)]
    return spans


def _file(path: str, doc: Path) -> Path | None:
    """The file a doc means: from the repository, from ``autograder/`` (the architecture's folder names), or from
    the doc's own folder."""
    for base in (REPO, REPO / "autograder", doc.parent):
        if (base / path).is_file():
            return base / path
    return None


def _defines(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scope: list[ast.stmt] = tree.body
    for part in name.split("."):
        found = next((node for node in scope if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                   ast.ClassDef)) and node.name == part), None)
        if found is None:
            assigned = {t.id for node in scope if isinstance(node, (ast.Assign, ast.AnnAssign))
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                        if isinstance(t, ast.Name)}
            return part in assigned
        scope = found.body
    return True


def _dotted_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if module.is_file():
            rest = ".".join(parts[cut:])
            return not rest or _defines(module, rest)
    return False


def stale_names(doc: Path) -> list[str]:
    """Every path or name the doc mentions that does not exist, as ``doc:line: name``."""
    problems = []
    for line, span in _spans(doc):
        if span.startswith(("/", "~")) or any(mark in span for mark in ("<", "*", "…", "...", "{", "$")):
            continue  # a path of another machine (Gradescope's /autograder), a pattern or a placeholder
        path_match, dotted_match = _PATH.match(span), _DOTTED.match(span)
        if path_match and (path_match["path"].startswith(ROOTS) or _file(path_match["path"], doc) or
                           path_match["name"]):
            found = _file(path_match["path"], doc)
            if found is None or (path_match["name"] and found.suffix == ".py"
                                 and not _defines(found, path_match["name"])):
                problems.append(f"{doc.relative_to(REPO)}:{line}: {span}")
        elif dotted_match and not _dotted_exists(dotted_match["dotted"]):
            problems.append(f"{doc.relative_to(REPO)}:{line}: {span}")
    return problems


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_named_path_and_function_exists(doc):
    assert stale_names(doc) == []


def test_the_checker_finds_a_stale_name(tmp_path):
    doc = REPO / "docs" / "_probe_of_the_checker.md"
    try:
        doc.write_text("See `autograder/compare.py`, `spec/assignment.py:load_assignment`, `spec/assignment.py:nope` "
                       "and `autograder.batch.timestamps.read_nbgrader_timestamp`, `autograder.quiz_cues`.\n")
        assert stale_names(doc) == ["docs/_probe_of_the_checker.md:1: autograder/compare.py",
                                    "docs/_probe_of_the_checker.md:1: spec/assignment.py:nope",
                                    "docs/_probe_of_the_checker.md:1: autograder.quiz_cues"]
    finally:
        doc.unlink()


# ``--option a|b|c`` in a code span (``\|`` in a table): the choices a doc lists for an option of the CLI.
_CHOICES = re.compile(r"(?P<option>--[a-z][a-z-]*) (?P<choices>[a-z0-9_]+(?:\\?\|[a-z0-9_]+)+)")


def _cli_choices() -> dict[str, list[set[str]]]:
    """Each option of every ``grader`` command (and subcommand) that takes a choice: its choice sets."""
    import click

    from autograder.cli import main

    found: dict[str, list[set[str]]] = {}

    def visit(command: click.Command) -> None:
        for param in command.params:
            if isinstance(param.type, click.Choice):
                for name in param.opts:
                    found.setdefault(name, []).append(set(param.type.choices))
        for sub in getattr(command, "commands", {}).values():
            visit(sub)

    visit(main)
    return found


def stale_choices(doc: Path, cli: dict[str, list[set[str]]]) -> list[str]:
    """Every ``--option a|b|c`` of the doc whose choices are not those of a ``grader`` option of that name."""
    problems = []
    for line, span in _whole_spans(doc):
        for match in _CHOICES.finditer(span):
            listed = set(match["choices"].replace("\\|", "|").split("|"))
            if match["option"] in cli and listed not in cli[match["option"]]:
                problems.append(f"{doc.relative_to(REPO)}:{line}: {match[0]} (the CLI: "
                                f"{' or '.join('|'.join(sorted(c)) for c in cli[match['option']])})")
    return problems


def _whole_spans(doc: Path) -> list[tuple[int, str]]:
    """Each code span of the doc as it is (``_spans`` splits a command line into words)."""
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), doc.read_text(encoding="utf-8"), flags=re.S)
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _SPAN.finditer(text)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_listed_choice_is_the_clis(doc):
    assert stale_choices(doc, _cli_choices()) == []


def test_the_choice_checker_finds_a_missing_choice(tmp_path):
    doc = REPO / "docs" / "_probe_of_the_choice_checker.md"
    try:
        doc.write_text("| `--layout auto\\|plain\\|gradescope\\|classroom` | how |\n")
        [problem] = stale_choices(doc, _cli_choices())
        assert problem.startswith("docs/_probe_of_the_choice_checker.md:1: --layout auto\\|plain\\|gradescope\\|"
                                  "classroom (the CLI: auto|classroom|gradescope|nbgrader|plain)")
    finally:
        doc.unlink()
