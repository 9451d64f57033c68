"""The full JSON report: every task and check, seeds, versions and isolation."""

from __future__ import annotations

import json

from autograder.reports.results import GradeReport


def render_json(report: GradeReport) -> str:
    """The full report as JSON (score, tasks with per-check detail, seeds, versions, timing)."""
    return json.dumps(report.to_dict(), indent=2) + "\n"
