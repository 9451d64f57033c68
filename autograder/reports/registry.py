"""Render a GradeReport as text, JSON, Gradescope results.json or JUnit XML, and write it atomically."""

from __future__ import annotations

from typing import Callable

from autograder.reports.gradescope import render_gradescope
from autograder.reports.json_report import render_json
from autograder.reports.junit import render_junit
from autograder.reports.results import GradeReport
from autograder.reports.text import render_text

FORMATS = ("text", "json", "gradescope", "junit")


RENDERERS: dict[str, Callable[[GradeReport], str]] = {
    "text": render_text,
    "json": render_json,
    "gradescope": render_gradescope,
    "junit": render_junit,
}
