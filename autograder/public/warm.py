"""The warm worker of ``grader check``: one pre-imported process, kept between checks, that forks one session each.

``check_notebook`` keeps one per kernel and ``grader check --watch`` one while it watches; a single ``grader
check`` starts one and closes it when done. Each check is a **session** forked from the worker (which never runs
student code), so it starts from the same clean state a fresh process would. The worker is trusted only while
every session ends with ``done``: after an overrun, a crash or a silence it is killed and the next check starts
a new one.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from autograder.public.forks import split_events
from autograder.util.paths import PACKAGE_ROOT

ENDED_SECONDS = 2.0  # a session that sent ``done`` is reaped by the worker within this


def warm_available() -> bool:
    """Whether sessions can be forked from a kept worker here (fork and passing a pipe over a Unix socket)."""
    return hasattr(os, "fork") and hasattr(socket, "send_fds")


def worker_environment(import_root: Path | None = None) -> dict[str, str]:
    """The environment of a worker process: this one's, with the package importable and pytest's plugins off."""
    path = [str(import_root)] if import_root is not None else []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*path, str(PACKAGE_ROOT)]), PYTHONDONTWRITEBYTECODE="1",
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", OBJC_DISABLE_INITIALIZE_FORK_SAFETY="YES", OMP_NUM_THREADS="1")
    env.pop("PYTEST_ADDOPTS", None)
    return env


class WarmWorker:
    """A worker process kept between checks; ``open`` starts one (again, after ``discard``) when none is running.

    Without fork (see :func:`warm_available`) every session is a fresh process, as each check was before.
    """

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.requests: socket.socket | None = None
        self.replies = b""
        self.folder = Path(tempfile.mkdtemp(prefix="grader-worker-"))
        self.log = self.folder / "worker.log"
        self.starts = 0  # how many worker processes this object started (a benchmark and the tests read it)
        self.session: subprocess.Popen[bytes] | None = None  # without fork: the session's own process
        self.channel = -1  # the read end of the current session's events (warm)
        self.fresh = False  # whether the current session is the first of its worker process
        self.served = False  # whether the worker process has had a session

    @property
    def pid(self) -> int | None:
        """The worker process's id (None when none is running)."""
        return self.process.pid if self.process is not None and self.process.poll() is None else None

    def start(self) -> None:
        """Start the worker process now if none is running (``open`` would start it): its imports (seconds) then
        overlap the caller's own work until the first session."""
        if warm_available() and (self.pid is None or self.requests is None):
            self.discard()
            self._start()

    def open(self, settings: dict[str, Any], tmp: Path, import_root: Path) -> int:
        """Start a session with these settings; returns the file descriptor its events arrive on.

        Args:
            settings: The session's settings (see autograder.public.worker.run_session).
            tmp: The check's scratch folder: the session's working folder, with its log.
            import_root: The folder from which the student's package is imported.
        """
        if not warm_available():
            return self._open_process(settings, tmp, import_root)
        self.start()
        self.fresh = not self.served
        self.served = True
        read_end, write_end = os.pipe()
        request = dict(settings, cwd=str(tmp), log=str(tmp / "worker.log"), import_root=str(import_root),
                       pycache=str(self.folder / "pycache"))
        try:
            socket.send_fds(self.requests, [(json.dumps(request) + "\n").encode()], [write_end])
        except OSError:  # the worker died since: the session reads end of file and is recovered like a crash
            pass
        finally:
            os.close(write_end)
        self.channel = read_end
        return read_end

    def finished(self) -> None:
        """The session ended with ``done``: keep the worker if it reaps the session in time, else discard it."""
        if self.session is not None:
            self._kill_session([])
            return
        self._close_channel()
        if self._ended(ENDED_SECONDS) is None:
            self.discard()

    def abandon(self, forks: list[int]) -> int | None:
        """The session stopped early (overrun, crash, silence): kill it and the worker; its exit code if known."""
        if self.session is not None:
            return self._kill_session(forks)
        self._close_channel()
        _kill_groups(forks)
        code = self._ended(ENDED_SECONDS)
        self.discard()  # never trusted again: whatever the session did, the next check starts afresh
        return code

    def discard(self) -> None:
        """Kill the worker process and everything it started."""
        if self.requests is not None:
            self.requests.close()
            self.requests = None
        if self.process is not None:
            _kill_groups([self.process.pid])
            self.process.wait()
            self.process = None
        self.replies = b""

    def close(self) -> None:
        """Discard the worker and its folder (its log and the public tests' bytecode with it)."""
        if self.process is not None:
            _kill_groups([self.process.pid])  # it frees its memory (tens of milliseconds) while the folder goes
        shutil.rmtree(self.folder, ignore_errors=True)
        self.discard()

    def log_tail(self) -> str:
        """The last lines the worker process wrote to its standard error (why it could not start)."""
        return log_tail(self.log)

    def _close_channel(self) -> None:
        if self.channel >= 0:
            os.close(self.channel)
            self.channel = -1

    # -- the process -------------------------------------------------------------------------------------

    def _start(self) -> None:
        """Start a worker process (its requests go to ``self.requests``)."""
        ours, theirs = socket.socketpair()
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "autograder.public.worker", "--serve", str(theirs.fileno())],
                stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL, env=worker_environment(),
                cwd=str(self.folder), start_new_session=True, pass_fds=(theirs.fileno(),))
        theirs.close()
        self.requests = ours
        self.served = False
        self.starts += 1

    def _ended(self, seconds: float) -> int | None:
        """Wait for the worker's ``ended`` reply to the current session; its exit code (None: no reply in time)."""
        deadline = time.monotonic() + seconds
        while self.requests is not None:
            replies, self.replies = split_events(self.replies)
            for reply in replies:
                if reply.get("event") == "ended":
                    return int(reply["code"])
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.requests], [], [], left)[0]:
                return None
            try:
                chunk = self.requests.recv(1 << 16)
            except OSError:
                return None
            if not chunk:
                return None
            self.replies += chunk
        return None

    def _open_process(self, settings: dict[str, Any], tmp: Path, import_root: Path) -> int:
        """Without fork: the session is a process of its own, started for this check alone."""
        read_end, write_end = os.pipe()
        with open(tmp / "worker.log", "ab") as log:
            self.session = subprocess.Popen(
                [sys.executable, "-m", "autograder.public.worker", json.dumps(settings)], stdout=write_end,
                stderr=log, stdin=subprocess.DEVNULL, env=worker_environment(import_root), cwd=str(tmp),
                start_new_session=True)
        os.close(write_end)
        self.starts += 1
        self.fresh = True
        self.channel = read_end
        return read_end

    def _kill_session(self, forks: list[int]) -> int | None:
        session, self.session = self.session, None
        self._close_channel()
        if session is None:
            return None
        _kill_groups([session.pid, *forks])
        session.wait()
        return session.returncode


def _kill_groups(groups: list[int]) -> None:
    """SIGKILL each process group (a session, a task's fork, the worker: each leads one)."""
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (OSError, AttributeError):
            pass


def log_tail(log: Path) -> str:
    """The last three non-empty lines of a log, on one line (at most 400 characters)."""
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-3:])[:400]
