"""No HTML is written in Python: every page comes from a Jinja2 template under ``autograder/templates/html/``, whose
environment escapes every value (``autograder/util/pages.py``), so no call site can forget to escape a student's
text."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# An HTML element's start or end tag (``(?P<name>`` is a regular expression's group, not a tag).
_TAG = re.compile(r"(?<!\?P)</?(?:!doctype|a|b|body|br|code|details|div|em|figcaption|figure|h[1-6]|head|html|i|img|"
                  r"li|link|meta|ol|p|pre|script|section|span|strong|style|summary|table|td|th|title|tr|ul)"
                  r"(?:\s[^<>]*)?/?>", re.IGNORECASE)


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes (prose, which may name a tag, as this one names ``<script>``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _texts(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, text)`` of each string literal but the docstrings; an f-string as one text, ``{}`` for each value."""
    skipped = _docstrings(tree)
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(part) for part in node.values)
            texts.append((node.lineno, "".join(part.value if isinstance(part, ast.Constant) else "{}"
                                               for part in node.values)))
    return texts + [(node.lineno, node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant)
                    and isinstance(node.value, str) and id(node) not in skipped]


def html_in_strings(source: str) -> list[tuple[int, str]]:
    """``(line, tag)`` of each HTML tag in a string literal (f-strings included) of Python source."""
    return sorted((line, match.group(0)) for line, text in _texts(ast.parse(source)) for match in _TAG.finditer(text))


def test_the_scan_finds_markup_in_strings_and_f_strings_but_not_in_prose() -> None:
    source = ('"""A page: <p>prose</p>."""\n'
              'def page(x):\n    """Builds <b>nothing</b>."""\n'
              '    return f"<li class={x}>{x}</li>" + "<br>" + "(?P<a>\\\\d+)" + "<name> and x < y > z"\n')
    assert html_in_strings(source) == [(4, "</li>"), (4, "<br>"), (4, "<li class={}>")]


def test_no_module_of_the_grader_writes_html() -> None:
    found = {f"{path.relative_to(REPO)}:{line}": tag for path in sorted((REPO / "autograder").rglob("*.py"))
             for line, tag in html_in_strings(path.read_text(encoding="utf-8"))}
    assert found == {}, "write it in a template under autograder/templates/html/ (autoescape on)"
