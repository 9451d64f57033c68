"""The grader's side of the zygote template: start it, ask it for zygotes, and hold each zygote as a process handle.

See :mod:`autograder.sandbox.template` for the template itself. Asking never blocks: the request (with the
zygote's pipes) waits in the socket until the template has imported torch, and the zygote's pid is read from the
template's answer only when it is first needed, so a grader's own start-up overlaps the template's.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import secrets
import select
import signal
import site
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path
from typing import Any

from autograder.errors import WorkerDied
from autograder.protocol import ENDED_FILE, MARKER_VARIABLE
from autograder.sandbox.lines import PipeLines
from autograder.sandbox.procfs import kill_group, kill_marked
from autograder.util.paths import PACKAGE_ROOT

# -I ignores PYTHONPATH, the user site and the current folder; the grader's own folder is added explicitly (first),
# and where torch and pytest are found outside the interpreter's own site-packages (last: see grader_path).
PATH_CODE = "import os, sys; p = sys.argv[1].split(os.pathsep); sys.path.insert(0, p[0]); sys.path.extend(p[1:]); "
_TEMPLATE = PATH_CODE + "from autograder.sandbox.template import serve; serve(int(sys.argv[2]), sys.argv[3])"


def grader_path() -> str:
    """What a fresh ``python -I`` of the grader's puts on its path (``os.pathsep``-separated): the grader's own
    folder, then the folders this process finds torch and pytest in when they are none of the interpreter's own
    site-packages (a ``pip install --user``, a ``PYTHONPATH``), which ``-I`` would leave out."""
    paths = sysconfig.get_paths()
    own = {os.path.realpath(p) for p in [*site.getsitepackages(), paths["purelib"], paths["platlib"]]}
    found = [str(PACKAGE_ROOT)]
    for module in ("torch", "pytest"):
        spec = importlib.util.find_spec(module)
        folder = str(Path(spec.origin).parent.parent) if spec is not None and spec.origin else ""
        if folder and os.path.realpath(folder) not in own and folder not in found:
            found.append(folder)
    return os.pathsep.join(found)

ANSWER_TIMEOUT = 120.0  # the template's torch import on a loaded machine, as a zygote's start-up


def scrubbed_environment(home: str, marker: str = "", capability: str | None = None) -> dict[str, str]:
    """The few environment variables a worker gets: nothing from the grader's own environment leaks through.

    Args:
        home: The worker's home and temporary folder.
        marker: The zygote's marker (see autograder.protocol).
        capability: The CPU kernels the worker must use (None: its own choice, checked when it is ready).
    """
    fixed = {"ATEN_CPU_CAPABILITY": capability} if capability else {}
    if os.name == "nt":  # Windows' own: Python and torch's libraries need them to start
        fixed.update({key: os.environ[key] for key in ("SYSTEMROOT", "WINDIR", "COMSPEC") if key in os.environ})
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "USER": "student",
        "LOGNAME": "student",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        **fixed,
        MARKER_VARIABLE: marker,
    }


def _running(pid: int) -> bool:
    """Whether a process runs (it exists and is not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class ForkedZygote:
    """A zygote forked by the template: the part of ``subprocess.Popen`` the host uses (pid, pipes, poll, kill,
    wait), with the pid learnt from the template's answer when first needed."""

    def __init__(self, template: ZygoteTemplate, stdin_fd: int, stdout_fd: int, home: Path) -> None:
        self.template = template
        self.home = home
        self.stdin = os.fdopen(stdin_fd, "w", buffering=1)
        self.stdout = os.fdopen(stdout_fd, "rb", buffering=0)  # never read through: lines come from ``lines``
        self.lines = PipeLines(stdout_fd)
        self._pid: int | None = None
        self._pidfd: int | None = None
        self._failed = ""

    def answered(self, pid: int | None, pidfd: int | None, failure: str = "") -> None:
        self._pid, self._pidfd, self._failed = pid, pidfd, failure

    @property
    def pid(self) -> int:
        """The zygote's pid (waits for the template's answer)."""
        self.template.await_answer(self)
        if self._pid is None:
            raise WorkerDied(f"the zygote template did not fork a zygote ({self._failed or 'no answer'})")
        return self._pid

    def poll(self) -> int | None:
        """None while the zygote runs (or the template has not answered yet but is alive), else -1."""
        if self._pid is None and not self._failed:
            if self.template.alive():
                self.template.await_answer(self, timeout=0.0)
                if self._pid is None and not self._failed:
                    return None
        if self._pid is None:
            return -1
        if self._pidfd is None:  # no pidfd (Linux < 5.3): the pid, which the template reaps as soon as it ends
            return None if _running(self._pid) else -1
        readable, _, _ = select.select([self._pidfd], [], [], 0)
        return -1 if readable else None

    def kill(self) -> None:
        """SIGKILL the zygote's whole process group (it has its own session)."""
        try:
            pid = self.pid
        except WorkerDied:
            return
        if self.poll() is None:
            kill_group(pid)

    def wait(self, timeout: float | None = None) -> int:
        """Wait until the zygote has exited (its parent, the template, reaps it)."""
        if self._pidfd is not None:
            if not select.select([self._pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired("zygote", timeout or 0)
            return -1
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("zygote", timeout or 0)
            time.sleep(0.01)
        return -1

    def exit_status(self) -> dict[str, Any] | None:
        """How the zygote's process ended, as its template wrote it in its home once it reaped it (a moment after
        it ended); None if not known within a second."""
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                ended = json.loads((self.home / ENDED_FILE).read_text())
            except (OSError, ValueError):  # not written yet, or being written
                ended = None
            if isinstance(ended, dict):
                return ended
            time.sleep(0.02)
        return None

    def release(self) -> None:
        """Close the pipes and the pidfd."""
        for stream in (self.stdin, self.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


class ZygoteTemplate:
    """The template process of one grader (or one set of zygotes): started on the first request, closed with the
    last zygote that uses it (see :class:`autograder.sandbox.host.Zygote`).

    Args:
        home: The template's home and temporary folder.
        preload: ``module:function`` the template calls once before it forks (see
            :func:`autograder.sandbox.template.serve`); '' for none.
        log: A file for what the template writes to its standard error (why it could not start); none by default.
    """

    def __init__(self, home: Path, preload: str = "", log: Path | None = None) -> None:
        self.home = home
        self.preload = preload
        self.log = log
        self.marker = ""  # in every process it forks (their initial environment is the template's)
        self.capability: str | None = None  # the kernels it was told to use (None: its own choice)
        self.chosen: str | None = None  # the kernels its zygotes reported using
        self.process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._lock = threading.RLock()
        self._waiting: collections.deque[ForkedZygote] = collections.deque()
        self._users: set[int] = set()  # ids of the zygotes forked from it and not released
        self.starts = 0  # how many template processes this handle started (a kept one is started once)

    @classmethod
    def attached(cls, control: socket.socket, marker: str, home: Path) -> ZygoteTemplate:
        """The handle of another process's template, reached through a socket from its :meth:`client`; should that
        template be gone, or run other kernels than this process needs, this handle starts a template of its own."""
        template = cls(home)
        template._control, template.marker = control, marker
        return template

    def client(self) -> socket.socket:
        """A second way into this template, for another process (see :meth:`attached`), which it inherits."""
        with self._lock:
            if not self.alive():
                self.start(self.capability)
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                socket.send_fds(self._control, [b"client"], [theirs.fileno()])
            finally:
                theirs.close()
            return ours

    def alive(self) -> bool:
        if self.process is None:  # another process's template: usable while the way in is open
            return self._control is not None
        return self.process.poll() is None

    def start(self, capability: str | None) -> None:
        """Start the template process (closing one that runs), on these CPU kernels (None: its own choice)."""
        with self._lock:
            self.close()
            self.home.mkdir(parents=True, exist_ok=True)
            self.marker = secrets.token_hex(12)
            self.capability, self.chosen = capability, None
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self.starts += 1
            try:
                with open(self.log or os.devnull, "ab") as errors:
                    self.process = subprocess.Popen(
                        [sys.executable, "-I", "-c", _TEMPLATE, grader_path(), str(theirs.fileno()), self.preload],
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                        cwd=str(self.home), env=scrubbed_environment(str(self.home), self.marker, capability),
                        pass_fds=(theirs.fileno(),), start_new_session=True)
            finally:
                theirs.close()
            self._control = ours

    def fork_zygote(self, user: object, home: Path, capability: str | None, warm_up: bool) -> ForkedZygote:
        """Ask for a zygote with ``home`` as its home, for ``user`` (which :meth:`release` s it); returns at once.

        The template is started if it is not running, and started again if it is known to run other kernels than
        ``capability`` (None: whichever it chose, as the zygotes' handshake then checks).
        """
        with self._lock:
            running_on = self.capability or self.chosen
            if not self.alive() or (capability is not None and running_on is not None and running_on != capability):
                self.start(capability)
            self._users.add(id(user))
            stdin_read, stdin_write = os.pipe()
            stdout_read, stdout_write = os.pipe()
            forked = ForkedZygote(self, stdin_write, stdout_read, home)
            try:
                for attempt in range(2):
                    request = {"environment": scrubbed_environment(str(home), self.marker, capability),
                               "cwd": str(home), "warm_up": warm_up}
                    try:
                        socket.send_fds(self._control, [json.dumps(request).encode()], [stdin_read, stdout_write])
                    except OSError as exc:  # gone (e.g. a batch's template, its owner stopped)
                        if attempt:
                            forked.answered(None, None, f"the template is gone: {exc}")
                            break
                        self.start(capability)
                    else:
                        self._waiting.append(forked)
                        break
            finally:
                os.close(stdin_read)
                os.close(stdout_write)
            return forked

    def await_answer(self, forked: ForkedZygote, timeout: float = ANSWER_TIMEOUT) -> None:
        """Read the template's answers, in order, until ``forked`` has its own (or ``timeout`` passes)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while forked in self._waiting:
                control = self._control
                remaining = max(0.0, deadline - time.monotonic())
                if control is None or not select.select([control], [], [], remaining)[0]:
                    if control is not None and remaining > 0:
                        continue
                    if timeout > 0 or control is None:
                        self._fail_waiting("no answer from the zygote template")
                    return
                try:
                    data, fds, _, _ = socket.recv_fds(control, 4096, 1)
                except OSError:
                    data, fds = b"", []
                waiting = self._waiting.popleft()
                try:
                    pid = int(json.loads(data)["pid"]) if data else None
                except (ValueError, KeyError, TypeError):
                    pid = None
                if pid is None or len(fds) > 1:
                    for fd in fds:
                        os.close(fd)
                    waiting.answered(None, None, "the zygote template exited" if not data else "a bad answer")
                    if not data:
                        self._fail_waiting("the zygote template exited")
                    continue
                waiting.answered(pid, fds[0] if fds else None)

    def hold(self, user: object) -> None:
        """Keep the template open for ``user`` (a kept runtime), with or without a zygote, until it releases it."""
        with self._lock:
            self._users.add(id(user))

    def release(self, user: object) -> None:
        """``user`` has stopped its zygote: close the template when no other user's zygote is left."""
        with self._lock:
            self._users.discard(id(user))
            if not self._users:
                self.close()

    def _fail_waiting(self, why: str) -> None:
        while self._waiting:
            self._waiting.popleft().answered(None, None, why)

    def close(self) -> None:
        """Stop the template and everything it forked (its zygotes, their jobs, leftovers with its marker); for
        another process's template, only this way in."""
        with self._lock:
            self._fail_waiting("the zygote template was closed")
            if self._control is not None:
                self._control.close()  # the template kills its zygotes and exits (its owner's way in)
                self._control = None
            if self.process is None:
                return
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.process.kill()
            self.process.wait()
            self.process = None
            if self.marker:
                kill_marked(self.marker)
