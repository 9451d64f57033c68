"""A pytest plugin, loaded by ``grader check``, that records each public test's task and outcome as JSON."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

RESULTS_ENV = "GRADER_PUBLIC_RESULTS"
_results: list[dict[str, Any]] = []


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
