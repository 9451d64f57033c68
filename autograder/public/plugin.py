"""The pytest plugin of ``grader check``'s session: maps tests to tasks, collects them once, runs one job's tests.

Each public test names its task with ``@pytest.mark.task("id")``; ``@pytest.mark.time_limit(seconds)`` gives
it a wall clock other than its task's (``public_timeout`` in assignment.toml, per task or for the assignment).
The session (:mod:`autograder.public.session`) runs pytest in its zygote up to the collection; there, instead of
running the tests, the plugin hands the zygote a summary of what was collected and lets it serve jobs, each of
which runs the tests of one task (:func:`run_item`) in a fork of that collected session.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from autograder.public.condense import (
    Unequal,
    condense,
    shorten,
    student_frames,
    student_function,
)
from autograder.submission.notebook.places import CellMap
from autograder.util.names import nearest

DETAIL_CHARS = 20000
PRINTED_LINES = 40  # of what a failing test printed, the last lines its --verbose output shows
PRINTED_LINE_CHARS = 300
_TASK_MARKER = re.compile(r"""mark\.task\(\s*["']([A-Za-z0-9_]+)["']""")
# CPython's words for ``from package.module import name`` when the module has no such name (3.8 to 3.13)
_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")


class Settings:
    """What the session tells the plugin (its settings, the modules standing in for broken ones, where the
    collection goes), and what the collection found."""

    config: dict[str, Any] = {}
    broken: dict[str, str] = {}  # student module -> the text of the ImportError its stand-in raises
    serve: Callable[[dict[str, Any]], None] = staticmethod(lambda summary: None)  # the zygote serves jobs here
    collect_errors: list[dict[str, Any]] = []
    items: dict[str, pytest.Item] = {}  # the collected tests of the selected tasks, by node id


_records: list[dict[str, Any]] = []


def task_of(item: pytest.Item) -> str:
    """The task a test belongs to (``untagged`` without a task marker)."""
    marker = item.get_closest_marker("task")
    return str(marker.args[0]) if marker and marker.args else "untagged"


def time_limit(item: pytest.Item) -> float:
    """The wall-clock seconds a test may take: its ``time_limit`` marker, else its task's, else the assignment's."""
    marker = item.get_closest_marker("time_limit")
    if marker and marker.args:
        try:
            seconds = float(marker.args[0])
            if seconds > 0:
                return seconds
        except (TypeError, ValueError):
            pass
    limits = Settings.config.get("limits", {})
    return float(limits.get("tasks", {}).get(task_of(item)) or limits.get("default", 5.0))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "task(task_id): the assignment task this test checks")
    config.addinivalue_line("markers", "time_limit(seconds): wall-clock seconds this public test may take")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A test file that cannot be imported: which tasks it holds, and the broken student module behind it."""
    if not report.failed or not str(report.nodeid).endswith(".py"):
        return
    path = Path(Settings.config.get("tests", ".")) / report.nodeid
    try:
        tasks = sorted(set(_TASK_MARKER.findall(path.read_text(encoding="utf-8"))))
    except OSError:
        tasks = []
    text = report.longreprtext  # never coloured: str(longrepr) follows FORCE_COLOR, which Jupyter kernels set
    blocked_by = [module for module, message in Settings.broken.items() if message in text]
    lines = [line for line in text.splitlines() if line.strip()]
    error = next((line[1:].strip() for line in reversed(lines) if line.startswith("E ")), lines[-1] if lines else "")
    Settings.collect_errors.append({"file": path.name, "tasks": tasks or ["untagged"], "blocked_by": blocked_by[:1],
                                    "message": shorten(error, 300), "detail": text[:DETAIL_CHARS],
                                    "missing": missing_name(error, str(Settings.config.get("package", "")))})


def missing_name(error: str, package: str) -> dict[str, str] | None:
    """``{"file": "attention.py", "name": "causal_mask"}`` when ``error`` says a test file imports a name the student's
    module does not define (``cannot import name 'causal_mask' from 'assignment3.attention'``); None otherwise (a
    name missing from another package is not the student's to restore)."""
    match = _CANNOT_IMPORT.search(error)
    if match is None or not package:
        return None
    name, module = match.groups()
    if module == package:
        return {"file": "__init__.py", "name": name}
    if not module.startswith(f"{package}."):
        return None
    return {"file": module[len(package) + 1:].replace(".", "/") + ".py", "name": name}


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    """A kept runtime keeps the public tests' assertion-rewritten bytecode (never the student's) between sessions."""
    cache = Settings.config.get("pycache")
    if not cache:
        yield
        return
    before = sys.pycache_prefix, sys.dont_write_bytecode
    sys.pycache_prefix, sys.dont_write_bytecode = cache, False
    try:
        yield
    finally:
        sys.pycache_prefix, sys.dont_write_bytecode = before


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool:
    """Hand the zygote what was collected (the selected tasks' tests with their wall clocks, the test files that
    could not be imported, a test that names no task) and let it serve jobs, which run them; never returns."""
    Settings.serve(collected(session.items, Settings.config))
    return True


def collected(items: list[pytest.Item], config: dict[str, Any]) -> dict[str, Any]:
    """The summary of a collection: ``tests`` (task -> its tests' ``test``, ``nodeid`` and ``limit``, for the
    selected tasks not ``skip`` ped), ``collect_errors`` and ``results`` (the failed result of each test whose task
    marker names no task of the assignment, whatever the selection: a test the public tests' author lost must not
    vanish). Keeps the items for the jobs (:attr:`Settings.items`)."""
    order = config.get("task_order", [])
    selected = config.get("selected")
    tests: dict[str, list[dict[str, Any]]] = {}
    results = []
    for item in items:
        task = task_of(item)
        if task not in order and task != "untagged":
            results.append(unknown_task_result(item, order))
        elif selected is None or task in selected:
            Settings.items[item.nodeid] = item
            tests.setdefault(task, []).append({"test": item.name, "nodeid": item.nodeid, "limit": time_limit(item)})
    return {"tests": tests, "collect_errors": Settings.collect_errors, "results": results}


def unknown_task_result(item: pytest.Item, order: list[str]) -> dict[str, Any]:
    """The result of a test whose task marker names no task of the assignment: failed, not run (its wall clock
    and its place in the report come from its task), with the marker's file and line and the known ids."""
    task = task_of(item)
    where = f"{Path(item.location[0]).name}:{item.location[1] + 1}"  # the test's first line (a decorator's)
    close = nearest(task, order)
    fix = f"did you mean {close}? " if close else ""
    return {"task": task, "test": item.name, "nodeid": item.nodeid, "status": "failed",
            "summary": [f"{where}: @pytest.mark.task({task!r}) names no task of the assignment — {fix}"
                        f"(tasks: {', '.join(order)}); the test did not run: the public tests need fixing, "
                        f"not your code"]}


def run_item(item: pytest.Item, nextitem: pytest.Item | None) -> dict[str, Any]:
    """Run one test with pytest's own protocol and return its result record."""
    from _pytest.runner import runtestprotocol

    _records.clear()
    runtestprotocol(item, log=True, nextitem=nextitem)
    record = next((r for r in _records if r["status"] != "passed"), None) or (_records[0] if _records else None)
    return record or {"task": task_of(item), "test": item.name, "nodeid": item.nodeid, "status": "passed",
                      "summary": [], "detail": ""}


_called: dict[str, tuple[str, Any]] = {}  # the student's code objects the running test called: key -> (file, code)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Record which of the student's functions the test calls, directly or through other code, so that a hint names
    a building block only when the failing test reached it (a wrong value returned raises nowhere, so the traceback
    alone misses it). A global trace function sees Python calls only (no C calls, no line events): cheap."""
    prefix = str(Path(Settings.config.get("package_dir", ".")).resolve()) + os.sep
    _called.clear()

    def tracer(frame: Any, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "call" and code.co_filename.startswith(prefix):
            _called.setdefault(f"{code.co_filename}:{id(code)}", (code.co_filename, code))

    previous = sys.gettrace()
    with _untraced_imports(str(Settings.config.get("package", ""))), _remembered_unequal():
        sys.settrace(tracer)
        try:
            yield
        finally:
            sys.settrace(previous)


_unequal: list[Unequal] = []  # the running test's last torch.equal call that returned False


@contextlib.contextmanager
def _remembered_unequal() -> Iterator[None]:
    """``torch.equal`` as the test sees it, remembering its last call that returned False and where it was made:
    ``assert torch.equal(a, b)`` fails with a bare False, and the condenser says from the two tensors what differs."""
    _unequal.clear()
    torch = sys.modules.get("torch")
    original = getattr(torch, "equal", None)
    if original is None:  # no torch, or not imported by the tests: nothing calls it
        yield
        return

    def equal(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if result is False and len(args) == 2:
            caller = sys._getframe(1)
            _unequal[:] = [Unequal(caller.f_code, caller.f_lineno, (args[0], args[1]))]
        return result

    torch.equal = equal  # type: ignore[union-attr]
    try:
        yield
    finally:
        torch.equal = original  # type: ignore[union-attr]


@contextlib.contextmanager
def _untraced_imports(package: str) -> Iterator[None]:
    """Import the modules of other packages than the student's untraced: the tracer has nothing to record there, and
    would make a first call that imports hundreds of them half as slow again (torch's first optimizer step imports
    torch._dynamo: 0.3 s more under the tracer, on the path of the check's longest test)."""
    bootstrap = sys.modules.get("_frozen_importlib")  # an import statement calls its _find_and_load, looked up by name
    original = getattr(bootstrap, "_find_and_load", None)
    if original is None or not package:
        yield
        return

    def find_and_load(name: str, *args: Any) -> Any:
        if name == package or name.startswith(f"{package}."):
            return original(name, *args)
        tracer = sys.gettrace()
        sys.settrace(None)
        try:
            return original(name, *args)
        finally:
            sys.settrace(tracer)

    bootstrap._find_and_load = find_and_load  # type: ignore[union-attr]
    try:
        yield
    finally:
        bootstrap._find_and_load = original  # type: ignore[union-attr]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" and report.passed:
        return
    if report.when == "teardown" and not report.failed:
        return
    excinfo = call.excinfo
    if report.skipped:
        status = "skipped"
    elif report.passed:
        status = "passed"
    elif excinfo is not None and excinfo.errisinstance(NotImplementedError):
        status = "not_implemented"
    else:
        status = "failed"
    summary: list[str] = []
    package_dir = Path(Settings.config.get("package_dir", "."))
    frames: list[str] = []
    if status != "passed":
        reached = [student_function(path, code, package_dir) for path, code in _called.values()]
        traced = student_frames(excinfo, package_dir) if excinfo is not None else []
        frames = list(dict.fromkeys([*traced, *(name for name in reached if name is not None)]))
    if status == "failed" and excinfo is not None:
        try:
            summary = condense(excinfo, Path(str(item.path)), package_dir,
                               CellMap.from_data(Settings.config.get("cell_map")), next(iter(_unequal), None))
        except Exception as exc:  # noqa: BLE001 - never lose a result to the condenser: say what pytest said
            summary = [shorten(f"{excinfo.typename}: {excinfo.value}"), f"(could not condense: {exc})"]
        if report.when == "setup":
            summary.insert(0, "the test's setup (a fixture) failed:")
    detail = report.longreprtext[:DETAIL_CHARS] + printed(report) if report.failed else ""
    _records.append({"task": task_of(item), "test": item.name, "nodeid": item.nodeid, "status": status,
                     "summary": summary, "detail": detail, "frames": frames})


def printed(report: pytest.TestReport) -> str:
    """What the test printed (pytest's ``Captured stdout call`` sections and the like, which ``longreprtext`` leaves
    out): a student debugging with print() reads it under the failure, each section cut to its last lines."""
    parts = []
    for title, content in report.sections:
        if not title.startswith("Captured") or not content.strip():
            continue
        lines = [line if len(line) <= PRINTED_LINE_CHARS else line[:PRINTED_LINE_CHARS - 1] + "…"
                 for line in content.rstrip("\n").split("\n")]  # spaces kept: a printed tensor's columns align
        if len(lines) > PRINTED_LINES:
            lines = [f"({len(lines) - PRINTED_LINES} earlier lines not shown)", *lines[-PRINTED_LINES:]]
        parts.append("\n".join([f"----- {title} -----", *lines]))
    return "".join(f"\n\n{part}" for part in parts)
