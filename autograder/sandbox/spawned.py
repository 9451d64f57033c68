"""The runtime without fork: a zygote and each of its jobs are fresh interpreters (Windows, macOS, or on request).

Where ``fork`` is missing (Windows) or not the default (macOS's ``spawn``), or ``$GRADER_START_METHOD`` is
``spawn`` (the tests force this path on Linux so that it cannot rot), the host starts each zygote as a fresh
interpreter instead of forking it from a template, and the zygote starts each job as a fresh interpreter too: a
**spare**, started ahead, prepares what a fork would have inherited (the template's preload, the zygote's
session: ``grader check``'s student modules imported and its tests collected) and waits; the zygote hands it the
next job once it is ready (the job's wall clock starts then), and starts another spare for the job after. The
protocol, the wall clocks, the stack capture and what a job writes back are the fork runtime's; what differs:

* every job pays an interpreter's start, the template's preload (torch's import and first calls, outside the
  job's wall clock) and its session's (the student's modules imported, the tests collected), and so does every
  zygote, which opens the session to say what its imports did (without the preload): a check and a re-check alike
  take seconds more, with a job's own start hidden only when its spare had time to get ready;
* jobs run at the weakest tier (``rlimits``, none at all on Windows, which has no resource limits);
* the processes a job starts are killed with it where process groups exist (not on Windows).

Only portable primitives are used here (subprocess, threads, files), so the forced path on Linux runs the code
Windows runs.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from autograder.sandbox.lines import ThreadedLines

START_METHOD_VARIABLE = "GRADER_START_METHOD"
POLL_SECONDS = 0.02  # how often a running job's process is looked at (there is no pidfd to wait on)
READY_SECONDS = 600.0  # a spare's start-up: an interpreter and torch's import on a loaded laptop
STOP_SECONDS = 5.0  # how long a zygote asked to stop may take to stop its job and spare before it is killed

_ENTRY = "from autograder.sandbox.{} import {}; {}()"  # after spawner.PATH_CODE (python -I: the path is given)


def start_method() -> str:
    """``fork`` where zygotes and jobs are forked (Linux), ``spawn`` elsewhere, or what ``$GRADER_START_METHOD``
    asks (``spawn`` anywhere; ``fork`` only where there is one)."""
    asked = os.environ.get(START_METHOD_VARIABLE, "")
    if asked == "spawn" or not hasattr(os, "fork"):
        return "spawn"
    if asked == "fork":
        return "fork"
    return "fork" if sys.platform.startswith("linux") else "spawn"


def returncode_status(code: int | None) -> dict[str, int | None]:
    """How a process ended, from ``Popen.returncode`` (negative: the signal that killed it)."""
    if code is not None and code < 0:
        return {"code": None, "signal": -code}
    return {"code": code, "signal": None}


def kill_process(process: subprocess.Popen[Any]) -> None:
    """Kill a spawned process and, where process groups exist, everything in its group (it leads one)."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        try:
            killpg(process.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        except OSError:
            pass
    try:
        process.kill()
    except OSError:
        pass


def _start(module: str, function: str, environment: dict[str, str], cwd: str | None = None) -> subprocess.Popen[Any]:
    """A fresh interpreter running ``autograder.sandbox.<module>.<function>()``, its pipes to this process, in a
    session of its own."""
    from autograder.sandbox.spawner import PATH_CODE, grader_path

    return subprocess.Popen([sys.executable, "-I", "-c", PATH_CODE + _ENTRY.format(module, function, function),
                             grader_path()],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd,
                            env=environment, start_new_session=os.name == "posix")


class SpawnedZygote:
    """A zygote started as a fresh interpreter: the part of ``subprocess.Popen`` the host uses (the same as a
    forked zygote's handle, ``autograder.sandbox.spawner.ForkedZygote``), and how the process ended.

    Args:
        home: The zygote's home and working folder.
        environment: Its scrubbed environment.
    """

    def __init__(self, home: Path, environment: dict[str, str]) -> None:
        self.process = _start("boot", "boot_spawned", environment, str(home))
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = os.fdopen(self.process.stdin.fileno(), "w", buffering=1, closefd=False)
        self.stdout = self.process.stdout
        self.lines = ThreadedLines(self.process.stdout.fileno())

    @property
    def pid(self) -> int:
        return self.process.pid

    def poll(self) -> int | None:
        return self.process.poll()

    def kill(self) -> None:
        """Stop the zygote: its requests end first, so that it stops its job and its spare itself (each leads a
        session of its own, and a parent-death signal is Linux's only), then it is killed if it has not ended."""
        try:
            self.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        kill_process(self.process)

    def wait(self, timeout: float | None = None) -> int:
        return self.process.wait(timeout)

    def exit_status(self) -> dict[str, int | None] | None:
        """How the zygote's process ended (None while it runs)."""
        try:
            return returncode_status(self.process.wait(timeout=2.0))
        except subprocess.TimeoutExpired:
            return None

    def release(self) -> None:
        """Close the pipes."""
        for stream in (self.stdin, self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


class Spares:
    """The spare that takes a zygote's next job, started ahead (see :class:`Spare`): the first as the zygote starts
    (it prepares while the zygote opens its own session), each next one as a job is handed to the one before.

    Args:
        config: The zygote's configuration (its session included).
        plan: The features every job applies (:meth:`Plan.summary`'s).
    """

    def __init__(self, config: dict[str, Any], plan: dict[str, Any]) -> None:
        self.setup = {"config": config, "plan": plan}
        self.next: Spare | None = Spare(self.setup, dict(os.environ))

    def take(self) -> Spare:
        """The spare started ahead; the one after it starts now, preparing while this one runs its job."""
        spare = self.next or Spare(self.setup, dict(os.environ))
        self.next = Spare(self.setup, dict(os.environ))
        return spare

    def close(self) -> None:
        if self.next is not None:
            self.next.close()
            self.next = None


class Spare:
    """A fresh interpreter that prepares for a job (the preload, the session) and waits to be given one.

    Args:
        setup: What the spare prepares with: ``plan`` (the zygote's :meth:`Plan.summary`) and ``config`` (the
            zygote's configuration, its preload and session included).
        environment: The spare's environment (the zygote's scrubbed one).
    """

    def __init__(self, setup: dict[str, Any], environment: dict[str, str]) -> None:
        self.process = _start("spawned", "spare_main", environment)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.replies = ThreadedLines(self.process.stdout.fileno())
        self.process.stdin.write((json.dumps(setup) + "\n").encode())
        self.process.stdin.flush()

    @property
    def pid(self) -> int:
        return self.process.pid

    def give(self, job: dict[str, Any]) -> bool:
        """Hand the spare its job once it is ready; False when it ended before (it could not prepare)."""
        try:
            ready = self.replies.wait_line(time.monotonic() + READY_SECONDS)
        except EOFError:
            ready = None
        if ready != b"ready":
            return False
        try:
            assert self.process.stdin is not None
            self.process.stdin.write((json.dumps(job) + "\n").encode())
            self.process.stdin.close()
        except OSError:
            return False
        return True

    def setup_errors(self) -> list[str]:
        """What the job said before it ran (``error ...``: its sandbox could not be set up)."""
        lines = []
        while True:
            try:
                line = self.replies.wait_line(time.monotonic() + 1.0)
            except EOFError:
                return lines
            if line is None:
                return lines
            lines.append(line.decode(errors="replace").strip())

    def close(self) -> None:
        kill_process(self.process)
        self.process.wait()


def run_one(job: dict[str, Any], spare: Spare, commands: Any, report: Any) -> dict[str, Any]:
    """Run ``job`` in ``spare`` (the zygote's ``_run_one`` without fork): report its pid once it started, wait for
    its end while obeying ``kill`` (and the grader's going away), kill what it left; return the exit message."""
    if not spare.give(job):
        spare.close()
        return {"exit": returncode_status(spare.process.returncode), "killed": False, "leftovers": 0,
                "setup_error": "the job's process could not start"}
    report({"pid": spare.pid})
    killed = False
    while spare.process.poll() is None:
        try:
            line = commands.wait_line(time.monotonic() + POLL_SECONDS)
        except EOFError:  # the grader is gone: leave nothing behind
            spare.close()
            os._exit(0)
        if line is not None and line.strip() == b"kill":
            kill_process(spare.process)
            killed = True
    message: dict[str, Any] = {"exit": returncode_status(spare.process.returncode), "killed": killed}
    for text in spare.setup_errors():
        if text.startswith("error "):
            message["setup_error"] = text[6:][:500]
    spare.close()  # what the job started in its process group
    message["leftovers"] = 0
    return message


def spare_main() -> None:
    """A spare's life: read its setup, prepare, say ``ready``, read its job and run it (never returns). Should its
    zygote stop before the job starts (its requests end), the spare ends at once, wherever its preparation is (a
    session's import that never returns included): a parent-death signal is Linux's only."""
    from autograder.sandbox.linux import PR_SET_PDEATHSIG, prctl_quietly

    prctl_quietly(PR_SET_PDEATHSIG, getattr(signal, "SIGKILL", 9))
    requests = ThreadedLines(os.dup(0))  # read by hand: pytest's capture replaces sys.stdin in a session
    replies = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    setup = json.loads(requests.readline() or b"{}")
    lines: list[bytes] = []
    threading.Thread(target=_await_job, args=(requests, lines), daemon=True).start()
    config = setup.get("config") or {}
    if config.get("preload"):  # off the job's clock: torch's first calls (a second of CPU) are not a test's time
        module_name, _, function = str(config["preload"]).partition(":")
        getattr(importlib.import_module(module_name), function)()
    from autograder.sandbox import job as job_side
    from autograder.sandbox.plan import Plan

    plan = Plan(config, pidns=False)
    plan.features = set(setup.get("plan", {}).get("features", ["rlimits"]))

    def serve(summary: Any = None) -> None:
        os.write(replies, b"ready\n")
        while not lines:
            time.sleep(POLL_SECONDS)
        job_side.start_job(json.loads(lines[0]), plan, replies)  # never returns

    session = config.get("session")
    if session:
        module = importlib.import_module(str(session["module"]))
        job_side.SESSION = module
        module.open_session(session.get("settings") or {}, lambda message: None, serve)
    serve()


def _await_job(requests: ThreadedLines, lines: list[bytes]) -> None:
    """Wait for the spare's job line; end the process if the requests end first (its zygote stopped)."""
    line = requests.readline()
    if not line.strip():
        os._exit(0)
    lines.append(line)
