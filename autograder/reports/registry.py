"""Render a GradeReport as text, JSON, Gradescope results.json or JUnit XML, and write it atomically."""

from __future__ import annotations

from typing import Callable

from autograder.reports.gradescope import render_gradescope
from autograder.reports.json_report import render_json
from autograder.reports.junit import render_junit
from autograder.reports.results import GradeReport
from autograder.reports.text import render_text

RENDERERS: dict[str, Callable[[GradeReport], str]] = {
    "text": render_text,
    "json": render_json,
    "gradescope": render_gradescope,
    "junit": render_junit,
}

# The file each format is written to when the output is a folder (`grader grade -o DIR`); Gradescope reads
# results.json.
REPORT_FILES = {"text": "report.txt", "json": "report.json", "gradescope": "results.json", "junit": "report.xml"}
