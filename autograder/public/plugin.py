"""A pytest plugin, loaded by ``grader check``, that records each public test's task and outcome as JSON."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

RESULTS_ENV = "GRADER_PUBLIC_RESULTS"
TASKS_ENV = "GRADER_PUBLIC_TASKS"  # comma-separated task ids: run only their tests (a notebook's per-task check)
_TASK_MARKER = re.compile(r"""mark\.task\(\s*["']([A-Za-z0-9_]+)["']""")
_results: list[dict[str, Any]] = []
_root: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    _root.append(Path(str(config.rootpath)))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep only the chosen tasks' tests when ``GRADER_PUBLIC_TASKS`` names some."""
    chosen = {t for t in os.environ.get(TASKS_ENV, "").split(",") if t}
    if not chosen:
        return
    keep = [i for i in items if (m := i.get_closest_marker("task")) is not None and m.args and m.args[0] in chosen]
    dropped = [i for i in items if i not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A test file that cannot be imported (e.g. the student's module has a syntax error) fails all its tasks."""
    if not report.failed or not str(report.nodeid).endswith(".py"):
        return
    path = _root[0] / report.nodeid if _root else Path(report.nodeid)
    tasks = sorted(set(_TASK_MARKER.findall(path.read_text()))) if path.is_file() else []
    lines = [line for line in str(report.longrepr).splitlines() if line.strip()]
    error = next((line.lstrip("E ").strip() for line in reversed(lines) if line.startswith("E ")), lines[-1] if lines else "")
    message = f"could not import the tests' module: {error}"[:300]
    for task in tasks or ["untagged"]:
        _results.append({"task": task, "test": path.name, "status": "failed", "message": message})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and not report.passed):
        marker = item.get_closest_marker("task")
        task = str(marker.args[0]) if marker and marker.args else "untagged"
        not_implemented = bool(call.excinfo and call.excinfo.errisinstance(NotImplementedError))
        message = ""
        if call.excinfo is not None:
            message = f"{call.excinfo.typename}: {call.excinfo.value}".splitlines()[0][:300]
        status = "passed" if report.passed else ("not_implemented" if not_implemented else "failed")
        if report.skipped:
            status = "skipped"
        _results.append({"task": task, "test": item.name, "status": status, "message": message})


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get(RESULTS_ENV)
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(_results, handle)
