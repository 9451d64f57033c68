"""The process ``grader check`` starts: imports torch and pytest once, then runs check sessions of the student's work.

Run as ``python -m autograder.public.worker --serve FD`` (FD: one end of a Unix socket): the worker pre-imports
torch and pytest, never imports student code itself, and for each request (one JSON line with the settings, and
the write end of a pipe passed beside it) forks a **session** that imports the student's modules, collects the
public tests and runs them; a warm worker so answers a re-check in a fraction of a second, each session starting
from the same clean, pre-imported state. It answers each request with ``session`` (the fork's pid) and then
``ended`` (its exit code). Without ``fork`` (``python -m autograder.public.worker SETTINGS_JSON``) the process
runs one session itself.

A session writes one JSON event per line to its pipe (pytest's own terminal output goes to /dev/null):
``ready``, ``importing``/``imported`` per student module, ``collect_error``, ``collected``, ``fork``,
``start``/``result`` per test, ``task_done``, ``alive`` (a heartbeat) and ``done``. A student module that
cannot be imported is replaced by a stand-in whose names raise one ImportError, so the error is reported once,
for the module, and blocks only the tests that import it.
"""

from __future__ import annotations

import gc
import importlib
import json
import linecache
import os
import socket
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from autograder.errors import BrokenModuleError
from autograder.public import plugin
from autograder.public.condense import shorten


class _BrokenModule(types.ModuleType):
    """Stands in for a student module that could not be imported: every name in it raises one ImportError."""

    def __init__(self, fullname: str, message: str) -> None:
        super().__init__(fullname)
        self._message = message

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise BrokenModuleError(self._message)


def main() -> None:
    """Serve sessions (``--serve FD``) or run one (``SETTINGS_JSON``); end without the interpreter's teardown."""
    devnull = os.open(os.devnull, os.O_RDWR)
    if sys.argv[1] == "--serve":
        os.dup2(devnull, 1)
        os.dup2(devnull, 0)
        serve(socket.socket(fileno=int(sys.argv[2])))
    channel = os.dup(1)
    os.dup2(devnull, 1)
    os.dup2(devnull, 0)
    _prepare()
    run_session(json.loads(sys.argv[1]), channel)


def serve(requests: socket.socket) -> None:
    """Pre-import, then fork one session per request until ``grader check`` closes its end of the socket."""
    from autograder.util.lifetime import die_with_parent

    die_with_parent()  # a worker outlives neither the kernel nor the ``grader check --watch`` that started it
    _prepare()
    buffer = b""
    while True:
        line, channel, buffer = _next_request(requests, buffer)
        if line is None:
            os._exit(0)
        pid = os.fork()
        if pid == 0:
            requests.close()
            os.setsid()  # the session's process group is killed whole when it overruns
            die_with_parent()
            try:
                run_session(json.loads(line), channel)
            except BaseException:  # noqa: BLE001 - a session never returns into the worker's loop
                traceback.print_exc()
            os._exit(70)
        os.close(channel)
        _reply(requests, {"event": "session", "pid": pid})
        _, status = os.waitpid(pid, 0)
        _reply(requests, {"event": "ended", "pid": pid, "code": os.waitstatus_to_exitcode(status)})


def _next_request(requests: socket.socket, buffer: bytes) -> tuple[bytes | None, int, bytes]:
    """The next request line and the pipe passed with it (None at the end of the socket)."""
    channels: list[int] = []
    while b"\n" not in buffer:
        data, fds, _, _ = socket.recv_fds(requests, 1 << 16, 4)
        channels += fds
        if not data:
            return None, -1, b""
        buffer += data
    line, buffer = buffer.split(b"\n", 1)
    for extra in channels[1:]:  # one pipe per request; anything more is not ours to keep
        os.close(extra)
    if not channels:
        return _next_request(requests, buffer)  # a request without its pipe cannot be answered
    return line, channels[0], buffer


def _reply(requests: socket.socket, event: dict[str, Any]) -> None:
    requests.sendall((json.dumps(event) + "\n").encode())


def run_session(settings: dict[str, Any], channel: int) -> None:
    """Import the student's modules, run the selected public tests and report events on ``channel``; never return."""
    if settings.get("cwd"):  # a served session: where ``python -m`` in that folder would start
        os.chdir(settings["cwd"])
        sys.path[0] = settings["cwd"]
    if settings.get("log"):
        log = os.open(settings["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(log, 2)
        os.close(log)
    root = settings.get("import_root")
    if root:  # what PYTHONPATH says for a process started for this check alone
        sys.path[1:1] = [root]
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")]))

    def send(event: dict[str, Any]) -> None:
        data = memoryview((json.dumps(event) + "\n").encode())
        while data:
            data = data[os.write(channel, data):]

    plugin.Settings.config = settings
    plugin.Settings.send = send
    plugin.Settings.channel_fd = channel
    plugin.Settings.end = lambda: os._exit(0)  # pytest's summary and teardown would only delay the next session
    send({"event": "ready", "pid": os.getpid()})
    import_student_modules(settings, send)
    import pytest

    tests = settings["tests"]
    args = ["-q", "-p", "no:cacheprovider", "--rootdir", tests, "-o", "addopts=", "-o", "python_files=test_*.py",
            "--continue-on-collection-errors", tests]
    try:
        pytest.main(args, plugins=[plugin])
    except BaseException as exc:  # noqa: BLE001 - say why the run stopped instead of dying silently
        send({"event": "worker_error", "message": shorten(f"{type(exc).__name__}: {exc}", 300)})
    send({"event": "done"})
    os._exit(0)


def _prepare() -> None:
    """Pre-import torch and pytest, then freeze every object they made: the garbage collector of a session or a test's
    fork never scans them again (a full scan of those 250,000 objects costs a fork a tenth of a second, most of it
    copying the pages the scan writes to)."""
    _prepare_torch()
    _prepare_pytest()
    gc.freeze()


def _prepare_pytest() -> None:
    """Import pytest and the plugins every session's ``pytest.main`` loads, once, before any student code runs."""
    import _pytest.config
    import pytest  # noqa: F401

    for name in _pytest.config.default_plugins:
        try:
            importlib.import_module(f"_pytest.{name}")
        except ImportError:  # a plugin of another pytest version: pytest.main reports it in its own words
            pass


def _prepare_torch() -> None:
    """Import torch once (every fork then has it) on one thread, and pay its first-call costs here, once."""
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
    # optimizer step (torch._dynamo, more seconds) is left to the few tests that train, in their own fork.
    torch.testing.assert_close(x, x.clone())
    torch.random.set_rng_state(state)


def import_student_modules(settings: dict[str, Any], send: Any) -> None:
    """Import the package and each student module in the manifest's order, each on its own.

    A module that fails (or that ``grader check`` found hanging or crashing in an earlier worker) is replaced by
    a stand-in; the event says why, with the student's file, line and the line's text.
    """
    package = settings["package"]
    package_dir = Path(settings["package_dir"])
    known = settings.get("broken", {})
    package_broken = False
    for module in ["__init__", *settings["modules"]]:
        fullname = package if module == "__init__" else f"{package}.{module}"
        if package_broken:  # nothing below a package whose __init__.py fails can be imported
            send({"event": "imported", "module": module, "error": {"kind": "ImportError", "message": "",
                                                                   "file": "", "line": 0, "text": "",
                                                                   "cause": "__init__"}})
            _stand_in(package, module, fullname)
            continue
        if module in known:
            _stand_in(package, module, fullname)
            package_broken = module == "__init__"
            continue
        send({"event": "importing", "module": module})
        try:
            importlib.import_module(fullname)
            send({"event": "imported", "module": module})
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt at import time alike
            send({"event": "imported", "module": module, "error": describe_import_error(exc, package_dir)})
            _stand_in(package, module, fullname)
            package_broken = module == "__init__"


def _stand_in(package: str, module: str, fullname: str) -> None:
    message = f"{module}.py of {package} could not be imported (see the error above)"
    plugin.Settings.broken[module] = message
    if module == "__init__":
        stand_in = _BrokenModule(fullname, message)
        stand_in.__path__ = []  # type: ignore[attr-defined]
        sys.modules[fullname] = stand_in
        return
    sys.modules[fullname] = _BrokenModule(fullname, message)
    parent = sys.modules.get(package)
    if parent is not None and not isinstance(parent, _BrokenModule):
        setattr(parent, module, sys.modules[fullname])


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


if __name__ == "__main__":
    main()
