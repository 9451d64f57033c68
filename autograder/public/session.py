"""``grader check``'s session, in a zygote of the sandbox's runtime: the student's modules imported and the public
tests collected once, then each job (a fork of it) runs one task's tests.

The zygote's template calls :func:`preload` once (pytest and torch's first calls: every session of a ``--watch``
or a kernel inherits them); a zygote whose configuration names this module calls :func:`open_session` before it
serves jobs, and each of its jobs calls :func:`run`. What a session says goes to ``grader check`` as the zygote's
start-up messages (``importing``/``imported`` per student module, then the collection in its ``ready``); what a
job does, as the job's results (a ``start`` line and a result record per test). A student module that cannot be
imported is replaced by a stand-in whose names raise one ImportError, so the error is reported once, for the
module, and blocks only the tests that import it.
"""

from __future__ import annotations

import importlib
import linecache
import os
import sys
import traceback
import types
from pathlib import Path
from typing import Any, Callable

from autograder.errors import BrokenModuleError
from autograder.public import plugin
from autograder.public.condense import shorten

Say = Callable[[dict[str, Any]], None]


def preload() -> None:
    """Import pytest with the plugins every session loads and pay torch's first calls, once, in the template."""
    _prepare_torch()
    _prepare_pytest()


def _prepare_pytest() -> None:
    import _pytest.config
    import _pytest.runner  # noqa: F401 - what each job runs a test with
    import pytest  # noqa: F401

    for name in _pytest.config.default_plugins:
        try:
            importlib.import_module(f"_pytest.{name}")
        except ImportError:  # a plugin of another pytest version: pytest.main reports it in its own words
            pass


def _prepare_torch() -> None:
    """Import torch on one thread and pay its first-call costs once."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)
    state = torch.random.get_rng_state()
    x = torch.randn(2, 3, 4)
    layer = torch.nn.Linear(4, 4)
    norm = torch.nn.LayerNorm(4)
    torch.softmax(layer(norm(x)) @ x.transpose(-2, -1), dim=-1).sum().backward()
    # Its first call imports about 500 modules (a second of CPU) that nearly every public test needs. The first
    # optimizer step (torch._dynamo, more seconds) is left to the few tests that train, in their own job.
    torch.testing.assert_close(x, x.clone())
    torch.random.set_rng_state(state)


def open_session(settings: dict[str, Any], say: Say, serve: Callable[[dict[str, Any]], Any]) -> None:
    """Import the student's modules, collect the public tests, and serve jobs from inside pytest's run.

    Args:
        settings: ``package``, ``package_dir``, ``import_root``, ``modules``, ``tests``, ``broken`` (module ->
            why it is not imported), ``selected``, ``task_order``, ``limits``, ``cwd``, ``log``, ``pycache``,
            ``cell_map`` (see :func:`autograder.public.runner.session_settings`).
        say: Sends a start-up message to ``grader check``.
        serve: The zygote's job loop, called with the collection's summary (:func:`plugin.collected`).
    """
    os.chdir(settings["cwd"])
    sys.path[:0] = [settings["cwd"], settings["import_root"]]
    if settings.get("log"):
        log = os.open(settings["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(log, 2)
        os.close(log)
    plugin.Settings.config = settings
    plugin.Settings.serve = serve
    import_student_modules(settings, say)
    import pytest

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # other packages' pytest plugins: half a second at each start

    tests = settings["tests"]
    args = ["-q", "-p", "no:cacheprovider", "--capture=sys", "--rootdir", tests, "-o", "addopts=",
            "-o", "python_files=test_*.py", "--continue-on-collection-errors", tests]
    try:
        pytest.main(args, plugins=[plugin])
        problem = "pytest ended before it ran a test"
    except BaseException as exc:  # noqa: BLE001 - say why the run stopped instead of dying silently
        problem = shorten(f"{type(exc).__name__}: {exc}", 300)
    serve({"tests": {}, "collect_errors": [], "results": [], "problem": problem})


def run(request: dict[str, Any], steps: Any) -> None:
    """In a job: run the tests ``request["nodeids"]`` names, in order, a ``start`` line (with the test's own wall
    clock) and a result record each; a test that raises what ends pytest's run (KeyboardInterrupt, SystemExit)
    is failed and ends the job (the host runs the rest in a fresh one)."""
    items = [plugin.Settings.items[nodeid] for nodeid in request["nodeids"]]
    for index, item in enumerate(items):
        steps.start(item.nodeid, plugin.time_limit(item))
        try:
            record = plugin.run_item(item, items[index + 1] if index + 1 < len(items) else None)
        except BaseException as exc:  # noqa: BLE001 - a test that ended the session
            steps.write({"task": plugin.task_of(item), "test": item.name, "nodeid": item.nodeid, "status": "failed",
                         "summary": [f"the test raised {shorten(f'{type(exc).__name__}: {exc}', 300)}, which stops "
                                     "the test run"], "detail": ""})
            return
        steps.write(record)


class _BrokenModule(types.ModuleType):
    """Stands in for a student module that could not be imported: every name in it raises one ImportError."""

    def __init__(self, fullname: str, message: str) -> None:
        super().__init__(fullname)
        self._message = message

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise BrokenModuleError(self._message)


def import_student_modules(settings: dict[str, Any], say: Say) -> None:
    """Import the package and each student module in the manifest's order, each on its own.

    A module that fails (or that ``grader check`` found hanging or ending an earlier session) is replaced by a
    stand-in; the message says why, with the student's file, line and the line's text. Before each import,
    ``importing`` with its wall clock (``grader check`` stops the session if it overruns).
    """
    package = settings["package"]
    package_dir = Path(settings["package_dir"])
    known = settings.get("broken", {})
    seconds = float(settings.get("limits", {}).get("default", 5.0))
    package_broken = False
    for module in ["__init__", *settings["modules"]]:
        fullname = package if module == "__init__" else f"{package}.{module}"
        if package_broken:  # nothing below a package whose __init__.py fails can be imported
            say({"imported": module, "error": {"kind": "ImportError", "message": "", "file": "", "line": 0,
                                               "text": "", "cause": "__init__"}})
            _stand_in(package, module, fullname)
            continue
        if module in known:
            _stand_in(package, module, fullname)
            package_broken = module == "__init__"
            continue
        say({"importing": module, "seconds": seconds})
        try:
            importlib.import_module(fullname)
            say({"imported": module})
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt at import time alike
            say({"imported": module, "error": describe_import_error(exc, package_dir)})
            _stand_in(package, module, fullname)
            package_broken = module == "__init__"


def _stand_in(package: str, module: str, fullname: str) -> None:
    message = f"{module}.py of {package} could not be imported (see the error above)"
    plugin.Settings.broken[module] = message
    stand_in = _BrokenModule(fullname, message)
    if module == "__init__":
        stand_in.__path__ = []  # type: ignore[attr-defined]
    sys.modules[fullname] = stand_in
    parent = sys.modules.get(package)
    if module != "__init__" and parent is not None and not isinstance(parent, _BrokenModule):
        setattr(parent, module, stand_in)


def describe_import_error(exc: BaseException, package_dir: Path) -> dict[str, Any]:
    """The student's file, line and that line's text where an import failed, and the error in one line.

    Returns:
        ``kind``, ``message``, ``file`` (relative to the package), ``line``, ``text`` and ``cause`` (the
        student module whose own failure this one follows from, or '').
    """
    try:
        message = str(exc.msg if isinstance(exc, SyntaxError) else exc)
    except Exception:  # noqa: BLE001
        message = "<unprintable>"
    info: dict[str, Any] = {"kind": type(exc).__name__, "message": shorten(message, 200), "file": "", "line": 0,
                            "text": "", "cause": ""}
    if isinstance(exc, BrokenModuleError):
        info["cause"] = message.split(".py", 1)[0]
        return info
    if isinstance(exc, SyntaxError) and exc.filename and _relative(exc.filename, package_dir):
        info.update(file=_relative(exc.filename, package_dir), line=exc.lineno or 0,
                    text=shorten((exc.text or "").rstrip("\n"), 100))
        return info
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        relative = _relative(frame.filename, package_dir)
        if relative:
            text = frame.line or linecache.getline(frame.filename, frame.lineno or 0)
            info.update(file=relative, line=frame.lineno or 0, text=shorten(text.strip(), 100))
            break
    return info


def _relative(filename: str, package_dir: Path) -> str:
    try:
        return Path(filename).resolve().relative_to(package_dir.resolve()).as_posix()
    except (ValueError, OSError):
        return ""
