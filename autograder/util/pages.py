"""HTML from the Jinja2 templates in ``autograder/templates/html/``, every value escaped unless marked safe."""

from __future__ import annotations

import functools
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from autograder.util.paths import PACKAGE_DIR

HTML_TEMPLATES = PACKAGE_DIR / "templates" / "html"


@functools.cache
def _environment() -> Environment:
    """One environment per process (it compiles each template once): autoescape on for every template, and a name
    a template uses without being given is an error, never an empty string."""
    return Environment(loader=FileSystemLoader(HTML_TEMPLATES), autoescape=True, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, auto_reload=False)


def render_html(name: str, **values: Any) -> str:
    """The template ``name`` (relative to ``templates/html/``) rendered with ``values``, each escaped where it
    stands (text, attribute) unless it is ``markupsafe.Markup``.

    Raises:
        jinja2.TemplateError: If the template is missing or broken, or uses a value it was not given.
    """
    return _environment().get_template(name).render(**values)


def asset_text(name: str) -> str:
    """A file beside the templates as it is (a script the page inlines and its policy hashes)."""
    return (HTML_TEMPLATES / name).read_text(encoding="utf-8")
